import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register, startServer, type TestServer } from './harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('harness', () => {
  it('keeps the Secure session cookies on a loopback server', async () => {
    const { client } = await register(server);
    const me = await client.get('/auth/me');
    expect(me.status).toBe(200);
    expect(await client.cookie('svc_refresh_token')).toBeDefined();
  });
});
