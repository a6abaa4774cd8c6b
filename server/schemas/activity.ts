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
