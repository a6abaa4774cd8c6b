import { useCallback, useLayoutEffect, useState } from 'react';
import { drawWhenIdle } from './draw-when-idle.js';

/** Whether `box` shows in the window, or has no layout at all (nothing is saved by waiting then). */
function inView(box: DOMRect): boolean {
  if (box.width === 0 && box.height === 0) return true;
  return box.bottom > 0 && box.top < window.innerHeight && box.right > 0 && box.left < window.innerWidth;
}

/**
 * The width in CSS pixels of the chart area the returned ref is put on, kept up to date as it
 * resizes: the chart draws at most one point per pixel, so it must know how many it has. 0 until
 * measured, and an area out of view is measured only when it scrolls into view or the browser
 * idles (draw-when-idle.ts), so that a screen paints what is in view first. Measured before the
 * browser paints, so a chart in view shows in the same frame as its panel.
 */
export function useElementWidth<T extends HTMLElement>(): [(element: T | null) => void, number] {
  const [element, setElement] = useState<T | null>(null);
  const [seen, setSeen] = useState(false);
  const [width, setWidth] = useState(0);

  useLayoutEffect(() => {
    if (!element || seen) return;
    if (inView(element.getBoundingClientRect())) {
      setSeen(true);
      return;
    }
    const show = () => setSeen(true);
    const cancel = drawWhenIdle(show);
    if (typeof IntersectionObserver === 'undefined') return cancel;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) show();
    });
    observer.observe(element);
    return () => {
      cancel();
      observer.disconnect();
    };
  }, [element, seen]);

  useLayoutEffect(() => {
    if (!element || !seen) return;
    setWidth(Math.floor(element.getBoundingClientRect().width));
    // Without ResizeObserver (an old engine) the first measure stays.
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver((entries) => {
      const entry = entries[entries.length - 1];
      if (entry) setWidth(Math.floor(entry.contentRect.width));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [element, seen]);

  const ref = useCallback((node: T | null) => setElement(node), []);
  return [ref, width];
}
