import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, runOperator, startServer, TestClient, type TestServer } from './harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('GET /models/prices (beyond the contract)', () => {
  it("lists each priced route at the gateway's own prices, PKR per million tokens, and the BYOK share", async () => {
    const { client } = await register(server);
    const answer = await client.get('/models/prices');
    expect(answer.status).toBe(200);
    expect(answer.body.byok_service_share).toBe(0.02);
    expect(answer.body.prices).toContainEqual({
      model: 'openai/gpt-4o-mini',
      input: 42,
      output: 168,
      cache_write: 42,
      cache_read: 21,
    });
    const listed: string[] = answer.body.prices.map((p: { model: string }) => p.model);
    // Every route of the catalogue that has a price, inactive ones included (old requests used them).
    const catalogue: string[] = (await client.get('/models')).body.models.map((m: { id: string }) => m.id);
    expect(listed.length).toBeGreaterThan(5);
    expect(listed.every((model) => catalogue.includes(model))).toBe(true);
    expect(listed).toContain('openai/gpt-3.5-turbo');
  });

  it('leaves out a route the operator added without a price, and needs a session', async () => {
    const { client } = await register(server);
    await runOperator(server, 'add-model', '--id', 'acme/unpriced-1');
    const listed = (await client.get('/models/prices')).body.prices.map((p: { model: string }) => p.model);
    expect(listed).not.toContain('acme/unpriced-1');
    expect((await client.get('/models')).body.models.map((m: { id: string }) => m.id)).toContain('acme/unpriced-1');
    expect((await new TestClient(server.baseUrl).get('/models/prices')).status).toBe(401);
  });
});
