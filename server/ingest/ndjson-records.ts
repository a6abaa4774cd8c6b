import { Ajv, type ValidateFunction } from 'ajv';
import { attemptsText, servedBy } from '../domain/attempts.js';
import { pkrToMicro } from '../domain/money.js';
import { parseIsoTimestamp } from '../domain/time.js';
import { parseId } from '../ids.js';
import type { ImportedRequest } from '../schemas/request-log.js';
import { organizationNameKey } from '../stores/control/organizations.js';
import type { RequestRecord } from '../stores/telemetry/request-record.js';
import { LineError, type SourceReader } from './import-source.js';
import { fileLines } from './ndjson-lines.js';

/** This module's URL: the reader of an `ndjsonSource` (ndjson-source.ts), loaded on the import's thread. */
export const NDJSON_READER = import.meta.url;

export interface NdjsonArgs {
  /** Read one after the other, as one source: an import of several files is one transaction. */
  files: string[];
  owners: Owners;
  /**
   * The JSON Schema each line is checked against (`ImportedRequest`), passed as data: the schema
   * module needs TypeBox, which took ~0.3 s to load on the reading thread, each import.
   */
  schema: object;
}

/** The rows of an `ndjsonSource`, read on the import's thread (import-worker.ts), with their files and lines. */
export const readRows: SourceReader<NdjsonArgs> = ({ files, owners, schema }) => {
  const at: Place = { file: files[0] ?? '', line: 0, metadata: {} };
  // A file is named, in faults and to the batches, only among several: one file's lines say enough.
  const named = files.length > 1;
  const records = filesRecords(files, owners, at, schema, named);
  return {
    records,
    line: () => at.line,
    metadata: () => at.metadata,
    ...(named ? { file: () => at.file } : {}),
  };
};

/** Where the row last read is, and its metadata as written into its record. */
interface Place {
  file: string;
  line: number;
  metadata: Record<string, string>;
}

function* filesRecords(
  files: string[],
  owners: Owners,
  at: Place,
  schema: object,
  named: boolean,
): Generator<RequestRecord> {
  const check = rowCheck(schema);
  for (const file of files) {
    at.file = file;
    yield* ndjsonRecords(file, owners, at, check, named);
  }
}

/**
 * Who may own imported rows, read from the control store before an import starts: the
 * import's reader runs on a thread of its own, without the control store.
 */
export interface Owners {
  /** Key id → its organisation and project. */
  keys: Map<string, { orgId: string; projectId: string }>;
  /** Project id → its organisation. */
  projects: Map<string, string>;
  /** Organisation name key (`organizationNameKey`) → id. */
  organizations: Map<string, string>;
}

const rowCheck = (schema: object): ValidateFunction<ImportedRequest> =>
  new Ajv({ allErrors: false, strict: false }).compile<ImportedRequest>(schema);

/**
 * The rows of an NDJSON file of request-log rows. A malformed line or an unknown key or
 * project throws a `LineError`, naming the file too when `named` (one of several). `at.line`
 * is the line of the row last yielded. (A request id seen before is the writer's to find: the
 * store's key refuses it.)
 */
function* ndjsonRecords(
  file: string,
  owners: Owners,
  at: Place,
  check: ValidateFunction<ImportedRequest>,
  named: boolean,
): Generator<RequestRecord> {
  let lineNumber = 0;
  const fault = (message: string) => new LineError(lineNumber, message, named ? file : null);
  for (const line of fileLines(file)) {
    lineNumber++;
    if (line.trim() === '') continue;
    const row = parseLine(line, check, fault);
    const ts = parseIsoTimestamp(row.timestamp);
    if (ts === null) throw fault('timestamp must be an ISO 8601 date-time');
    const owner = resolveOwner(owners, row, fault);
    const m = row.metrics;
    const upstream = row.upstream;
    const metadata = lowercaseKeys(row.metadata);
    at.line = lineNumber;
    at.metadata = metadata;
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
      upstream_model: upstream?.model ?? null,
      // `upstream.model` is the model that served: with its provider, the target that did.
      served_by: upstream?.provider ? servedBy(upstream.provider, upstream.model) : null,
      attempts: upstream?.attempts ? attemptsText(upstream.attempts) : null,
      // Absent (a file written before rows said it, or by another program): unknown.
      api: row.api ?? null,
      user_agent: row.user_agent,
      metadata: JSON.stringify(metadata),
    };
  }
}

/** A `LineError` at the line being read, with this message. */
type Fault = (message: string) => LineError;

function parseLine(line: string, checkRow: ValidateFunction<ImportedRequest>, fault: Fault): ImportedRequest {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw fault('not valid JSON');
  }
  if (!checkRow(value)) {
    const issue = checkRow.errors?.[0];
    const field = issue?.instancePath || '/';
    const missing = issue?.keyword === 'required' ? ` (${String(issue.params.missingProperty)})` : '';
    throw fault(`${field} ${issue?.message ?? 'is invalid'}${missing}`);
  }
  return value;
}

interface Owner {
  orgId: string;
  keyId: string | null;
  projectId: string | null;
}

function resolveOwner(owners: Owners, row: ImportedRequest, fault: Fault): Owner {
  const keyId = row.key ? parseId(row.key.id) : null;
  const projectId = row.project ? parseId(row.project.id) : null;
  const key = keyId ? owners.keys.get(keyId) : undefined;
  const projectOrg = projectId ? owners.projects.get(projectId) : undefined;
  if (row.key && !key) throw fault(`unknown key ${row.key.id}`);
  if (row.project && !projectOrg) throw fault(`unknown project ${row.project.id}`);
  if (key && projectOrg && key.projectId !== projectId) {
    throw fault(`key ${keyId} does not belong to project ${projectId}`);
  }
  const orgId = key?.orgId ?? projectOrg ?? organizationByName(owners, row, fault);
  return { orgId, keyId: key ? keyId : null, projectId: projectOrg ? projectId : null };
}

function organizationByName(owners: Owners, row: ImportedRequest, fault: Fault): string {
  const name = row.organization_name;
  if (name === undefined) throw fault('a row without key and project needs organization_name');
  const id = owners.organizations.get(organizationNameKey(name));
  if (!id) throw fault(`unknown organization ${name}`);
  return id;
}

/** `metadata` itself when its keys are lowercase already, as nearly every row's are. */
function lowercaseKeys(metadata: Record<string, string>): Record<string, string> {
  let lowercase = true;
  for (const name in metadata) lowercase &&= name.toLowerCase() === name;
  if (lowercase) return metadata;
  return Object.fromEntries(Object.entries(metadata).map(([name, value]) => [name.toLowerCase(), value]));
}
