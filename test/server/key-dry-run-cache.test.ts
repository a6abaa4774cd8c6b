import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../server/domain/keys.js';
import { hashApiKeySecret } from '../../server/security/tokens.js';
import { ReadCache } from '../../server/stores/read-cache.js';
import { registerOrg, startServer, type TestServer } from './harness.js';

/**
 * A dry run (POST /keys/bulk with dry_run) does its writes and rolls them back. SQLite's
 * total_changes() does not go back down on a rollback, so an answer cached inside the
 * transaction would outlive it: the caches read through while a transaction is open.
 */

class Undo extends Error {}

describe('a read cache inside a transaction that is rolled back', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gc-read-cache-'));
  const db = new BetterSqlite3(join(scratch, 'cache.db'));
  afterAll(() => {
    db.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('answers the rolled-back value inside, and the committed one after', () => {
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER); INSERT INTO t VALUES ('a', 1)");
    const cache = new ReadCache<number>(db);
    const select = db.prepare<[], number>("SELECT v FROM t WHERE k = 'a'").pluck();
    const read = () => cache.get('a', () => select.get()!);
    expect(read()).toBe(1);
    expect(() =>
      db.transaction(() => {
        db.exec("UPDATE t SET v = 2 WHERE k = 'a'");
        expect(read()).toBe(2);
        throw new Undo();
      })(),
    ).toThrow(Undo);
    // Same turn of the event loop, no commit anywhere: only the rollback tells the value apart.
    expect(read()).toBe(1);
  });
});

describe('a key revoked in a transaction that is rolled back (a dry run)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('is still admitted by the gateway, even when the gateway’s key lookup ran inside the transaction', async () => {
    const org = await registerOrg(server);
    const created = await org.client.post('/keys', { project_id: org.projectId, name: 'dry run' });
    expect(created.status).toBe(201);
    const { control, admissions } = server.app;
    const admit = async () =>
      (
        await admissions.admit({
          reqId: `req_${randomUUID()}`,
          secret: created.body.api_key,
          model: 'openai/gpt-4o-mini',
          boundCharacters: 10,
          maxGenerated: 10,
          timeoutMs: 1000,
        })
      ).kind;
    const actorId = (await org.client.get('/auth/me')).body.user_id as string;
    const hash = hashApiKeySecret(created.body.api_key, server.app.secrets.keyHashSecret);
    expect(await admit()).toBe('admitted');

    await expect(
      control.write(async (tx) => {
        await revokeKey(tx, {
          orgId: org.orgId,
          actorId,
          keyId: created.body.id,
          sourceIp: '127.0.0.1',
          now: Date.now(),
        });
        expect((await tx.keys.findBySecretHash(hash))?.revoked_at).not.toBeNull();
        expect(await tx.keys.list(org.orgId)).toHaveLength(0);
        throw new Undo();
      }),
    ).rejects.toThrow(Undo);

    expect(await admit()).toBe('admitted');
    expect((await control.keys.list(org.orgId)).map((k) => k.id)).toEqual([created.body.id]);
    // The connection the transaction ran on answers as committed too.
    await control.read(async (tx) => {
      expect((await tx.keys.findBySecretHash(hash))?.revoked_at).toBeNull();
      expect((await tx.keys.list(org.orgId)).map((k) => k.id)).toEqual([created.body.id]);
    });
  });
});
