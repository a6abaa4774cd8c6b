import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.js';
import { EMBEDDED_ADDRESS } from './embedded-names.js';

/**
 * What the embedded server tells the host that started it, over the process's own channel
 * (Node's IPC, or an Electron utility process's parent port) rather than its console.
 * `server/cli.ts serve --socket PATH --announce` sends it; the console's host checks it on arrival.
 */

/** Sent once, after `listen`: where the API answers and what became of `--demo`. */
export const EmbeddedReady = Type.Object({
  kind: Type.Literal('ready'),
  /** Always {@link EMBEDDED_ADDRESS}: the embedded server listens on its socket only. */
  address: Type.Literal(EMBEDDED_ADDRESS),
  /** What it listens on: a Unix socket's path, or a Windows named pipe (`\\.\pipe\…`). */
  socketPath: Type.String({ minLength: 1 }),
  /** The OpenAI-compatible gateway's base address (`http://127.0.0.1:PORT/v1`), when it runs one. */
  gateway: Type.Optional(Type.String({ pattern: '^http://127\\.0\\.0\\.1:\\d+/v1$' })),
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

/**
 * Sent after `ready` by a start that seeded the demo organisation and writes its history in the
 * background, in parts: the rows committed so far (readable by the API), again as each part
 * lands, and last with `rows` equal to `of` (or `failed`, why it stopped short).
 */
export const EmbeddedHistory = Type.Object({
  kind: Type.Literal('history'),
  rows: Type.Integer({ minimum: 0 }),
  of: Type.Integer({ minimum: 0 }),
  failed: Type.Optional(Type.String({ maxLength: 500 })),
});
export type EmbeddedHistory = Static<typeof EmbeddedHistory>;
