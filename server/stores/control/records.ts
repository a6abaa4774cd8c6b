import type { AccountRepository } from './accounts.js';
import type { ActivityRepository } from './activity.js';
import type { JoinPolicyRepository } from './join-policies.js';
import type { KeyRepository } from './keys.js';
import type { OrganizationRepository } from './organizations.js';
import type { RoutesRepository } from './route-documents.js';
import type { SessionRepository } from './sessions.js';
import type { SettlementRepository } from './settlements.js';
import type { VaultRepository } from './vault.js';

/**
 * A repository's public methods, what every backend implements: the SQLite classes beside this
 * file define them (with their documentation), the PostgreSQL ones in ./postgres/ follow.
 */
type Records<T> = { [K in keyof T]: T[K] };

export type AccountRecords = Records<AccountRepository>;
export type ActivityRecords = Records<ActivityRepository>;
export type JoinPolicyRecords = Records<JoinPolicyRepository>;
export type KeyRecords = Records<KeyRepository>;
export type OrganizationRecords = Records<OrganizationRepository>;
export type RoutesRecords = Records<RoutesRepository>;
export type SessionRecords = Records<SessionRepository>;
export type SettlementRecords = Records<SettlementRepository>;
export type VaultRecords = Records<VaultRepository>;
