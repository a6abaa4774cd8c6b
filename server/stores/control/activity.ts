import type { Database, Statement } from 'better-sqlite3';

export type ActivityAction =
  | 'user.login'
  | 'user.logout'
  | 'api_key.created'
  | 'api_key.revoked'
  | 'api_key.updated'
  | 'vault_key.set'
  | 'vault_key.revoked'
  | 'org.renamed'
  | 'member.joined'
  | 'budget.deposited'
  // Beyond the contract: the operator's set-join-policy; target is the new policy (join-policy.ts).
  | 'org.join_policy_changed'
  // Beyond the contract: PUT /organization/reporting-zone; target is the zone's IANA name.
  | 'org.reporting_zone_changed';

export interface ActivityEvent {
  orgId: string;
  /** Null when no account acted (the operator's command). */
  actorId: string | null;
  action: ActivityAction;
  target: string;
  sourceIp: string;
  at: number;
}

export interface ActivityRow {
  actor: string | null;
  action: string;
  target: string;
  created_at: number;
  source_ip: string;
}

/** Source address written for changes made by the operator's command rather than over HTTP. */
export const OPERATOR_SOURCE = 'local';

export class ActivityRepository {
  private readonly insert: Statement<[string, string | null, string, string, number, string]>;
  private readonly page: Statement<[string, number, number], ActivityRow>;

  constructor(db: Database) {
    this.insert = db.prepare(
      'INSERT INTO activity (org_id, actor_id, action, target, created_at, source_ip) VALUES (?, ?, ?, ?, ?, ?)',
    );
    // The actor's email is read at query time, so a hard-deleted account shows as null.
    this.page = db.prepare(`SELECT a.email AS actor, e.action, e.target, e.created_at, e.source_ip
      FROM activity e LEFT JOIN accounts a ON a.id = e.actor_id
      WHERE e.org_id = ?
      ORDER BY e.id DESC LIMIT ? OFFSET ?`);
  }

  record(event: ActivityEvent): void {
    this.insert.run(event.orgId, event.actorId, event.action, event.target, event.at, event.sourceIp);
  }

  /** Newest first. */
  list(orgId: string, limit: number, offset: number): ActivityRow[] {
    return this.page.all(orgId, limit, offset);
  }
}
