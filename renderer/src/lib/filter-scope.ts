import type { Key, Model, Project } from '../state/directory.js';
import type { RouteParams } from '../state/route.js';

/**
 * Which project, key and model a view is narrowed to, as the route's parameters hold it
 * (the analytics screen and the request log name them alike), and the choices offered.
 */

export interface Scope {
  project: string | null;
  key: string | null;
  model: string | null;
}

export type ScopePatch = Partial<Record<keyof Scope, string | null>>;

export function scopeFromParams(params: RouteParams): Scope {
  return { project: params.project ?? null, key: params.key ?? null, model: params.model ?? null };
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

export function sortedProjects(projects: readonly Project[]): Project[] {
  return [...projects].sort(byName);
}

/** The keys offered: those of the chosen project (all of them without one), by name. */
export function keysOfProject(keys: readonly Key[], project: string | null): Key[] {
  return keys.filter((k) => !project || k.project_id === project).sort(byName);
}

export function sortedModels(models: readonly Model[]): Model[] {
  return [...models].sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Another project: a chosen key of another project is let go (it would leave the view
 * empty without saying why); a key of the new project, or one the directory does not know,
 * is kept.
 */
export function projectChange(keys: readonly Key[] | null, scope: Scope, project: string | null): ScopePatch {
  const key = keys?.find((k) => k.id === scope.key);
  const keepKey = !project || !key || key.project_id === project;
  return keepKey ? { project } : { project, key: null };
}
