// A bare Fastify hello-world, the benchmark's yardstick for GET /keys throughput (and, given a
// recorded answer, the same bytes as GET /keys at `/same`).
// Runs in its own process, like the server, so that the load generator does not share its event loop.
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));

// `/same`: the answer of a real endpoint, recorded in the file given (its body and headers), sent
// as it is: the same bytes with none of the work, the floor of that endpoint's throughput.
const recorded = process.argv[2];
if (recorded) {
  const answer = JSON.parse(readFileSync(recorded, 'utf8')) as { headers: Record<string, string>; body: string };
  app.get('/same', async (_request, reply) => reply.headers(answer.headers).type('application/json').send(answer.body));
}

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (!address || typeof address === 'string') throw new Error('bare Fastify has no port');
console.log(`listening at http://127.0.0.1:${address.port}`);
