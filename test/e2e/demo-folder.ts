import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputMatching } from './processes.js';
import { startWebShell } from './web-shell.js';

/**
 * The demo's data folder, seeded once per run. A console's first launch on a new folder seeds the
 * demo organisation and writes its 50,000 rows of history, seconds of both cores; so global setup
 * does that once, and every test that is not about a first launch gets a copy of the folder it
 * left: a folder of its own, shared with no other test, as a console finds it at its second launch.
 *
 * Such a copy is neither re-seeded nor written to: its `console-demo.json` records the seeding
 * (with the demo admin's credentials), so the host starts the server without `--demo`; and its
 * `control.db` exists, so the server would take it for an old folder anyway. No live traffic
 * either (GC_DEMO_TRAFFIC=0). Its rows are the same seed's drawn as of DEMO_AS_OF, ending when
 * the folder was seeded rather than when the test starts: the newest are as old as the run is
 * long (minutes). The tests' windows allow for that: the narrowest, the health screen's last
 * hour, asks only that some of it has traffic.
 */

/** Where global setup tells the test workers (its environment is theirs) the seeded folder is. */
const SEEDED_FOLDER_VARIABLE = 'GC_E2E_SEEDED_DEMO_FOLDER';
/** Seeding while the build has just taken both cores can take a minute or more. */
const SEEDING_TIMEOUT_MS = 180_000;

/**
 * Runs a web shell on a new folder until the demo's history is whole, then stops it: the server
 * closes its SQLite stores, so the folder holds whole database files and no socket. Returns a
 * function that removes the folder (global teardown).
 */
export async function seedDemoFolder(): Promise<() => void> {
  const folder = mkdtempSync(join(tmpdir(), 'gc-e2e-seeded-'));
  const remove = () => rmSync(folder, { recursive: true, force: true });
  try {
    const shell = await startWebShell(folder);
    try {
      // The shell's line for the history's end, whole or stopped short, or for a crash.
      await outputMatching(
        shell,
        /demo history in place|demo history could not be written|Embedded server: crashed/,
        SEEDING_TIMEOUT_MS,
      );
      if (!/demo history in place/.test(shell.output.join(''))) {
        throw new Error(`the demo's history was not written:\n${shell.output.join('')}`);
      }
    } finally {
      await shell.stop();
    }
    // A database still open in its write-ahead log, or a socket, means the server did not close.
    const left = unclosed(folder);
    if (left.length > 0) throw new Error(`the seeding server did not stop cleanly; left ${left.join(', ')}`);
  } catch (error) {
    remove();
    throw error;
  }
  process.env[SEEDED_FOLDER_VARIABLE] = folder;
  return remove;
}

/** A new copy of the seeded folder, for one test (which removes it). */
export function copyOfDemoFolder(): string {
  const seeded = process.env[SEEDED_FOLDER_VARIABLE];
  if (!seeded) throw new Error(`${SEEDED_FOLDER_VARIABLE} is not set: global setup seeds the demo folder`);
  const copy = mkdtempSync(join(tmpdir(), 'gc-e2e-'));
  cpSync(seeded, copy, { recursive: true });
  return copy;
}

/** SQLite's write-ahead logs and shared-memory files, and sockets, under `folder`. */
function unclosed(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isSocket() || /-(wal|shm)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}
