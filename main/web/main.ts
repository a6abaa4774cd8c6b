import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { appDataDir } from '../core/app-data.js';
import { EmbeddedServer } from '../core/embedded-server.js';
import type { OpenedBrowser } from './browser.js';

/**
 * The web shell: the console host in plain Node, its page served on 127.0.0.1 and opened in
 * Chromium's app mode when there is a Chromium and a display, else printed to open by hand.
 *
 * Environment: GC_DATA_DIR (the data folder; the platform's application-data folder by
 * default), GC_PORT (a fixed port; a free one by default), GC_NO_BROWSER=1 (print the
 * address, open nothing), GC_BROWSER (a Chromium-family browser to use), GC_ALERT_CHECK_MS
 * (how often alert rules are checked; one minute by default), GC_DEMO_TRAFFIC=0 (no live demo
 * requests), GC_DEMO_AS_OF (an RFC 3339 instant: the demo's history drawn as of then, moved to
 * end now), GC_DEMO_ROWS (the new demo's request-log rows, 50,000 by default).
 */

export const APP_NAME = 'gateway-console';
// From source this module is main/web/main.ts; built, dist/main/web/main.js.
const PROJECT_ROOT = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../' : '../../../', import.meta.url));
/** A window that closes sooner than this after opening is taken for a browser that failed to start. */
const BROWSER_GRACE_MS = 5_000;

function version(): string {
  try {
    return (
      (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? '0.0.0'
    );
  } catch {
    return '0.0.0';
  }
}

/** GC_ALERT_CHECK_MS as a whole number of milliseconds, at least one second; one minute when unset. */
function alertCheckMs(text: string | undefined): number {
  if (!text) return 60_000;
  const ms = Number(text);
  if (!Number.isSafeInteger(ms) || ms < 1000)
    throw new Error('GC_ALERT_CHECK_MS must be a whole number of milliseconds, 1000 or more');
  return ms;
}

export async function runWebShell(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const rendererDir = join(PROJECT_ROOT, 'dist', 'renderer');
  if (!existsSync(join(rendererDir, 'index.html'))) {
    process.stderr.write(`The console's page is not built (${rendererDir}): run \`npm run build\` or \`npm start\`.\n`);
    process.exit(1);
  }

  const dataDir = env.GC_DATA_DIR || appDataDir(APP_NAME);
  const firstLaunch = !existsSync(join(dataDir, 'profiles.json'));
  const embedded = new EmbeddedServer({
    dataDir: join(dataDir, 'embedded'),
    // GC_DEMO_TRAFFIC=0: no live requests through the embedded gateway (tests that count rows);
    // GC_DEMO_AS_OF: the demo's history drawn as of that instant, the same rows on any day (tests).
    env: {
      ...(env.GC_DEMO_TRAFFIC === '0' ? { SVC_DEMO_TRAFFIC: '0' } : {}),
      ...(env.GC_DEMO_AS_OF ? { SVC_DEMO_AS_OF: env.GC_DEMO_AS_OF } : {}),
      ...(env.GC_DEMO_ROWS ? { SVC_DEMO_ROWS: env.GC_DEMO_ROWS } : {}),
    },
  });
  say(`Data folder: ${dataDir}`);
  let lastState: string | null = null;
  let historyTold = false;
  embedded.onChange((status) => {
    // Each state once, not again for each step of the demo's history; that history once done.
    const history = status.demoHistory;
    if (history && !historyTold && (history.failed !== undefined || history.rows === history.of)) {
      historyTold = true;
      say(`Embedded server: ${history.failed ?? `demo history in place (${history.rows} requests)`}`);
    }
    if (status.state === lastState) return;
    lastState = status.state;
    // Its address is no place to open: the server answers on a socket only this user can reach.
    if (status.state === 'running') {
      say(`Embedded server: running on the socket ${embedded.socketPath ?? '?'}`);
      if (status.gatewayUrl) say(`Gateway (OpenAI-compatible, for the console's API keys): ${status.gatewayUrl}`);
    } else if (status.state === 'crashed') {
      say(
        `Embedded server: crashed. Its last log lines:\n${status.lastLog
          .slice(-10)
          .map((l) => `  ${l}`)
          .join('\n')}`,
      );
    } else say(`Embedded server: ${status.state}`);
  });
  // In the background: the page shows the server starting, and a crash with its log. Spawned
  // before this shell loads the rest of its modules: the server's start is the longest wait
  // of a first launch, and it runs meanwhile.
  embedded.start().catch(() => {});

  const [
    { AlertStore },
    { ConsoleHost },
    { SavedViewStore },
    { PreferenceStore },
    profileModule,
    browserModule,
    webShell,
  ] = await Promise.all([
    import('../core/alerts/alert-store.js'),
    import('../core/host.js'),
    import('../core/saved-views/store.js'),
    import('../core/preferences.js'),
    import('../core/profiles.js'),
    import('./browser.js'),
    import('./server.js'),
  ]);
  const { findChromium, hasDisplay, openAppWindow } = browserModule;
  const profiles = new profileModule.ProfileStore(dataDir, profileModule.ownerOnlyFile);
  const host = new ConsoleHost({
    shell: 'web',
    version: version(),
    profiles,
    embedded,
    // The page raises the web shell's notifications: the host has no way to the desktop's.
    alerts: { store: new AlertStore(join(dataDir, 'alerts')), everyMs: alertCheckMs(env.GC_ALERT_CHECK_MS) },
    savedViews: new SavedViewStore(join(dataDir, 'views')),
    preferences: new PreferenceStore(join(dataDir, 'preferences')),
    onSignedOut: (profileId) => {
      const name = profiles.list().find((p) => p.id === profileId)?.name ?? profileId;
      say(`Signed out of "${name}": its session could not be refreshed.`);
    },
  });
  if (firstLaunch && !profiles.list().some((p) => p.kind === 'embedded')) {
    profiles.add({ name: 'Embedded demo', kind: 'embedded' });
  }

  const shell = await webShell.startWebShell({
    host,
    rendererDir,
    port: env.GC_PORT ? Number(env.GC_PORT) : 0,
    log: (line) => process.stderr.write(`${line}\n`),
  });

  let browser: OpenedBrowser | null = null;
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping the console.`);
    // Whatever hangs, the process ends.
    setTimeout(() => process.exit(0), 15_000).unref();
    browser?.close();
    host.close();
    await shell.close().catch(() => {});
    await embedded.stop().catch(() => {});
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('Interrupted'));
  process.once('SIGTERM', () => void stop('Terminated'));

  const printAddress = (reason: string) => {
    // The address carries the token: printed for the user to open, never written to a log.
    say(`${reason}.\nOpen the console at:\n\n  ${shell.url}\n\nin a browser on this machine. Press Ctrl+C to stop.`);
  };

  const chromium = env.GC_NO_BROWSER ? null : findChromium();
  const display = hasDisplay();
  if (env.GC_NO_BROWSER) printAddress('GC_NO_BROWSER is set: not opening a window');
  else if (!chromium) printAddress('No Chromium found (GC_BROWSER names one): not opening a window');
  else if (!display) printAddress(`No display (neither DISPLAY nor WAYLAND_DISPLAY is set): not opening ${chromium}`);
  else {
    say(`Web shell serving at ${shell.origin}; opening the console in ${chromium} (app mode).`);
    const opened = openAppWindow(chromium, shell.url, dataDir);
    browser = opened;
    const openedAt = Date.now();
    opened.child.once('error', (error) => {
      browser = null;
      printAddress(`Could not start ${chromium} (${error.message})`);
    });
    opened.child.once('exit', (code) => {
      if (browser !== opened || stopping) return;
      browser = null;
      opened.close();
      if (Date.now() - openedAt < BROWSER_GRACE_MS && code !== 0) {
        printAddress(`${chromium} ended at once (code ${code ?? 'none'})`);
      } else {
        void stop('The console window was closed');
      }
    });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runWebShell().catch((error: unknown) => {
    process.stderr.write(`The web shell could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
