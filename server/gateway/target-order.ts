import type { RoutePlan, TargetPlan } from '../schemas/gateway-internal.js';
import type { Breakers } from './breakers.js';

/**
 * The order a request tries its route's targets in: the healthy ones first, then the others (a
 * breaker open, a `Retry-After` running) in the document's order, so that a request still has
 * somewhere to go when the healthy ones fail. Healthy targets go in the document's order
 * (`fallback`) or drawn by weight, each draw without the ones drawn before (`loadbalance`). A
 * target whose breaker is open stays in the order: the loop skips it, and records that it did.
 */
export function targetOrder(plan: RoutePlan, breakers: Breakers, random: () => number): TargetPlan[] {
  if (plan.targets.length === 1) return plan.targets;
  const pool = plan.targets.filter((target) => breakers.healthy(`${target.provider}/${target.model}`));
  if (plan.strategy === 'fallback') {
    return pool.length === plan.targets.length
      ? plan.targets
      : [...pool, ...plan.targets.filter((target) => !pool.includes(target))];
  }
  const drawn: TargetPlan[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((sum, target) => sum + target.weight, 0);
    let at = random() * total;
    let pick = pool.length - 1;
    for (let index = 0; index < pool.length; index++) {
      at -= pool[index]!.weight;
      if (at < 0) {
        pick = index;
        break;
      }
    }
    drawn.push(pool.splice(pick, 1)[0]!);
  }
  return [...drawn, ...plan.targets.filter((target) => !drawn.includes(target))];
}
