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
