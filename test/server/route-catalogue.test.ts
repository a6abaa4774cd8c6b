import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BYOK_SERVICE_SHARE,
  costMicro,
  ROUTE_CATALOGUE,
  routeFacts,
  settledCostMicro,
  type RoutePrice,
} from '../../server/domain/route-catalogue.js';
import { modelsOf } from '../../server/domain/route-models.js';
import { SqliteControlStore } from '../../server/stores/control/store.js';

const scratch = mkdtempSync(join(tmpdir(), 'gc-route-catalogue-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function price(id: string): RoutePrice {
  const facts = routeFacts(id);
  if (!facts) throw new Error(`no facts for ${id}`);
  return facts.price;
}

describe('the route catalogue', () => {
  it('has the facts of exactly the routes of a fresh control store, active or not', async () => {
    const control = SqliteControlStore.open(join(scratch, 'control.db'), { accessSeconds: 900, refreshSeconds: 3600 });
    try {
      const seeded = modelsOf((await control.routes.current()).document);
      const ids = ROUTE_CATALOGUE.map((route) => route.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(seeded.map((model) => model.id).sort());
      // A route served on the customer's key is served by the provider the catalogue names.
      for (const model of seeded) {
        const { byokProvider } = routeFacts(model.id)!;
        if (byokProvider !== null) expect(byokProvider, model.id).toBe(model.provider);
      }
    } finally {
      await control.close();
    }
  });

  it('resolves every route to at least one upstream model and prices no cache tokens on a route without a cache', () => {
    for (const route of ROUTE_CATALOGUE) {
      expect(route.upstream.length, route.id).toBeGreaterThan(0);
      if (!route.promptCache) expect([route.price.cacheWrite, route.price.cacheRead], route.id).toEqual([0, 0]);
    }
    expect(routeFacts('openai/gpt-4o')?.upstream[0]).toBe('gpt-4o-2024-08-06');
    expect(routeFacts('svc/auto')?.promptCache).toBe(false);
    expect(routeFacts('no/such-route')).toBeUndefined();
  });
});

describe('what a request costs', () => {
  it('is the dot product of tokens and prices, rounded to a whole micro-PKR', () => {
    // 1234 × 42 + 567 × 168 + 0 × 42 + 2048 × 21 = 51 828 + 95 256 + 43 008
    const mini = { prompt: 1234, generated: 567, cacheWrite: 0, cacheRead: 2048 };
    expect(costMicro(price('openai/gpt-4o-mini'), mini)).toBe(190_092);
    // 2000 × 840 + 300 × 4200 + 1024 × 1050 = 1 680 000 + 1 260 000 + 1 075 200
    const sonnet = { prompt: 2000, generated: 300, cacheWrite: 1024, cacheRead: 0 };
    expect(costMicro(price('anthropic/claude-sonnet-4'), sonnet)).toBe(4_015_200);
    // 10 × 224 + 3 × 1120 + 7 × 22.4 = 2240 + 3360 + 156.8 = 5756.8, rounded up
    const haiku = { prompt: 10, generated: 3, cacheWrite: 0, cacheRead: 7 };
    expect(costMicro(price('anthropic/claude-3-5-haiku'), haiku)).toBe(5757);
    expect(costMicro(price('svc/embed'), { prompt: 400, generated: 0, cacheWrite: 0, cacheRead: 0 })).toBe(2400);
  });

  it('settles the full cost, or on a BYOK request the rounded service share of it', () => {
    expect(BYOK_SERVICE_SHARE).toBe(0.02);
    const mini = { prompt: 1234, generated: 567, cacheWrite: 0, cacheRead: 2048 };
    expect(settledCostMicro(price('openai/gpt-4o-mini'), mini, false)).toBe(190_092);
    expect(settledCostMicro(price('openai/gpt-4o-mini'), mini, true)).toBe(3802); // 3801.84, rounded up
    const haiku = { prompt: 10, generated: 3, cacheWrite: 0, cacheRead: 7 };
    expect(settledCostMicro(price('anthropic/claude-3-5-haiku'), haiku, false)).toBe(5757);
    expect(settledCostMicro(price('anthropic/claude-3-5-haiku'), haiku, true)).toBe(115); // 5757 × 0.02 = 115.14
    const sonnet = { prompt: 2000, generated: 300, cacheWrite: 1024, cacheRead: 0 };
    expect(settledCostMicro(price('anthropic/claude-sonnet-4'), sonnet, true)).toBe(80_304);
    // The share is of the full cost as settled (24.6 → 25, × 0.02 = 0.5 → 1), not of the unrounded 24.6 (0.492 → 0).
    const odd = { input: 24.6, output: 0, cacheWrite: 0, cacheRead: 0 };
    expect(settledCostMicro(odd, { prompt: 1, generated: 0, cacheWrite: 0, cacheRead: 0 }, true)).toBe(1);
  });
});
