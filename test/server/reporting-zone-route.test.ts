import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, TestClient, register, runOperator, startServer, type TestServer } from './harness.js';

const PATH = '/organization/reporting-zone';

/** The server's clock starts at noon UTC on 1 July 2026 (New York on -04:00, London on +01:00) and runs on. */
const CLOCK_START = Date.parse('2026-07-01T12:00:00Z');

let server: TestServer;
/** Moves the server's clock on (the harness's `advance` moves only its own clock, replaced here). */
let skipped = 0;
beforeAll(async () => {
  const started = Date.now();
  server = await startServer({ now: () => CLOCK_START + skipped + (Date.now() - started) });
});
afterAll(() => server.close());

const put = (client: TestClient, body: unknown, headers?: Record<string, string>) =>
  client.call('PUT', PATH, body, headers);

async function newestEvent(client: TestClient) {
  const answer = await client.get('/activity?limit=1');
  expect(answer.status).toBe(200);
  return answer.body.events[0];
}

describe('GET /organization/reporting-zone', () => {
  it('is UTC for a new organisation, for any member', async () => {
    const owner = await register(server);
    const member = await register(server, { org: owner.org });
    for (const client of [owner.client, member.client]) {
      const answer = await client.get(PATH);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ time_zone: 'UTC', utc_offset: '+00:00' });
    }
  });

  it('answers 401 without a session', async () => {
    const answer = await new TestClient(server.baseUrl).get(PATH);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ detail: 'Unauthorized' });
  });
});

describe('PUT /organization/reporting-zone', () => {
  it("sets the owner's organisation's zone, which every member then reads with its offset now", async () => {
    const owner = await register(server);
    const member = await register(server, { org: owner.org });
    const stranger = await register(server);

    const answer = await put(owner.client, { time_zone: 'Asia/Karachi' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ time_zone: 'Asia/Karachi', utc_offset: '+05:00' });
    expect((await member.client.get(PATH)).body).toEqual({ time_zone: 'Asia/Karachi', utc_offset: '+05:00' });
    // Another organisation keeps its own.
    expect((await stranger.client.get(PATH)).body).toEqual({ time_zone: 'UTC', utc_offset: '+00:00' });

    expect((await put(owner.client, { time_zone: 'Asia/Kathmandu' })).body).toEqual({
      time_zone: 'Asia/Kathmandu',
      utc_offset: '+05:45',
    });
    expect((await put(owner.client, { time_zone: 'America/St_Johns' })).body).toEqual({
      time_zone: 'America/St_Johns',
      utc_offset: '-02:30',
    });
  });

  it('lets an admin set it, and refuses a member with 403, keeping the zone', async () => {
    const owner = await register(server);
    const promoted = await register(server, { org: owner.org });
    const member = await register(server, { org: owner.org });
    await runOperator(server, 'set-role', '--email', promoted.email, '--role', 'admin');

    const byAdmin = await put(promoted.client, { time_zone: 'Europe/London' });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body).toEqual({ time_zone: 'Europe/London', utc_offset: '+01:00' });

    const byMember = await put(member.client, { time_zone: 'Asia/Tokyo' });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'owner or admin role required' });
    expect((await member.client.get(PATH)).body.time_zone).toBe('Europe/London');
    expect(await newestEvent(owner.client)).toMatchObject({
      action: 'org.reporting_zone_changed',
      actor: promoted.email,
    });
  });

  it('stores the canonical name, whatever the case or the old name given', async () => {
    const owner = await register(server);
    const cases: [string, string, string][] = [
      ['asia/karachi', 'Asia/Karachi', '+05:00'],
      ['ASIA/KOLKATA', 'Asia/Kolkata', '+05:30'],
      ['Asia/Calcutta', 'Asia/Kolkata', '+05:30'],
      ['america/new_york', 'America/New_York', '-04:00'],
      ['utc', 'UTC', '+00:00'],
      ['Etc/UTC', 'UTC', '+00:00'],
    ];
    for (const [given, stored, offset] of cases) {
      const answer = await put(owner.client, { time_zone: given });
      expect(answer.status, given).toBe(200);
      expect(answer.body, given).toEqual({ time_zone: stored, utc_offset: offset });
      expect((await owner.client.get(PATH)).body, given).toEqual({ time_zone: stored, utc_offset: offset });
      expect((await newestEvent(owner.client)).target, given).toBe(stored);
    }
  });

  it('answers 400 naming time_zone for a zone no one knows, and keeps the zone', async () => {
    const owner = await register(server);
    expect((await put(owner.client, { time_zone: 'Asia/Karachi' })).status).toBe(200);
    for (const bad of ['Mars/Olympus', '', 'UTC+5', '+05:00', 'Asia/Karachi ', 'local']) {
      const answer = await put(owner.client, { time_zone: bad });
      expect(answer.status, JSON.stringify(bad)).toBe(400);
      expect(Object.keys(answer.body)).toEqual(['error']);
      expect(answer.body.error).toContain('unknown time zone');
      expect(answer.headers['x-error-field']).toBe('time_zone');
    }
    expect((await owner.client.get(PATH)).body.time_zone).toBe('Asia/Karachi');
    expect((await newestEvent(owner.client)).target).toBe('Asia/Karachi');
  });

  it('answers 422 for a missing, non-string or over-long zone, and 415 for a body that is not JSON', async () => {
    const owner = await register(server);
    for (const body of [{}, { time_zone: 5 }, { time_zone: null }, { time_zone: 'A'.repeat(65) }]) {
      const answer = await put(owner.client, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(Array.isArray(answer.body.detail)).toBe(true);
    }
    const text = await put(owner.client, 'time_zone=UTC', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(text.status).toBe(415);
    expect((await owner.client.get(PATH)).body.time_zone).toBe('UTC');
  });

  it('refuses a request from another origin, as every state-changing request', async () => {
    const owner = await register(server);
    const answer = await put(owner.client, { time_zone: 'Asia/Karachi' }, { origin: 'https://evil.example' });
    expect(answer.status).toBe(403);
    expect((await owner.client.get(PATH)).body.time_zone).toBe('UTC');
  });

  it('records the change in the activity log, with the actor, the zone and the address', async () => {
    const owner = await register(server);
    expect((await put(owner.client, { time_zone: 'asia/karachi' })).status).toBe(200);
    const event = await newestEvent(owner.client);
    expect(event).toEqual({
      actor: owner.email,
      action: 'org.reporting_zone_changed',
      target: 'Asia/Karachi',
      timestamp: expect.any(String),
      source_ip: '127.0.0.1',
    });
    // Recorded at the server's clock.
    const recordedAt = Date.parse(event.timestamp);
    expect(recordedAt).toBeGreaterThanOrEqual(CLOCK_START);
    expect(recordedAt).toBeLessThan(CLOCK_START + 10 * 60_000);
  });
});

describe('the OpenAPI document', () => {
  it('lists both methods with their answers', async () => {
    const doc = (await new TestClient(server.baseUrl).get('/openapi.json')).body;
    const item = doc.paths[Object.keys(doc.paths).find((path) => path.endsWith(PATH))!];
    expect(Object.keys(item.get.responses)).toEqual(['200', '401']);
    expect(Object.keys(item.put.responses)).toEqual(['200', '400', '401', '403', '415', '422']);
  });
});

describe('the offset', () => {
  it("follows the zone's daylight saving at the server's clock", async () => {
    const owner = await register(server);
    const answer = await put(owner.client, { time_zone: 'America/New_York' });
    expect(answer.body).toEqual({ time_zone: 'America/New_York', utc_offset: '-04:00' });

    // Into January 2027: New York is on -05:00. The session has lapsed meanwhile; sign in again.
    skipped = Date.parse('2027-01-15T12:00:00Z') - CLOCK_START;
    const again = new TestClient(server.baseUrl);
    expect((await again.post('/auth/login', { email: owner.email, password: PASSWORD })).status).toBe(200);
    expect((await again.get(PATH)).body).toEqual({ time_zone: 'America/New_York', utc_offset: '-05:00' });
  });
});
