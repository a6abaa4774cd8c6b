import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoute, register, startServer, TestClient, type TestServer } from './harness.js';

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
    // Every route of the document, inactive ones included (old requests used them).
    const catalogue: string[] = (await client.get('/models')).body.models.map((m: { id: string }) => m.id);
    expect(listed.length).toBeGreaterThan(5);
    expect(listed.every((model) => catalogue.includes(model))).toBe(true);
    expect(listed).toContain('openai/gpt-3.5-turbo');
  });

  it("lists a route the operator applies at the document's price, and needs a session", async () => {
    const { client } = await register(server);
    await addRoute(server, 'acme/priced-1');
    expect((await client.get('/models/prices')).body.prices).toContainEqual({
      model: 'acme/priced-1',
      input: 10,
      output: 20,
      cache_write: 0,
      cache_read: 0,
    });
    // Every route has a price: the list of prices and the list of models name the same routes.
    const priced = (await client.get('/models/prices')).body.prices.map((p: { model: string }) => p.model);
    const models = (await client.get('/models')).body.models.map((m: { id: string }) => m.id);
    expect(priced).toEqual(models);
    expect((await new TestClient(server.baseUrl).get('/models/prices')).status).toBe(401);
  });
});
