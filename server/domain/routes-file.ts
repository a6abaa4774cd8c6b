import { Document, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { RouteEntry, RoutesDocument, StoredRoutes } from './routes-document.js';
import { validateRoutes, type Problem, type RoutesCheck } from './routes-validation.js';

/**
 * The routes document as the operator edits it: a YAML file (JSON is YAML too) read into the
 * validated document, and the stored document written back as YAML. What is exported, applied
 * again, is the same document.
 */

/** A file larger than this is refused before it is parsed. */
export const MAX_ROUTES_FILE_BYTES = 8 * 1024 * 1024;

/** Keys defined twice in one map anywhere in the file, each named by its path (YAML parsers keep the last silently). */
function duplicateKeys(node: unknown, path: string, lines: LineCounter, problems: Problem[]): void {
  const lineOf = (n: Node) => (n.range ? lines.linePos(n.range[0]).line : undefined);
  if (isMap(node)) {
    const seen = new Map<string, number | undefined>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const keyPath = path === '' ? key : `${path}.${key}`;
      const line = isScalar(pair.key) ? lineOf(pair.key) : undefined;
      if (seen.has(key)) {
        const first = seen.get(key);
        problems.push({
          path: keyPath,
          message:
            first === undefined || line === undefined
              ? 'defined twice: each id and field once'
              : `defined twice (${first === line ? `line ${line}` : `lines ${first} and ${line}`}): each id and field once`,
        });
      } else seen.set(key, line);
      duplicateKeys(pair.value, keyPath, lines, problems);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => duplicateKeys(item, `${path}[${i}]`, lines, problems));
  }
}

/** Reads a routes file's text and validates it; `env` is where `key_env` variables are looked for. */
export function parseRoutesFile(text: string, env: NodeJS.ProcessEnv = process.env): RoutesCheck {
  const lines = new LineCounter();
  // Duplicate keys are found below, with their paths; keys are read as strings (`1: …` is "1").
  const parsed = parseDocument(text, { uniqueKeys: false, stringKeys: true, lineCounter: lines, prettyErrors: true });
  const syntax = [...parsed.errors];
  if (syntax.length > 0) {
    return {
      ok: false,
      problems: syntax.map((error) => ({ path: '', message: error.message.split('\n')[0]!.trim() })),
    };
  }
  const problems: Problem[] = [];
  duplicateKeys(parsed.contents, '', lines, problems);
  if (problems.length > 0) return { ok: false, problems };
  let value: unknown;
  try {
    // Aliases are expanded a hundred times at most: a file cannot grow into gigabytes in memory.
    value = parsed.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, problems: [{ path: '', message: (error as Error).message }] };
  }
  return validateRoutes(value, env);
}

/** The document as a file holds it: null fields (the `SVC_UPSTREAM_*` defaults) and empty overrides left out. */
function asFile(document: RoutesDocument): object {
  const route = (entry: RouteEntry) => {
    const { failover, ...rest } = entry;
    return Object.keys(failover).length === 0 ? rest : entry;
  };
  return {
    failover: document.failover,
    providers: Object.fromEntries(
      Object.entries(document.providers).map(([id, provider]) => [
        id,
        Object.fromEntries(
          Object.entries({ ...provider, api: provider.api.length === 1 ? provider.api[0] : provider.api }).filter(
            ([, value]) => value !== null,
          ),
        ),
      ]),
    ),
    routes: Object.fromEntries(Object.entries(document.routes).map(([id, entry]) => [id, route(entry)])),
  };
}

/** A version as YAML, with its number and time in a comment: what `routes export` writes. */
export function routesYaml(stored: Readonly<StoredRoutes>): string {
  const file = new Document(asFile(stored.document));
  // Prices and targets one to a line, as people write them.
  const providers = file.get('providers');
  if (isMap(providers)) {
    for (const pair of providers.items) {
      const api = isMap(pair.value) ? pair.value.get('api') : undefined;
      if (isSeq(api)) api.flow = true;
    }
  }
  const routes = file.get('routes');
  if (isMap(routes)) {
    for (const pair of routes.items) {
      if (!isMap(pair.value)) continue;
      const price = pair.value.get('price');
      if (isMap(price)) price.flow = true;
      const targets = pair.value.get('targets');
      if (isSeq(targets)) for (const item of targets.items) if (isMap(item)) item.flow = true;
    }
  }
  const applied = new Date(stored.applied_at).toISOString();
  file.commentBefore =
    ` version ${stored.version}, applied ${applied}\n` +
    ` To change it: edit, then npm run admin -- routes apply --file FILE --expect-version ${stored.version}`;
  return file.toString({ lineWidth: 0 });
}
