import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProviderKey } from '../../server/security/vault-cipher.js';
import { controlSql, register, startServer, type TestServer } from './harness.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|\+00:00)$/;

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A provider key that looks real and is unique to the test. */
const providerKey = (tag: string) => `sk-proj-${tag}-${Math.random().toString(36).slice(2, 14)}WXYZ${tag.length}`;

/** The sealed rows of the control store, read the way an attacker with the file or the database would. */
function sealedRows(): Promise<{ org_id: string; provider: string; sealed: Buffer; org_name: string }[]> {
  return controlSql(
    server,
    `SELECT v.org_id, v.provider, v.sealed, o.name AS org_name
     FROM vault_keys v JOIN organizations o ON o.id = v.org_id`,
  );
}

function masterKey(): Buffer {
  return Buffer.from(readFileSync(join(server.dataDir, 'vault-master.key'), 'utf8').trim(), 'base64');
}

describe('POST /vault/keys', () => {
  it('stores a key and answers its provider, hint and times, never the key', async () => {
    const { client } = await register(server);
    const secret = providerKey('store');
    const answer = await client.post('/vault/keys', { provider: 'openai', api_key: secret });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(['created_at', 'key_hint', 'provider', 'updated_at']);
    expect(answer.body.provider).toBe('openai');
    expect(answer.body.key_hint).toBe('…' + secret.slice(-4));
    expect(answer.body.created_at).toMatch(ISO_UTC);
    expect(answer.body.updated_at).toBe(answer.body.created_at);
    expect(JSON.stringify(answer.body)).not.toContain(secret.slice(0, -4));
  });

  it('rotates a key: created_at kept, updated_at and hint changed', async () => {
    const { client } = await register(server);
    const first = await client.post('/vault/keys', { provider: 'anthropic', api_key: 'sk-ant-first-key-0001' });
    expect(first.status).toBe(200);
    server.advance(5_000);
    const second = await client.post('/vault/keys', { provider: 'anthropic', api_key: 'sk-ant-second-key-0002' });
    expect(second.status).toBe(200);
    expect(second.body.created_at).toBe(first.body.created_at);
    expect(Date.parse(second.body.updated_at) - Date.parse(first.body.updated_at)).toBeGreaterThanOrEqual(5_000);
    expect(first.body.key_hint).toBe('…0001');
    expect(second.body.key_hint).toBe('…0002');
    const list = (await client.get('/vault/keys')).body.keys;
    expect(list).toEqual([second.body]);
  });

  it('answers 422 for a provider name outside the pattern', async () => {
    const { client } = await register(server);
    const bad = ['', 'OpenAI', '-openai', '_x', 'open ai', 'open/ai', 'a'.repeat(65), 'ópenai'];
    for (const provider of bad) {
      const answer = await client.post('/vault/keys', { provider, api_key: 'sk-valid-key-1234' });
      expect(answer.status, JSON.stringify(provider)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', 'provider']);
    }
    const edge = await client.post('/vault/keys', { provider: '0' + 'a_-'.repeat(21), api_key: 'sk-valid-key-1234' });
    expect(edge.status).toBe(200);
    expect((await client.get('/vault/keys')).body.keys.map((k: any) => k.provider)).toEqual(['0' + 'a_-'.repeat(21)]);
  });

  it('answers 422 for an empty, over-long or non-string key, or a missing field', async () => {
    const { client } = await register(server);
    const cases: [Record<string, unknown>, string][] = [
      [{ provider: 'openai', api_key: '' }, 'api_key'],
      [{ provider: 'openai', api_key: 'k'.repeat(4097) }, 'api_key'],
      [{ provider: 'openai', api_key: 12345 }, 'api_key'],
      [{ provider: 'openai' }, 'api_key'],
      [{ api_key: 'sk-valid-key-1234' }, 'provider'],
    ];
    for (const [body, field] of cases) {
      const answer = await client.post('/vault/keys', body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(answer.body.detail[0].loc).toEqual(['body', field]);
    }
    expect((await client.get('/vault/keys')).body.keys).toEqual([]);
    const longest = await client.post('/vault/keys', { provider: 'openai', api_key: 'k'.repeat(4092) + 'LAST' });
    expect(longest.status).toBe(200);
    expect(longest.body.key_hint).toBe('…LAST');
  });
});

describe('GET and DELETE /vault/keys', () => {
  it('lists the organisation’s providers only, and removes a key once', async () => {
    const mine = await register(server);
    const theirs = await register(server);
    const secrets = { openai: providerKey('list-openai'), google: providerKey('list-google') };
    for (const [provider, secret] of Object.entries(secrets)) {
      expect((await mine.client.post('/vault/keys', { provider, api_key: secret })).status).toBe(200);
    }
    await theirs.client.post('/vault/keys', { provider: 'mistral', api_key: providerKey('theirs') });

    const list = await mine.client.get('/vault/keys');
    expect(list.status).toBe(200);
    expect(list.body.keys.map((k: any) => k.provider).sort()).toEqual(['google', 'openai']);
    for (const key of list.body.keys) {
      expect(Object.keys(key).sort()).toEqual(['created_at', 'key_hint', 'provider', 'updated_at']);
      expect(key.key_hint).toBe('…' + secrets[key.provider as 'openai' | 'google'].slice(-4));
    }
    const text = JSON.stringify(list.body);
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);

    // Another organisation cannot remove my key, nor I theirs.
    expect((await theirs.client.delete('/vault/keys/openai')).status).toBe(404);
    expect((await mine.client.delete('/vault/keys/mistral')).status).toBe(404);

    const removed = await mine.client.delete('/vault/keys/openai');
    expect(removed.status).toBe(200);
    expect(typeof removed.body.message).toBe('string');
    expect((await mine.client.delete('/vault/keys/openai')).status).toBe(404);
    expect((await mine.client.get('/vault/keys')).body.keys.map((k: any) => k.provider)).toEqual(['google']);
    expect((await theirs.client.get('/vault/keys')).body.keys.map((k: any) => k.provider)).toEqual(['mistral']);
  });

  it('answers 404 with an error sentence for a provider with no key, well-formed or not', async () => {
    const { client } = await register(server);
    for (const provider of ['deepseek', 'Not%20A%20Provider', 'x'.repeat(70)]) {
      const answer = await client.delete(`/vault/keys/${provider}`);
      expect(answer.status, provider).toBe(404);
      expect(typeof answer.body.error).toBe('string');
      expect(answer.headers['x-error-field'], provider).toBe('provider');
    }
  });

  it('needs a session', async () => {
    const { client } = await register(server);
    await client.post('/auth/logout');
    expect((await client.get('/vault/keys')).status).toBe(401);
    expect((await client.post('/vault/keys', { provider: 'openai', api_key: 'sk-x-1234' })).status).toBe(401);
  });
});

describe('vault encryption at rest', () => {
  it('keeps the master key in a file only the owner can read', () => {
    const mode = statSync(join(server.dataDir, 'vault-master.key')).mode & 0o777;
    expect(mode.toString(8)).toBe('600');
    expect(masterKey()).toHaveLength(32);
  });

  it('seals each key with AES-GCM bound to its organisation and provider', async () => {
    const { client, org } = await register(server);
    const other = await register(server);
    const secret = providerKey('sealed');
    await client.post('/vault/keys', { provider: 'openai', api_key: secret });
    await client.post('/vault/keys', { provider: 'google', api_key: secret });
    await other.client.post('/vault/keys', { provider: 'openai', api_key: secret });

    const rows = await sealedRows();
    const mine = rows.filter((row) => row.org_name === org);
    const sealed = mine.find((row) => row.provider === 'openai')!;
    const google = mine.find((row) => row.provider === 'google')!;
    const foreign = rows.find((row) => row.org_name === other.org && row.provider === 'openai')!;
    const key = masterKey();

    // The file never holds the key in clear, and the same key sealed twice differs (fresh nonce).
    expect(sealed.sealed.includes(Buffer.from(secret))).toBe(false);
    expect(sealed.sealed.length).toBe(12 + 16 + Buffer.byteLength(secret));
    expect(sealed.sealed.equals(google.sealed)).toBe(false);
    expect(sealed.sealed.subarray(0, 12).equals(foreign.sealed.subarray(0, 12))).toBe(false);

    expect(openProviderKey(key, sealed.org_id, 'openai', sealed.sealed)).toBe(secret);
    expect(openProviderKey(key, foreign.org_id, 'openai', foreign.sealed)).toBe(secret);
    // The wrong provider, the wrong organisation or the wrong master key fails authentication.
    expect(() => openProviderKey(key, sealed.org_id, 'google', sealed.sealed)).toThrow();
    expect(() => openProviderKey(key, foreign.org_id, 'openai', sealed.sealed)).toThrow();
    const wrongKey = Buffer.from(key);
    wrongKey[0] = wrongKey[0]! ^ 1;
    expect(() => openProviderKey(wrongKey, sealed.org_id, 'openai', sealed.sealed)).toThrow();
    // A flipped bit anywhere in the sealed bytes is detected.
    for (const position of [0, 12, 28, sealed.sealed.length - 1]) {
      const tampered = Buffer.from(sealed.sealed);
      tampered[position] = tampered[position]! ^ 0x80;
      expect(() => openProviderKey(key, sealed.org_id, 'openai', tampered), String(position)).toThrow();
    }
  });

  it('re-seals with a fresh nonce on every rotation, even to the same key', async () => {
    const { client, org } = await register(server);
    const secret = providerKey('rotate');
    await client.post('/vault/keys', { provider: 'openai', api_key: secret });
    const before = (await sealedRows()).find((row) => row.org_name === org)!;
    await client.post('/vault/keys', { provider: 'openai', api_key: secret });
    const after = (await sealedRows()).find((row) => row.org_name === org)!;
    expect(after.sealed.equals(before.sealed)).toBe(false);
    expect(openProviderKey(masterKey(), after.org_id, 'openai', after.sealed)).toBe(secret);
  });

  it('never writes a provider key to the log or the activity trail', async () => {
    const { client } = await register(server);
    const secret = providerKey('nolog');
    await client.post('/vault/keys', { provider: 'openai', api_key: secret });
    await client.post('/vault/keys', { provider: 'openai', api_key: '' });
    await client.delete('/vault/keys/openai');
    const activity = await client.get('/activity');
    expect(activity.body.events.map((e: any) => [e.action, e.target]).slice(0, 2)).toEqual([
      ['vault_key.revoked', 'openai'],
      ['vault_key.set', 'openai'],
    ]);
    expect(JSON.stringify(activity.body)).not.toContain(secret);
    expect(server.logs()).not.toContain(secret);
  });
});
