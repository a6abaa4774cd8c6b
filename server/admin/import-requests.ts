import { Ajv } from 'ajv';
import { parseIsoTimestamp } from '../domain/time.js';
import { pkrToMicro } from '../domain/money.js';
import { parseId } from '../ids.js';
import { ImportedRequest } from '../schemas/request-log.js';
import type { ControlStore } from '../stores/control/store.js';
import { recordRequests, type ImportProgress } from '../domain/record-requests.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { fileLines } from './ndjson-lines.js';

export type ImportResult = { ok: true; rows: number } | { ok: false; error: string };

class LineError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

const checkRow = new Ajv({ allErrors: false, strict: false }).compile<ImportedRequest>(ImportedRequest);

/**
 * Loads an NDJSON file of request-log rows into the telemetry store and settles their
 * cost into each key's spend. A malformed line, an unknown key or project, or a request
 * id seen before rejects the whole file, naming the line; nothing is half-imported.
 */
export function importRequests(
  control: ControlStore,
  telemetryPath: string,
  file: string,
  progress?: ImportProgress,
): ImportResult {
  try {
    const rows = recordRequests(
      control,
      telemetryPath,
      (alreadyRecorded) => readRecords(control, file, alreadyRecorded),
      progress,
    );
    return { ok: true, rows };
  } catch (error) {
    if (error instanceof LineError) return { ok: false, error: error.message };
    if (isNodeError(error) && error.code === 'ENOENT') return { ok: false, error: `no such file: ${file}` };
    throw error;
  }
}

function* readRecords(
  control: ControlStore,
  file: string,
  alreadyRecorded: (reqId: string) => boolean,
): Generator<RequestRecord> {
  const orgByName = new Map<string, string>();
  let lineNumber = 0;
  for (const line of fileLines(file)) {
    lineNumber++;
    if (line.trim() === '') continue;
    const row = parseLine(line, lineNumber);
    const ts = parseIsoTimestamp(row.timestamp);
    if (ts === null) throw new LineError(lineNumber, 'timestamp must be an ISO 8601 date-time');
    const owner = resolveOwner(control, row, lineNumber, orgByName);
    // Rows of this file written so far are visible here: they share the transaction.
    if (alreadyRecorded(row.req_id)) {
      throw new LineError(lineNumber, `request id ${row.req_id} was already imported`);
    }
    const m = row.metrics;
    yield {
      req_id: row.req_id,
      ts,
      org_id: owner.orgId,
      project_id: owner.projectId,
      key_id: owner.keyId,
      model: row.model,
      status: row.status,
      stream: row.stream ? 1 : 0,
      total_ms: m.total_ms,
      ttft_ms: m.ttft_ms,
      tpot_ms: m.tpot_ms,
      pre_dispatch_ms: m.pre_dispatch_ms,
      prompt_tokens: m.prompt_tokens,
      tokens_generated: m.tokens_generated,
      cache_creation_input_tokens: m.cache_creation_input_tokens,
      cache_read_input_tokens: m.cache_read_input_tokens,
      total_tokens: m.total_tokens,
      tokens_estimated: m.tokens_estimated ? 1 : 0,
      cost_micro: pkrToMicro(row.financials.cost_pkr),
      is_byok: row.financials.is_byok,
      termination_reason: row.status_detail.termination_reason,
      upstream_error: row.status_detail.upstream_error,
      upstream_model: row.upstream?.model ?? null,
      user_agent: row.user_agent,
      metadata: JSON.stringify(lowercaseKeys(row.metadata)),
    };
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
