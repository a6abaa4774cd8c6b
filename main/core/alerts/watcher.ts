import type { ControlPlaneClient } from '../client.js';
import { ConsoleError } from '../errors.js';
import type { AlertStore, ProfileAlerts, StoredAlert } from './alert-store.js';
import { conditions, type Observed } from './conditions.js';
import type { AlertCheck, AlertRule } from './rules.js';

/** The largest page of GET /analytics/spend; an organisation's keys are read a page at a time. */
const SPEND_PAGE = 200;
/** Pages read at most per check: 10,000 keys. */
const MAX_SPEND_PAGES = 50;

export interface WatcherOptions {
  store: AlertStore;
  /** The control plane of a signed-in profile, or null when the profile is signed out (nothing is read then). */
  client(profileId: string): Promise<ControlPlaneClient | null>;
  /** The profiles there are. */
  profiles(): string[];
  /** Told of each alert as it fires (the Electron shell raises a native notification). */
  notify?: (profileId: string, alert: StoredAlert) => void;
  now?: () => number;
}

/**
 * Checks each profile's alert rules against its control plane, in the host (so a closed window
 * still alerts from the Electron shell's tray), and fires an alert when a rule starts to hold for
 * a subject; it fires again only after the condition has cleared. What a rule needs is read only
 * when a rule needs it, and one check of a profile runs at a time.
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

  private async checkNow(profileId: string): Promise<AlertCheck> {
    const now = (this.options.now ?? Date.now)();
    const { rules } = this.options.store.get(profileId);
    let problem: string | null = null;
    try {
      const client = rules.length > 0 ? await this.options.client(profileId) : null;
      if (rules.length > 0 && !client) problem = 'signed out: sign in to this connection to check its rules';
      if (client) this.fire(profileId, conditions(rules, await observe(client, rules, now)), now);
    } catch (error) {
      problem =
        error instanceof ConsoleError && error.status === 401
          ? 'signed out: sign in to this connection to check its rules'
          : `could not read the control plane: ${error instanceof Error ? error.message : String(error)}`;
    }
    const check = { checkedAt: new Date(now).toISOString(), problem };
    this.checks.set(profileId, check);
    return check;
  }

  private fire(profileId: string, holding: ReturnType<typeof conditions>, now: number): void {
    const alerts: ProfileAlerts = this.options.store.get(profileId);
    const before = new Set(alerts.active);
    let seq = alerts.seq;
    const fired: StoredAlert[] = [];
    for (const condition of holding) {
      if (before.has(activeKey(condition))) continue;
      // Delivered here when the shell raises it; otherwise the page does and says so.
      const delivered = this.options.notify !== undefined;
      fired.push({ ...condition, seq: ++seq, firedAt: new Date(now).toISOString(), delivered });
    }
    const active = [...new Set(holding.map(activeKey))];
    const unchanged = fired.length === 0 && active.length === before.size && active.every((key) => before.has(key));
    if (unchanged) return;
    this.options.store.save(profileId, { ...alerts, seq, active, fired: [...alerts.fired, ...fired] });
    for (const alert of fired) this.options.notify?.(profileId, alert);
  }
}

const activeKey = (condition: { ruleId: string; subject: string }) => `${condition.ruleId}|${condition.subject}`;

/** What the rules need from the control plane, and nothing more. */
async function observe(client: ControlPlaneClient, rules: readonly AlertRule[], now: number): Promise<Observed> {
  const needs = new Set(rules.map((rule) => rule.kind));
  const keys = needs.has('limit_share') || needs.has('expires') ? (await client.call('listKeys', {})).keys : [];
  const spent = new Map<string, number>();
  if (needs.has('limit_share')) {
    for (const key of (await client.call('usageThrottling', { query: {} })).keys) spent.set(key.id, key.spent_cents);
  }
  const spend = needs.has('runs_out') ? await spendReport(client) : null;
  let recent: Observed['recent'] = null;
  if (needs.has('error_rate')) {
    const [all, errors] = await Promise.all([
      client.call('summary', { query: { time_range: '15m' } }),
      client.call('requests', { query: { time_range: '15m', status_category: '5xx', limit: 1 } }),
    ]);
    recent = { requests: all.total_requests, errors: errors.total };
  }
  return { now, keys, spent, spend, recent };
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
