import type { FastifyInstance } from 'fastify';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIVE_KEY_NAME, startLiveTraffic } from '../../server/demo/live-traffic.js';
import { DEMO_ORGANIZATION } from '../../server/demo/organisation.js';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../server/gateway/simulated-upstream.js';
import { startGateway } from './gateway-harness.js';
import { register, startServer, type TestClient, type TestServer } from './harness.js';

let server: TestServer;
let upstream: SimulatedUpstream;
let gateway: FastifyInstance;
let gatewayUrl: string;
let owner: { client: TestClient };

beforeAll(async () => {
  server = await startServer({ gatewayFlushMs: 50 });
  upstream = await startSimulatedUpstream({ realistic: false });
  ({ gateway, url: gatewayUrl } = await startGateway(server, {
    byProvider: {},
    fallback: { baseUrl: upstream.url, apiKey: null },
  }));
  owner = await register(server, { org: DEMO_ORGANIZATION });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
  await server.close();
});

const start = () =>
  startLiveTraffic({
    control: server.app.control,
    dataDir: server.dataDir,
    keyHashSecret: server.app.secrets.keyHashSecret,
    gatewayUrl,
    now: server.config.now,
    seed: 7,
    meanGapMs: 50,
    onError: (error) => {
      throw error;
    },
  });

async function liveKeys(): Promise<{ id: string; name: string }[]> {
  const keys = (await owner.client.get('/keys')).body.keys as { id: string; name: string }[];
  return keys.filter((key) => key.name === LIVE_KEY_NAME);
}

describe('the demo live traffic', () => {
  it('sends requests through the gateway over HTTP with a key of its own, which later starts reuse', async () => {
    const traffic = (await start())!;
    expect(traffic).not.toBeNull();
    const [key] = await liveKeys();
    expect(key).toBeDefined();
    let rows: { status: number; metadata: Record<string, string>; key: { name: string } }[] = [];
    for (let attempt = 0; attempt < 100 && rows.length < 3; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = (await owner.client.get(`/analytics/requests?key_id=${key!.id}&time_range=1h`)).body.requests;
    }
    await traffic.stop();
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      expect(row.status).toBe(200);
      expect(row.metadata.feature).toBe('live-demo');
    }
    // Its secret is kept for the owner alone, and the next start calls with the same key.
    expect(statSync(join(server.dataDir, 'demo-live-key')).mode & 0o777).toBe(0o600);
    const again = (await start())!;
    await again.stop();
    expect((await liveKeys()).map((k) => k.id)).toEqual([key!.id]);

    // Revoked by an admin: the next start makes another rather than calling with a dead key.
    expect((await owner.client.delete(`/keys/${key!.id}`)).status).toBe(200);
    const third = (await start())!;
    await third.stop();
    const now = await liveKeys();
    expect(now).toHaveLength(1);
    expect(now[0]!.id).not.toBe(key!.id);
  });

  it('sends what coding agents and retrieval pipelines send beside chat completions, each turn a row of its API', async () => {
    const traffic = (await start())!;
    const [key] = await liveKeys();
    const seen = new Map<string, { status: number; user_agent: string }[]>();
    for (let attempt = 0; attempt < 200 && seen.size < 4; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const rows = (await owner.client.get(`/analytics/requests?key_id=${key!.id}&time_range=1h&limit=200`)).body
        .requests as { api: string; status: number; user_agent: string }[];
      seen.clear();
      for (const row of rows) seen.set(row.api, [...(seen.get(row.api) ?? []), row]);
    }
    await traffic.stop();
    expect([...seen.keys()].sort()).toEqual(['chat', 'embeddings', 'messages', 'responses']);
    for (const rows of seen.values()) for (const row of rows) expect(row.status).toBe(200);
    expect(seen.get('messages')!.every((row) => row.user_agent.startsWith('claude-cli/'))).toBe(true);
    expect(seen.get('responses')!.every((row) => row.user_agent.startsWith('codex_exec/'))).toBe(true);
  });

  it('does nothing for a folder without the demo organisation', async () => {
    const other = await startServer();
    try {
      const traffic = await startLiveTraffic({
        control: other.app.control,
        dataDir: other.dataDir,
        keyHashSecret: other.app.secrets.keyHashSecret,
        gatewayUrl,
        now: other.config.now,
      });
      expect(traffic).toBeNull();
    } finally {
      await other.close();
    }
  });
});
