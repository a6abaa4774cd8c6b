import { describe, expect, it } from 'vitest';
import {
  looksLikeRequestId,
  MAX_RESULTS,
  searchEntries,
  type PaletteEntry,
} from '../../../renderer/src/commands/palette-search.js';
import { matchesShortcut, screenShortcut, shortcutLabel } from '../../../renderer/src/commands/shortcut.js';
import { SCREENS } from '../../../renderer/src/state/screen-names.js';

const entry = (title: string, detail?: string): PaletteEntry => ({
  id: title,
  group: 'Test',
  title,
  ...(detail ? { detail } : {}),
  run: () => undefined,
});

const titles = (entries: PaletteEntry[]) => entries.map((e) => e.title);

const ENTRIES = [
  entry('Go to API keys'),
  entry('Go to Request log'),
  entry('Checkout prod', 'API key · sk_svc_aaaa1111 · Checkout'),
  entry('Search dev', 'API key · sk_svc_bbbb2222 · Search'),
  entry('Export the request log as CSV', 'download file'),
  entry('Errors this week', 'Saved view · Request log'),
];

describe('the palette’s matching', () => {
  it('finds an entry by every word in any order, in its title or its detail, whatever the case', () => {
    expect(titles(searchEntries(ENTRIES, 'LOG request'))).toEqual([
      'Go to Request log',
      'Export the request log as CSV',
      // In its detail only: after those with the words in their title.
      'Errors this week',
    ]);
    expect(titles(searchEntries(ENTRIES, 'sk_svc_bbbb'))).toEqual(['Search dev']);
    expect(titles(searchEntries(ENTRIES, 'checkout sk_svc'))).toEqual(['Checkout prod']);
    expect(searchEntries(ENTRIES, 'nothing like this')).toEqual([]);
  });

  it('finds an entry by its keywords too, after those whose title has the words', () => {
    const entries = [...ENTRIES, { ...entry('Store a provider key…'), keywords: 'vault BYOK add' }];
    expect(titles(searchEntries(entries, 'byok'))).toEqual(['Store a provider key…']);
    expect(titles(searchEntries(entries, 'ke'))[0]).toBe('Go to API keys');
  });

  it('puts a title that starts with the text, then words of the title, before matches in the detail', () => {
    expect(titles(searchEntries(ENTRIES, 'search'))).toEqual(['Search dev']);
    expect(titles(searchEntries(ENTRIES, 'checkout'))).toEqual(['Checkout prod']);
    expect(titles(searchEntries(ENTRIES, 'key'))).toEqual(['Go to API keys', 'Checkout prod', 'Search dev']);
    expect(titles(searchEntries(ENTRIES, 'err'))[0]).toBe('Errors this week');
  });

  it('lists everything given for no text, and never more than the bound', () => {
    expect(searchEntries(ENTRIES, '   ')).toHaveLength(ENTRIES.length);
    const many = Array.from({ length: 100 }, (_, i) => entry(`Key ${i}`));
    expect(searchEntries(many, '')).toHaveLength(MAX_RESULTS);
    expect(searchEntries(many, 'key')).toHaveLength(MAX_RESULTS);
    expect(searchEntries(many, 'key 7', 5)).toHaveLength(5);
  });

  it('knows a request id when it sees one', () => {
    expect(looksLikeRequestId(' req_0190a1b2c3d4e5f60718293a ')).toBe(true);
    expect(looksLikeRequestId('req-alert-12-3')).toBe(true);
    expect(looksLikeRequestId('request log')).toBe(false);
    expect(looksLikeRequestId('req_')).toBe(false);
    // The start of a demo id (a hex timestamp) is the start of thousands: not an id.
    expect(looksLikeRequestId('req_0190')).toBe(false);
    expect(looksLikeRequestId('req_0190a1b2c3d4')).toBe(false);
    // Imported logs' ids need no `req_`; one token, with a digit.
    expect(looksLikeRequestId('chatcmpl-8a7b6c5d')).toBe(true);
    expect(looksLikeRequestId('0f7c1e2a-9b3d-4c5e-8f6a-1b2c3d4e5f60')).toBe(true);
    expect(looksLikeRequestId('analytics')).toBe(false);
    expect(looksLikeRequestId('req_0190a1b2c3d4e5f60718293a 2')).toBe(false);
  });
});

describe('shortcuts', () => {
  const press = (init: KeyboardEventInit) => new KeyboardEvent('keydown', init);

  it('match the physical key with exactly their modifiers, Ctrl on Windows and Linux and ⌘ on a Mac', () => {
    const save = { code: 'KeyS', alt: true, shift: true };
    expect(matchesShortcut(press({ code: 'KeyS', key: 'Í', altKey: true, shiftKey: true }), save, false)).toBe(true);
    expect(matchesShortcut(press({ code: 'KeyS', altKey: true }), save, false)).toBe(false);
    expect(matchesShortcut(press({ code: 'KeyS', altKey: true, shiftKey: true, ctrlKey: true }), save, false)).toBe(
      false,
    );
    const palette = { code: 'KeyK', mod: true };
    expect(matchesShortcut(press({ code: 'KeyK', key: 'k', ctrlKey: true }), palette, false)).toBe(true);
    expect(matchesShortcut(press({ code: 'KeyK', key: 'k', metaKey: true }), palette, false)).toBe(false);
    expect(matchesShortcut(press({ code: 'KeyK', key: 'k', metaKey: true }), palette, true)).toBe(true);
    expect(matchesShortcut(press({ code: 'KeyK', key: 'k', ctrlKey: true }), palette, true)).toBe(false);
    // Ctrl with a letter goes by the letter typed: K on Dvorak is where QWERTY has V.
    expect(matchesShortcut(press({ code: 'KeyV', key: 'k', ctrlKey: true }), palette, false)).toBe(true);
    expect(matchesShortcut(press({ code: 'KeyK', key: 't', ctrlKey: true }), palette, false)).toBe(false);
  });

  it('are written the platform’s way', () => {
    expect(shortcutLabel({ code: 'KeyS', alt: true, shift: true }, false)).toBe('Alt+Shift+S');
    expect(shortcutLabel({ code: 'KeyK', mod: true }, false)).toBe('Ctrl+K');
    expect(shortcutLabel({ code: 'KeyK', mod: true }, true)).toBe('⌘K');
    expect(shortcutLabel({ code: 'Digit3', alt: true }, true)).toBe('⌥3');
    // The tenth screen is Alt+0, after Alt+9, as the digits lie on the keyboard; no two screens share one.
    expect(screenShortcut(9)?.code).toBe('Digit0');
    // Screens after the tenth have none.
    expect(screenShortcut(10)).toBeUndefined();
    const codes = SCREENS.slice(0, 10).map((_, i) => screenShortcut(i)?.code);
    expect(new Set(codes).size).toBe(Math.min(10, SCREENS.length));
  });
});
