import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import {
  INSERT_COLUMNS,
  orgIdAt,
  RequestColumnsBuilder,
  reqIdAt,
  rowidAt,
  valuesAt,
  type RequestColumns,
} from '../../server/ingest/request-columns.js';
import { requestValues, type RequestRecord } from '../../server/stores/telemetry/request-record.js';
import { requestRecord } from './request-rows.js';

/** Rows that use every column, nulls and non-integer numbers among them, strings repeated and not. */
function records(): RequestRecord[] {
  return [
    requestRecord(1),
    {
      ...requestRecord(2),
      org_id: 'org-b',
      project_id: 'project-1',
      key_id: 'key-1',
      ttft_ms: 12.345678901234567,
      tpot_ms: 0.1 + 0.2,
      total_ms: 1e-9,
      cache_read_input_tokens: 0,
      cost_micro: 2 ** 53 - 1,
      upstream_error: 'rate limited',
      upstream_model: 'gpt-4o-mini-2024-07-18',
      served_by: 'openai/gpt-4o-mini-2024-07-18',
      attempts: '[{"target":"openai/gpt-4o-mini-2024-07-18","status":200,"error":null,"ms":1.5,"decision":"served"}]',
      api: 'messages',
      metadata: '{"trace":"abc"}',
    },
    { ...requestRecord(3), project_id: 'project-1', key_id: 'key-1', ts: 0, status: 503, stream: 1 },
  ];
}

describe('request columns', () => {
  it('give back every row as it was added, across a thread boundary', () => {
    const builder = new RequestColumnsBuilder(8);
    const rows = records();
    rows.forEach((record, i) => builder.add(record, 100 + i));
    // What postMessage does to a batch.
    const columns = deserialize(serialize(builder.take())) as RequestColumns;

    expect(columns.length).toBe(3);
    const out = new Array<unknown>(INSERT_COLUMNS.length);
    rows.forEach((record, i) => {
      valuesAt(columns, i, out);
      expect(out).toEqual([...requestValues(record), 100 + i]);
      expect([reqIdAt(columns, i), orgIdAt(columns, i), rowidAt(columns, i)]).toEqual([
        record.req_id,
        record.org_id,
        100 + i,
      ]);
    });
    // A string repeated across rows travels once: organisation, project, key, model, termination
    // reason, upstream error, upstream model, served by, api, user agent.
    expect(columns.dictionaries.map((values) => values.length)).toEqual([2, 2, 2, 1, 1, 2, 2, 2, 2, 1]);
  });

  it('start again empty after each batch is taken', () => {
    const builder = new RequestColumnsBuilder(4);
    builder.add(requestRecord(1), 1);
    builder.take();
    expect(builder.length).toBe(0);
    builder.add({ ...requestRecord(2), org_id: 'org-z' }, 2);
    const columns = builder.take();
    expect(columns.length).toBe(1);
    expect(orgIdAt(columns, 0)).toBe('org-z');
    expect(columns.dictionaries.every((values) => values.length === 1)).toBe(true);
  });

  it('refuse a batch too large for their codes, and a row past their capacity', () => {
    expect(() => new RequestColumnsBuilder(65_537)).toThrow(RangeError);
    const builder = new RequestColumnsBuilder(2);
    builder.add(requestRecord(1), 1);
    builder.add(requestRecord(2), 2);
    expect(() => builder.add(requestRecord(3), 3)).toThrow(RangeError);
    const columns = builder.take();
    expect(columns.length).toBe(2);
    expect([reqIdAt(columns, 1), rowidAt(columns, 1)]).toEqual([requestRecord(2).req_id, 2]);
  });
});
