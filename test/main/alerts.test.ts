import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertStore, type StoredAlert } from '../../main/core/alerts/alert-store.js';
import type { AlertsView } from '../../main/core/contract.js';
import { ConsoleHost, type EmbeddedServerControl } from '../../main/core/host.js';
import { ownerOnlyFile, ProfileStore } from '../../main/core/profiles.js';
import { recordRequests } from '../../server/ingest/record-requests.js';
import { PASSWORD, register, runOperator, startServer, type TestServer } from '../server/harness.js';
import { requestRecord } from '../server/request-rows.js';

const noEmbedded: EmbeddedServerControl = {
  start: () => Promise.reject(new Error('embedded server not expected')),
  restart: () => Promise.reject(new Error('embedded server not expected')),
  status: () => ({ state: 'stopped', baseUrl: null, lastLog: [], demoAccount: null }),
  demoCredentials: () => null,
};
const PKR = 1_000_000;

let server: TestServer;
let folder: string;
beforeAll(async () => {
  server = await startServer();
  folder = mkdtempSync(join(tmpdir(), 'gc-console-alerts-'));
});
afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

async function ok<T>(host: ConsoleHost, name: string, args: unknown): Promise<T> {
  const answer = await host.dispatch(name, args);
  if (!answer.ok) throw new Error(`${name}: ${answer.error.status} ${answer.error.message}`);
  return answer.result as T;
}

let rows = 0;
/** A row of `micro` for the key, a second ago, recorded as the gateway's are: its cost settles into the key's spend. */
async function spend(orgId: string, projectId: string, keyId: string, micro: number): Promise<void> {
  rows++;
  const record = { ...requestRecord(rows), req_id: `req-alert-${process.pid}-${rows}`, ts: Date.now() - 1000 };
  Object.assign(record, { org_id: orgId, project_id: projectId, key_id: keyId, cost_micro: micro });
  await recordRequests(server.app.control, server.config.telemetryDbPath, [record]);
}

/** A web-shell host on `dir`, its alerts kept there, checked only when asked (every hour otherwise). */
function hostOn(dir: string, notify?: (profileId: string, alert: StoredAlert) => boolean): ConsoleHost {
  return new ConsoleHost({
    shell: 'web',
    version: 'test',
    profiles: new ProfileStore(dir, ownerOnlyFile),
    embedded: noEmbedded,
    alerts: { store: new AlertStore(join(dir, 'alerts')), everyMs: 3_600_000, ...(notify ? { notify } : {}) },
  });
}

/** A host on a folder of its own, a remote profile signed in to a new organisation with one key limited to 10 PKR. */
async function setUp(notify?: (profileId: string, alert: StoredAlert) => boolean) {
  const dir = mkdtempSync(join(folder, 'host-'));
  const host = hostOn(dir, notify);
  const account = await register(server);
  await runOperator(server, 'deposit', '--org', account.org, '--pkr', '1000');
  const orgId = (await server.app.control.organizations.findByName(account.org))!.id;
  const projectId: string = (await account.client.get('/projects')).body.projects[0].id;
  const created = await account.client.post('/keys', { project_id: projectId, name: 'watched key' });
  const keyId: string = created.body.id;
  await account.client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: 10 });
  const { id: profileId } = await ok<{ id: string }>(host, 'profiles.add', {
    name: 'Remote',
    kind: 'remote',
    baseUrl: server.baseUrl,
  });
  await ok(host, 'session.signIn', { profileId, email: account.email, password: PASSWORD });
  return { host, dir, profileId, orgId, projectId, keyId, account };
}

describe('alert rules in the host', () => {
  it('fires when a key crosses its share, not again while it holds, and again after it cleared', async () => {
    const { host, profileId, orgId, projectId, keyId, account } = await setUp();
    const rules = [{ id: 'half', kind: 'limit_share', percent: 50 }];
    let view = await ok<AlertsView>(host, 'alerts.setRules', { profileId, rules });
    expect(view.rules).toEqual(rules);
    expect(view.fired).toEqual([]);
    expect(view.check.problem).toBeNull();

    await spend(orgId, projectId, keyId, 5 * PKR);
    view = await ok<AlertsView>(host, 'alerts.check', { profileId });
    expect(view.fired).toEqual([
      expect.objectContaining({
        seq: 1,
        ruleId: 'half',
        subject: keyId,
        title: 'watched key has spent 50% of its credit limit',
        screen: 'keys',
        delivered: false,
      }),
    ]);
    await spend(orgId, projectId, keyId, PKR);
    expect((await ok<AlertsView>(host, 'alerts.check', { profileId })).fired).toHaveLength(1);

    // A higher limit clears it; crossing again fires a second alert.
    await account.client.patch(`/keys/${keyId}`, { rate_limit_rpm: 60, credit_limit_pkr: 100 });
    expect((await ok<AlertsView>(host, 'alerts.check', { profileId })).fired).toHaveLength(1);
    await spend(orgId, projectId, keyId, 45 * PKR);
    view = await ok<AlertsView>(host, 'alerts.check', { profileId });
    expect(view.fired.map((alert) => [alert.seq, alert.title])).toEqual([
      [2, 'watched key has spent 51% of its credit limit'],
      [1, 'watched key has spent 50% of its credit limit'],
    ]);

    await ok(host, 'alerts.delivered', { profileId, through: 2 });
    expect((await ok<AlertsView>(host, 'alerts.get', { profileId })).fired.map((a) => a.delivered)).toEqual([
      true,
      true,
    ]);
    host.close();
  });

  it('keeps rules and alerts for the profile across a restart, and a file it did not write is set aside', async () => {
    const { host, dir, profileId, orgId, projectId, keyId } = await setUp();
    await ok(host, 'alerts.setRules', { profileId, rules: [{ id: 'r1', kind: 'limit_share', percent: 10 }] });
    await spend(orgId, projectId, keyId, 2 * PKR);
    await ok(host, 'alerts.check', { profileId });
    host.close();

    const again = hostOn(dir);
    const view = await ok<AlertsView>(again, 'alerts.get', { profileId });
    expect(view.rules).toEqual([{ id: 'r1', kind: 'limit_share', percent: 10 }]);
    expect(view.fired.map((a) => a.subject)).toEqual([keyId]);
    // Still holding after the restart: nothing fires twice.
    expect((await ok<AlertsView>(again, 'alerts.check', { profileId })).fired).toHaveLength(1);
    again.close();

    writeFileSync(join(dir, 'alerts', `${profileId}.json`), '{"rules": [{"kind": "nonsense"}]}');
    const third = hostOn(dir);
    expect((await ok<AlertsView>(third, 'alerts.get', { profileId })).rules).toEqual([]);
    expect(readdirSync(join(dir, 'alerts')).filter((name) => name.startsWith(`${profileId}.json.bad-`))).toHaveLength(
      1,
    );
    third.close();
  });

  it('refuses rules out of bounds or with one id twice, and says when the profile is signed out', async () => {
    const { host, profileId } = await setUp();
    const outOfBounds = await host.dispatch('alerts.setRules', {
      profileId,
      rules: [{ id: 'r', kind: 'limit_share', percent: 0 }],
    });
    expect(!outOfBounds.ok && outOfBounds.error.status).toBe(422);
    const twice = await host.dispatch('alerts.setRules', {
      profileId,
      rules: [
        { id: 'r', kind: 'expires', days: 3 },
        { id: 'r', kind: 'expires', days: 5 },
      ],
    });
    expect(!twice.ok && twice.error).toMatchObject({ status: 400, message: 'two alert rules have the same id' });

    await ok(host, 'alerts.setRules', { profileId, rules: [{ id: 'r', kind: 'expires', days: 3 }] });
    await ok(host, 'session.signOut', { profileId });
    const view = await ok<AlertsView>(host, 'alerts.check', { profileId });
    expect(view.check.problem).toMatch(/^signed out/);
    host.close();
  });

  it("hands each new alert to the shell's notifier, which marks it delivered", async () => {
    const notified: StoredAlert[] = [];
    const { host, profileId, orgId, projectId, keyId } = await setUp((_id, alert) => notified.push(alert) > 0);
    await ok(host, 'alerts.setRules', { profileId, rules: [{ id: 'r', kind: 'limit_share', percent: 100 }] });
    await spend(orgId, projectId, keyId, 10 * PKR);
    const view = await ok<AlertsView>(host, 'alerts.check', { profileId });
    expect(notified).toEqual([expect.objectContaining({ seq: 1, subject: keyId, delivered: true })]);
    expect(view.fired[0]!.delivered).toBe(true);
    host.close();
  });
});
