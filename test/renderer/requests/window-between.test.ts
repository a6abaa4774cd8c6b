import { describe, expect, it } from 'vitest';
import { parseTimeParam, timeParamToLocalInput } from '../../../renderer/src/lib/local-time-input.js';
import { betweenOf, filterQuery, isFiltered } from '../../../renderer/src/screens/requests/request-query.js';
import { cellLogParams, windowLogParams } from '../../../renderer/src/screens/health/health-links.js';
import { requestLogParams, type Line } from '../../../renderer/src/screens/reconcile/reconcile-lines.js';

/**
 * The request log between two times (the renderer's tests run in Asia/Karachi, UTC+5, no summer
 * time): what a person types in their zone, and the exact instants a health cell links to.
 */

const FIVE_MINUTES = 300_000;
const CELL = Date.UTC(2026, 10, 4, 9, 55);

describe('a time parameter', () => {
  it('reads a wall-clock time in the user’s zone, and an instant with its zone exactly', () => {
    expect(parseTimeParam('2026-11-04T14:55')).toEqual({ ok: true, date: new Date(CELL) });
    expect(parseTimeParam('2026-11-04T09:55:00.000Z')).toEqual({ ok: true, date: new Date(CELL) });
    expect(parseTimeParam('2026-11-04T11:55:00+02:00')).toEqual({ ok: true, date: new Date(CELL) });
    for (const bad of ['2026-02-30T10:00:00Z', '2026-02-30T10:00:00+05:00', 'yesterday', '2026-11-04T25:00Z']) {
      expect(parseTimeParam(bad), bad).toMatchObject({ ok: false });
    }
  });

  it('shows an instant in the user’s zone and a typed time as typed', () => {
    expect(timeParamToLocalInput('2026-11-04T09:55:00.000Z')).toBe('2026-11-04T14:55');
    expect(timeParamToLocalInput('2026-11-04T14:55')).toBe('2026-11-04T14:55');
  });
});

describe('the request log between two times', () => {
  it('sends from and to instead of the range, and the provider', () => {
    const params = { from: '2026-11-04T14:55', to: '2026-11-04T15:00', range: '7d', provider: 'openai' };
    expect(filterQuery(params)).toEqual({
      from: new Date(CELL).toISOString(),
      to: new Date(CELL + FIVE_MINUTES).toISOString(),
      provider: 'openai',
    });
    expect(isFiltered({ provider: 'openai' })).toBe(true);
    expect(isFiltered({ from: '2026-11-04T14:55', to: '2026-11-04T15:00' })).toBe(true);
  });

  it('says why a window cannot be used, and reads the range meanwhile', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ from: '2026-11-04T14:55' }, /both/],
      [{ to: '2026-11-04T14:55' }, /both/],
      [{ from: '2026-11-04T15:00', to: '2026-11-04T14:55' }, /later than/],
      [{ from: '2026-11-04T15:00', to: '2026-11-04T15:00' }, /later than/],
      [{ from: '2025-01-01T00:00', to: '2026-11-04T15:00' }, /400 days/],
      [{ from: '2026-02-30T10:00', to: '2026-11-04T15:00' }, /^From: that date does not exist/],
    ];
    for (const [params, error] of cases) {
      const between = betweenOf(params);
      expect(between && 'error' in between && between.error, JSON.stringify(params)).toMatch(error);
      expect(filterQuery({ ...params, range: '7d' })).toEqual({ time_range: '7d' });
    }
    expect(betweenOf({ range: '7d' })).toBeNull();
  });
});

describe('a health figure opens the request log', () => {
  it('on exactly its cell, for a model or a provider, with the errors’ status class', () => {
    expect(cellLogParams({ model: 'openai/gpt-4o' }, CELL, FIVE_MINUTES, { errors: 0, upstream429: 0 })).toEqual({
      model: 'openai/gpt-4o',
      from: '2026-11-04T09:55:00.000Z',
      to: '2026-11-04T10:00:00.000Z',
    });
    expect(cellLogParams({ provider: 'openai' }, CELL, FIVE_MINUTES, { errors: 3, upstream429: 3 })).toMatchObject({
      provider: 'openai',
      status: '4xx',
    });
    expect(cellLogParams({ provider: 'openai' }, CELL, FIVE_MINUTES, { errors: 3, upstream429: 1 }).status).toBe('5xx');
  });

  it('on the whole window, its last instant included', () => {
    const last = CELL + FIVE_MINUTES - 1;
    expect(windowLogParams({ model: 'm' }, CELL - 11 * FIVE_MINUTES, last)).toEqual({
      model: 'm',
      from: '2026-11-04T09:00:00.000Z',
      to: '2026-11-04T10:00:00.000Z',
    });
    // The window's own parameters read back as the same instants.
    const params = windowLogParams({ model: 'm' }, CELL - 11 * FIVE_MINUTES, last);
    expect(filterQuery(params)).toMatchObject({ from: params.from, to: params.to, model: 'm' });
  });

  it('narrowed to a target, the log asks for the rows that target served', () => {
    const params = cellLogParams({ model: 'm', target: 'openai/gpt-4o' }, CELL, FIVE_MINUTES, {
      errors: 0,
      upstream429: 0,
    });
    expect(params.target).toBe('openai/gpt-4o');
    expect(filterQuery(params)).toMatchObject({ model: 'm', target: 'openai/gpt-4o' });
    expect(isFiltered({ target: 'openai/gpt-4o' })).toBe(true);
  });
});

describe('a reconcile line opens the request log', () => {
  const line = { key_id: 'k1', project_id: 'p1', model: null, day: '2026-11-04' } as unknown as Line;
  it('on exactly its UTC day, and a lifetime figure over the longest window', () => {
    expect(requestLogParams(line)).toEqual({
      key: 'k1',
      from: '2026-11-04T00:00:00.000Z',
      to: '2026-11-05T00:00:00.000Z',
    });
    expect(requestLogParams({ ...line, day: null })).toEqual({ key: 'k1', range: '400d' });
    expect(requestLogParams({ ...line, key_id: null, project_id: null })).toBeNull();
  });
});
