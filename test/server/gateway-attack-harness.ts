import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { startGateway, type TestGateway } from './gateway-harness.js';
import { startGatewayProcess } from './gateway-process-harness.js';
import { register, startServer, type TestClient, type TestServer } from './harness.js';

/**
 * One control plane with a gateway in its process and one gateway in a process of its own
 * (`server/cli.ts gateway`, as `npm run gateway` starts it), both forwarding to a scripted
 * upstream: a plain HTTP server of the test's own on loopback that answers each request as the
 * script named by its first message's content says. The suites about the gateway's defences run
 * every case through both gateways.
 */

const TOKEN = 'gw-attack-token-0123456789abcdef0123456789abcdef';
export const FLUSH_MS = 50;
/** The platform's key for the upstream: a caller must never see it, nor a row hold it. */
export const PLATFORM_KEY = 'sk-platform-secret-attack-0123456789';

/** Answers one upstream request; `body` is the JSON the gateway sent. */
export type Script = (request: IncomingMessage, response: ServerResponse, body: Record<string, unknown>) => void;

export interface Bench {
  server: TestServer;
  owner: { client: TestClient; org: string };
  /** The gateways to run each case through, by name. */
  gateways: { name: 'in-process' | 'own-process'; url: string }[];
  /** Registers a script; a request whose first message's content is `name` is answered by it. */
  script(name: string, answer: Script): void;
  /** Upstream requests received so far (any script). */
  upstreamRequests(): number;
  newKey(fields?: Record<string, unknown>): Promise<{ id: string; api_key: string }>;
  /** The key's rows once at least `count` are in the request log, newest first. */
  rowsOf(keyId: string, count: number): Promise<Row[]>;
  /** The key's settled spend in micro-PKR once it adds up to `expected` (or as it stands after the wait). */
  settledSpend(keyId: string, expected: number): Promise<number>;
  /** Everything the gateway process printed, and everything the server logged. */
  logs(): string;
  close(): Promise<void>;
}

export interface Row {
  req_id: string;
  model: string;
  status: number;
  stream: boolean;
  key: { id: string } | null;
  metrics: Record<string, number | boolean | null>;
  financials: { cost_pkr: number; is_byok: number };
  status_detail: { termination_reason: string; upstream_error: string | null };
}

export const costMicro = (row: Row) => Math.round(row.financials.cost_pkr * 1e6);

export async function startBench(options: { timeoutMs: number; bodyTimeoutMs?: number }): Promise<Bench> {
  const server = await startServer({ gatewayTokens: [TOKEN], gatewayFlushMs: FLUSH_MS });
  const scripts = new Map<string, Script>();
  let received = 0;
  const upstream: Server = createServer((request, response) => {
    received++;
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
      } catch {
        // Answered by no script: a 599 the test will notice.
      }
      const first = (body.messages as { content?: unknown }[] | undefined)?.[0]?.content;
      const script = typeof first === 'string' ? scripts.get(first) : undefined;
      if (!script) {
        response.writeHead(599).end();
        return;
      }
      script(request, response, body);
    });
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  const inProcess: TestGateway = await startGateway(
    server,
    { byProvider: {}, fallback: { baseUrl: upstreamUrl, apiKey: PLATFORM_KEY } },
    { timeoutMs: options.timeoutMs, bodyTimeoutMs: options.bodyTimeoutMs },
  );
  const own = await startGatewayProcess(new URL(server.baseUrl).origin, {
    SVC_GATEWAY_TOKEN: TOKEN,
    SVC_UPSTREAM_URL: upstreamUrl,
    SVC_UPSTREAM_KEY: PLATFORM_KEY,
    SVC_GATEWAY_TIMEOUT_MS: String(options.timeoutMs),
    ...(options.bodyTimeoutMs === undefined ? {} : { SVC_GATEWAY_BODY_TIMEOUT_MS: String(options.bodyTimeoutMs) }),
  });
  const owner = await register(server);
  const projectId = (await owner.client.get('/projects')).body.projects[0].id as string;

  const rowsOf = async (keyId: string, count: number): Promise<Row[]> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      // The organisation's log, filtered here: a revoked key's id is no longer a filter.
      const page = await owner.client.get('/analytics/requests?time_range=1h&limit=1000');
      const rows = page.status === 200 ? (page.body.requests as Row[]).filter((row) => row.key?.id === keyId) : [];
      if (rows.length >= count) return rows;
      await new Promise((done) => setTimeout(done, FLUSH_MS));
    }
    throw new Error(`fewer than ${count} rows for ${keyId}`);
  };
  const spent = async (keyId: string): Promise<number> => {
    const throttling = await owner.client.get('/admin/usage-throttling?time_range=1h');
    return throttling.body.keys.find((key: { id: string }) => key.id === keyId).spent_cents as number;
  };

  return {
    server,
    owner,
    gateways: [
      { name: 'in-process', url: inProcess.url },
      { name: 'own-process', url: own.url },
    ],
    script: (name, answer) => scripts.set(name, answer),
    upstreamRequests: () => received,
    async newKey(fields = {}) {
      const answer = await owner.client.post('/keys', { project_id: projectId, name: `k${Math.random()}`, ...fields });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body;
    },
    rowsOf,
    async settledSpend(keyId, expected) {
      let now = await spent(keyId);
      for (let attempt = 0; now !== expected && attempt < 100; attempt++) {
        await new Promise((done) => setTimeout(done, FLUSH_MS));
        now = await spent(keyId);
      }
      return now;
    },
    logs: () => own.output() + server.logs(),
    async close() {
      own.child.kill('SIGKILL');
      await inProcess.gateway.close();
      upstream.closeAllConnections();
      await new Promise((done) => upstream.close(done));
      await server.close();
    },
  };
}
