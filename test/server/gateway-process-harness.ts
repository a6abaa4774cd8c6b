import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/** A gateway as `npm run gateway` starts it: a process of its own, beside a control plane. */
export interface GatewayProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT/v1`; empty until it listens. */
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const root = resolve(import.meta.dirname, '../..');

function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('SVC_')) env[name] = value;
  return { ...env, ...extra };
}

/** Spawns `npm run gateway` on a free port, without waiting for it (tests of a start that fails). */
export function spawnGateway(controlPlane: string, env: Record<string, string>): GatewayProcess {
  // Node itself with tsx's loader, not the tsx command: the process a signal reaches is the gateway.
  const args = ['--import', 'tsx', 'server/cli.ts', 'gateway', '--control-plane', controlPlane, '--port', '0'];
  const child = spawn(process.execPath, args, { cwd: root, env: environment(env), stdio: 'pipe' });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, url: '', output: () => output, exited };
}

/** Starts `npm run gateway` on a free port and resolves once it listens (within a minute). */
export async function startGatewayProcess(controlPlane: string, env: Record<string, string>): Promise<GatewayProcess> {
  const gateway = spawnGateway(controlPlane, env);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const match = /Gateway listening at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(gateway.output());
    if (match) return { ...gateway, url: match[1]! };
    if (gateway.child.exitCode !== null) throw new Error(`the gateway exited: ${gateway.output()}`);
    await new Promise((done) => setTimeout(done, 50));
  }
  gateway.child.kill('SIGKILL');
  throw new Error(`the gateway did not start: ${gateway.output()}`);
}
