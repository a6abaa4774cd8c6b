import type { Command } from './commands.js';
import { shortcutLabel } from './shortcut.js';

/**
 * What the command palette lists for a text: its entries (commands, keys, a request id), found
 * by every word of the text appearing in the entry's title, detail or keywords, best first, at most
 * MAX_RESULTS of them.
 */

export interface PaletteEntry {
  id: string;
  /** What kind of thing it is: "Screens", "Keys"… */
  group: string;
  title: string;
  detail?: string;
  /** Words it is found by besides its title and detail, not shown. */
  keywords?: string;
  /** The shortcut as the platform writes it. */
  shortcut?: string;
  run(): void;
}

export const MAX_RESULTS = 30;

/**
 * A whole request id, as typed or pasted: the gateway's and the demo's (`req_` and at least 24
 * hexadecimal digits; a shorter run is the start of many ids, and opens none), or an imported
 * log's (one token of id characters, at least 8, with a digit, not starting `req_`).
 */
const GATEWAY_ID = /^req_[0-9a-f]{24,196}$/i;
const IMPORTED_ID = /^(?!req_)[A-Za-z0-9][A-Za-z0-9_.:-]{7,199}$/i;

export function looksLikeRequestId(text: string): boolean {
  const id = text.trim();
  return GATEWAY_ID.test(id) || (IMPORTED_ID.test(id) && /\d/.test(id));
}

/** Whether it can only be a request id (a gateway's), so "Open request" comes first. */
export function isGatewayRequestId(text: string): boolean {
  return GATEWAY_ID.test(text.trim());
}

export function commandEntry(command: Command): PaletteEntry {
  return {
    id: command.id,
    group: command.group,
    title: command.title,
    ...(command.detail ? { detail: command.detail } : {}),
    ...(command.keywords ? { keywords: command.keywords } : {}),
    ...(command.shortcut ? { shortcut: shortcutLabel(command.shortcut) } : {}),
    run: command.run,
  };
}

const words = (text: string) => text.toLowerCase().split(/\s+/).filter(Boolean);

/** How well an entry answers the words: higher is better, null when a word is missing. */
function score(entry: PaletteEntry, wanted: readonly string[]): number | null {
  const title = entry.title.toLowerCase();
  const haystack = `${title} ${entry.detail ?? ''} ${entry.keywords ?? ''}`.toLowerCase();
  let total = 0;
  for (const word of wanted) {
    if (!haystack.includes(word)) return null;
    // In the title beats in the detail; at the start of a word of the title beats inside one.
    if (title.includes(word)) total += 2;
    if (title.split(/[^a-z0-9]+/).some((part) => part.startsWith(word))) total += 1;
  }
  if (title.startsWith(wanted.join(' '))) total += 3;
  return total;
}

/** The entries for `text`, best first, ties in their given order; all of them (to the bound) for no text. */
export function searchEntries(entries: readonly PaletteEntry[], text: string, limit = MAX_RESULTS): PaletteEntry[] {
  const wanted = words(text);
  if (wanted.length === 0) return entries.slice(0, limit);
  const found: { entry: PaletteEntry; score: number; index: number }[] = [];
  entries.forEach((entry, index) => {
    const value = score(entry, wanted);
    if (value !== null) found.push({ entry, score: value, index });
  });
  found.sort((a, b) => b.score - a.score || a.index - b.index);
  return found.slice(0, limit).map((f) => f.entry);
}
