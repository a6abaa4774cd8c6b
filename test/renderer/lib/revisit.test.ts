import { describe, expect, it } from 'vitest';
import { REVISIT_MS, mayStand } from '../../../renderer/src/lib/revisit.js';

const QUERY = JSON.stringify({ time_range: '7d' });
const READ = 1_000_000;

describe('whether an answer may stand on a revisit', () => {
  it('stands for the same query read less than REVISIT_MS ago', () => {
    expect(REVISIT_MS).toBe(300_000);
    expect(mayStand(QUERY, READ, QUERY, READ)).toBe(true);
    expect(mayStand(QUERY, READ, QUERY, READ + REVISIT_MS - 1)).toBe(true);
  });

  it('does not for an older answer, another query, or none', () => {
    expect(mayStand(QUERY, READ, QUERY, READ + REVISIT_MS)).toBe(false);
    expect(mayStand(QUERY, READ, JSON.stringify({ time_range: '24h' }), READ)).toBe(false);
    expect(mayStand(null, null, QUERY, READ)).toBe(false);
    expect(mayStand(QUERY, null, QUERY, READ)).toBe(false);
  });
});
