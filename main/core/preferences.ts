import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { mkdirSync, rmSync } from 'node:fs';
import { profileFilePath, readProfileFile } from './profile-file.js';
import { Preferences, type StoredPreferences, type Theme } from './preference-schema.js';
import { writeAtomically } from './profiles.js';

/** One profile's file: each account signed in on it (by user id) and its preferences. */
const ProfilePreferences = Type.Object({ users: Type.Record(Type.String({ minLength: 1 }), Preferences) });
type ProfilePreferences = Static<typeof ProfilePreferences>;

const check = TypeCompiler.Compile(ProfilePreferences);
const DEFAULTS: Preferences = { theme: 'system' };
const empty = (): ProfilePreferences => ({ users: {} });

/**
 * Each user's console preferences, kept per connection profile and account, one file per
 * profile in the console's data folder (`preferences/<profile>.json`, owner-only, written
 * whole): two accounts on one connection keep their own theme. Without a folder (a host made
 * for a test) they live in memory only.
 */
export class PreferenceStore {
  private readonly cache = new Map<string, ProfilePreferences>();

  constructor(private readonly dir: string | null) {
    if (dir !== null) mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  get(profileId: string, userId: string): Preferences {
    const { users } = this.load(profileId);
    return Object.hasOwn(users, userId) ? users[userId]! : DEFAULTS;
  }

  /** The account's preferences, and whether it ever saved any (a choice made before sign-in may then be its own). */
  read(profileId: string, userId: string): StoredPreferences {
    return { ...this.get(profileId, userId), saved: Object.hasOwn(this.load(profileId).users, userId) };
  }

  setTheme(profileId: string, userId: string, theme: Theme): Preferences {
    const saved = { ...this.get(profileId, userId), theme };
    const next = { users: { ...this.load(profileId).users, [userId]: saved } };
    if (this.dir !== null) writeAtomically(profileFilePath(this.dir, profileId), Buffer.from(JSON.stringify(next)));
    this.cache.set(profileId, next);
    return saved;
  }

  /** A removed connection takes its users' preferences with it. */
  remove(profileId: string): void {
    this.cache.delete(profileId);
    if (this.dir !== null) rmSync(profileFilePath(this.dir, profileId), { force: true });
  }

  private load(profileId: string): ProfilePreferences {
    let preferences = this.cache.get(profileId);
    if (!preferences) {
      preferences = this.dir === null ? empty() : readProfileFile(profileFilePath(this.dir, profileId), check, empty);
      this.cache.set(profileId, preferences);
    }
    return preferences;
  }
}
