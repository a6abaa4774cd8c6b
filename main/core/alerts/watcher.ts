import type { ControlPlaneClient } from '../client.js';
import { ConsoleError } from '../errors.js';
import { activeKey, ruleOf, type AlertStore, type StoredAlert } from './alert-store.js';
import { conditions, type Observed } from './conditions.js';
import type { AlertCheck, AlertRule } from './rules.js';

/** The largest page of GET /analytics/spend; an organisation's keys are read a page at a time. */
const SPEND_PAGE = 200;
/** Pages read at most per check: 10,000 keys. */
const MAX_SPEND_PAGES = 50;
const SIGNED_OUT = 'signed out: sign in to this connection to check its rules';

export interface WatcherOptions {
  store: AlertStore;
  /** The control plane of a signed-in profile, or null when the profile is signed out (nothing is read then). */
  client(profileId: string): Promise<ControlPlaneClient | null>;
  /** The profiles there are. */
  profiles(): string[];
  /** The shell's own notification of a new alert, where it has one (Electron); true when it was raised. */
  notify?: (profileId: string, alert: StoredAlert) => boolean;
  now?: () => number;
}

/** What a check read, and which rules it could not judge (their data unknown) with why. */
interface Reading {
  observed: Observed;
  unknown: Set<AlertRule['kind']>;
  problems: string[];
}

/**
 * Checks each profile's alert rules against its control plane, in the host (so a closed window
 * still alerts from the Electron shell), and fires an alert when a rule starts to hold for a
 * subject; it fires again only after the condition has cleared. A rule whose data could not be
 * read keeps what it held (unknown is not "cleared"). What a rule needs is read only when a rule
 * needs it, and one check of a profile runs at a time.
 */
export class AlertWatcher {
  private readonly checks = new Map<string, AlertCheck>();
  private readonly running = new Map<string, Promise<AlertCheck>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: WatcherOptions) {}

  /** Checks every profile with rules now and then every `everyMs`. */
  start(everyMs: number): void {
    this.stop();
    const all = () => {
      for (const profileId of this.options.profiles()) {
        if (this.options.store.get(profileId).rules.length > 0) void this.check(profileId);
      }
    };
    this.timer = setInterval(all, everyMs);
    this.timer.unref();
    all();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  status(profileId: string): AlertCheck {
    return this.checks.get(profileId) ?? { checkedAt: null, problem: null };
  }

  /** One check of the profile's rules; a check already on its way is shared. */
  check(profileId: string): Promise<AlertCheck> {
    let running = this.running.get(profileId);
    if (!running) {
      running = this.checkNow(profileId).finally(() => this.running.delete(profileId));
      this.running.set(profileId, running);
    }
    return running;
  }

  /** A check that starts after now (the rules just changed): one on its way read the old rules. */
  async recheck(profileId: string): Promise<AlertCheck> {
    await this.running.get(profileId)?.catch(() => undefined);
    return this.check(profileId);
  }

  private async checkNow(profileId: string): Promise<AlertCheck> {
    const now = (this.options.now ?? Date.now)();
    const { rules } = this.options.store.get(profileId);
    let problem: string | null = null;
    if (rules.length > 0) {
      try {
        const client = await this.options.client(profileId);
        if (!client) problem = SIGNED_OUT;
        else {
          const reading = await read(client, rules, now);
          this.fire(profileId, conditions(rules, reading.observed), reading.unknown, now);
          problem = reading.problems.length > 0 ? reading.problems.join('; ') : null;
        }
      } catch (error) {
        problem = describe(error);
      }
    }
    const check = { checkedAt: new Date(now).toISOString(), problem };
    this.checks.set(profileId, check);
    return check;
  }

  private fire(profileId: string, holding: ReturnType<typeof conditions>, unknown: Set<string>, now: number): void {
    // The profile may have gone, or its rules changed, while the control plane was read.
    if (!this.options.profiles().includes(profileId)) return;
    const alerts = this.options.store.get(profileId);
    const rules = new Map(alerts.rules.map((rule) => [rule.id, rule.kind]));
    const current = holding.filter((condition) => rules.has(condition.ruleId));
    const before = new Set(alerts.active);
    // What a rule whose data is unknown held stays held: it neither clears nor fires again.
    const kept = alerts.active.filter((key) => unknown.has(rules.get(ruleOf(key)) ?? ''));
    const active = [...new Set([...kept, ...current.map(activeKey)])];
    let seq = alerts.seq;
    const fired: StoredAlert[] = [];
    for (const condition of current) {
      if (before.has(activeKey(condition))) continue;
      fired.push({ ...condition, seq: ++seq, firedAt: new Date(now).toISOString(), delivered: false });
    }
    const unchanged = fired.length === 0 && active.length === before.size && active.every((key) => before.has(key));
    if (unchanged) return;
    // Raised by the shell, or left for the page to raise.
    for (const alert of fired) alert.delivered = this.options.notify?.(profileId, alert) ?? false;
    this.options.store.save(profileId, { ...alerts, seq, active, fired: [...alerts.fired, ...fired] });
  }
}

function describe(error: unknown): string {
  if (error instanceof ConsoleError && error.status === 401) return SIGNED_OUT;
  return `could not read the control plane: ${error instanceof Error ? error.message : String(error)}`;
}

/** What the rules need from the control plane, and nothing more; each part that fails leaves its rules unknown. */
async function read(client: ControlPlaneClient, rules: readonly AlertRule[], now: number): Promise<Reading> {
  const needs = new Set(rules.map((rule) => rule.kind));
  const spent = new Map<string, number>();
  const observed: Observed = { now, keys: [], spent, spend: null, recent: null };
  const reading: Reading = { observed, unknown: new Set(), problems: [] };
  const part = async (kinds: AlertRule['kind'][], load: () => Promise<void>) => {
    if (!kinds.some((kind) => needs.has(kind))) return;
    try {
      await load();
    } catch (error) {
      // Signed out: nothing can be read; the whole check says so.
      if (error instanceof ConsoleError && error.status === 401) throw error;
      for (const kind of kinds) reading.unknown.add(kind);
      reading.problems.push(describe(error));
    }
  };
  await part(['limit_share', 'expires'], async () => {
    observed.keys = (await client.call('listKeys', {})).keys;
  });
  await part(['limit_share'], async () => {
    for (const key of (await client.call('usageThrottling', { query: {} })).keys) {
      spent.set(key.id, key.spent_cents);
    }
  });
  await part(['runs_out'], async () => {
    observed.spend = await spendReport(client);
    if (observed.spend === null) {
      reading.unknown.add('runs_out');
      reading.problems.push('this control plane gives no spend forecasts (GET /analytics/spend): run-out rules wait');
    }
  });
  await part(['error_rate'], async () => {
    const [all, errors] = await Promise.all([
      client.call('summary', { query: { time_range: '15m' } }),
      client.call('requests', { query: { time_range: '15m', status_category: '5xx', limit: 1 } }),
    ]);
    observed.recent = { requests: all.total_requests, errors: errors.total };
  });
  return reading;
}

/** Every page of GET /analytics/spend; null when the control plane does not offer it. */
async function spendReport(client: ControlPlaneClient): Promise<Observed['spend']> {
  try {
    const first = await client.call('spend', { query: { limit: SPEND_PAGE, sort: 'runs_out' } });
    const keys = [...first.keys];
    for (let page = 1; page < MAX_SPEND_PAGES && keys.length < first.total; page++) {
      const next = await client.call('spend', { query: { limit: SPEND_PAGE, offset: keys.length, sort: 'runs_out' } });
      if (next.keys.length === 0) break;
      keys.push(...next.keys);
    }
    return { organization: first.organization, keys };
  } catch (error) {
    if (error instanceof ConsoleError && (error.status === 404 || error.status === 501)) return null;
    throw error;
  }
}
