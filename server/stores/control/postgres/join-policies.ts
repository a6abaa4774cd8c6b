import type { JoinPolicy, JoinPolicyKind } from '../join-policies.js';
import type { JoinPolicyRecords } from '../records.js';
import { changes, first, rows, type Sql } from './sql.js';

export class PgJoinPolicyRepository implements JoinPolicyRecords {
  constructor(private readonly sql: Sql) {}

  async of(orgId: string): Promise<JoinPolicy> {
    const found = await first<{ join_policy: JoinPolicyKind }>(
      this.sql,
      'SELECT join_policy FROM organizations WHERE id = $1',
      [orgId],
    );
    const policy = found?.join_policy ?? 'open';
    if (policy !== 'domains') return { policy, domains: [] };
    const domains = await rows<{ domain: string }>(
      this.sql,
      'SELECT domain FROM join_domains WHERE org_id = $1 ORDER BY domain COLLATE "C"',
      [orgId],
    );
    return { policy, domains: domains.map((row) => row.domain) };
  }

  async set(orgId: string, policy: JoinPolicy): Promise<void> {
    await changes(this.sql, 'UPDATE organizations SET join_policy = $1 WHERE id = $2', [policy.policy, orgId]);
    await changes(this.sql, 'DELETE FROM join_domains WHERE org_id = $1', [orgId]);
    if (policy.policy !== 'domains') return;
    await changes(this.sql, 'INSERT INTO join_domains (org_id, domain) SELECT $1, unnest($2::text[])', [
      orgId,
      policy.domains,
    ]);
  }
}
