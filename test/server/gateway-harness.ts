import type { FastifyInstance } from 'fastify';
import type { FailoverSettings } from '../../server/domain/routes-document.js';
import { localAuthority } from '../../server/gateway/authority.js';
import { Breakers } from '../../server/gateway/breakers.js';
import { buildGateway } from '../../server/gateway/gateway.js';
import type { Upstreams } from '../../server/gateway/upstreams.js';
import type { TestClient, TestServer } from './harness.js';

export interface TestGateway {
  gateway: FastifyInstance;
  /** `http://127.0.0.1:PORT/v1`, for an OpenAI client's baseURL. */
  url: string;
}

/**
 * The gateway on a free loopback port beside a test server, asking its admissions directly (its
 * rows are written every `gatewayFlushMs` of the server's config); its breakers are the server's
 * to read (GET /routes), as the gateway's in the server's own process.
 */
export async function startGateway(
  server: TestServer,
  upstreams: Upstreams,
  options: { timeoutMs?: number; bodyTimeoutMs?: number } = {},
): Promise<TestGateway> {
  const breakers = new Breakers();
  const gateway = buildGateway({
    breakers,
    authority: localAuthority(server.app.admissions),
    upstreams,
    logger: server.app.log,
    now: server.config.now,
    timeoutMs: options.timeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs,
  });
  const detach = server.app.gatewayHealth.attach(`test-${Math.random()}`, breakers);
  gateway.addHook('onClose', async () => detach());
  await gateway.listen({ host: '127.0.0.1', port: 0 });
  const address = gateway.server.address();
  if (!address || typeof address === 'string') throw new Error('the gateway has no port');
  return { gateway, url: `http://127.0.0.1:${address.port}/v1` };
}

/** A small request of `secret`'s decided by the control plane directly, as a gateway asks it. */
export const admitDirectly = (server: TestServer, secret: string, reqId: string) =>
  server.app.admissions.admit({
    reqId,
    secret,
    model: 'openai/gpt-4o-mini',
    boundCharacters: 10,
    maxGenerated: 10,
    timeoutMs: 1000,
  });

/** The key's settled spend, as the owner's usage page reports it. */
export async function spentCents(owner: TestClient, keyId: string): Promise<number> {
  const throttling = await owner.get('/admin/usage-throttling?time_range=1h');
  return throttling.body.keys.find((key: { id: string }) => key.id === keyId).spent_cents;
}

/**
 * Applies the newest routes document again with its top-level failover bounds changed, as an
 * operator's `routes apply` would: for suites that test one attempt's handling (an upstream's
 * error made safe), not failover, `{retries: 0, breaker_failures: 1000}` keeps every request one
 * upstream attempt and no breaker between them.
 */
export async function applyFailover(server: TestServer, failover: Partial<FailoverSettings>): Promise<void> {
  const stored = await server.app.control.routes.current();
  const document = { ...stored.document, failover: { ...stored.document.failover, ...failover } };
  const outcome = await server.app.control.write((tx) => tx.routes.apply(document, 'test', Date.now()));
  if (outcome.kind !== 'applied') throw new Error(`the routes document was not applied: ${JSON.stringify(outcome)}`);
}
