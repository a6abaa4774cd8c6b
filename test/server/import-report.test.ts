import { describe, expect, it } from 'vitest';
import { importReport } from '../../server/admin/import-report.js';

describe("an import's progress lines", () => {
  it('say which migration runs, how many rows are written and how fast, and when the commit starts', () => {
    const lines: string[] = [];
    const report = importReport((line) => lines.push(line));
    report({ kind: 'upgrading', migration: '006_minute_rollups.sql' });
    report({ kind: 'written', rows: 100_000, ms: 4_000 });
    report({ kind: 'written', rows: 200_000, ms: 5_000 });
    report({ kind: 'committing', rows: 212_345 });
    expect(lines).toEqual([
      'upgrading the telemetry store: 006_minute_rollups.sql (a large store takes minutes)',
      '100000 request(s) written (25000 a second)',
      '200000 request(s) written (40000 a second)',
      '212345 request(s) written; finishing the rollups and search index, then committing',
    ]);
  });
});
