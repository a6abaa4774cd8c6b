import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Paging, Timestamp } from './common.js';

export const ActivityQuery = Type.Object(Paging);
export type ActivityQuery = Static<typeof ActivityQuery>;

export const ActivityEvent = Type.Object({
  actor: Nullable(Type.String()),
  action: Type.String(),
  target: Type.String(),
  timestamp: Timestamp,
  source_ip: Type.String(),
});

export const ActivityPage = Type.Object({
  events: Type.Array(ActivityEvent),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
export type ActivityPage = Static<typeof ActivityPage>;

// Beyond the contract: GET /activity/entries and GET /activity/verify. GET /activity keeps the
// contract's shape; the extension carries each event's place, what it changed and its hash,
// filters, and pages by place (`before`), which new events do not shift.

const ChangeValue = Nullable(Type.Union([Type.String(), Type.Number(), Type.Boolean()]));
const ChangeFields = Type.Record(Type.String(), ChangeValue);

export const ActivityChange = Type.Object({
  before: Nullable(ChangeFields),
  after: Nullable(ChangeFields),
});
export type ActivityChange = Static<typeof ActivityChange>;

export const ActivityEntriesQuery = Type.Object({
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 320, description: "The acting account's email" })),
  target: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'The target starts with this' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive' })),
  before: Type.Optional(
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Events placed before this one' }),
  ),
  limit: Paging.limit,
});
export type ActivityEntriesQuery = Static<typeof ActivityEntriesQuery>;

export const ActivityEntry = Type.Object({
  /** The event's place in the organisation's trail, from 1. */
  position: Type.Integer(),
  actor: Nullable(Type.String()),
  action: Type.String(),
  target: Type.String(),
  timestamp: Timestamp,
  source_ip: Type.String(),
  change: Nullable(ActivityChange),
  hash: Type.String(),
});
export type ActivityEntry = Static<typeof ActivityEntry>;

export const ActivityEntries = Type.Object({
  entries: Type.Array(ActivityEntry),
  limit: Type.Integer(),
  /** How many events match, counted on the first page only (null with `before`). */
  total: Nullable(Type.Integer()),
  /** `before` for the next page; null when this page is the last. */
  next_before: Nullable(Type.Integer()),
});
export type ActivityEntries = Static<typeof ActivityEntries>;

export const ActivityVerifyQuery = Type.Object({
  after: Type.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The place checked last; 0 to start' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Clamped to 20,000' })),
});
export type ActivityVerifyQuery = Static<typeof ActivityVerifyQuery>;

export const ActivityVerification = Type.Object({
  checked: Type.Integer(),
  last_position: Type.Integer(),
  /** The place of the newest event when this stretch was checked. */
  total: Type.Integer(),
  done: Type.Boolean(),
  head_hash: Type.String(),
  broken: Nullable(
    Type.Object({
      position: Type.Integer(),
      fault: Type.Union([
        Type.Literal('altered'),
        Type.Literal('missing'),
        Type.Literal('duplicate'),
        Type.Literal('appended'),
      ]),
      /** The event found at the place; null when there is none (the newest events deleted). */
      timestamp: Nullable(Timestamp),
      action: Nullable(Type.String()),
      message: Type.String(),
    }),
  ),
});
export type ActivityVerification = Static<typeof ActivityVerification>;
