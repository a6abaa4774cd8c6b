import { useCallback, useEffect, useState } from 'react';

/**
 * The width in CSS pixels of the element the returned ref is put on, kept up to date as
 * it resizes: the chart draws at most one point per pixel, so it must know how many it has.
 * 0 until measured.
 */
export function useElementWidth<T extends HTMLElement>(): [(element: T | null) => void, number] {
  const [element, setElement] = useState<T | null>(null);
  const [width, setWidth] = useState(0);

  useEffect(() => {
    if (!element) return;
    setWidth(Math.floor(element.getBoundingClientRect().width));
    // Without ResizeObserver (an old engine) the first measure stays.
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver((entries) => {
      const entry = entries[entries.length - 1];
      if (entry) setWidth(Math.floor(entry.contentRect.width));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [element]);

  const ref = useCallback((node: T | null) => setElement(node), []);
  return [ref, width];
}
