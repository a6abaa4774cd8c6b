import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { grainsFor, segments } from '../../server/analytics/windows.js';
import type { RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { GRAINS } from '../../server/stores/telemetry/rollup-grains.js';
import { RollupSums } from '../../server/stores/telemetry/rollup-sums.js';
import { rollupRows, RollupWriter } from '../../server/stores/telemetry/rollup-writer.js';
import { openTelemetry, TELEMETRY_MIGRATIONS } from '../../server/stores/telemetry/store.js';
import { COLUMNS_OF_001 } from './request-rows.js';

// Each case writes or migrates a store of hundreds of thousands of rows: on two shared cores
// that can take most of a minute.
vi.setConfig({ testTimeout: 60_000 });

const scratch = mkdtempSync(join(tmpdir(), 'gc-rollups-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('a window split into rollup cells and raw edges', () => {
  it('covers every instant exactly once, with whole aligned cells, coarse in the middle', () => {
    const instant = fc.integer({ min: 0, max: 4_000_000_000_000 });
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 0, max: 90 * 86_400_000 }),
        fc.constantFrom(...[0, 1, 2, 3]),
        (from, length, drop) => {
          const grains = GRAINS.slice(drop);
          const parts = segments(from, from + length, grains);
          let cursor = from;
          for (const part of parts) {
            expect(part.from).toBe(cursor);
            expect(part.to).toBeGreaterThan(part.from);
            if (part.grain) {
              expect(grains).toContain(part.grain);
              expect(part.from % part.grain.ms).toBe(0);
              expect(part.to % part.grain.ms).toBe(0);
            } else {
              // Raw rows only where no finer whole cell fits.
              const finest = grains.at(-1);
              if (finest) expect(part.to - part.from).toBeLessThan(finest.ms);
            }
            cursor = part.to;
          }
          expect(cursor).toBe(length === 0 ? from : from + length);
          // At most two segments of each grain and of raw rows.
          expect(parts.length).toBeLessThanOrEqual(2 * grains.length + 1);
        },
      ),
    );
  });

  it('serves a timeseries only from grains that divide its interval', () => {
    expect(grainsFor(3_600_000).map((g) => g.dims)).toEqual(['rollup_dim_hour', 'rollup_dim_5m', 'rollup_dim_1m']);
    expect(grainsFor(90_000)).toEqual([]);
    expect(grainsFor(30_000)).toEqual([]);
    expect(grainsFor(60_000).map((g) => g.dims)).toEqual(['rollup_dim_1m']);
    expect(grainsFor(2 * 86_400_000).map((g) => g.ms)).toEqual([86_400_000, 3_600_000, 300_000, 60_000]);
  });
});

describe('the rollups', () => {
  const TABLES = GRAINS.flatMap((g) => [g.usage, g.dims, g.outcome].filter((table) => table !== null));
  const record = (i: number): RequestRecord => ({
    req_id: `req-${i}`,
    // Then a burst 37 s apart across several hours: many rows to a finest cell, many finest
    // cells to an hour, cells straddling the writer's flushes.
    ts: i < 400 ? 1_763_000_000_000 + i * 7_919_000 : 1_764_000_000_000 + i * 37_000,
    org_id: i % 11 === 0 ? 'other-org' : 'org',
    project_id: i % 3 === 0 ? null : `p${i % 2}`,
    key_id: i % 5 === 0 ? null : `k${i % 4}`,
    model: i % 2 ? 'openai/gpt-4o' : 'svc/fast',
    status: [200, 200, 429, 503][i % 4]!,
    stream: 1,
    total_ms: (i % 90) * 100 + 0.5,
    ttft_ms: i % 3 === 1 ? null : i * 1.5,
    tpot_ms: null,
    pre_dispatch_ms: 12.5,
    prompt_tokens: 10,
    tokens_generated: i % 7 === 0 ? 0 : i * 3,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    total_tokens: 40 + i,
    tokens_estimated: 0,
    cost_micro: (i * 7_777) % 100_000,
    is_byok: 0,
    termination_reason: i % 6 === 0 ? 'client_disconnect' : 'success',
    upstream_error: null,
    upstream_model: null,
    served_by: null,
    attempts: null,
    api: null,
    user_agent: 'ua',
    metadata: '{}',
  });
  const INSERT = `INSERT INTO requests (${COLUMNS_OF_001.join(', ')}) VALUES (${COLUMNS_OF_001.map((c) => '@' + c).join(', ')})`;
  const ROWS = 700;
  const rollups = (db: BetterSqlite3.Database) =>
    Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2, 3, 4, 5`).all()]));

  it('hold what the rows hold, whether backfilled by the migration or kept by the writer across flushes', () => {
    // A store at version 1 with rows in it, then brought up to date: the migration backfills.
    const old = new BetterSqlite3(join(scratch, 'old.db'));
    old.exec(readFileSync(new URL('001_request_log.sql', TELEMETRY_MIGRATIONS), 'utf8'));
    old.pragma('user_version = 1');
    const insertOld = old.prepare(INSERT);
    for (let i = 0; i < ROWS; i++) insertOld.run(record(i));
    old.close();
    const migrated = openTelemetry(join(scratch, 'old.db'));

    // The same rows written into a new store, the writer flushing twice.
    const fresh = openTelemetry(join(scratch, 'new.db'));
    const writer = new RollupWriter(fresh);
    const sums = new RollupSums();
    const insertFresh = fresh.prepare(INSERT);
    const flush = () => {
      const cells = sums.take();
      if (cells) writer.write(rollupRows(cells));
    };
    for (let i = 0; i < ROWS; i++) {
      insertFresh.run(record(i));
      sums.add(record(i));
      if (i === 150 || i === 550) flush();
    }
    flush();

    expect(rollups(migrated)).toEqual(rollups(fresh));
    for (const grain of GRAINS) {
      const cells = migrated.prepare('SELECT COUNT(*) AS n, SUM(cost_micro) AS cost FROM requests').get();
      if (grain.usage) {
        expect(
          migrated.prepare(`SELECT SUM(requests) AS n, SUM(cost_micro) AS cost FROM ${grain.usage}`).get(),
        ).toEqual(cells);
      }
      // Each dimension of the one-dimension cells adds up to the same, and by value to its rows.
      const byDim = migrated
        .prepare(`SELECT dim, SUM(requests) AS n, SUM(cost_micro) AS cost FROM ${grain.dims} GROUP BY dim`)
        .all();
      expect(byDim).toEqual([0, 1, 2, 3].map((dim) => ({ dim, ...cells! })));
      const keyCells = migrated
        .prepare(`SELECT value, SUM(requests) AS n FROM ${grain.dims} WHERE dim = 2 AND org_id = 'org' GROUP BY value`)
        .all();
      expect(keyCells).toEqual(
        migrated
          .prepare(
            `SELECT COALESCE(key_id, '') AS value, COUNT(*) AS n FROM requests WHERE org_id = 'org' GROUP BY value`,
          )
          .all(),
      );
      if (!grain.outcome) continue;
      const outcomes = migrated
        .prepare(
          `SELECT SUM(requests) AS n FROM ${grain.outcome} WHERE status_class = 5 AND termination_reason = 'success'`,
        )
        .get();
      expect(outcomes).toEqual(
        migrated
          .prepare(
            `SELECT COUNT(*) AS n FROM requests WHERE status BETWEEN 500 AND 599 AND termination_reason = 'success'`,
          )
          .get(),
      );
    }
    migrated.close();
    fresh.close();
  });
});
