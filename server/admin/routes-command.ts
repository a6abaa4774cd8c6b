import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MAX_ROUTES_FILE_BYTES, parseRoutesFile, routesYaml } from '../domain/routes-file.js';
import { formatProblem, type Problem, type RoutesCheck } from '../domain/routes-validation.js';
import type { RoutesDocument } from '../domain/routes-document.js';
import type { ControlStore } from '../stores/control/store.js';

/**
 * `routes export | check | apply | history`: the routes document as a file (README, "Routes").
 * Problems and warnings go to stderr, each with its path; what was done goes to stdout. Exit 0,
 * 1 for a document refused (invalid, or `--expect-version` not the current version); a usage
 * mistake is thrown for the command runner to report (exit 2).
 */

export const ROUTES_USAGE =
  'routes needs one of: export [--out FILE], check --file FILE, apply --file FILE [--expect-version N], history';

export interface RoutesFlags {
  file?: string;
  out?: string;
  'expect-version'?: string;
}

interface Printers {
  out: (line: string) => void;
  err: (line: string) => void;
  usage: (message: string) => Error;
}

function readDocument(flags: RoutesFlags, { usage }: Printers): RoutesCheck {
  const file = flags.file?.trim();
  if (!file) throw usage('--file is required: the routes document to read (YAML or JSON)');
  const path = resolve(file);
  let text: string;
  try {
    if (statSync(path).size > MAX_ROUTES_FILE_BYTES) {
      throw usage(`${file} is larger than ${MAX_ROUTES_FILE_BYTES / 1024 / 1024} MiB: not a routes document`);
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error) throw usage(`cannot read ${file}: ${error.message}`);
    throw error;
  }
  return parseRoutesFile(text);
}

const summary = (document: RoutesDocument) => {
  const routes = Object.values(document.routes);
  const active = routes.filter((route) => route.active).length;
  return `${routes.length} route(s), ${active} active, over ${Object.keys(document.providers).length} provider(s)`;
};

function report(check: RoutesCheck, { err }: Printers): check is Extract<RoutesCheck, { ok: true }> {
  const print = (problems: Problem[], prefix: string) => {
    for (const problem of problems) err(`${prefix}${formatProblem(problem)}`);
  };
  if (!check.ok) {
    print(check.problems, '');
    err(`invalid: ${check.problems.length} problem(s); nothing was stored`);
    return false;
  }
  print(check.warnings, 'warning: ');
  return true;
}

function expectedVersion(flags: RoutesFlags, { usage }: Printers): number | undefined {
  const raw = flags['expect-version'];
  if (raw === undefined) return undefined;
  const value = /^\s*\d{1,9}\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw usage(`--expect-version must be a version number (1 or more), not "${raw}"`);
  }
  return value;
}

/** `routes check --file FILE`: validates without a store (a CI job may run it anywhere). */
export function routesCheckCommand(flags: RoutesFlags, printers: Printers): number {
  const check = readDocument(flags, printers);
  if (!report(check, printers)) return 1;
  printers.out(`valid: ${summary(check.document)}`);
  return 0;
}

/** `routes export | apply | history` on the control store; `now` is when an apply is stored. */
export async function routesCommand(
  control: ControlStore,
  sub: string | undefined,
  flags: RoutesFlags,
  now: number,
  printers: Printers,
): Promise<number> {
  const { out, err, usage } = printers;
  switch (sub) {
    case 'check':
      return routesCheckCommand(flags, printers);
    case 'export': {
      const stored = await control.routes.current();
      const yaml = routesYaml(stored);
      const file = flags.out?.trim();
      if (file === undefined) {
        out(yaml.trimEnd());
        return 0;
      }
      try {
        writeFileSync(resolve(file), yaml);
      } catch (error) {
        if (error instanceof Error && 'code' in error) throw usage(`cannot write ${file}: ${error.message}`);
        throw error;
      }
      out(`wrote version ${stored.version} to ${file}`);
      return 0;
    }
    case 'apply': {
      const expect = expectedVersion(flags, printers);
      const check = readDocument(flags, printers);
      if (!report(check, printers)) return 1;
      const outcome = await control.write((tx) => tx.routes.apply(check.document, 'routes apply', now, expect));
      if (outcome.kind === 'conflict') {
        err(
          `refused: the current version is ${outcome.current}, not ${expect}; nothing was stored. ` +
            `Export version ${outcome.current}, make your change to it, and apply with --expect-version ${outcome.current}`,
        );
        return 1;
      }
      if (outcome.kind === 'unchanged') {
        out(`version ${outcome.version} is this document already; nothing was stored`);
        return 0;
      }
      out(`applied version ${outcome.version}: ${summary(check.document)}`);
      return 0;
    }
    case 'history': {
      const versions = await control.routes.history();
      out('version  applied at                source');
      for (const { version, applied_at, source } of versions) {
        out(`${String(version).padStart(7)}  ${new Date(applied_at).toISOString()}  ${source}`);
      }
      return 0;
    }
    default:
      throw usage(sub === undefined ? ROUTES_USAGE : `unknown routes command "${sub}"; ${ROUTES_USAGE}`);
  }
}
