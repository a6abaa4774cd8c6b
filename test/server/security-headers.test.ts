import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient, startServer, type Answer, type TestServer } from './harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

function expectHardened(answer: Answer): void {
  expect(answer.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['x-frame-options']).toBe('DENY');
  expect(answer.headers['referrer-policy']).toBe('no-referrer');
  expect(answer.headers['cross-origin-opener-policy']).toBe('same-origin');
  expect(answer.headers['cross-origin-resource-policy']).toBe('same-origin');
  expect(answer.headers['strict-transport-security']).toBe('max-age=31536000');
  expect(answer.headers['x-powered-by']).toBeUndefined();
}

describe('security headers', () => {
  it('come with answers, refusals and unknown paths alike', async () => {
    const client = new TestClient(server.baseUrl);
    const answers = [
      await client.get('/openapi.json'),
      await client.get('/auth/me'),
      await client.post('/auth/login', { email: 'x' }),
      await client.get('/no/such/path'),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 401, 422, 404]);
    for (const answer of answers) expectHardened(answer);
  });
});
