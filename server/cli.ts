import { runAdmin } from './admin/commands.js';
import { runGateway } from './gateway/standalone.js';
import { serve } from './serve.js';

const USAGE = `usage:
  npm run server -- [--host 127.0.0.1] [--port 8787 | --socket PATH] [--data-dir ./data] [--telemetry-db PATH] [--demo] [--gateway-port 8788]
  npm run admin -- <command> [--data-dir ./data] [flags]   (npm run admin -- help)
  npm run gateway -- --control-plane URL [--host 127.0.0.1] [--port 8788]   (npm run gateway -- --help)`;

async function main(argv: string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === 'serve') return serve(rest);
  if (mode === 'admin') return runAdmin(rest);
  if (mode === 'gateway') return runGateway(rest);
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
