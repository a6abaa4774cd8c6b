// A bare Fastify hello-world, the benchmark's yardstick for GET /keys throughput.
// Runs in its own process, like the server, so that the load generator does not share its event loop.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));

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
