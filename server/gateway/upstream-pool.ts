import type { FastifyBaseLogger } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent } from 'undici';

/** How long a stopping gateway waits for upstream requests still open before cutting them. */
export const UPSTREAM_CLOSE_GRACE_MS = 5000;

/** The upstreams with requests running or waiting on `dispatcher`, and how many. */
function openRequests(dispatcher: Agent) {
  return Object.entries(dispatcher.stats)
    .map(([origin, stats]) => ({ origin, running: stats.running, pending: stats.pending }))
    .filter((entry) => entry.running + entry.pending > 0);
}

/**
 * Closes the gateway's upstream connections once its callers have all gone. A request still open
 * then has nobody to answer (a leak, not work), so it gets `graceMs` to end and is then cut,
 * named in the log: stopping must not wait on it until its deadline, minutes away. (The Agent's
 * own `close` waits without bound, and a `destroy` after it no longer reaches its connections.)
 */
export async function closeUpstreams(
  dispatcher: Agent,
  log: FastifyBaseLogger,
  graceMs = UPSTREAM_CLOSE_GRACE_MS,
): Promise<void> {
  const deadline = performance.now() + graceMs;
  while (openRequests(dispatcher).length > 0 && performance.now() < deadline) await sleep(50);
  const open = openRequests(dispatcher);
  if (open.length === 0) return dispatcher.close();
  log.error({ open, grace_ms: graceMs }, 'gateway: upstream requests still open at shutdown, cut');
  return dispatcher.destroy();
}
