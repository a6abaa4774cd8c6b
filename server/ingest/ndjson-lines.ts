import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/**
 * The lines of a file, read synchronously in chunks, so a caller can consume a large
 * file inside one synchronous SQLite transaction without holding it all in memory.
 */
export function* fileLines(path: string, chunkBytes = 1 << 20): Generator<string> {
  const fd = openSync(path, 'r');
  const decoder = new StringDecoder('utf8');
  const chunk = Buffer.alloc(chunkBytes);
  let pending = '';
  try {
    for (;;) {
      const read = readSync(fd, chunk, 0, chunkBytes, null);
      if (read === 0) break;
      pending += decoder.write(chunk.subarray(0, read));
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) yield line.endsWith('\r') ? line.slice(0, -1) : line;
    }
    pending += decoder.end();
    if (pending.length > 0) yield pending;
  } finally {
    closeSync(fd);
  }
}
