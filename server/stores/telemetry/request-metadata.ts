import type { Database } from 'better-sqlite3';

/**
 * A request's metadata by its shape (019_metadata_shapes.sql): its JSON with the first value of
 * sixteen or more lowercase hex digits (a trace id, as most callers send one) put aside as bytes in
 * `metadata_hex`, and the rest, the shape (`{"customer":"acme","trace_id":"\u0000"}`), coded in
 * `request_strings` as the other repeated strings are: two to twenty bytes a row where the JSON
 * took ~80. The view puts the digits back where the shape holds the six characters `\u0000`,
 * which no shaped metadata holds of its own: metadata with a `\u` (those characters, or an
 * escape), longer than `MAX_SHAPE`, or of a shape a writer sees for the first time stays in the
 * row as it is.
 */
const HEX_VALUE = /"((?:[0-9a-f]{2}){8,})"/;
const SLOT = '\\u0000';
/** Longer metadata stays in its row: a shape is remembered by the writer until seen again. */
const MAX_SHAPE = 1_024;

const shapeable = (metadata: string): boolean => metadata.length <= MAX_SHAPE && !metadata.includes('\\u');

/** A metadata's shape and the hex digits it sets aside (null for none). */
export interface Shaped {
  shape: string;
  digits: string | null;
}

/** `shapeOf`'s last question and answer: an import's reading thread asks twice a row (its columns, its search texts). */
let lastMetadata = '{}';
let lastShaped: Shaped | null = { shape: '{}', digits: null };

/** The shape of `metadata` and the digits of the hex value it sets aside, or null when it has none. */
export function shapeOf(metadata: string): Shaped | null {
  if (metadata !== lastMetadata) {
    lastShaped = shaped(metadata);
    lastMetadata = metadata;
  }
  return lastShaped;
}

function shaped(metadata: string): Shaped | null {
  // No `\u` at all, the slot's or an escape: a search then finds none in a shaped row unread (`metadataMayHoldSql`).
  if (!shapeable(metadata)) return null;
  const found = HEX_VALUE.exec(metadata);
  if (found === null) return { shape: metadata, digits: null };
  const digits = found[1]!;
  const at = found.index + 1;
  return { shape: metadata.slice(0, at) + SLOT + metadata.slice(at + digits.length), digits };
}

/**
 * The digits `shapeOf` sets aside from `metadata`, as text, or null: a row's own search text
 * (search-terms.ts, `ownTexts`), whether its writer stored it aside or left the JSON whole.
 */
export const metadataHexDigits = (metadata: string): string | null => shapeOf(metadata)?.digits ?? null;

/** SQL for the metadata JSON a stored value is (columns of `request_rows`). */
export const metadataOf = (stored: string, hex: string): string =>
  `CASE WHEN typeof(${stored}) = 'integer'
    THEN replace((SELECT text FROM request_strings WHERE code = ${stored}), '${SLOT}', COALESCE(lower(hex(${hex})), ''))
    ELSE ${stored} END`;

/**
 * SQL true for every row of the `requests` view whose metadata JSON holds the text `search`
 * (casefolded by `folded`, of ASCII letters, digits and punctuation but `"`, `\` and `/`) or a
 * `\u` escape, and for a few more, without making the JSON of a shaped row: in the JSON the hex
 * digits set aside sit between two `"`, which such a text cannot hold, so it is in the JSON only
 * if it is in the shape or in the digits (a text such as `0000` may be found in the slot: the
 * caller checks the JSON of each row this lets through). A shape holds no escape
 * (`shapeOf`). Measured, a three-letter search of a day's rows at a million demo rows:
 * 51 ms, against 124 ms making each row's JSON (four times: once per mention in the check) and 43
 * ms before metadata was shaped.
 */
export const metadataMayHoldSql = (search: string, folded: (text: string) => string): string =>
  `CASE WHEN typeof(requests.metadata_key) = 'integer'
    THEN instr((SELECT ${folded('text')} FROM request_strings WHERE code = requests.metadata_key), ${search}) > 0
      OR instr(hex(requests.metadata_hex), upper(${search})) > 0
    ELSE instr(requests.metadata_key, '\\u') > 0 OR instr(${folded('requests.metadata_key')}, ${search}) > 0 END`;

/** `metadata_shape(text)` and `metadata_hex(text)`, `shapeOf`'s two parts in SQL, for migration 019. */
export function registerMetadataFunctions(db: Database): void {
  const shapedText = (metadata: unknown) => (typeof metadata === 'string' ? shapeOf(metadata) : null);
  db.function('metadata_shape', { deterministic: true }, (metadata) => shapedText(metadata)?.shape ?? null);
  db.function('metadata_hex', { deterministic: true }, (metadata) => {
    const digits = shapedText(metadata)?.digits;
    return digits ? Buffer.from(digits, 'hex') : null;
  });
}

/**
 * Shapes this process's writers have seen once and not coded (`shapeOf`). The second sighting
 * codes a shape: metadata that never repeats (a user's own ids) stays in its row, where coding it
 * would add its text and an index entry to the store. Process-wide, since the gateways' rows come in
 * batches of a few, each written by a writer of its own; a sighting codes nothing, so one made in a
 * transaction that rolled back is harmless. Bounded: forgotten all at once past `MAX_SIGHTED`.
 */
const sighted = new Set<string>();
const MAX_SIGHTED = 20_000;

/** The codes of the writer's strings (request-rows.ts, `RequestStrings`). */
interface StringCodes {
  /** The string's code, made if the store has none. */
  codeOf(text: string): number | null;
}

/**
 * The code for a row's metadata shape (`shapeOf`) that the store has none for yet, or null where
 * the row keeps its JSON whole: such a shape is coded at its second sighting. (`request_rows.metadata`
 * holds the code of a shape the store has one for: server/ingest/request-inserts.ts.)
 */
export function newShapeCode(strings: StringCodes, shape: string): number | null {
  if (!sighted.delete(shape)) {
    if (sighted.size >= MAX_SIGHTED) sighted.clear();
    sighted.add(shape);
    return null;
  }
  return strings.codeOf(shape);
}
