/**
 * Measures, in the page, what a reader would find cut or broken: a table cell (or anything in
 * it) whose content is wider than the box that clips it, unless its whole text is in a tooltip; a
 * date, or a word without spaces (an id, an email, a prefix, a model name), laid out over two
 * lines; a table that needs sideways scrolling, unless it is one of `sidewaysAllowed` (tables by
 * data-testid) and, scrolled to its start, still shows its first column (the name) and its last
 * (the actions, kept at the right edge). Besides table cells it reads the sidebar's session lines
 * and saved views, the values of description lists (the request detail's ids, models and metadata)
 * and a revoke preview's callers. Returns one sentence per finding.
 *
 * A string of JavaScript for page.evaluate: the Node-side tsconfig has no DOM types.
 */
export const layoutProbe = (options: { sidewaysAllowed: readonly string[] }) => `(() => {
  const allowed = ${JSON.stringify(options.sidewaysAllowed)};
  const findings = [];
  const name = (el) => {
    const id = el.closest('[data-testid]')?.getAttribute('data-testid');
    return (id ? '[' + id + '] ' : '') + el.tagName.toLowerCase() + ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
  };
  const lines = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.bottom))).size;
  };
  const regions = [...document.querySelectorAll(
    'main table td, main table th, main dl dd, dialog dl dd, [data-testid="session-indicator"], nav .saved-view, .key-callers li',
  )];
  for (const region of regions) {
    if (region.getClientRects().length === 0) continue;
    for (const el of [region, ...region.querySelectorAll('*')]) {
      // Read by screen readers only (.visually-hidden): a 1px box by design.
      if (el.clientWidth <= 1) continue;
      const style = getComputedStyle(el);
      // Cut short on purpose (an ellipsis) is allowed where the whole text is a hover away; a date,
      // a code or an amount never.
      const exact = el.closest('time, code, .mono, .money');
      const tooltip = el.closest('[title]') || el.querySelector('[title]');
      const whole = !exact && tooltip && (tooltip.getAttribute('title') || '').includes((el.textContent || '').trim());
      if (style.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1 && !whole) {
        findings.push('clipped: ' + name(el) + ' needs ' + el.scrollWidth + 'px, has ' + el.clientWidth + 'px');
      }
    }
    const walker = document.createTreeWalker(region, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = (node.textContent || '').trim();
      if (text === '' || lines(node) < 2) continue;
      const date = node.parentElement && node.parentElement.closest('time');
      if (date || !/\\s/.test(text)) findings.push('wrapped: ' + (date ? 'date ' : '') + name(node.parentElement));
    }
  }
  for (const wrap of document.querySelectorAll('main .table-wrap')) {
    if (wrap.getClientRects().length === 0 || wrap.scrollWidth <= wrap.clientWidth + 1) continue;
    const table = wrap.querySelector('table[data-testid]');
    if (!table || !allowed.includes(table.getAttribute('data-testid'))) {
      findings.push('scrolls sideways: ' + name(wrap).slice(0, 60) + ' is ' + wrap.scrollWidth + 'px in ' + wrap.clientWidth + 'px');
      continue;
    }
    // Allowed to scroll, not to hide what a row is or what can be done with it.
    wrap.scrollLeft = 0;
    const box = wrap.getBoundingClientRect();
    const row = table.querySelector('tbody tr');
    const cells = row ? [...row.children].filter((cell) => !cell.classList.contains('select')) : [];
    const ends = cells.length > 0 ? [['name column', cells[0]], ['actions', cells[cells.length - 1]]] : [];
    for (const [what, cell] of ends) {
      const rect = cell.getBoundingClientRect();
      if (rect.left < box.left - 1 || rect.right > box.right + 1) {
        findings.push('out of view: ' + what + ' of ' + name(table).slice(0, 40) + ' at ' + Math.round(rect.left) + '–' + Math.round(rect.right) + 'px in ' + Math.round(box.left) + '–' + Math.round(box.right) + 'px');
      }
    }
  }
  return findings;
})()`;

/**
 * For each cell of the first row matching `rowSelector` that has candidates, its innermost text
 * element (a time, an amount, else the cell) gets each in turn and keeps the widest as laid out;
 * tooltips go, so nothing passes as "whole on hover". Returns the texts chosen. A string of
 * JavaScript for page.evaluate, as the probe.
 */
export const widestInEachCell = (rowSelector: string, candidates: readonly (readonly string[] | null)[]) => `(() => {
  const candidates = ${JSON.stringify(candidates)};
  const row = document.querySelector(${JSON.stringify(rowSelector)});
  if (!row) throw new Error('no row matches ' + ${JSON.stringify(rowSelector)});
  const range = document.createRange();
  const chosen = [];
  [...row.querySelectorAll('td')].forEach((cell, i) => {
    const texts = candidates[i];
    if (!texts) return;
    const target = cell.querySelector('time, .money') || cell;
    for (const el of [cell, ...cell.querySelectorAll('[title]')]) el.removeAttribute('title');
    let widest = '';
    let width = -1;
    for (const text of texts) {
      target.textContent = text;
      range.selectNodeContents(target);
      const laidOut = range.getBoundingClientRect().width;
      if (laidOut > width) [widest, width] = [text, laidOut];
    }
    target.textContent = widest;
    chosen.push(widest);
  });
  return chosen;
})()`;
