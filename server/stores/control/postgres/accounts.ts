import { randomUUID } from 'node:crypto';
import type { AccountRow, Role } from '../accounts.js';
import type { AccountRecords } from '../records.js';
import { changes, first, rows, type Sql } from './sql.js';

const COLUMNS = 'id, org_id, email, password_hash, role, created_at, deactivated_at';

export class PgAccountRepository implements AccountRecords {
  constructor(private readonly sql: Sql) {}

  findByEmail(email: string): Promise<AccountRow | undefined> {
    return first(this.sql, `SELECT ${COLUMNS} FROM accounts WHERE email = $1`, [email.toLowerCase()]);
  }

  get(id: string): Promise<AccountRow | undefined> {
    return first(this.sql, `SELECT ${COLUMNS} FROM accounts WHERE id = $1`, [id]);
  }

  async create(
    orgId: string,
    email: string,
    passwordHash: string | null,
    role: Role,
    now: number,
  ): Promise<AccountRow> {
    const id = randomUUID();
    await changes(
      this.sql,
      'INSERT INTO accounts (id, org_id, email, password_hash, role, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, orgId, email, passwordHash, role, now],
    );
    return { id, org_id: orgId, email, password_hash: passwordHash, role, created_at: now, deactivated_at: null };
  }

  members(orgId: string): Promise<AccountRow[]> {
    return rows(this.sql, `SELECT ${COLUMNS} FROM accounts WHERE org_id = $1 ORDER BY created_at, serial`, [orgId]);
  }

  async setRole(id: string, role: Role): Promise<void> {
    await changes(this.sql, 'UPDATE accounts SET role = $1 WHERE id = $2', [role, id]);
  }

  async setDeactivated(id: string, at: number | null): Promise<void> {
    await changes(this.sql, 'UPDATE accounts SET deactivated_at = $1 WHERE id = $2', [at, id]);
  }
}
