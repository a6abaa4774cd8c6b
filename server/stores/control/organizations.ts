import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';

export interface OrganizationRow {
  id: string;
  name: string;
}

export interface ProjectRow {
  id: string;
  name: string;
  created_at: number;
}

/** Uniqueness and joining compare names trimmed and without regard to case. */
export function organizationNameKey(name: string): string {
  return name.trim().toLowerCase();
}

export class OrganizationRepository {
  private readonly byId: Statement<[string], OrganizationRow>;
  private readonly byName: Statement<[string], OrganizationRow>;
  private readonly insertOrg: Statement<[string, string, string, number]>;
  private readonly rename: Statement<[string, string, string]>;
  private readonly zoneOf: Statement<[string], { reporting_zone: string }>;
  private readonly setZone: Statement<[string, string]>;
  private readonly retentionOf: Statement<[string], { retention_days: number | null }>;
  private readonly setRetention: Statement<[number | null, string]>;
  private readonly everyRetention: Statement<[], { orgId: string; days: number }>;
  private readonly everyId: Statement<[], string>;
  private readonly projectsOf: Statement<[string], ProjectRow>;
  private readonly projectInOrg: Statement<[string, string], ProjectRow>;
  private readonly projectAnywhere: Statement<[string], ProjectRow & { org_id: string }>;
  private readonly insertProject: Statement<[string, string, string, number]>;
  private readonly insertDeposit: Statement<[string, number, number]>;
  private readonly budgetOf: Statement<[string], { total: number }>;
  private readonly everyProject: Statement<[], { id: string; org_id: string }>;
  private readonly everyNameKey: Statement<[], { name_key: string; id: string }>;
  private readonly bySignIn: Statement<[number], { id: string }>;

  constructor(db: Database) {
    this.byId = db.prepare('SELECT id, name FROM organizations WHERE id = ?');
    this.byName = db.prepare('SELECT id, name FROM organizations WHERE name_key = ?');
    this.insertOrg = db.prepare('INSERT INTO organizations (id, name, name_key, created_at) VALUES (?, ?, ?, ?)');
    this.rename = db.prepare('UPDATE organizations SET name = ?, name_key = ? WHERE id = ?');
    this.zoneOf = db.prepare('SELECT reporting_zone FROM organizations WHERE id = ?');
    this.setZone = db.prepare('UPDATE organizations SET reporting_zone = ? WHERE id = ?');
    this.retentionOf = db.prepare('SELECT retention_days FROM organizations WHERE id = ?');
    this.setRetention = db.prepare('UPDATE organizations SET retention_days = ? WHERE id = ?');
    this.everyRetention = db.prepare(
      'SELECT id AS orgId, retention_days AS days FROM organizations WHERE retention_days IS NOT NULL ORDER BY id',
    );
    this.everyId = db.prepare<[], string>('SELECT id FROM organizations ORDER BY id').pluck();
    this.projectsOf = db.prepare(
      'SELECT id, name, created_at FROM projects WHERE org_id = ? ORDER BY created_at, rowid',
    );
    this.projectInOrg = db.prepare('SELECT id, name, created_at FROM projects WHERE org_id = ? AND id = ?');
    this.projectAnywhere = db.prepare('SELECT id, org_id, name, created_at FROM projects WHERE id = ?');
    this.insertProject = db.prepare('INSERT INTO projects (id, org_id, name, created_at) VALUES (?, ?, ?, ?)');
    this.insertDeposit = db.prepare('INSERT INTO deposits (org_id, amount_micro, created_at) VALUES (?, ?, ?)');
    this.budgetOf = db.prepare('SELECT COALESCE(SUM(amount_micro), 0) AS total FROM deposits WHERE org_id = ?');
    this.everyProject = db.prepare('SELECT id, org_id FROM projects');
    this.everyNameKey = db.prepare('SELECT name_key, id FROM organizations');
    this.bySignIn = db.prepare(
      `SELECT o.id FROM organizations o
       LEFT JOIN (
         SELECT a.org_id, MAX(s.created_at) AS at FROM sessions s JOIN accounts a ON a.id = s.account_id
         WHERE a.deactivated_at IS NULL GROUP BY a.org_id
       ) signed ON signed.org_id = o.id
       ORDER BY signed.at DESC NULLS LAST, o.created_at DESC, o.rowid DESC
       LIMIT ?`,
    );
  }

  /** Every project's organisation: for the operator's import only. */
  async projectOwners(): Promise<{ id: string; org_id: string }[]> {
    return this.everyProject.all();
  }

  /** Every organisation by the key its name is matched with (`organizationNameKey`): for the operator's import only. */
  async nameKeys(): Promise<{ name_key: string; id: string }[]> {
    return this.everyNameKey.all();
  }

  /** The `limit` organisations whose active members signed in last (sessions not yet purged), then the newest. */
  async likelyNext(limit: number): Promise<string[]> {
    return this.bySignIn.all(limit).map((row) => row.id);
  }

  async get(id: string): Promise<OrganizationRow | undefined> {
    return this.byId.get(id);
  }

  async findByName(name: string): Promise<OrganizationRow | undefined> {
    return this.byName.get(organizationNameKey(name));
  }

  async create(name: string, now: number): Promise<OrganizationRow> {
    const id = randomUUID();
    this.insertOrg.run(id, name, organizationNameKey(name), now);
    return { id, name };
  }

  /** Throws a SQLite UNIQUE constraint error when another organisation has the name. */
  async setName(id: string, name: string): Promise<void> {
    this.rename.run(name, organizationNameKey(name), id);
  }

  /**
   * The IANA time zone the organisation's dashboard counts days and weeks in (reporting-zone.ts);
   * UTC until an owner or admin sets one, and for an organisation that does not exist.
   */
  async reportingZone(orgId: string): Promise<string> {
    return this.zoneOf.get(orgId)?.reporting_zone ?? 'UTC';
  }

  /** Stores `zone` as given: the caller passes a canonical name (`canonicalZone`). */
  async setReportingZone(orgId: string, zone: string): Promise<void> {
    this.setZone.run(zone, orgId);
  }

  /**
   * The days the organisation keeps its request-log rows, its own setting (retention.ts); null
   * until an owner or admin sets one, and for an organisation that does not exist.
   */
  async retentionDays(orgId: string): Promise<number | null> {
    return this.retentionOf.get(orgId)?.retention_days ?? null;
  }

  /** Stores `days` as given (null: as long as the platform keeps rows): the caller checks it against the platform's. */
  async setRetentionDays(orgId: string, days: number | null): Promise<void> {
    this.setRetention.run(days, orgId);
  }

  /** Every organisation with days of its own, by id: whose rows the background deletion cuts shorter. */
  async retentions(): Promise<{ orgId: string; days: number }[]> {
    return this.everyRetention.all();
  }

  /** Every organisation's id, in order: a platform retention cuts all their rows. */
  async ids(): Promise<string[]> {
    return this.everyId.all();
  }

  async projects(orgId: string): Promise<ProjectRow[]> {
    return this.projectsOf.all(orgId);
  }

  async project(orgId: string, projectId: string): Promise<ProjectRow | undefined> {
    return this.projectInOrg.get(orgId, projectId);
  }

  /** A project by id whatever its organisation: for the operator's import only. */
  async findProject(projectId: string): Promise<(ProjectRow & { org_id: string }) | undefined> {
    return this.projectAnywhere.get(projectId);
  }

  async addProject(orgId: string, name: string, now: number): Promise<ProjectRow> {
    const id = randomUUID();
    this.insertProject.run(id, orgId, name, now);
    return { id, name, created_at: now };
  }

  async deposit(orgId: string, amountMicro: number, now: number): Promise<void> {
    this.insertDeposit.run(orgId, amountMicro, now);
  }

  /** The organisation's budget: the sum of its deposits, in micro-PKR. */
  async budgetMicro(orgId: string): Promise<number> {
    return this.budgetOf.get(orgId)?.total ?? 0;
  }
}
