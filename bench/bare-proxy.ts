// A bare pass-through proxy, the gateway benchmark's yardstick: plain node:http in front, undici
// `request` to the upstream (a keep-alive pool as large as the gateway's), the request body
// streamed up and the answer's body piped back, nothing parsed, checked or recorded.
// Runs in its own process, like the server: `node --import tsx bench/bare-proxy.ts <upstream …/v1>`.
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';

const upstreamBase = (process.argv[2] ?? '').replace(/\/+$/, '');
if (!/^http:\/\/[^/]+\/v1$/.test(upstreamBase)) throw new Error('usage: bare-proxy.ts http://HOST:PORT/v1');

// What a proxy hands on of the caller's headers (Anthropic's Messages API needs its version, and may
// name betas); hop-by-hop ones stay on their own connection.
const FORWARDED = [
  'content-type',
  'content-length',
  'authorization',
  'accept',
  'anthropic-version',
  'anthropic-beta',
] as const;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

// The same pool as the gateway's (server/gateway/gateway.ts), so that neither queues more.
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

function answerHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

const server = createServer({ noDelay: true, keepAliveTimeout: 30_000 }, (req, res) => {
  const path = (req.url ?? '/').replace(/^\/v1(?=\/|$)/, '');
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const method = req.method === 'POST' ? 'POST' : 'GET';
  request(upstreamBase + path, {
    method,
    headers,
    body: method === 'POST' ? req : null,
    dispatcher,
    signal: abort.signal,
  })
    .then(
      async (upstream) => {
        res.writeHead(upstream.statusCode, answerHeaders(upstream.headers));
        await pipeline(upstream.body, res);
      },
      () => {
        if (res.headersSent) res.destroy();
        else res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"upstream failed"}');
      },
    )
    .catch(() => res.destroy());
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  dispatcher.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(`listening at http://127.0.0.1:${port}/v1`);
});
