import { describe, expect, it } from 'vitest';
import { RequestRate } from '../../server/admission/request-rate.js';

describe("a key's rate_limit_rpm, a sliding minute", () => {
  it('allows the limit within any minute, counts no refusal, and frees each slot a minute after its request', () => {
    const rate = new RequestRate();
    expect(rate.take('k', 3, 0)).toEqual({ allowed: true, remaining: 2, resetMs: 60_000 });
    expect(rate.take('k', 3, 10_000)).toMatchObject({ allowed: true, remaining: 1, resetMs: 50_000 });
    expect(rate.take('k', 3, 20_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(rate.take('k', 3, 30_000)).toEqual({ allowed: false, remaining: 0, resetMs: 30_000 });
    expect(rate.take('other', 3, 30_000).allowed).toBe(true);
    // The first request leaves the window at 60 s: one slot, and the refusal above took none.
    expect(rate.take('k', 3, 60_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(rate.take('k', 3, 60_001).allowed).toBe(false);
  });

  it('keeps an exact count over a long busy run (the window is stepped over and compacted)', () => {
    const rate = new RequestRate();
    let allowed = 0;
    // 1,000 requests a second for three minutes against a limit of 30,000 a minute: half pass.
    for (let now = 0; now < 180_000; now++) if (rate.take('busy', 30_000, now).allowed) allowed++;
    expect(allowed).toBe(90_000);
  });
});
