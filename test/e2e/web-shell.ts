import { startProcess, type RunningProcess } from './processes.js';

/** The console's web shell as the tests start it: on a data folder of its own, with no window. */

/** A Wednesday afternoon in the demo's time zone: its newest rows are a busy office's. */
export const DEMO_AS_OF = '2026-11-18T10:30:00Z';

export interface RunningWebShell extends RunningProcess {
  /** The console's address, with the token that opens it. */
  url: string;
}

/** Starts a web shell on `dataDir`; resolves once it prints the console's address. */
export async function startWebShell(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<RunningWebShell> {
  const shell = await startProcess(
    'main/web/main.ts',
    [],
    // No live demo traffic: the tests count rows (gateway.spec.ts calls the gateway itself). The
    // history drawn as of a fixed instant: the same rows, relative to now, on any day and hour.
    {
      GC_DATA_DIR: dataDir,
      GC_NO_BROWSER: '1',
      GC_PORT: '',
      GC_DEMO_TRAFFIC: '0',
      GC_DEMO_AS_OF: DEMO_AS_OF,
      ...env,
    },
    /(http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/,
  );
  return { ...shell, url: shell.match[1]! };
}
