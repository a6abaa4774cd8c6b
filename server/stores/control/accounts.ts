import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';

export type Role = 'owner' | 'admin' | 'member';

export interface AccountRow {
  id: string;
  org_id: string;
  email: string;
  password_hash: string | null;
  role: Role;
  created_at: number;
  deactivated_at: number | null;
}

export class AccountRepository {
  private readonly byEmail: Statement<[string], AccountRow>;
  private readonly byId: Statement<[string], AccountRow>;
  private readonly insert: Statement<[string, string, string, string | null, Role, number]>;
  private readonly membersOf: Statement<[string], AccountRow>;
  private readonly updateRole: Statement<[Role, string]>;
  private readonly updateDeactivated: Statement<[number | null, string]>;

  constructor(db: Database) {
    this.byEmail = db.prepare('SELECT * FROM accounts WHERE email = ?');
    this.byId = db.prepare('SELECT * FROM accounts WHERE id = ?');
    this.insert = db.prepare(
      'INSERT INTO accounts (id, org_id, email, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.membersOf = db.prepare('SELECT * FROM accounts WHERE org_id = ? ORDER BY created_at, rowid');
    this.updateRole = db.prepare('UPDATE accounts SET role = ? WHERE id = ?');
    this.updateDeactivated = db.prepare('UPDATE accounts SET deactivated_at = ? WHERE id = ?');
  }

  async findByEmail(email: string): Promise<AccountRow | undefined> {
    return this.byEmail.get(email.toLowerCase());
  }

  async get(id: string): Promise<AccountRow | undefined> {
    return this.byId.get(id);
  }

  async create(
    orgId: string,
    email: string,
    passwordHash: string | null,
    role: Role,
    now: number,
  ): Promise<AccountRow> {
    const id = randomUUID();
    this.insert.run(id, orgId, email, passwordHash, role, now);
    return { id, org_id: orgId, email, password_hash: passwordHash, role, created_at: now, deactivated_at: null };
  }

  async members(orgId: string): Promise<AccountRow[]> {
    return this.membersOf.all(orgId);
  }

  async setRole(id: string, role: Role): Promise<void> {
    this.updateRole.run(role, id);
  }

  async setDeactivated(id: string, at: number | null): Promise<void> {
    this.updateDeactivated.run(at, id);
  }
}
