import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { mkdirSync, rmSync } from 'node:fs';
import { profileFilePath, readProfileFile } from '../profile-file.js';
import { writeAtomically } from '../profiles.js';
import { AlertRules, FiredAlert, type AlertRule } from './rules.js';

/** How many fired alerts a profile keeps: the newest, enough for the list on screen. */
export const KEPT_ALERTS = 100;

const ProfileAlerts = Type.Object({
  rules: AlertRules,
  fired: Type.Array(Type.Intersect([FiredAlert, Type.Object({ delivered: Type.Boolean() })])),
  /** Conditions that held at the last check (`ruleId|subject`): they fire again only after clearing. */
  active: Type.Array(Type.String()),
  seq: Type.Integer({ minimum: 0 }),
});
export type ProfileAlerts = Static<typeof ProfileAlerts>;
export type StoredAlert = ProfileAlerts['fired'][number];

const check = TypeCompiler.Compile(ProfileAlerts);

/** A condition that held at the last check, as `active` keeps it: `ruleId|subject`. */
export const activeKey = (condition: { ruleId: string; subject: string }) => `${condition.ruleId}|${condition.subject}`;
export const ruleOf = (key: string) => key.slice(0, key.indexOf('|'));
const empty = (): ProfileAlerts => ({ rules: [], fired: [], active: [], seq: 0 });

/**
 * Each profile's alert rules and what they fired, one file per profile in the console's data
 * folder (`alerts/<profile>.json`, owner-only, written whole). A file that is not what this
 * version writes (hand-edited, from another version) is set aside rather than half-read.
 * Without a folder (a host made for a test), they live in memory only.
 */
export class AlertStore {
  private readonly cache = new Map<string, ProfileAlerts>();

  constructor(private readonly dir: string | null) {
    if (dir !== null) mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  get(profileId: string): ProfileAlerts {
    let alerts = this.cache.get(profileId);
    if (!alerts) {
      alerts = this.read(profileId);
      this.cache.set(profileId, alerts);
    }
    return alerts;
  }

  setRules(profileId: string, rules: AlertRule[]): ProfileAlerts {
    const alerts = this.get(profileId);
    const ids = new Set(rules.map((rule) => rule.id));
    return this.save(profileId, {
      ...alerts,
      rules,
      // A rule removed forgets what it found: added back, it fires afresh.
      active: alerts.active.filter((key) => ids.has(ruleOf(key))),
    });
  }

  save(profileId: string, alerts: ProfileAlerts): ProfileAlerts {
    const kept = { ...alerts, fired: alerts.fired.slice(-KEPT_ALERTS) };
    if (this.dir !== null) writeAtomically(this.path(profileId), Buffer.from(JSON.stringify(kept, null, 2)));
    this.cache.set(profileId, kept);
    return kept;
  }

  /** The page raised the alerts up to `through` (the web shell's notifications). */
  markDelivered(profileId: string, through: number): void {
    const alerts = this.get(profileId);
    const fired = alerts.fired.map((alert) => (alert.seq <= through ? { ...alert, delivered: true } : alert));
    this.save(profileId, { ...alerts, fired });
  }

  remove(profileId: string): void {
    this.cache.delete(profileId);
    if (this.dir !== null) rmSync(this.path(profileId), { force: true });
  }

  private read(profileId: string): ProfileAlerts {
    return this.dir === null ? empty() : readProfileFile(this.path(profileId), check, empty);
  }

  private path(profileId: string): string {
    return profileFilePath(this.dir ?? '', profileId);
  }
}
