import { useCallback, useLayoutEffect, useState } from 'react';

/**
 * Whether the element the returned ref is put on can scroll (its content overflows it), kept up
 * to date as either resizes. A region that scrolls must be reachable by keyboard (WCAG 2.1.1):
 * a table whose cells hold nothing focusable makes its wrapper a tab stop then, and only then.
 */
export function useScrolls<T extends HTMLElement>(): [(element: T | null) => void, boolean] {
  const [element, setElement] = useState<T | null>(null);
  const [scrolls, setScrolls] = useState(false);

  useLayoutEffect(() => {
    if (!element) return;
    const measure = () =>
      setScrolls(element.scrollWidth > element.clientWidth || element.scrollHeight > element.clientHeight);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    // The content's size changes without the wrapper's when rows arrive or a column widens.
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, [element]);

  const ref = useCallback((node: T | null) => setElement(node), []);
  return [ref, scrolls];
}
