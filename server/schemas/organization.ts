import { Type, type Static } from '@sinclair/typebox';
import { MAX_RETENTION_DAYS } from '../domain/retention.js';
import { Member } from './auth.js';
import { Nullable, Timestamp } from './common.js';

export const RenameBody = Type.Object({ name: Type.String() });
export type RenameBody = Static<typeof RenameBody>;

export const Organization = Type.Object({ name: Type.String() });

export const MemberList = Type.Object({ members: Type.Array(Member) });
export type MemberList = Static<typeof MemberList>;

export const Project = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), created_at: Timestamp });
export const ProjectList = Type.Object({ projects: Type.Array(Project) });
export type ProjectList = Static<typeof ProjectList>;

/**
 * Beyond the contract (decisions.md, "Join policy"): who may join by naming the organisation.
 * `domains` lists the email domains a `domains` policy admits, matched exactly; empty otherwise.
 */
export const JoinPolicy = Type.Object({
  policy: Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('domains')]),
  domains: Type.Array(Type.String()),
});
export type JoinPolicy = Static<typeof JoinPolicy>;

/**
 * Beyond the contract: the time zone the organisation's dashboard counts its days and weeks in
 * (the contract's analytics stay in UTC). `utc_offset` is the zone's offset now, as ISO 8601
 * writes it ('+05:00', '-04:00', '+00:00').
 */
export const ReportingZone = Type.Object({
  time_zone: Type.String(),
  utc_offset: Type.String({ pattern: '^[+-]\\d{2}:\\d{2}(:\\d{2})?$' }),
});
export type ReportingZone = Static<typeof ReportingZone>;

/** An IANA zone name ('Asia/Karachi', 'UTC'), in any case; the server stores its canonical spelling. */
export const ReportingZoneBody = Type.Object({ time_zone: Type.String({ maxLength: 64 }) });
export type ReportingZoneBody = Static<typeof ReportingZoneBody>;

/**
 * Beyond the contract: how long the organisation's request-log rows are kept. `days` is its own
 * setting, `platform_days` the server's `--retention-days`, `effective_days` the shorter of the
 * two (null for each: every row kept). `horizon` is the start of the oldest hour whose rows are
 * all kept now: older rows are deleted, their hourly and daily totals stay.
 */
export const Retention = Type.Object({
  days: Nullable(Type.Integer()),
  platform_days: Nullable(Type.Integer()),
  effective_days: Nullable(Type.Integer()),
  horizon: Nullable(Timestamp),
});
export type Retention = Static<typeof Retention>;

/** A whole number of days, at most the platform's when it has one; null keeps rows as long as the platform does. */
export const RetentionBody = Type.Object({
  days: Nullable(Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS })),
});
export type RetentionBody = Static<typeof RetentionBody>;
