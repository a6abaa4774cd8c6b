/**
 * Why a Messages request is not translated: one sentence, naming the field (as a path, in
 * Anthropic's way: `messages.2.content.0`), for a 400 `invalid_request_error`.
 */
export class Untranslatable extends Error {}

/** Something the request asks that chat completions cannot do, or not without losing it. */
export const notAvailable = (what: string): Untranslatable =>
  new Untranslatable(`${what} is not available on this route: its targets speak only OpenAI's chat completions.`);

/** A request that is not a Messages request as Anthropic's API takes them. */
export const invalid = (sentence: string): Untranslatable => new Untranslatable(sentence);
