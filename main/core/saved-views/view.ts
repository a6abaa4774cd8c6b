import { Type, type Static } from '@sinclair/typebox';

/**
 * A saved view: a screen of the console and its route parameters (filters), under a name the
 * user gave it. The schemas the bridge checks and the store's file holds (no imports beyond
 * TypeBox: the contract takes them from here).
 */

/** At most this many views per connection profile: a sidebar list, not an archive. */
export const MAX_SAVED_VIEWS = 200;
/**
 * A view's filters (its route parameters, `range=7d`): as many as a screen has, each as long as
 * the longest (a search text). Called `filters` across the bridge: `params` names a request's
 * path parameters there, and an error at it would name no field.
 */
export const MAX_VIEW_FILTERS = 20;
export const MAX_FILTER_LENGTH = 1000;

/**
 * The renderer's screens: the host is built without the renderer, so the list is written here
 * too, and renderer/src/state/saved-views.ts fails to compile when the two differ.
 */
export const ViewScreen = Type.Union([
  Type.Literal('keys'),
  Type.Literal('vault'),
  Type.Literal('analytics'),
  Type.Literal('spend'),
  Type.Literal('requests'),
  Type.Literal('health'),
  Type.Literal('activity'),
  Type.Literal('reconcile'),
  Type.Literal('alerts'),
  Type.Literal('organisation'),
  Type.Literal('routes'),
]);
export type ViewScreen = Static<typeof ViewScreen>;

/** Shown in the sidebar: no control or bidirectional-override characters, which would garble it. */
export const ViewName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]+$',
});

/** Ids are the host's UUIDs; a file may hold anything, and an empty or long id names no view. */
export const ViewId = Type.String({ minLength: 1, maxLength: 100 });

export const ViewFilters = Type.Record(
  // Route parameter names are short lower-case words (`range`, `min_cost`).
  Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$' }),
  Type.String({ minLength: 1, maxLength: MAX_FILTER_LENGTH }),
  // Without `additionalProperties` TypeBox would let a name outside the pattern through.
  { maxProperties: MAX_VIEW_FILTERS, additionalProperties: false },
);
export type ViewFilters = Static<typeof ViewFilters>;

export const SavedView = Type.Object(
  { id: ViewId, name: ViewName, screen: ViewScreen, filters: ViewFilters },
  // What crosses the bridge is exactly this: a hand-edited file's extra fields are not.
  { additionalProperties: false },
);
export type SavedView = Static<typeof SavedView>;
