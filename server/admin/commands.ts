import { PgRequestLog } from '../stores/telemetry/postgres/request-log.js';
import { migrateRequestLog } from './migrate-request-log.js';
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { controlLocation, resolveConfig, type ServerConfig } from '../config.js';
import { describeJoinPolicy, parseJoinPolicy } from '../domain/join-policy.js';
import { withRouteActive } from '../domain/route-models.js';
import { pkrToMicro, formatPkr } from '../domain/money.js';
import { OPERATOR_SOURCE } from '../stores/control/activity.js';
import type { Role } from '../stores/control/accounts.js';
import { openControlStore } from '../stores/control/open.js';
import type { ControlStore } from '../stores/control/store.js';
import { importReport } from './import-report.js';
import { importRequests } from './import-requests.js';
import { migrateStore } from './migrate-store.js';
import { verifyActivityCommand } from './verify-activity.js';
import { routesCheckCommand, routesCommand } from './routes-command.js';
import { reconcileCommand } from './reconcile-command.js';
import { DEMO_DEFAULTS, DEMO_ORGANIZATION, seedDemo } from '../demo/seed.js';
import { privateFolder } from '../security/private-files.js';
import { loadOrCreateSecret } from '../security/secret-files.js';
import { fineCellsSince } from '../stores/telemetry/rollup-grains.js';

const HELP = `usage: npm run admin -- <command> [--data-dir ./data] [--database-url postgres://…]
                            [--telemetry-db PATH | --telemetry-url postgres://…] [flags]

  deposit --org NAME --pkr AMOUNT           add credit to an organisation's budget
  set-role --email E --role owner|admin|member
  deactivate --email E | activate --email E
  revoke-sessions --email E                 end every session of an account
  add-project --org NAME --name P
  set-join-policy --org NAME --policy open|closed|domains [--domains a.example,b.example]
                                            who may join by naming the organisation; domains
                                            match exactly (not their subdomains)
  routes export [--out FILE]                write the routes document's current version as YAML
  routes check --file FILE                  validate a routes document (YAML or JSON) without
                                            storing it: exit 1 naming each problem by its path
  routes apply --file FILE [--expect-version N]
                                            store it as the next version, served from every
                                            gateway's next request; with --expect-version,
                                            refused (exit 1) unless N is the current version
  routes history                            every version, when it was applied and by what
  set-model --id ROUTE --active true|false  apply a new version with the route turned on or off
  import-requests --file F.ndjson [--file G.ndjson ...]
                                            load request-log rows, several files in one
                                            transaction: all of them or, on a bad line, none
  seed-demo [--days 30] [--rows 50000] [--seed 1]
                                            create the demo organisation and its traffic
  verify-activity [--org NAME]              recompute the activity log's hash chain; exit 1
                                            naming the first event that does not match
  migrate-store [--database-url postgres://…] [--telemetry-url postgres://…]
                                            copy the data folder's control.db, telemetry.db or
                                            both into empty PostgreSQL stores, checking counts
                                            (its targets from these flags only, not SVC_*)
  reconcile [--org NAME] [--project ID] [--from DATE --to DATE | --days 7]
                                            check that keys add up to projects and projects to
                                            the organisation, settled spend to rows, rollups to
                                            rows (any window of UTC days, progress on stderr);
                                            exit 1 on any difference, 3 a store unreadable`;

const FLAGS = {
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  'telemetry-db': { type: 'string' },
  'telemetry-url': { type: 'string' },
  org: { type: 'string' },
  pkr: { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  policy: { type: 'string' },
  domains: { type: 'string' },
  name: { type: 'string' },
  id: { type: 'string' },
  active: { type: 'string' },
  file: { type: 'string', multiple: true },
  out: { type: 'string' },
  'expect-version': { type: 'string' },
  days: { type: 'string' },
  rows: { type: 'string' },
  seed: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  project: { type: 'string' },
} as const;

/** A mistake in the operator's input: printed as is, exit code 2. */
export class UsageError extends Error {}

type Flags = ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true }>>['values'];

function required(flags: Flags, name: keyof Flags): string {
  const value = flags[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

/** `--file` once: the routes commands read one document. */
function routesFlags(flags: Flags): Omit<Flags, 'file'> & { file?: string } {
  const [file, ...more] = flags.file ?? [];
  if (more.length > 0) throw new UsageError('--file is given once: the routes document to read');
  return { ...flags, file };
}

/** `--file`, once or more, each resolved; nothing else after the command (a glob's other files, say, without their --file). */
function importFiles(flags: Flags, positionals: string[]): string[] {
  const [stray] = positionals.slice(1);
  if (stray !== undefined) {
    throw new UsageError(`unexpected argument ${stray}: name each file with a --file of its own`);
  }
  const files = (flags.file ?? []).map((file) => file.trim());
  if (files.length === 0 || files.includes('')) throw new UsageError('--file is required');
  return files.map((file) => resolve(file));
}

/** An optional whole-number flag within [min, max]. */
function integerFlag(flags: Flags, name: 'days' | 'rows' | 'seed', min: number, max: number): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  }
  return value;
}

/** Runs one operator command against the data folder; safe while the server runs (WAL, busy timeout). */
export async function runAdmin(args: string[], out: (line: string) => void = console.log): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const [command] = parsed.positionals;
  const flags = parsed.values;
  if (!command || command === 'help') {
    out(HELP);
    return command ? 0 : 2;
  }
  const printers = {
    out,
    err: (line: string) => console.error(line),
    usage: (message: string) => new UsageError(message),
  };
  if (command === 'routes' && parsed.positionals[1] === 'check') {
    // No store: a document can be checked anywhere, a CI job included.
    try {
      return routesCheckCommand(routesFlags(flags), printers);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      console.error(error.message);
      return 2;
    }
  }
  let config;
  try {
    const databaseUrl = flags['database-url'] ?? (process.env.SVC_DATABASE_URL || undefined);
    const telemetryUrl = flags['telemetry-url'] ?? (process.env.SVC_TELEMETRY_URL || undefined);
    config = resolveConfig({
      dataDir: flags['data-dir'] ?? process.env.SVC_DATA_DIR ?? './data',
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      ...(telemetryUrl === undefined ? {} : { telemetryUrl }),
      ...(flags['telemetry-db'] || process.env.SVC_TELEMETRY_DB
        ? { telemetryDbPath: resolve(flags['telemetry-db'] ?? process.env.SVC_TELEMETRY_DB ?? '') }
        : {}),
    });
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  privateFolder(config.dataDir);
  if (command === 'migrate-store') {
    // Its targets from its flags alone: an SVC_DATABASE_URL left set after a first copy would
    // otherwise send a copy of the request log after the control store again.
    return migrateStoreCommand(
      config,
      { databaseUrl: flags['database-url'], telemetryUrl: flags['telemetry-url'] },
      out,
    );
  }
  const control = await openControlStore(controlLocation(config), {
    accessSeconds: config.accessTtlSeconds,
    refreshSeconds: config.refreshTtlSeconds,
  });
  try {
    if (command === 'verify-activity') {
      return await verifyActivityCommand(control, flags.org, out, (message) => new UsageError(message));
    }
    if (command === 'reconcile') {
      return await reconcileCommand(control, config, flags, out, (message) => new UsageError(message));
    }
    if (command === 'routes') {
      return await routesCommand(control, parsed.positionals[1], routesFlags(flags), config.now(), printers);
    }
    out(await run(command, parsed.positionals, flags, control, config, out));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  } finally {
    await control.close();
  }
}

/** Runs `work` on the request log: the telemetry file's path, or the PostgreSQL store of --telemetry-url, closed after. */
async function withRequestLog<T>(
  config: ServerConfig,
  work: (telemetry: string | PgRequestLog) => Promise<T>,
): Promise<T> {
  if (config.telemetryUrl === undefined) return work(config.telemetryDbPath);
  const log = await PgRequestLog.open(config.telemetryUrl);
  try {
    return await work(log);
  } finally {
    await log.close();
  }
}

/**
 * Copies the data folder's stores into empty PostgreSQL databases: control.db into --database-url,
 * telemetry.db into --telemetry-url, whichever are given.
 */
async function migrateStoreCommand(
  config: ServerConfig,
  targets: { databaseUrl?: string; telemetryUrl?: string },
  out: (line: string) => void,
): Promise<number> {
  const { databaseUrl, telemetryUrl } = targets;
  if (databaseUrl === undefined && telemetryUrl === undefined) {
    console.error(
      'migrate-store needs --database-url (the database to copy the control store into), --telemetry-url (the request log), or both',
    );
    return 2;
  }
  if (databaseUrl !== undefined) {
    const copied = await migrateStore(join(config.dataDir, 'control.db'), databaseUrl);
    if (!copied.ok) {
      console.error(copied.error);
      return 2;
    }
    const width = Math.max(...copied.counts.map((count) => count.table.length));
    for (const { table, rows } of copied.counts) out(`  ${table.padEnd(width)}  ${rows} row(s), as many as the file`);
    out('copied the control store into PostgreSQL; run the server with --database-url from now on');
  }
  if (telemetryUrl !== undefined) {
    // The control store the server will use: the copy just made, or the data folder's own.
    const control = await openControlStore(controlLocation({ dataDir: config.dataDir, databaseUrl }), {
      accessSeconds: 1,
      refreshSeconds: 1,
    });
    try {
      const copied = await migrateRequestLog(control, config.telemetryDbPath, telemetryUrl, {
        report: importReport(out),
      });
      if (!copied.ok) {
        console.error(copied.error);
        if (databaseUrl !== undefined)
          console.error('the control store was copied: copy the request log again with --telemetry-url alone');
        return 2;
      }
      out(`  requests  ${copied.rows} row(s), as many as the file; rollups summed again from them`);
      out('copied the request log into PostgreSQL; run the server with --telemetry-url from now on');
    } finally {
      await control.close();
    }
  }
  return 0;
}

async function run(
  command: string,
  /** The command and what follows it but flags. */
  positionals: string[],
  flags: Flags,
  control: ControlStore,
  config: ServerConfig,
  out: (line: string) => void,
): Promise<string> {
  const now = config.now();
  const accountOf = async (email: string) => {
    const account = await control.accounts.findByEmail(email);
    if (!account) throw new UsageError(`no account with email ${email}`);
    return account;
  };
  const organizationOf = async (name: string) => {
    const organization = await control.organizations.findByName(name);
    if (!organization) throw new UsageError(`no organization named ${name}`);
    return organization;
  };

  switch (command) {
    case 'deposit': {
      const organization = await organizationOf(required(flags, 'org'));
      const amount = Number(required(flags, 'pkr'));
      const micro = Number.isFinite(amount) ? pkrToMicro(amount) : 0;
      if (micro <= 0 || !Number.isSafeInteger(micro)) throw new UsageError('--pkr must be a positive amount of PKR');
      await control.write(async (tx) => {
        await tx.organizations.deposit(organization.id, micro, now);
        await tx.activity.record({
          orgId: organization.id,
          actorId: null,
          action: 'budget.deposited',
          target: '',
          sourceIp: OPERATOR_SOURCE,
          at: now,
        });
      });
      const budget = await control.organizations.budgetMicro(organization.id);
      return `deposited ${formatPkr(micro)} PKR; budget of ${organization.name} is now ${formatPkr(budget)} PKR`;
    }
    case 'set-role': {
      const account = await accountOf(required(flags, 'email'));
      const role = required(flags, 'role');
      if (role !== 'owner' && role !== 'admin' && role !== 'member') {
        throw new UsageError('--role must be owner, admin or member');
      }
      await control.write((tx) => tx.accounts.setRole(account.id, role as Role));
      return `${account.email} is now ${role}`;
    }
    case 'deactivate':
    case 'activate': {
      const account = await accountOf(required(flags, 'email'));
      if (command === 'activate') {
        await control.write((tx) => tx.accounts.setDeactivated(account.id, null));
        return `${account.email} activated`;
      }
      // Sessions end too, so a later `activate` does not bring back tokens issued before.
      const ended = await control.write(async (tx) => {
        await tx.accounts.setDeactivated(account.id, now);
        return tx.sessions.revokeAllOf(account.id, now);
      });
      return `${account.email} deactivated; ended ${ended} session(s)`;
    }
    case 'revoke-sessions': {
      const account = await accountOf(required(flags, 'email'));
      const count = await control.write((tx) => tx.sessions.revokeAllOf(account.id, now));
      return `ended ${count} session(s) of ${account.email}`;
    }
    case 'add-project': {
      const organization = await organizationOf(required(flags, 'org'));
      const name = required(flags, 'name');
      if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
      const project = await control.write((tx) => tx.organizations.addProject(organization.id, name, now));
      return `created project ${project.name} (${project.id}) in ${organization.name}`;
    }
    case 'set-join-policy': {
      const organization = await organizationOf(required(flags, 'org'));
      const parsed = parseJoinPolicy(required(flags, 'policy'), flags.domains);
      if (!parsed.ok) throw new UsageError(parsed.error);
      const described = describeJoinPolicy(parsed.policy);
      // Who may join is security-relevant, so the organisation's audit trail records each change.
      await control.write(async (tx) => {
        const previous = describeJoinPolicy(await tx.joinPolicies.of(organization.id));
        await tx.joinPolicies.set(organization.id, parsed.policy);
        await tx.activity.record({
          orgId: organization.id,
          actorId: null,
          action: 'org.join_policy_changed',
          target: described,
          sourceIp: OPERATOR_SOURCE,
          at: now,
          change: { before: { policy: previous }, after: { policy: described } },
        });
      });
      return `join policy of ${organization.name} is now ${described}`;
    }
    case 'set-model': {
      const id = required(flags, 'id');
      const active = required(flags, 'active');
      if (active !== 'true' && active !== 'false') throw new UsageError('--active must be true or false');
      // One way to change routes: a new version of the document, as `routes apply` stores it.
      const outcome = await control.write(async (tx) => {
        const current = await tx.routes.current();
        const next = withRouteActive(current.document, id, active === 'true');
        if (!next) throw new UsageError(`no route ${id} in the routes document (version ${current.version})`);
        return tx.routes.apply(next, 'set-model', now, current.version);
      });
      const state = active === 'true' ? 'active' : 'inactive';
      if (outcome.kind === 'unchanged') return `route ${id} is ${state} already (version ${outcome.version})`;
      if (outcome.kind === 'conflict') throw new Error('the routes document changed within its own transaction');
      return `route ${id} is ${state}: applied version ${outcome.version}`;
    }
    case 'import-requests': {
      const files = importFiles(flags, positionals);
      const result = await withRequestLog(config, (telemetry) =>
        importRequests(control, telemetry, files, {
          report: importReport(out),
          fineCellsSince: fineCellsSince(config.now()),
        }),
      );
      if (!result.ok) throw new UsageError(result.error);
      return `imported ${result.rows} request(s)${files.length > 1 ? ` from ${files.length} files` : ''}`;
    }
    case 'seed-demo': {
      const options = {
        days: integerFlag(flags, 'days', 1, 36_500) ?? DEMO_DEFAULTS.days,
        rows: integerFlag(flags, 'rows', 1, 100_000_000) ?? DEMO_DEFAULTS.rows,
        seed: integerFlag(flags, 'seed', 0, 0xffffffff) ?? DEMO_DEFAULTS.seed,
      };
      // The same secrets and password cost the server would use, or its vault could not open these entries.
      const env = process.env;
      const secrets = {
        vaultMasterKey: loadOrCreateSecret(config.dataDir, 'vault-master.key', env.SVC_VAULT_MASTER_KEY),
        keyHashSecret: loadOrCreateSecret(config.dataDir, 'key-hash.secret', env.SVC_KEY_HASH_SECRET),
      };
      const cost = Number(env.SVC_PASSWORD_COST);
      const demoConfig = { ...config, ...(Number.isInteger(cost) && cost > 0 ? { passwordCost: cost } : {}) };
      const seeded = await withRequestLog(config, (telemetry) =>
        seedDemo(
          control,
          secrets,
          typeof telemetry === 'string' ? demoConfig : { ...demoConfig, requestLog: telemetry },
          options,
          { report: importReport(out) },
        ),
      );
      if (!seeded) return `${DEMO_ORGANIZATION} already exists; nothing seeded`;
      return [
        `seeded ${DEMO_ORGANIZATION}: ${seeded.projects} projects, ${seeded.keys} keys, ${seeded.rows} request(s) over ${options.days} days (seed ${options.seed})`,
        'Sign in with:',
        ...seeded.accounts.map((a) => `  ${a.role.padEnd(6)} ${a.email}  ${a.password}`),
      ].join('\n');
    }
    default:
      throw new UsageError(`unknown command "${command}"\n${HELP}`);
  }
}
