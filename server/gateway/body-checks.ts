/**
 * Arrays and objects nested deeper than this are refused before the body is parsed: the gateway
 * writes the body again to forward it, and `JSON.stringify` recurses, so 100,000 levels overflowed
 * its stack (a 502 and nothing logged). No chat request needs more than a few dozen.
 */
export const MOST_NESTING = 128;

/**
 * Whether a JSON text opens more than {@link MOST_NESTING} arrays or objects inside one another.
 * One pass over the characters, without recursion, skipping strings (a `[` in a string is text).
 */
export function tooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MOST_NESTING) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The refusal of a body {@link tooDeep}: a 400, which the gateway answers in OpenAI's shape (and files for a known key). */
export const tooDeepError = (): Error =>
  Object.assign(new Error(`The request body nests arrays or objects more than ${MOST_NESTING} levels deep.`), {
    statusCode: 400,
  });
