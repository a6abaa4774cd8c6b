import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.js';

/**
 * `GET /reconcile`, beyond the contract: whether the totals add up for a window of whole UTC
 * days (at most 31 a call) and a scope (server/analytics/reconcile.ts), for the kinds asked.
 * Lists what disagrees or is pending, counts what agrees. A longer window is checked a day per
 * call (`kinds=totals,rollups`) beside one call for the lifetime spend (`kinds=spend`).
 */

export const ReconcileQuery = Type.Object({
  from: Type.Optional(
    Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description: 'First UTC day (YYYY-MM-DD); default: `days` before `to`',
    }),
  ),
  to: Type.Optional(
    Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description: 'Last UTC day (YYYY-MM-DD), included; default today',
    }),
  ),
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 31,
      description: 'Days up to `to` when `from` is absent; default 7. A call reads at most 31 days.',
    }),
  ),
  project_id: Type.Optional(Type.String()),
  kinds: Type.Optional(
    Type.String({
      description:
        'Comma-separated kinds to check, from `totals`, `spend`, `rollups`; default all three. ' +
        'A blank, unknown or repeated name is a 400. `spend` is lifetime and reads no day; without ' +
        '`totals` and `rollups` the window is not read.',
    }),
  ),
});
export type ReconcileQuery = Static<typeof ReconcileQuery>;

const Measure = Type.Union([Type.Literal('requests'), Type.Literal('tokens'), Type.Literal('cost_micro')]);

export const ReconcileLine = Type.Object({
  check: Type.Union([
    Type.Literal('projects_to_organization'),
    Type.Literal('keys_to_project'),
    Type.Literal('key_in_other_project'),
    Type.Literal('settled_spend'),
    Type.Literal('unknown_key'),
    Type.Literal('rollup_cells'),
  ]),
  status: Type.Union([Type.Literal('disagrees'), Type.Literal('pending')]),
  day: Nullable(Type.String({ description: 'UTC day, YYYY-MM-DD; null for lifetime figures' })),
  project_id: Nullable(Type.String()),
  project_name: Nullable(Type.String()),
  key_id: Nullable(Type.String()),
  key_name: Nullable(Type.String({ description: 'The key’s name and prefix, never its secret' })),
  model: Nullable(Type.String()),
  table: Nullable(Type.String({ description: 'The rollup table, for rollup_cells' })),
  cell_from: Nullable(
    Type.String({ format: 'date-time', description: 'Start of the rollup cell (UTC), for cells finer than a day' }),
  ),
  differences: Type.Array(
    Type.Object({
      measure: Measure,
      expected: Nullable(Type.Integer({ description: 'The parts’ sum, or the rows; null: unknown' })),
      found: Nullable(Type.Integer({ description: 'The figure checked; null: unknown' })),
    }),
  ),
  note: Type.String(),
});

export const ReconcileKind = Type.Object({
  kind: Type.Union([Type.Literal('totals'), Type.Literal('spend'), Type.Literal('rollups')]),
  checked: Type.Integer(),
  agreeing: Type.Integer(),
  disagreeing: Type.Integer(),
  pending: Type.Integer(),
  lines: Type.Array(ReconcileLine),
  lines_omitted: Type.Integer({ description: 'Lines past the listed ones, counted only' }),
});

export const Reconcile = Type.Object({
  from: Timestamp,
  to: Timestamp,
  project_id: Nullable(Type.String()),
  checked_at: Timestamp,
  agrees: Type.Boolean({ description: 'No disagreement in the kinds reported' }),
  disagreements: Type.Integer({ description: 'Disagreeing lines over the kinds reported' }),
  kinds: Type.Array(ReconcileKind, { description: 'The kinds asked for, in the order totals, spend, rollups' }),
});
export type Reconcile = Static<typeof Reconcile>;
