import { describe, expect, it } from 'vitest';
import { BURN_DAYS, burnDays, burnOf, forecastOf, urgency } from '../../server/domain/forecast.js';

const NOW = Date.UTC(2026, 10, 22, 7, 49, 19, 123);
const DAY = 86_400_000;
const PKR = 1_000_000;

describe('burnOf', () => {
  it('gives a steady spend as its own rate with no uncertainty', () => {
    const burn = burnOf(Array(BURN_DAYS).fill(2 * PKR));
    expect(burn).toEqual({
      daily: Array(7).fill(2 * PKR),
      total: 14 * PKR,
      rate: 2 * PKR,
      rateLow: 2 * PKR,
      rateHigh: 2 * PKR,
    });
  });

  it("widens the rate's interval with the days' spread (Student's t, 6 degrees of freedom, 90 %)", () => {
    // Mean 1 PKR; sample standard deviation √7 PKR, so the mean's standard error is 1 PKR.
    const burn = burnOf([0, 0, 0, 0, 0, 0, 7 * PKR]);
    expect(burn.rate).toBe(PKR);
    expect(burn.rateHigh).toBeCloseTo(2.943 * PKR, 0);
    // The low end would be below nil: spend is never negative.
    expect(burn.rateLow).toBe(0);
    const mild = burnOf([4, 6, 4, 6, 4, 6, 5].map((pkr) => pkr * PKR));
    const sd = Math.sqrt((6 * PKR ** 2) / 6);
    expect(mild.rateLow).toBeCloseTo(5 * PKR - (1.943 * sd) / Math.sqrt(7), 0);
    expect(mild.rateHigh).toBeCloseTo(5 * PKR + (1.943 * sd) / Math.sqrt(7), 0);
  });

  it('refuses a window of another length', () => {
    expect(() => burnOf([1, 2, 3])).toThrow(/7 days/);
  });
});

describe('forecastOf', () => {
  it('dates a limit at the remaining amount over the rate, the range from the interval', () => {
    const steady = forecastOf(burnOf(Array(7).fill(PKR)), 10 * PKR, NOW);
    expect(steady).toEqual({
      kind: 'runs_out',
      remaining: 10 * PKR,
      at: NOW + 10 * DAY,
      earliest: NOW + 10 * DAY,
      latest: NOW + 10 * DAY,
    });

    const spiky = forecastOf(burnOf([0, 0, 0, 0, 0, 0, 7 * PKR]), 5 * PKR, NOW);
    expect(spiky.kind).toBe('runs_out');
    if (spiky.kind !== 'runs_out') return;
    expect(spiky.at).toBe(NOW + 5 * DAY);
    expect((spiky.earliest - NOW) / DAY).toBeCloseTo(5 / 2.943, 2);
    // At the slowest plausible rate (nil) it never runs out: no latest date.
    expect(spiky.latest).toBeNull();
  });

  it('says a used-up limit is spent, and gives no date for a key that spent nothing', () => {
    expect(forecastOf(burnOf(Array(7).fill(PKR)), 0, NOW)).toEqual({ kind: 'spent', remaining: 0 });
    expect(forecastOf(burnOf(Array(7).fill(PKR)), -3, NOW)).toEqual({ kind: 'spent', remaining: -3 });
    expect(forecastOf(burnOf(Array(7).fill(0)), 5 * PKR, NOW)).toEqual({ kind: 'idle', remaining: 5 * PKR });
  });

  it('gives no date past ten years: a trickle against a large limit lasts beyond, a slow end past it has no latest date', () => {
    expect(forecastOf(burnOf([0, 0, 0, 0, 0, 0, 100]), 10_000 * PKR, NOW)).toEqual({
      kind: 'beyond',
      remaining: 10_000 * PKR,
      days: 3650,
    });
    // Rate 12/7 PKR a day, low end ~1.16: 5,000 PKR lasts ~2,917 days, ~4,300 at the low end.
    const slow = forecastOf(burnOf([2, 2, 2, 2, 2, 2, 0].map((pkr) => pkr * PKR)), 5000 * PKR, NOW);
    expect(slow.kind).toBe('runs_out');
    if (slow.kind !== 'runs_out') return;
    expect(Math.round((slow.at - NOW) / DAY)).toBe(2917);
    expect(slow.latest).toBeNull();
    expect(slow.earliest).toBeLessThan(slow.at);
  });

  it('projects thirty days of spend for a key without a limit', () => {
    const projected = forecastOf(burnOf([4, 6, 4, 6, 4, 6, 5].map((pkr) => pkr * PKR)), null, NOW);
    expect(projected.kind).toBe('projected');
    if (projected.kind !== 'projected') return;
    expect(projected.days).toBe(30);
    expect(projected.amount).toBe(150 * PKR);
    expect(projected.low).toBeLessThan(projected.amount);
    // Whole micro-PKR, symmetric about the projection to the unit.
    for (const amount of [projected.low, projected.high]) expect(Number.isInteger(amount)).toBe(true);
    expect(Math.abs(projected.high - projected.amount - (projected.amount - projected.low))).toBeLessThanOrEqual(1);
  });

  it('orders forecasts by urgency: used up, soonest date, largest projection, beyond, idle, unknown', () => {
    const burn = burnOf(Array(7).fill(PKR));
    const sorted = [
      forecastOf(burnOf(Array(7).fill(0)), PKR, NOW),
      forecastOf(burn, 10_000 * PKR, NOW),
      null,
      forecastOf(burn, null, NOW),
      forecastOf(burn, 9 * PKR, NOW),
      forecastOf(burn, 0, NOW),
      forecastOf(burn, 2 * PKR, NOW),
    ].sort((a, b) => {
      const [ua, ub] = [urgency(a), urgency(b)];
      return ua[0] - ub[0] || ua[1] - ub[1];
    });
    expect(
      sorted.map((f) => (f === null ? 'unknown' : f.kind === 'runs_out' ? `runs_out ${f.remaining / PKR}` : f.kind)),
    ).toEqual(['spent', 'runs_out 2', 'runs_out 9', 'projected', 'beyond', 'idle', 'unknown']);
  });
});

describe('burnDays', () => {
  it('cuts the seven days before now into whole days that touch and never overlap, the last ending now', () => {
    const days = burnDays(NOW);
    expect(days).toHaveLength(7);
    expect(days[0]!.from).toBe(NOW - 7 * DAY + 1);
    expect(days[6]!.to).toBe(NOW);
    for (let i = 1; i < days.length; i++) expect(days[i]!.from).toBe(days[i - 1]!.to + 1);
    for (const day of days) expect(day.to - day.from + 1).toBe(DAY);
  });
});
