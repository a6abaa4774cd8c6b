// Local times are read in the user's zone: pin one with summer time to test offsets.
process.env.TZ = 'Europe/London';

import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../renderer/src/bridge.js';
import { parseCreditLimit, microToPkrNumber } from '../../../renderer/src/lib/credit-limit.js';
import { placeError, type FieldRule } from '../../../renderer/src/lib/field-errors.js';
import { filterKeys, nextSort, sortFromParams, sortKeys, type KeyRow } from '../../../renderer/src/lib/key-table.js';
import {
  isoToLocalInput,
  parseLocalInput,
  toEpochSeconds,
  toIsoWithOffset,
} from '../../../renderer/src/lib/local-time-input.js';
import { KEYS, PROJECTS } from './fixtures.js';

const rows: KeyRow[] = KEYS.map((key, i) => ({
  key,
  projectName: PROJECTS.find((p) => p.id === key.project_id)?.name ?? null,
  spentMicro: i === 1 ? null : i * 1000,
}));
const names = (list: KeyRow[]) => list.map((r) => r.key.name);

describe('sorting and filtering keys', () => {
  it('sorts nulls by what they mean, and unknown spend last in either order', () => {
    expect(names(sortKeys(rows, { column: 'credit', order: 'asc' }))).toEqual([
      'Checkout tests',
      'Checkout prod',
      'Search dev', // unlimited
    ]);
    expect(names(sortKeys(rows, { column: 'expiry', order: 'desc' }))[0]).toBe('Search dev'); // never expires
    expect(names(sortKeys(rows, { column: 'lastUsed', order: 'desc' }))[0]).toBe('Checkout prod'); // others never
    expect(names(sortKeys(rows, { column: 'spend', order: 'asc' })).at(-1)).toBe('Search dev');
    expect(names(sortKeys(rows, { column: 'spend', order: 'desc' })).at(-1)).toBe('Search dev');
  });

  it('filters by project and environment together', () => {
    expect(names(filterKeys(rows, { project: PROJECTS[0]!.id }))).toEqual(['Checkout prod', 'Checkout tests']);
    expect(names(filterKeys(rows, { project: PROJECTS[0]!.id, environment: 'testing' }))).toEqual(['Checkout tests']);
    expect(filterKeys(rows, {})).toHaveLength(3);
  });

  it('reads the sort from the route, falling back to newest first', () => {
    expect(sortFromParams({ sort: 'rate', order: 'asc' })).toEqual({ column: 'rate', order: 'asc' });
    expect(sortFromParams({ sort: 'secret', order: 'sideways' })).toEqual({ column: 'created', order: 'desc' });
    expect(nextSort({ column: 'rate', order: 'asc' }, 'rate')).toEqual({ column: 'rate', order: 'desc' });
    expect(nextSort({ column: 'rate', order: 'asc' }, 'name')).toEqual({ column: 'name', order: 'asc' });
    expect(nextSort({ column: 'rate', order: 'asc' }, 'lastUsed')).toEqual({ column: 'lastUsed', order: 'desc' });
  });
});

describe('datetime-local values in the user’s zone', () => {
  it('sends the offset in force at that instant, summer time included', () => {
    const winter = parseLocalInput('2030-01-31T18:00');
    const summer = parseLocalInput('2030-07-01T09:30:15');
    if (!winter.ok || !summer.ok) throw new Error('not parsed');
    expect(toIsoWithOffset(winter.date)).toBe('2030-01-31T18:00:00+00:00');
    expect(toIsoWithOffset(summer.date)).toBe('2030-07-01T09:30:15+01:00');
    expect(toEpochSeconds(summer.date)).toBe(Date.UTC(2030, 6, 1, 8, 30, 15) / 1000);
  });

  it('refuses what is not a date and time, or not a real date', () => {
    expect(parseLocalInput('tomorrow')).toMatchObject({ ok: false });
    expect(parseLocalInput('2030-02-30T10:00')).toEqual({ ok: false, error: 'that date does not exist' });
  });

  it('prefills an input from a server timestamp, with seconds only when it has them', () => {
    expect(isoToLocalInput('2030-07-01T08:30:00.000Z')).toBe('2030-07-01T09:30');
    expect(isoToLocalInput('2030-07-01T08:30:15.000Z')).toBe('2030-07-01T09:30:15');
    expect(isoToLocalInput(null)).toBe('');
  });
});

describe('credit limits typed in PKR', () => {
  it('reads empty as no limit and refuses zero and amounts finer than a micro-PKR', () => {
    expect(parseCreditLimit('  ')).toEqual({ ok: true, micro: null });
    expect(parseCreditLimit('1,500.25')).toEqual({ ok: true, micro: 1_500_250_000 });
    expect(parseCreditLimit('0')).toMatchObject({ ok: false });
    expect(parseCreditLimit('0.0000001')).toEqual({
      ok: false,
      error: 'PKR amounts have at most 6 decimals: the smallest credit limit is 0.000001 PKR',
    });
  });

  it('sends plain PKR that the server rounds back to the same micro-PKR', () => {
    for (const micro of [1, 290_000, 1_500_250_000, 123_456_789_012, 2 ** 51 - 1]) {
      expect(Math.round(microToPkrNumber(micro) * 1e6)).toBe(micro);
    }
  });
});

describe('placing a server error at its field', () => {
  type F = 'name' | 'credit' | 'expiry';
  const rules: FieldRule<F>[] = [
    { field: 'expiry', names: ['expires_at'], words: /expir/i },
    { field: 'credit', names: ['credit_limit_cents'], words: /credit/i },
    { field: 'name', names: ['name'], words: /\bname\b/i },
  ];
  const refusal = (status: number, message: string, detail?: unknown) =>
    new BridgeError({ status, message, ...(detail === undefined ? {} : { detail }) });

  it('follows a 422’s loc before its words', () => {
    const error = refusal(422, 'body.name: too long', [{ loc: ['body', 'name'], msg: 'too long', type: 'x' }]);
    expect(placeError(error, rules)).toEqual({ field: 'name', message: 'body.name: too long' });
  });

  it('follows the host’s argument path and the server’s words', () => {
    expect(
      placeError(refusal(422, 'invalid arguments for api.createKey: /body/credit_limit_cents Expected integer'), rules)
        .field,
    ).toBe('credit');
    expect(placeError(refusal(400, 'expires_at must be in the future'), rules).field).toBe('expiry');
  });

  it('leaves to the form what names no field, or is not a refusal of the request', () => {
    expect(placeError(refusal(404, 'key not found'), rules)).toEqual({ field: null, message: 'key not found (404)' });
    expect(placeError(refusal(500, 'credit store failed'), rules).field).toBeNull();
    expect(placeError(refusal(0, 'the console host did not answer'), rules).field).toBeNull();
  });
});
