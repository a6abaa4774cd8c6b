/** At most `limit` UTF-16 units, never half of a surrogate pair. */
export function clipped(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const last = text.charCodeAt(limit - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit);
}

/** Text a caller sent, cut short for a message: a model name of 100 kB is not echoed back whole. */
export function shown(text: string, limit = 64): string {
  return text.length <= limit ? text : `${clipped(text, limit)}…`;
}
