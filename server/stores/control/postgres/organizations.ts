import { randomUUID } from 'node:crypto';
import { organizationNameKey, type OrganizationRow, type ProjectRow } from '../organizations.js';
import type { OrganizationRecords } from '../records.js';
import { changes, first, rows, type Sql } from './sql.js';

export class PgOrganizationRepository implements OrganizationRecords {
  constructor(private readonly sql: Sql) {}

  projectOwners(): Promise<{ id: string; org_id: string }[]> {
    return rows(this.sql, 'SELECT id, org_id FROM projects');
  }

  nameKeys(): Promise<{ name_key: string; id: string }[]> {
    return rows(this.sql, 'SELECT name_key, id FROM organizations');
  }

  async likelyNext(limit: number): Promise<string[]> {
    const found = await rows<{ id: string }>(
      this.sql,
      `SELECT o.id FROM organizations o
       LEFT JOIN (
         SELECT a.org_id, MAX(s.created_at) AS at FROM sessions s JOIN accounts a ON a.id = s.account_id
         WHERE a.deactivated_at IS NULL GROUP BY a.org_id
       ) signed ON signed.org_id = o.id
       ORDER BY signed.at DESC NULLS LAST, o.created_at DESC, o.serial DESC
       LIMIT $1`,
      [limit],
    );
    return found.map((row) => row.id);
  }

  get(id: string): Promise<OrganizationRow | undefined> {
    return first(this.sql, 'SELECT id, name FROM organizations WHERE id = $1', [id]);
  }

  findByName(name: string): Promise<OrganizationRow | undefined> {
    return first(this.sql, 'SELECT id, name FROM organizations WHERE name_key = $1', [organizationNameKey(name)]);
  }

  async create(name: string, now: number): Promise<OrganizationRow> {
    const id = randomUUID();
    await changes(this.sql, 'INSERT INTO organizations (id, name, name_key, created_at) VALUES ($1, $2, $3, $4)', [
      id,
      name,
      organizationNameKey(name),
      now,
    ]);
    return { id, name };
  }

  async setName(id: string, name: string): Promise<void> {
    await changes(this.sql, 'UPDATE organizations SET name = $1, name_key = $2 WHERE id = $3', [
      name,
      organizationNameKey(name),
      id,
    ]);
  }

  async reportingZone(orgId: string): Promise<string> {
    const row = await first<{ reporting_zone: string }>(
      this.sql,
      'SELECT reporting_zone FROM organizations WHERE id = $1',
      [orgId],
    );
    return row?.reporting_zone ?? 'UTC';
  }

  async setReportingZone(orgId: string, zone: string): Promise<void> {
    await changes(this.sql, 'UPDATE organizations SET reporting_zone = $1 WHERE id = $2', [zone, orgId]);
  }

  async retentionDays(orgId: string): Promise<number | null> {
    const row = await first<{ retention_days: number | null }>(
      this.sql,
      'SELECT retention_days FROM organizations WHERE id = $1',
      [orgId],
    );
    return row?.retention_days ?? null;
  }

  async setRetentionDays(orgId: string, days: number | null): Promise<void> {
    await changes(this.sql, 'UPDATE organizations SET retention_days = $1 WHERE id = $2', [days, orgId]);
  }

  retentions(): Promise<{ orgId: string; days: number }[]> {
    return rows(
      this.sql,
      'SELECT id AS "orgId", retention_days AS days FROM organizations WHERE retention_days IS NOT NULL ORDER BY id',
    );
  }

  async ids(): Promise<string[]> {
    return (await rows<{ id: string }>(this.sql, 'SELECT id FROM organizations ORDER BY id')).map((row) => row.id);
  }

  projects(orgId: string): Promise<ProjectRow[]> {
    return rows(this.sql, 'SELECT id, name, created_at FROM projects WHERE org_id = $1 ORDER BY created_at, serial', [
      orgId,
    ]);
  }

  project(orgId: string, projectId: string): Promise<ProjectRow | undefined> {
    return first(this.sql, 'SELECT id, name, created_at FROM projects WHERE org_id = $1 AND id = $2', [
      orgId,
      projectId,
    ]);
  }

  findProject(projectId: string): Promise<(ProjectRow & { org_id: string }) | undefined> {
    return first(this.sql, 'SELECT id, org_id, name, created_at FROM projects WHERE id = $1', [projectId]);
  }

  async addProject(orgId: string, name: string, now: number): Promise<ProjectRow> {
    const id = randomUUID();
    await changes(this.sql, 'INSERT INTO projects (id, org_id, name, created_at) VALUES ($1, $2, $3, $4)', [
      id,
      orgId,
      name,
      now,
    ]);
    return { id, name, created_at: now };
  }

  async deposit(orgId: string, amountMicro: number, now: number): Promise<void> {
    await changes(this.sql, 'INSERT INTO deposits (org_id, amount_micro, created_at) VALUES ($1, $2, $3)', [
      orgId,
      amountMicro,
      now,
    ]);
  }

  async budgetMicro(orgId: string): Promise<number> {
    const row = await first<{ total: number }>(
      this.sql,
      'SELECT COALESCE(SUM(amount_micro), 0)::bigint AS total FROM deposits WHERE org_id = $1',
      [orgId],
    );
    return row?.total ?? 0;
  }
}
