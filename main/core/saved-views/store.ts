import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ConsoleError } from '../errors.js';
import { profileFilePath, readProfileFile } from '../profile-file.js';
import { writeAtomically } from '../profiles.js';
import { MAX_SAVED_VIEWS, SavedView, type ViewFilters, type ViewScreen } from './view.js';

/**
 * One profile's file: each account signed in on it (by user id) and its views. Read loosely,
 * then view by view: one view a hand edit spoilt does not cost the others.
 */
const ProfileViews = Type.Object({
  users: Type.Record(Type.String({ minLength: 1 }), Type.Object({ views: Type.Array(Type.Unknown()) })),
});
type ProfileViews = { users: Record<string, { views: SavedView[] }> };
const checkFile = TypeCompiler.Compile(ProfileViews);
const checkView = TypeCompiler.Compile(SavedView);
const empty = (): Static<typeof ProfileViews> => ({ users: {} });

/**
 * The web shell's per-launch secret rides in the address beside the route's parameters; a
 * view that kept it would write it to disk and hand it to whoever opens the view later. The
 * request open in the detail and the page are not a view's either.
 */
const NEVER_STORED = new Set(['token', 'request', 'page']);

const NAME = { field: 'name' };
const byName = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });
const folded = (name: string) => name.toLowerCase();

export interface NewView {
  name: string;
  screen: ViewScreen;
  filters: ViewFilters;
}

export interface ViewList {
  views: SavedView[];
  /** Views of the file that could not be read and were left out (the file is kept beside it). */
  setAside: number;
}

const kept = (filters: ViewFilters): ViewFilters =>
  Object.fromEntries(Object.entries(filters).filter(([key]) => !NEVER_STORED.has(key)));

/**
 * The views of one account as read from a file: those this version writes, each id and each
 * name (whatever its case) once, without what is never stored; the count of the others.
 */
function readViews(raw: readonly unknown[]): ViewList {
  const views: SavedView[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const view of raw.slice(0, MAX_SAVED_VIEWS)) {
    if (!checkView.Check(view) || ids.has(view.id) || names.has(folded(view.name))) continue;
    ids.add(view.id);
    names.add(folded(view.name));
    views.push({ ...view, filters: kept(view.filters) });
  }
  return { views, setAside: raw.length - views.length };
}

/**
 * Saved views, kept per connection profile and per account signed in on it (two accounts on
 * one connection, perhaps of two organisations, each see their own), one file per profile in
 * the console's data folder (`views/<profile>.json`, owner-only, written whole and atomically),
 * removed with the profile. Names are unique per account whatever their case, so the sidebar
 * never shows two alike. Without a folder (a host made for a test) they live in memory only.
 */
export class SavedViewStore {
  private readonly cache = new Map<string, { file: ProfileViews; setAside: Map<string, number> }>();

  constructor(private readonly dir: string | null) {
    if (dir !== null) mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** The account's views, by name, and how many of its file's could not be read. */
  list(profileId: string, userId: string): ViewList {
    const views = [...this.views(profileId, userId)].sort((a, b) => byName.compare(a.name, b.name));
    const { setAside } = this.load(profileId);
    return { views, setAside: (setAside.get(userId) ?? 0) + (setAside.get('*') ?? 0) };
  }

  save(profileId: string, userId: string, input: NewView): SavedView {
    const views = this.views(profileId, userId);
    const name = this.freeName(views, input.name, null);
    if (views.length >= MAX_SAVED_VIEWS) {
      throw new ConsoleError(409, `an account keeps at most ${MAX_SAVED_VIEWS} saved views: remove one first`);
    }
    const view: SavedView = { id: randomUUID(), name, screen: input.screen, filters: kept(input.filters) };
    this.write(profileId, userId, [...views, view]);
    return view;
  }

  rename(profileId: string, userId: string, viewId: string, newName: string): SavedView {
    const views = this.views(profileId, userId);
    const view = this.find(views, viewId);
    const renamed = { ...view, name: this.freeName(views, newName, viewId) };
    this.write(
      profileId,
      userId,
      views.map((v) => (v.id === viewId ? renamed : v)),
    );
    return renamed;
  }

  remove(profileId: string, userId: string, viewId: string): void {
    const views = this.views(profileId, userId);
    this.find(views, viewId);
    this.write(
      profileId,
      userId,
      views.filter((v) => v.id !== viewId),
    );
  }

  /** Forgets every view of a profile being removed, file and all. */
  removeProfile(profileId: string): void {
    this.cache.delete(profileId);
    if (this.dir !== null) rmSync(profileFilePath(this.dir, profileId), { force: true });
  }

  private views(profileId: string, userId: string): SavedView[] {
    const { users } = this.load(profileId).file;
    return Object.hasOwn(users, userId) ? users[userId]!.views : [];
  }

  private load(profileId: string) {
    let entry = this.cache.get(profileId);
    if (entry) return entry;
    entry = { file: { users: {} }, setAside: new Map<string, number>() };
    if (this.dir !== null) {
      const path = profileFilePath(this.dir, profileId);
      const existed = existsSync(path);
      const raw = readProfileFile(path, checkFile, empty);
      // A file not read at all was set aside whole (readProfileFile): the sidebar says so.
      if (existed && !existsSync(path)) entry.setAside.set('*', 1);
      let spoilt = false;
      for (const [userId, { views }] of Object.entries(raw.users)) {
        const read = readViews(views);
        entry.file.users[userId] = { views: read.views };
        if (read.setAside > 0) {
          entry.setAside.set(userId, read.setAside);
          spoilt = true;
        }
      }
      // Kept as it was for whoever edited it: the next write leaves out what could not be read.
      if (spoilt) copyFileSync(path, `${path}.bad-${Date.now()}`);
    }
    this.cache.set(profileId, entry);
    return entry;
  }

  private write(profileId: string, userId: string, views: SavedView[]): void {
    const entry = this.load(profileId);
    const file = { users: { ...entry.file.users, [userId]: { views } } };
    if (this.dir !== null) {
      writeAtomically(profileFilePath(this.dir, profileId), Buffer.from(JSON.stringify(file, null, 2)));
    }
    entry.file = file;
    // What was set aside is no longer in the file either: said once, until the account's next change.
    entry.setAside.delete(userId);
    entry.setAside.delete('*');
  }

  private find(views: readonly SavedView[], viewId: string): SavedView {
    const view = views.find((v) => v.id === viewId);
    if (!view) throw new ConsoleError(404, 'no such saved view: it may have been removed in another window');
    return view;
  }

  /** The name trimmed, when no other view of the account has it in any case; 400 or 409 at `name` otherwise. */
  private freeName(views: readonly SavedView[], text: string, self: string | null): string {
    const name = text.trim();
    if (name === '') throw new ConsoleError(400, 'a saved view needs a name', NAME);
    if (views.some((v) => v.id !== self && folded(v.name) === folded(name))) {
      throw new ConsoleError(409, `there is already a saved view named "${name}"`, NAME);
    }
    return name;
  }
}
