import { describe, expect, it } from 'vitest';
import { CreditHolds } from '../../server/admission/credit-holds.js';

describe("what a key's running requests hold of its credit", () => {
  it('adds up the holds of each key, replaces an estimate by the cost, and forgets a written row', () => {
    const holds = new CreditHolds();
    holds.hold('req_a', 'k1', 500, 10_000);
    holds.hold('req_b', 'k1', 300, 10_000);
    holds.hold('req_c', 'k2', 7, 10_000);
    expect([holds.of('k1', 0), holds.of('k2', 0), holds.of('k3', 0)]).toEqual([800, 7, 0]);
    holds.settle('req_a', 120);
    expect(holds.of('k1', 0)).toBe(420);
    holds.release('req_a');
    holds.release('req_a');
    holds.settle('req_unknown', 1_000);
    expect(holds.of('k1', 0)).toBe(300);
  });

  it("lets a running request's hold lapse at its time (its gateway died), but never an answered one's", () => {
    const holds = new CreditHolds();
    holds.hold('req_early', 'k', 100, 1_000);
    holds.hold('req_late', 'k', 10, 5_000);
    holds.hold('req_answered', 'k', 1, 1_000);
    holds.settle('req_answered', 2);
    expect(holds.of('k', 999)).toBe(112);
    expect(holds.of('k', 1_000)).toBe(12);
    expect(holds.of('k', 5_000)).toBe(2);
    expect(holds.of('k', Number.MAX_SAFE_INTEGER)).toBe(2);
    // A lapsed hold's row arriving late changes nothing.
    holds.settle('req_early', 50);
    expect(holds.of('k', 6_000)).toBe(2);
  });
});
