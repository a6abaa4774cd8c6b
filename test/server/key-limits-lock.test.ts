import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAdmin } from '../../server/admin/commands.js';
import { register, startServer, type TestServer } from './harness.js';

/**
 * PATCH /keys must take the write lock before it reads the budget (BEGIN IMMEDIATE). A
 * second process, as the operator's command would be, holds the lock and raises another
 * key's limit meanwhile: the PATCH must wait for it and then see its figure. A deferred
 * transaction would read the old figures and then fail to write (500), or pass the budget.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Holds the control store's write lock in another process while it sets a key's limit, then commits. */
function holdWriteLock(dataDir: string, keyId: string, limitMicro: number, holdMs: number) {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(join(dataDir, 'control.db'))});
    db.exec('BEGIN IMMEDIATE');
    db.prepare('UPDATE api_keys SET credit_limit_micro = ? WHERE id = ?').run(${limitMicro}, ${JSON.stringify(keyId)});
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.stdout.write('committed\\n'); }, ${holdMs});`;
  const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('locked')) resolve();
    });
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`lock holder exited with ${code}`))));
  });
  const done = new Promise<string>((resolve) => child.once('exit', () => resolve(output)));
  return { locked, done };
}

it('waits for another process holding the write lock, then checks the budget against its change', async () => {
  const { client, org } = await register(server);
  expect(await runAdmin(['deposit', '--org', org, '--pkr', '1000', '--data-dir', server.dataDir], () => {})).toBe(0);
  const projectId = (await client.get('/projects')).body.projects[0].id;
  const a = (await client.post('/keys', { project_id: projectId, name: 'a' })).body;
  const b = (await client.post('/keys', { project_id: projectId, name: 'b' })).body;

  const holder = holdWriteLock(server.dataDir, b.id, 900_000_000, 800);
  await holder.locked;
  const answer = await client.patch(`/keys/${a.id}`, { rate_limit_rpm: 60, credit_limit_pkr: 200 });

  expect(await holder.done).toContain('committed');
  expect(answer.status).toBe(400);
  expect(answer.body).toEqual({
    error: 'credit limits would total 1100.00 PKR, above the organisation budget of 1000.00 PKR',
  });
  const keys = (await client.get('/keys')).body.keys;
  expect(keys.find((k: any) => k.id === a.id).credit_limit_cents).toBeNull();
});
