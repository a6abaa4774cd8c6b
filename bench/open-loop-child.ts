// One open-loop case of the gateway's figures (open-loop.ts), in a process of its own: the
// case's spec as JSON on stdin, its runs as JSON on stdout, its progress on stderr. Apart from
// the bench's process, whose heap (a seeded store's rows, DuckDB's load) and other work would
// otherwise put their pauses into every target's times.
import { text } from 'node:stream/consumers';
import { openLoopCase, type OpenLoopSpec } from './open-loop.js';

const spec = JSON.parse(await text(process.stdin)) as OpenLoopSpec;
const runs = await openLoopCase(spec, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(JSON.stringify(runs) + '\n');
