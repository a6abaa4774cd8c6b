import { pkrToMicro } from '../domain/money.js';
import { meanCostMicro, routeProfile, ROUTES } from './catalogue.js';
import type { DemoKeySpec } from './organisation.js';

/** Limits leave this much room over the spend a key is expected to reach. */
const LIMIT_HEADROOM = 1.5;
const SMALLEST_LIMIT_PKR = 50;
/** Deposits exceed the sum of the credit limits by this factor, so raising a limit in the console can succeed. */
const BUDGET_HEADROOM = 1.5;

/**
 * Credit limits in micro-PKR by key name, sized from the share of `rows` each key is
 * expected to carry. The traffic also stops choosing a key well before its limit, so
 * the spend stays below it whatever the draw.
 */
export function creditLimitsMicro(specs: readonly DemoKeySpec[], rows: number): Map<string, number> {
  const totalWeight = specs.reduce((sum, spec) => sum + spec.weight, 0);
  const limits = new Map<string, number>();
  for (const spec of specs) {
    if (!spec.limited) continue;
    const routes = spec.allowedModels ? spec.allowedModels.map(routeProfile) : ROUTES;
    const routeWeight = routes.reduce((sum, route) => sum + route.weight, 0);
    const perRow = routes.reduce((sum, route) => sum + route.weight * meanCostMicro(route), 0) / routeWeight;
    const expected = ((rows * spec.weight) / totalWeight) * perRow;
    limits.set(spec.name, pkrToMicro(roundUp(Math.max(SMALLEST_LIMIT_PKR, (LIMIT_HEADROOM * expected) / 1e6))));
  }
  return limits;
}

/** An opening deposit and a later top-up, together comfortably above the credit limits. */
export function depositsMicro(limitsMicro: readonly number[]): number[] {
  const total = roundUp((BUDGET_HEADROOM * limitsMicro.reduce((a, b) => a + b, 0)) / 1e6);
  const opening = roundUp(total * 0.6);
  return [pkrToMicro(opening), pkrToMicro(Math.max(roundUp(total - opening), 1000))];
}

/** Up to two significant figures, as a person would pick an amount: 1234 → 1300. */
function roundUp(pkr: number): number {
  const step = 10 ** Math.max(0, Math.floor(Math.log10(pkr)) - 1);
  return Math.ceil(pkr / step) * step;
}
