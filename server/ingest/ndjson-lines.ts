import { closeSync, openSync, readSync } from 'node:fs';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The lines of a file, read synchronously in chunks, so a caller can consume a large
 * file inside one synchronous SQLite transaction without holding it all in memory.
 * Lines are cut in the bytes and each decoded alone (a UTF-8 character never holds a
 * newline byte): no text is built twice, as joining chunks and splitting them would.
 */
export function* fileLines(path: string, chunkBytes = 1 << 20): Generator<string> {
  const fd = openSync(path, 'r');
  let buffer: Buffer = Buffer.allocUnsafe(chunkBytes);
  // Bytes of a line begun in an earlier chunk, at the buffer's start.
  let held = 0;
  try {
    for (;;) {
      if (held === buffer.length) buffer = grown(buffer);
      const read = readSync(fd, buffer, held, buffer.length - held, null);
      if (read === 0) break;
      const end = held + read;
      let start = 0;
      for (let newline = buffer.indexOf(NEWLINE, held); newline !== -1 && newline < end;) {
        yield lineOf(buffer, start, newline);
        start = newline + 1;
        newline = buffer.indexOf(NEWLINE, start);
      }
      held = end - start;
      buffer.copy(buffer, 0, start, end);
    }
    if (held > 0) yield lineOf(buffer, 0, held);
  } finally {
    closeSync(fd);
  }
}

function lineOf(buffer: Buffer, start: number, end: number): string {
  return buffer.toString('utf8', start, end > start && buffer[end - 1] === CARRIAGE_RETURN ? end - 1 : end);
}

/** A line longer than the buffer: twice the room, the bytes held kept. */
function grown(buffer: Buffer): Buffer {
  const larger = Buffer.allocUnsafe(buffer.length * 2);
  buffer.copy(larger);
  return larger;
}
