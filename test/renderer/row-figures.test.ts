import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMs } from '../../renderer/src/lib/format.js';
import { formatMicroPkrFixed } from '../../renderer/src/lib/money.js';
import { rowCompactCost, rowCostDecimals, rowTokensText } from '../../renderer/src/screens/requests/row-figures.js';

/**
 * The request log's columns are sized for the widest text these formats produce (the layout test
 * lays those out): any figure a row may hold must stay within it.
 */
const costText = (micro: number) => rowCompactCost(micro) ?? formatMicroPkrFixed(micro, rowCostDecimals(micro));
const RUNS = { numRuns: 2000, seed: 50 };

describe('the request log figures', () => {
  it('keep any duration within nine characters, in the unit that reads best', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e15, noNaN: true }), (ms) => {
        expect(formatMs(ms).length).toBeLessThanOrEqual(9);
      }),
      RUNS,
    );
    expect([9_999.4, 9_999.6, 599_940, 600_000, 5_994_000, 360_000_000, 86_400_000 * 12_345].map(formatMs)).toEqual([
      '9,999 ms',
      '10 s',
      '599.9 s',
      '10 min',
      '99.9 min',
      '4.2 d',
      '12.3K d',
    ]);
  });

  it('keep any token count within nine characters, exact below a million', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.boolean(), (tokens, estimated) => {
        expect(rowTokensText(tokens, estimated).length).toBeLessThanOrEqual(9);
      }),
      RUNS,
    );
    expect([rowTokensText(999_999, true), rowTokensText(1_234_567, false)]).toEqual(['≈ 999,999', '1.2M']);
  });

  it('keep any cost within eleven characters, four decimals below 100,000 PKR', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (micro) => {
        expect(costText(micro).length).toBeLessThanOrEqual(11);
      }),
      RUNS,
    );
    expect([1_250_500_000, 99_999_999_900, 100_000_000_000, 12_345_678_000_000].map(costText)).toEqual([
      '1,250.5000',
      '99,999.9999',
      '100,000',
      '12.3M',
    ]);
  });
});
