import { Type, type Static } from '@sinclair/typebox';
import { Member } from './auth.js';
import { Timestamp } from './common.js';

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
