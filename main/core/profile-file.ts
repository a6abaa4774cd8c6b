import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema, Static } from '@sinclair/typebox';

/**
 * One JSON file per connection profile in a folder of the console's data folder (alert rules,
 * saved views): where it lives, and how it is read back.
 */

export function profileFilePath(dir: string, profileId: string): string {
  // Profile ids are the host's own UUIDs; anything else never names a file.
  if (!/^[\w-]+$/.test(profileId)) throw new Error('not a profile id');
  return join(dir, `${profileId}.json`);
}

/**
 * The file's content when it is what this version writes; `empty()` when there is none. A file
 * that is not (hand-edited, from another version, cut short) is set aside beside it, kept for
 * whoever wrote it, rather than half-read: the profile starts again from `empty()`.
 */
export function readProfileFile<T extends TSchema>(
  path: string,
  check: TypeCheck<T>,
  empty: () => Static<T>,
): Static<T> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty();
    throw error;
  }
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Set aside below.
  }
  if (check.Check(parsed)) return parsed;
  renameSync(path, `${path}.bad-${Date.now()}`);
  return empty();
}
