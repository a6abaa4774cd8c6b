// The simulated OpenAI-compatible upstream, answering at once (`realistic: false`): the gateway
// benchmark's provider. Runs in its own process, so that the load generator does not share its
// event loop, and prints the address run.ts waits for.
import { startSimulatedUpstream } from '../server/gateway/simulated-upstream.js';

const upstream = await startSimulatedUpstream({ seed: 1, realistic: false });

const stop = () => {
  upstream.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

console.log(`listening at ${upstream.url}`);
