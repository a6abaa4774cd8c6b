// Local times are read in the user's zone: pin one with summer time to test offsets.
process.env.TZ = 'Europe/London';

import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../renderer/src/bridge.js';
import { parseCreditLimit, microToPkrNumber } from '../../../renderer/src/lib/credit-limit.js';
import { placeError, type FieldRule } from '../../../renderer/src/lib/field-errors.js';
import {
  filterKeys,
  isEnvironment,
  isExpired,
  nextSort,
  sortFromParams,
  sortKeys,
  type KeyRow,
} from '../../../renderer/src/lib/key-table.js';
import {
  isoToLocalInput,
  parseLocalInput,
  toEpochSeconds,
  toIsoWithOffset,
} from '../../../renderer/src/lib/local-time-input.js';
import { catalogueOf } from '../../../renderer/src/lib/model-catalogue.js';
import { KEYS, MODELS, PROJECTS } from './fixtures.js';

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

  it('knows an expired key by its expiry, and the three environments', () => {
    const now = Date.parse('2030-06-01T12:00:00.000Z');
    expect(isExpired({ expires_at: '2030-06-01T12:00:00.000Z' }, now)).toBe(true);
    expect(isExpired({ expires_at: '2030-06-01T12:00:01.000Z' }, now)).toBe(false);
    expect(isExpired({ expires_at: null }, now)).toBe(false);
    expect(['production', 'development', 'testing', 'staging', ''].map(isEnvironment)).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
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
    expect(parseLocalInput('2030-02-10T24:30')).toEqual({ ok: false, error: 'that time does not exist' });
  });

  it('refuses a time the clocks skip when summer time starts, rather than move it', () => {
    // London's clocks go from 01:00 to 02:00 on 31 March 2030: 01:30 never happens.
    expect(parseLocalInput('2030-03-31T01:30')).toEqual({
      ok: false,
      error: 'that time does not exist in your zone: the clocks go forward then',
    });
    const after = parseLocalInput('2030-03-31T02:30');
    if (!after.ok) throw new Error('not parsed');
    expect(toIsoWithOffset(after.date)).toBe('2030-03-31T02:30:00+01:00');
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

describe('what the model catalogue offers a new key', () => {
  it('offers the active models, and nothing for an empty catalogue or one not offered', () => {
    expect(catalogueOf(MODELS, undefined, false)).toEqual({ kind: 'ready', models: MODELS.filter((m) => m.active) });
    expect(catalogueOf([], undefined, false)).toEqual({ kind: 'none' });
    expect(catalogueOf(MODELS.slice(2), undefined, false)).toEqual({ kind: 'none' }); // only inactive ones
    expect(catalogueOf(null, { message: 'not found (404)', status: 404 }, false)).toEqual({ kind: 'none' });
    expect(
      catalogueOf(null, { message: 'the control plane has no model catalogue (501)', status: 501 }, false),
    ).toEqual({ kind: 'none' });
    // Told by its status, whatever the words.
    expect(catalogueOf(null, { message: 'no such route', status: 404 }, false)).toEqual({ kind: 'none' });
  });

  it('calls any other failure one, and says when it is still being read', () => {
    expect(catalogueOf(null, { message: 'database is locked (500)', status: 500 }, false)).toEqual({
      kind: 'failed',
      error: 'database is locked (500)',
    });
    expect(catalogueOf(null, { message: 'the console host did not answer', status: 0 }, false)).toMatchObject({
      kind: 'failed',
    });
    expect(catalogueOf(null, undefined, true)).toEqual({ kind: 'loading' });
    expect(catalogueOf(null, { message: 'database is locked (500)', status: 500 }, true)).toEqual({ kind: 'loading' });
  });
});

describe('placing a server error at its field', () => {
  type F = 'name' | 'credit' | 'expiry';
  const rules: FieldRule<F>[] = [
    { field: 'expiry', names: ['expires_at'] },
    { field: 'credit', names: ['credit_limit_cents'] },
    { field: 'name', names: ['name'] },
  ];
  const refusal = (status: number, message: string, field?: string) =>
    new BridgeError({ status, message, ...(field === undefined ? {} : { field }) });

  it('follows the field the error names (from a 422’s loc, the host’s argument path or the server’s header)', () => {
    const error = new BridgeError({
      status: 422,
      message: 'body.name: too long',
      field: 'name',
      detail: [{ loc: ['body', 'name'], msg: 'too long', type: 'x' }],
    });
    expect(placeError(error, rules)).toEqual({ field: 'name', message: 'body.name: too long' });
    expect(
      placeError(
        refusal(
          422,
          'invalid arguments for api.createKey: /body/credit_limit_cents Expected integer',
          'credit_limit_cents',
        ),
        rules,
      ).field,
    ).toBe('credit');
    expect(placeError(refusal(400, 'expires_at must be in the future', 'expires_at'), rules).field).toBe('expiry');
  });

  it('never reads the message: a reworded refusal stays at its field, and words alone place nothing', () => {
    expect(placeError(refusal(400, 'no, not like that', 'expires_at'), rules)).toEqual({
      field: 'expiry',
      message: 'no, not like that',
    });
    expect(placeError(refusal(409, 'the name is taken', 'credit_limit_cents'), rules).field).toBe('credit');
    expect(placeError(refusal(400, 'expires_at must be in the future'), rules)).toEqual({
      field: null,
      message: 'expires_at must be in the future (400)',
    });
  });

  it('leaves to the form what names no field of the form, or is not a refusal of the request', () => {
    expect(placeError(refusal(404, 'key not found', 'key_id'), rules)).toEqual({
      field: null,
      message: 'key not found (404)',
    });
    expect(placeError(refusal(500, 'credit store failed', 'credit_limit_cents'), rules).field).toBeNull();
    expect(placeError(refusal(0, 'the console host did not answer'), rules).field).toBeNull();
  });
});
