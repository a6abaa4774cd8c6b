/** Readings of JSON whose shape is not yet known. */

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A field's value, with `null` taken as not given (as Anthropic's API takes an optional field). */
export const given = (value: unknown): boolean => value !== undefined && value !== null;
