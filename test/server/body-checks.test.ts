import { describe, expect, it } from 'vitest';
import { MOST_NESTING, tooDeep } from '../../server/gateway/body-checks.js';

describe('tooDeep', () => {
  const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

  it('counts arrays and objects inside one another, up to the bound', () => {
    expect(tooDeep(nested(MOST_NESTING))).toBe(false);
    expect(tooDeep(nested(MOST_NESTING + 1))).toBe(true);
    expect(tooDeep(`{"a":${'{"b":'.repeat(MOST_NESTING)}1${'}'.repeat(MOST_NESTING)}}`)).toBe(true);
    // Side by side is not inside: a thousand arrays in one list are two levels.
    expect(tooDeep(`[${Array(1000).fill('[1]').join(',')}]`)).toBe(false);
  });

  it('reads brackets in strings, escaped quotes included, as text', () => {
    const text = JSON.stringify({ content: `say \\" ${'['.repeat(1000)} and "${'{'.repeat(1000)}"` });
    expect(tooDeep(text)).toBe(false);
    expect(tooDeep(`["\\\\", ${nested(MOST_NESTING)}]`)).toBe(true);
  });
});
