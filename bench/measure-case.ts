import type { DuckDBPreparedStatement } from '@duckdb/node-api';
import { paramTypes, type BenchCase, type DuckStatement } from './cases.js';
import type { ApiClient } from './http.js';
import { judgeCase, type CaseResult } from './report.js';
import { round, timeRuns, type LoopLimits, type Timing } from './stats.js';
import type { Reference } from './stores.js';

/** One query: row counts checked once, then timed through HTTP, then in DuckDB. */
export async function measureCase(
  benchCase: BenchCase,
  client: ApiClient,
  reference: Reference,
  limits: LoopLimits,
  done: CaseResult[],
  options: { judge?: typeof judgeCase; duckdb?: Timing } = {},
): Promise<CaseResult> {
  const db = reference.connection;
  const countAt = async (now: number) => {
    const statement = benchCase.count!.statement(now);
    const answer = await db.runAndReadAll(statement.sql, statement.params, paramTypes(statement.params));
    return Number(answer.getRows()[0]?.[0]);
  };
  let check: CaseResult['check'];
  if (benchCase.count) {
    // The server's clock is read between these two: rows only leave the window as time passes.
    const before = Date.now();
    const answer = JSON.parse(await client.get(benchCase.path)) as Record<string, number>;
    const after = Date.now();
    const server = Number(answer[benchCase.count.field]);
    const duckdbMax = await countAt(before);
    const duckdbMin = await countAt(after);
    check = { server, duckdbMin, duckdbMax, ok: server >= duckdbMin && server <= duckdbMax };
  }

  const server = await timeRuns(() => client.get(benchCase.path), limits);

  const duckdb = options.duckdb ?? (await timeDuckdb(benchCase, reference, limits));
  const firstPage = done.find((r) => r.id === 'requests first page')?.server;
  const verdict = (options.judge ?? judgeCase)(benchCase.kind, server, duckdb, firstPage);
  return {
    id: benchCase.id,
    kind: benchCase.kind,
    path: benchCase.path,
    server,
    duckdb,
    ratio: round(server.p50 / duckdb.p50, 2),
    ...verdict,
    ...(check ? { check } : {}),
  };
}

/** The case's statements timed in DuckDB, on the same rows. */
async function timeDuckdb(benchCase: BenchCase, reference: Reference, limits: LoopLimits): Promise<Timing> {
  const db = reference.connection;
  const prepared: { statement: DuckDBPreparedStatement; params: (now: number) => DuckStatement['params'] }[] = [];
  const statements = benchCase.duck(Date.now());
  for (const [i, statement] of statements.entries()) {
    prepared.push({
      statement: await db.prepare(statement.sql),
      params: (now) => benchCase.duck(now)[i]!.params,
    });
  }
  try {
    return await timeRuns(async () => {
      const now = Date.now();
      for (const { statement, params } of prepared) {
        const values = params(now);
        statement.bind(values, paramTypes(values));
        (await statement.runAndReadAll()).getRows();
      }
    }, limits);
  } finally {
    for (const { statement } of prepared) statement.destroySync();
  }
}
