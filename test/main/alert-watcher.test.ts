import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AlertStore } from '../../main/core/alerts/alert-store.js';
import { AlertWatcher } from '../../main/core/alerts/watcher.js';
import type { ControlPlaneClient } from '../../main/core/client.js';
import { ConsoleError } from '../../main/core/errors.js';

/**
 * The watcher's order of events with a control plane whose answers the test releases: what
 * changes while a check reads (rules, the profile itself) and what a failed read leaves.
 */

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const DAY = 86_400_000;
const folder = mkdtempSync(join(tmpdir(), 'gc-alert-watcher-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const expiringKey = {
  id: 'k1',
  name: 'expiring key',
  key_prefix: 'sk_svc_abcdefgh',
  project_id: 'p',
  created_at: new Date(NOW - DAY).toISOString(),
  last_used_at: null,
  rate_limit_rpm: 60,
  expires_at: new Date(NOW + 3 * DAY).toISOString(),
  credit_limit_cents: null,
  allowed_models: null,
  environment: 'production',
};

/** A control plane that answers GET /keys when released, or fails as told. */
function gatedClient() {
  let release!: () => void;
  let gate = new Promise<void>((resolve) => (release = resolve));
  let failure: Error | null = null;
  const client = {
    async call(name: string) {
      if (name !== 'listKeys') throw new Error(`unexpected ${name}`);
      await gate;
      if (failure) throw failure;
      return { keys: [expiringKey] };
    },
  } as unknown as ControlPlaneClient;
  return {
    client,
    release: () => release(),
    reset: () => (gate = new Promise<void>((resolve) => (release = resolve))),
    fail: (error: Error | null) => (failure = error),
  };
}

function watcher(store: AlertStore, profiles: () => string[], client: ControlPlaneClient) {
  return new AlertWatcher({ store, profiles, client: async () => client, now: () => NOW });
}

describe('the alert watcher', () => {
  it('fires nothing for a rule removed while its check was reading', async () => {
    const store = new AlertStore(null);
    store.setRules('p1', [{ id: 'old', kind: 'expires', days: 30 }]);
    const gated = gatedClient();
    const watching = watcher(store, () => ['p1'], gated.client);
    const check = watching.check('p1');
    store.setRules('p1', [{ id: 'new', kind: 'expires', days: 1 }]);
    gated.release();
    await check;
    expect(store.get('p1').fired).toEqual([]);
    expect(store.get('p1').active).toEqual([]);
  });

  it('writes nothing back for a profile removed while its check was reading', async () => {
    const dir = join(folder, 'removed');
    const store = new AlertStore(dir);
    store.setRules('p1', [{ id: 'r', kind: 'expires', days: 30 }]);
    let profiles = ['p1'];
    const gated = gatedClient();
    const check = watcher(store, () => profiles, gated.client).check('p1');
    store.remove('p1');
    profiles = [];
    gated.release();
    await check;
    expect(existsSync(join(dir, 'p1.json'))).toBe(false);
  });

  it('keeps what a rule held while its data cannot be read, so it neither clears nor fires again', async () => {
    const store = new AlertStore(null);
    store.setRules('p1', [{ id: 'r', kind: 'expires', days: 30 }]);
    const gated = gatedClient();
    const watching = watcher(store, () => ['p1'], gated.client);
    gated.release();
    await watching.check('p1');
    expect(store.get('p1').fired.map((alert) => alert.subject)).toEqual(['k1']);

    gated.fail(new ConsoleError(503, 'analytics backend unavailable'));
    const failed = await watching.check('p1');
    expect(failed.problem).toBe('could not read the control plane: analytics backend unavailable');
    expect(store.get('p1').active).toEqual(['r|k1']);

    gated.fail(null);
    const recovered = await watching.check('p1');
    expect(recovered.problem).toBeNull();
    expect(store.get('p1').fired).toHaveLength(1);
  });

  it('checks the new rules when asked again while a check of the old ones is on its way', async () => {
    const store = new AlertStore(null);
    store.setRules('p1', [{ id: 'far', kind: 'expires', days: 1 }]);
    const gated = gatedClient();
    const watching = watcher(store, () => ['p1'], gated.client);
    const first = watching.check('p1');
    store.setRules('p1', [{ id: 'near', kind: 'expires', days: 30 }]);
    const again = watching.recheck('p1');
    gated.release();
    await first;
    await again;
    expect(store.get('p1').fired.map((alert) => alert.ruleId)).toEqual(['near']);
  });
});
