import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';

/**
 * What the embedded server tells the host that started it, over the process's own channel
 * (Node's IPC, or an Electron utility process's parent port) rather than its console.
 * `server/cli.ts serve --announce` sends it; the console's host checks it on arrival.
 */

/** The flag that asks `serve` to announce itself to its parent process. */
export const ANNOUNCE_FLAG = '--announce';

/** Sent once, after `listen`: where the API answers and what became of `--demo`. */
export const EmbeddedReady = Type.Object({
  kind: Type.Literal('ready'),
  /** The API's base: the embedded server listens on the loopback address only. */
  address: Type.String({ pattern: '^http://127\\.0\\.0\\.1:[0-9]{1,5}/api$' }),
  demo: Type.Object({
    /** Whether this start seeded the demo data (only ever into a new data folder). */
    seeded: Type.Boolean(),
    /**
     * The demo account for one-click sign-in, while the folder holds it: when this start seeded
     * it, or when --demo was asked of a folder seeded before. The host offers it only for a
     * folder it recorded seeding.
     */
    account: Nullable(Type.Object({ email: Type.String(), password: Type.String() })),
  }),
});
export type EmbeddedReady = Static<typeof EmbeddedReady>;
