import { Ajv } from 'ajv';
import { parseIsoTimestamp } from '../domain/time.js';
import { pkrToMicro } from '../domain/money.js';
import { parseId } from '../ids.js';
import { ImportedRequest } from '../schemas/request-log.js';
import type { ControlStore } from '../stores/control/store.js';
import { openSqlite } from '../stores/sqlite.js';
import { TELEMETRY_MIGRATIONS } from '../stores/telemetry/store.js';
import { fileLines } from './ndjson-lines.js';

export type ImportResult = { ok: true; rows: number } | { ok: false; error: string };

class LineError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

const checkRow = new Ajv({ allErrors: false, strict: false }).compile<ImportedRequest>(ImportedRequest);

const INSERT = `INSERT INTO telemetry.requests (req_id, ts, org_id, project_id, key_id, model, status, stream,
  total_ms, ttft_ms, tpot_ms, pre_dispatch_ms, prompt_tokens, tokens_generated, cache_creation_input_tokens,
  cache_read_input_tokens, total_tokens, tokens_estimated, cost_micro, is_byok, termination_reason,
  upstream_error, upstream_model, user_agent, metadata)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Loads request-log rows into the telemetry store and settles their cost into each
 * key's spend. The telemetry file is attached to the control connection so that rows
 * and spend commit in one transaction: a malformed line, an unknown key or project, or
 * a request id seen before rejects the whole file, naming the line.
 */
export async function importRequests(
  control: ControlStore,
  telemetryPath: string,
  file: string,
): Promise<ImportResult> {
  openSqlite(telemetryPath, TELEMETRY_MIGRATIONS).close();
  const db = control.db;
  db.prepare('ATTACH DATABASE ? AS telemetry').run(telemetryPath);
  try {
    const insert = db.prepare(INSERT);
    const seen = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM telemetry.requests WHERE req_id = ?');
    const rows = control.write(() => {
      const spend = new Map<string, number>();
      const orgByName = new Map<string, string>();
      let count = 0;
      let lineNumber = 0;
      for (const line of fileLines(file)) {
        lineNumber++;
        if (line.trim() === '') continue;
        const row = parseLine(line, lineNumber);
        const ts = parseIsoTimestamp(row.timestamp);
        if (ts === null) throw new LineError(lineNumber, 'timestamp must be an ISO 8601 date-time');
        const owner = resolveOwner(control, row, lineNumber, orgByName);
        if (seen.get(row.req_id)) throw new LineError(lineNumber, `request id ${row.req_id} was already imported`);
        const cost = pkrToMicro(row.financials.cost_pkr);
        const m = row.metrics;
        insert.run(
          row.req_id,
          ts,
          owner.orgId,
          owner.projectId,
          owner.keyId,
          row.model,
          row.status,
          row.stream ? 1 : 0,
          m.total_ms,
          m.ttft_ms,
          m.tpot_ms,
          m.pre_dispatch_ms,
          m.prompt_tokens,
          m.tokens_generated,
          m.cache_creation_input_tokens,
          m.cache_read_input_tokens,
          m.total_tokens,
          m.tokens_estimated ? 1 : 0,
          cost,
          row.financials.is_byok,
          row.status_detail.termination_reason,
          row.status_detail.upstream_error,
          row.upstream?.model ?? null,
          row.user_agent,
          JSON.stringify(lowercaseKeys(row.metadata)),
        );
        if (owner.keyId) spend.set(owner.keyId, (spend.get(owner.keyId) ?? 0) + cost);
        count++;
      }
      for (const [keyId, cost] of spend) control.keys.settle(keyId, cost);
      return count;
    });
    return { ok: true, rows };
  } catch (error) {
    if (error instanceof LineError) return { ok: false, error: error.message };
    if (isNodeError(error) && error.code === 'ENOENT') return { ok: false, error: `no such file: ${file}` };
    throw error;
  } finally {
    db.exec('DETACH DATABASE telemetry');
  }
}

function parseLine(line: string, lineNumber: number): ImportedRequest {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new LineError(lineNumber, 'not valid JSON');
  }
  if (!checkRow(value)) {
    const issue = checkRow.errors?.[0];
    const field = issue?.instancePath || '/';
    const missing = issue?.keyword === 'required' ? ` (${String(issue.params.missingProperty)})` : '';
    throw new LineError(lineNumber, `${field} ${issue?.message ?? 'is invalid'}${missing}`);
  }
  return value;
}

interface Owner {
  orgId: string;
  keyId: string | null;
  projectId: string | null;
}

function resolveOwner(
  control: ControlStore,
  row: ImportedRequest,
  lineNumber: number,
  orgByName: Map<string, string>,
): Owner {
  const keyId = row.key ? parseId(row.key.id) : null;
  const projectId = row.project ? parseId(row.project.id) : null;
  const key = keyId ? control.keys.find(keyId) : undefined;
  const project = projectId ? control.organizations.findProject(projectId) : undefined;
  if (row.key && !key) throw new LineError(lineNumber, `unknown key ${row.key.id}`);
  if (row.project && !project) throw new LineError(lineNumber, `unknown project ${row.project.id}`);
  if (key && project && key.project_id !== project.id) {
    throw new LineError(lineNumber, `key ${key.id} does not belong to project ${project.id}`);
  }
  const orgId = key?.org_id ?? project?.org_id ?? organizationByName(control, row, lineNumber, orgByName);
  return { orgId, keyId: key?.id ?? null, projectId: project?.id ?? null };
}

function organizationByName(
  control: ControlStore,
  row: ImportedRequest,
  lineNumber: number,
  cache: Map<string, string>,
): string {
  const name = row.organization_name;
  if (name === undefined) throw new LineError(lineNumber, 'a row without key and project needs organization_name');
  const cached = cache.get(name);
  if (cached) return cached;
  const organization = control.organizations.findByName(name);
  if (!organization) throw new LineError(lineNumber, `unknown organization ${name}`);
  cache.set(name, organization.id);
  return organization.id;
}

function lowercaseKeys(metadata: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata).map(([name, value]) => [name.toLowerCase(), value]));
}

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}
