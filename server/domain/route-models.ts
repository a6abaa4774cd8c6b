import type { RouteEntry, RoutesDocument } from './routes-document.js';

/**
 * What the console and the keys read of the routes document: each route as a model, its
 * provider and whether it is served. Plain functions of one version, so every caller reads the
 * version it was given (`control.routes.current()`), never half of two.
 */

export interface ModelRow {
  /** The route id callers send as `model`. */
  id: string;
  /**
   * Whose model it is, for the analytics' provider filter and `GET /models`: the route id's part
   * before its first '/' (`svc/auto` is svc's), else its first target's provider.
   */
  provider: string;
  active: boolean;
}

export function routeProvider(id: string, route: RouteEntry): string {
  const slash = id.indexOf('/');
  return slash > 0 ? id.slice(0, slash) : route.targets[0]!.provider;
}

const listed = new WeakMap<RoutesDocument, readonly Readonly<ModelRow>[]>();

/** Every route of the document, active or not, by id. Kept per document: a version is read often and never changes. */
export function modelsOf(document: RoutesDocument): readonly Readonly<ModelRow>[] {
  let models = listed.get(document);
  if (!models) {
    models = Object.freeze(
      Object.entries(document.routes)
        .map(([id, route]) => Object.freeze({ id, provider: routeProvider(id, route), active: route.active }))
        // By code unit, as the models table listed them (ORDER BY id, binary).
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    );
    listed.set(document, models);
  }
  return models;
}

/** The route with this id, active or not, or undefined. */
export function findRoute(document: RoutesDocument, id: string): RouteEntry | undefined {
  return Object.hasOwn(document.routes, id) ? document.routes[id] : undefined;
}

/** The ids of the list that are not active routes of the document, in the order given. */
export function unknownOrInactive(document: RoutesDocument, ids: readonly string[]): string[] {
  return ids.filter((id) => !findRoute(document, id)?.active);
}

/** The document with one route turned on or off; undefined when it has no such route. */
export function withRouteActive(document: RoutesDocument, id: string, active: boolean): RoutesDocument | undefined {
  const route = findRoute(document, id);
  if (!route) return undefined;
  return { ...document, routes: { ...document.routes, [id]: { ...route, active } } };
}
