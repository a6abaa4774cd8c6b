import { describe, expect, it } from 'vitest';
import { keysOfProject, projectChange, scopeFromParams } from '../../../renderer/src/lib/filter-scope.js';
import { formatPkr, formatPkrFigure } from '../../../renderer/src/lib/money.js';
import { PAGE_SIZES, pageSizeFrom, pageSizeParam } from '../../../renderer/src/lib/page-size.js';
import type { Key } from '../../../renderer/src/state/directory.js';

/** The filter rules the request log shares with the analytics screen (and its page sizes with activity). */

const key = (id: string, name: string, project: string) => ({ id, name, project_id: project }) as Key;
const KEYS = [key('k2', 'zeta', 'p1'), key('k1', 'alpha', 'p1'), key('k3', 'beta', 'p2')];

describe('project, key and model', () => {
  it('are read from the same parameters on both screens', () => {
    expect(scopeFromParams({ project: 'p1', key: 'k1', model: 'm', range: '7d' })).toEqual({
      project: 'p1',
      key: 'k1',
      model: 'm',
    });
    expect(scopeFromParams({})).toEqual({ project: null, key: null, model: null });
  });

  it('offer the keys of the chosen project, by name', () => {
    expect(keysOfProject(KEYS, 'p1').map((k) => k.id)).toEqual(['k1', 'k2']);
    expect(keysOfProject(KEYS, null).map((k) => k.name)).toEqual(['alpha', 'beta', 'zeta']);
  });

  it('another project keeps a key that fits it, or one the directory does not know, and lets go of the rest', () => {
    const scope = { project: null, key: 'k1', model: null };
    expect(projectChange(KEYS, scope, 'p1')).toEqual({ project: 'p1' });
    expect(projectChange(KEYS, scope, 'p2')).toEqual({ project: 'p2', key: null });
    expect(projectChange(KEYS, scope, null)).toEqual({ project: null });
    expect(projectChange(KEYS, { ...scope, key: 'revoked' }, 'p2')).toEqual({ project: 'p2' });
  });
});

describe('page sizes', () => {
  it('one list for every paged screen, none above the server’s clamp of 200', () => {
    expect(PAGE_SIZES).toEqual([10, 25, 50, 100, 200]);
    expect(pageSizeFrom('100')).toBe(100);
    expect(pageSizeFrom('7')).toBe(50);
    expect(pageSizeFrom(undefined)).toBe(50);
    expect(pageSizeParam(50)).toBeNull();
    expect(pageSizeParam(200)).toBe('200');
  });
});

describe('PKR in a column headed "PKR"', () => {
  it('is the figure alone, every settled decimal up to six; unknown is a dash', () => {
    expect(formatPkrFigure(1250.5)).toBe('1,250.50');
    expect(formatPkrFigure(0.000123)).toBe('0.000123');
    expect(formatPkrFigure(null)).toBe('–');
    expect(formatPkr(1250.5)).toBe('1,250.50 PKR');
    expect(formatPkr(undefined)).toBe('–');
  });
});
