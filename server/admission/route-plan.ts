import { failoverOf, type StoredRoutes } from '../domain/routes-document.js';
import type { RoutePlan } from '../schemas/gateway-internal.js';

/**
 * An admitted request's plan: its route as `stored` has it, with each target's provider resolved
 * and, where the organisation keeps its own key for the provider's vault entry, that key opened
 * (`providerKey`) unless the route is the platform's to pay. Null for a route the version does not have or has turned off.
 */
export function routePlan(
  stored: StoredRoutes,
  routeId: string,
  providerKey: (vaultProvider: string) => string | null,
): RoutePlan | null {
  const { document } = stored;
  const route = Object.hasOwn(document.routes, routeId) ? document.routes[routeId]! : undefined;
  if (!route?.active) return null;
  return {
    version: stored.version,
    route: routeId,
    kind: route.kind,
    strategy: route.strategy,
    price: {
      input: route.price.input,
      output: route.price.output,
      cacheWrite: route.price.cache_write,
      cacheRead: route.price.cache_read,
    },
    promptCache: route.prompt_cache,
    failover: failoverOf(document, route),
    targets: route.targets.map((target) => {
      const provider = document.providers[target.provider]!;
      return {
        provider: target.provider,
        model: target.model,
        weight: target.weight,
        api: provider.api,
        baseUrl: provider.base_url,
        keyEnv: provider.key_env,
        providerKey: route.byok && provider.byok !== null ? providerKey(provider.byok) : null,
      };
    }),
  };
}

/** The vault providers whose organisation keys the route's targets may use; none for a route not served. */
export function vaultProvidersOf(stored: StoredRoutes, routeId: string): string[] {
  const route = Object.hasOwn(stored.document.routes, routeId) ? stored.document.routes[routeId]! : undefined;
  if (!route?.active || !route.byok) return [];
  const byok = route.targets.map((target) => stored.document.providers[target.provider]?.byok ?? null);
  return [...new Set(byok.filter((vault): vault is string => vault !== null))];
}
