import type { Database, Statement } from 'better-sqlite3';

export type JoinPolicyKind = 'open' | 'closed' | 'domains';

/** Who may join an organisation by naming it; `domains` is empty unless `policy` is `domains`. */
export interface JoinPolicy {
  policy: JoinPolicyKind;
  /** Lower case, sorted, each matched exactly against the part of an email after its last @. */
  domains: string[];
}

export class JoinPolicyRepository {
  private readonly policyOf: Statement<[string], { join_policy: JoinPolicyKind }>;
  private readonly domainsOf: Statement<[string], { domain: string }>;
  private readonly updatePolicy: Statement<[JoinPolicyKind, string]>;
  private readonly clearDomains: Statement<[string]>;
  private readonly insertDomain: Statement<[string, string]>;

  constructor(db: Database) {
    this.policyOf = db.prepare('SELECT join_policy FROM organizations WHERE id = ?');
    this.domainsOf = db.prepare('SELECT domain FROM join_domains WHERE org_id = ? ORDER BY domain');
    this.updatePolicy = db.prepare('UPDATE organizations SET join_policy = ? WHERE id = ?');
    this.clearDomains = db.prepare('DELETE FROM join_domains WHERE org_id = ?');
    this.insertDomain = db.prepare('INSERT INTO join_domains (org_id, domain) VALUES (?, ?)');
  }

  /** The organisation's policy; an unknown organisation reads as the contract's default, open. */
  async of(orgId: string): Promise<JoinPolicy> {
    const policy = this.policyOf.get(orgId)?.join_policy ?? 'open';
    return { policy, domains: policy === 'domains' ? this.domainsOf.all(orgId).map((row) => row.domain) : [] };
  }

  /** Replaces the policy and its domains. Call inside a transaction: the two must change together. */
  async set(orgId: string, policy: JoinPolicy): Promise<void> {
    this.updatePolicy.run(policy.policy, orgId);
    this.clearDomains.run(orgId);
    if (policy.policy !== 'domains') return;
    for (const domain of policy.domains) this.insertDomain.run(orgId, domain);
  }
}
