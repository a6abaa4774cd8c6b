import BetterSqlite3 from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { TestClient } from './harness.js';

/**
 * The server with its gateway, killed outright (SIGKILL) while callers stream through it, then
 * started again on the same folder: every key's spend must equal the cost of its rows.
 */

const root = resolve(import.meta.dirname, '../..');
const dataDir = mkdtempSync(join(tmpdir(), 'gc-crash-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  api: string;
  gateway: string;
}

async function start(): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_PASSWORD_COST: '10' };
  for (const name of Object.keys(env)) if (name.startsWith('SVC_') && name !== 'SVC_PASSWORD_COST') delete env[name];
  const args = ['server/cli.ts', 'serve', '--port', '0', '--gateway-port', '0', '--simulated-upstream'];
  // Node itself with tsx's loader, not the tsx command, whose own process a SIGKILL would end
  // while the server it started ran on.
  const child = spawn(process.execPath, ['--import', 'tsx', ...args, '--data-dir', dataDir], {
    cwd: root,
    env,
    stdio: 'pipe',
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let waited = 0; waited < 60_000; waited += 50) {
    const api = /Control plane listening at (\S+)/.exec(output)?.[1];
    const gateway = /Gateway listening at (\S+)/.exec(output)?.[1];
    if (api && gateway) return { child, api, gateway };
    if (child.exitCode !== null) throw new Error(`server ended: ${output}`);
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`server not ready: ${output}`);
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill('SIGKILL');
  });
}

/** Keys whose spend and rows disagree, read from the two stores themselves. */
function disagreements(): { key: string; spent: number; rows: number }[] {
  const control = new BetterSqlite3(join(dataDir, 'control.db'), { readonly: true });
  const telemetry = new BetterSqlite3(join(dataDir, 'telemetry.db'), { readonly: true });
  try {
    const costs = new Map(
      (
        telemetry.prepare('SELECT key_id, SUM(cost_micro) AS total FROM requests GROUP BY key_id').all() as {
          key_id: string;
          total: number;
        }[]
      ).map((row) => [row.key_id, row.total]),
    );
    const keys = control.prepare('SELECT id, spent_micro FROM api_keys').all() as { id: string; spent_micro: number }[];
    return keys
      .map((key) => ({ key: key.id, spent: key.spent_micro, rows: costs.get(key.id) ?? 0 }))
      .filter((line) => line.spent !== line.rows);
  } finally {
    control.close();
    telemetry.close();
  }
}

describe('a server killed while its gateway serves', { timeout: 180_000 }, () => {
  it('leaves every key’s spend equal to the cost of its rows after restart, kill after kill', async () => {
    let server = await start();
    const owner = new TestClient(server.api);
    const email = `crash-${process.pid}@example.test`;
    const password = 'correct horse battery staple';
    await owner.post('/auth/register', { email, password, organization_name: `Crash ${process.pid}` });
    const projectId = (await owner.get('/projects')).body.projects[0].id;
    const secrets: string[] = [];
    for (let i = 0; i < 3; i++)
      secrets.push((await owner.post('/keys', { project_id: projectId, name: `k${i}` })).body.api_key);

    let served = 0;
    for (let round = 0; round < 3; round++) {
      const stop = { now: false };
      const callers = secrets.map(async (apiKey) => {
        const client = new OpenAI({ apiKey, baseURL: server.gateway, maxRetries: 0 });
        while (!stop.now) {
          try {
            await client.chat.completions.create({
              model: 'openai/gpt-4o-mini',
              messages: [{ role: 'user', content: 'hi' }],
            });
            served++;
          } catch {
            return; // the server is gone
          }
        }
      });
      await new Promise((done) => setTimeout(done, 800 + round * 500));
      await kill(server.child);
      stop.now = true;
      await Promise.all(callers);
      server = await start();
      expect(disagreements()).toEqual([]);
    }
    await kill(server.child);
    expect(served).toBeGreaterThan(6);
    expect(disagreements()).toEqual([]);
  });
});
