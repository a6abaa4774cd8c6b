import type { Model, PartError } from '../state/directory.js';

/**
 * What the model catalogue offers a new key. GET /models is an extension a control plane
 * may lack (decisions.md "Model catalogue"): a 404 or 501 means it is not offered, like an
 * empty catalogue, and the key simply allows any model. Any other failure is a failure,
 * shown with a way to try again, never passed off as "no catalogue".
 */
export type Catalogue =
  { kind: 'loading' } | { kind: 'none' } | { kind: 'failed'; error: string } | { kind: 'ready'; models: Model[] };

const NOT_OFFERED = new Set([404, 501]);

export function catalogueOf(models: Model[] | null, error: PartError | undefined, loading: boolean): Catalogue {
  if (models !== null) {
    const active = models.filter((m) => m.active);
    return active.length > 0 ? { kind: 'ready', models: active } : { kind: 'none' };
  }
  // Asked for and not answered yet (the directory reads it when the screen opens).
  if (loading || error === undefined) return { kind: 'loading' };
  return NOT_OFFERED.has(error.status) ? { kind: 'none' } : { kind: 'failed', error: error.message };
}
