import { ImportedRequest } from '../schemas/request-log.js';
import type { ControlRecords } from '../stores/control/store.js';
import { importSource, type ImportSource } from './import-source.js';
import { NDJSON_READER, type NdjsonArgs, type Owners } from './ndjson-records.js';

/**
 * NDJSON files as an import's source, read one after the other by ndjson-records.ts; a request
 * id already in the store or earlier in the files is refused.
 */
export function ndjsonSource(files: string[], owners: Owners): ImportSource<NdjsonArgs> {
  return importSource(NDJSON_READER, { files, owners, schema: ImportedRequest }, { parsed: true });
}

/** The keys, projects and organisations an import's rows may name, read before it starts. */
export async function ownersOf(control: ControlRecords): Promise<Owners> {
  const keys = await control.keys.owners();
  const projects = await control.organizations.projectOwners();
  const organizations = await control.organizations.nameKeys();
  return {
    keys: new Map(keys.map((k) => [k.id, { orgId: k.org_id, projectId: k.project_id }])),
    projects: new Map(projects.map((p) => [p.id, p.org_id])),
    organizations: new Map(organizations.map((o) => [o.name_key, o.id])),
  };
}
