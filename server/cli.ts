// Each mode's modules are loaded when it runs: a server's start (a console's first launch waits
// on it) never pays for the operator's commands, nor they for the server.

const USAGE = `usage:
  npm run server -- [--host 127.0.0.1] [--port 8787 | --socket PATH] [--data-dir ./data] [--telemetry-db PATH] [--retention-days N] [--demo] [--gateway-port 8788]
  npm run admin -- <command> [--data-dir ./data] [flags]   (npm run admin -- help)
  npm run gateway -- --control-plane URL [--host 127.0.0.1] [--port 8788]   (npm run gateway -- --help)`;

async function main(argv: string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === 'serve') return (await import('./serve.js')).serve(rest);
  if (mode === 'admin') return (await import('./admin/commands.js')).runAdmin(rest);
  if (mode === 'gateway') return (await import('./gateway/standalone.js')).runGateway(rest);
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
