/** A figure against the same figure over the previous period, as people read it: "+12 %", "−5 %", "new". */
export function changeText(current: number, previous: number): string {
  if (previous === 0) return current === 0 ? '–' : 'new';
  const percent = Math.round(((current - previous) / previous) * 100);
  if (percent === 0) return '±0 %';
  return `${percent > 0 ? '+' : '−'}${Math.abs(percent)} %`;
}

/** A part of a whole as a percentage with one decimal; unknown ("–") when the whole is nil. */
export function shareText(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((part * 100) / whole).toFixed(1)} %`;
}
