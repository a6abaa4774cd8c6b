import { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { DEMO_ACCOUNTS } from '../server/demo/organisation.js';
import { buildCode, buildRenderer, codeBuildReason, rendererBuildReason } from '../scripts/build.js';
import { ROOT, startChild, type Child } from './processes.js';
import { consoleFigures, type ConsoleCounts, type ConsoleReport } from './report.js';
import { percentile, round, summarise } from './stats.js';

/**
 * The console's own speed (issue 25 section 4): the built renderer in Chromium through the web
 * shell, whose embedded server runs on the bench's seeded data folder. Times are taken in the
 * page (performance.now() and requestAnimationFrame), so Playwright's round trips are not in them:
 * "painted" is the first animation frame whose DOM shows the thing, held for a second frame.
 */

/** How many of each measurement the console section takes, unless told. */
export const CONSOLE_COUNTS: ConsoleCounts = {
  firstLaunches: 3,
  loads: 5,
  signIns: 3,
  switchRounds: 3,
  scrollPages: 5,
};

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];

/** Vite's chunkSizeWarningLimit: it warns of a chunk larger than this once minified. */
const CHUNK_WARNING_KB = 500;

/**
 * The renderer (dist/renderer, which the web shell serves) and the compiled app (dist/main,
 * dist/server: the first launches run it), each built unless it is newer than its sources, as
 * `npm start` does; the app compiled without tsc's type checking (the same JavaScript, in half the time).
 */
async function build(log: (line: string) => void): Promise<void> {
  const dist = join(ROOT, 'dist');
  const renderer = rendererBuildReason();
  log(
    `console: ${renderer ? `building the renderer (${renderer})` : 'the renderer is built from the current sources'}`,
  );
  if (renderer) buildRenderer(dist, 'pipe');
  const code = codeBuildReason();
  log(`console: ${code ? `compiling the app (${code})` : 'the app is compiled from the current sources'}`);
  if (code) await buildCode(dist, 'pipe', { typeCheck: false });
}

function chunkSizes(): { file: string; kB: number }[] {
  const assets = join(ROOT, 'dist', 'renderer', 'assets');
  return readdirSync(assets)
    .filter((file) => file.endsWith('.js'))
    .map((file) => ({ file, kB: round(statSync(join(assets, file)).size / 1000, 1) }));
}

/**
 * A console data folder whose embedded server's folder is `dataDir`, with the marker that
 * offers the demo admin's sign-in (main/core/embedded-server.ts), as if the console had seeded it.
 */
function consoleFolder(temp: string, dataDir: string): string {
  const folder = join(temp, 'console');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  symlinkSync(dataDir, join(folder, 'embedded'), 'dir');
  const admin = DEMO_ACCOUNTS.find((account) => account.role === 'admin')!;
  const marker = join(dataDir, 'console-demo.json');
  writeFileSync(marker, JSON.stringify({ demo: 'seeded', account: { email: admin.email, password: admin.password } }), {
    mode: 0o600,
  });
  chmodSync(marker, 0o600);
  return folder;
}

/**
 * Resolves, in the page, with the ms from `start` (its performance.now()) to the first of two
 * frames in a row in which the expression `ready` holds. Sent as one expression: the page's
 * Content-Security-Policy forbids it to compile text itself, but not the debugger to run it.
 */
function untilPainted(page: Page, ready: string, start: number, timeoutMs = 60_000): Promise<number> {
  return page.evaluate(`new Promise((resolve, reject) => {
    const start = ${start};
    let first = null;
    const frame = () => {
      if (${ready}) {
        if (first !== null) return resolve(first - start);
        first = performance.now();
      } else first = null;
      if (performance.now() - start > ${timeoutMs}) return reject(new Error('not painted within ${timeoutMs} ms'));
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  })`);
}

/** Clicks `selector` in the page and returns its performance.now() just before. */
function clickInPage(page: Page, selector: string): Promise<number> {
  return page.evaluate(`(() => {
    const element = document.querySelector(${JSON.stringify(selector)});
    if (!element) throw new Error('nothing matches ' + ${JSON.stringify(selector)});
    const start = performance.now();
    element.click();
    return start;
  })()`);
}

/** The page's clock now. */
const pageNow = (page: Page): Promise<number> => page.evaluate('performance.now()');

/** Moves the console to `hash` as a link would (the route follows hashchange). */
const goHash = (page: Page, hash: string): Promise<unknown> =>
  page.evaluate(`void (window.location.hash = ${JSON.stringify(hash)})`);

const SIGN_IN_READY = `(() => { const b = document.querySelector('[data-testid="demo-sign-in"]'); return !!b && !b.disabled; })()`;
const DASHBOARD_READY = `(() => {
  const cards = document.querySelector('[data-testid="summary-cards"][data-state="ready"]');
  const chart = document.querySelector('[data-testid="series-chart"][data-state="ready"]');
  const requests = document.querySelector('[data-testid="card-requests-value"]');
  // The dashboard's panels too, drawn (a control plane without them shows no section): they
  // are the screen's first charts, above the one over time.
  const dashboard = document.querySelector('[data-testid="dashboard"]');
  const panels = !dashboard || (dashboard.getAttribute('aria-busy') !== 'true' && !!dashboard.querySelector('[data-testid="dashboard-grid"] svg'));
  // Every chart in the window drawn: charts below it are drawn as they scroll into view or the
  // browser idles (renderer/src/screens/analytics/useElementWidth.ts), like Grafana's panels.
  const undrawn = [...document.querySelectorAll('.analytics .chart-area, .analytics .dashboard-chart-area')].some((area) => {
    const box = area.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight && !area.querySelector('svg');
  });
  return !!cards && !!chart && !!requests && /\\d/.test(requests.textContent || '') && panels && !undrawn;
})()`;
/**
 * What shows a screen's first data, by its title: the screens' own `data-state="ready"`, or for
 * those without one a stable sign of loaded data (the dashboard's cards and chart; a key's row).
 */
const DATA_SHOWN: Record<string, string> = {
  Analytics: DASHBOARD_READY,
  'API keys': `!!document.querySelector('[data-testid="keys-table"] [data-testid="key-row"]')`,
};
const dataShown = (title: string) =>
  DATA_SHOWN[title] ?? `!!document.querySelector('main.content [data-testid$="-screen"][data-state="ready"]')`;

/**
 * A screen is painted when its title shows, its first data is on screen (not an empty frame
 * before the answer) and nothing in it loads or is busy.
 */
const screenReady = (title: string) => `(() => {
  const main = document.querySelector('main.content');
  if (!main || main.querySelector('#screen-title')?.textContent !== ${JSON.stringify(title)}) return false;
  if (!(${dataShown(title)})) return false;
  return main.childElementCount > 1 && !main.querySelector('.loading, [aria-busy="true"]');
})()`;

export async function measureConsole(options: {
  temp: string;
  dataDir: string;
  /** Days of requests the store holds: the request log's window covers them all. */
  days: number;
  /** CONSOLE_COUNTS unless told. */
  counts?: ConsoleCounts;
  log: (line: string) => void;
}): Promise<ConsoleReport> {
  const { temp, log } = options;
  const counts = options.counts ?? CONSOLE_COUNTS;
  await build(log);
  const chunks = chunkSizes();
  const folder = consoleFolder(temp, options.dataDir);

  let shell: Child | null = null;
  let browser: Browser | null = null;
  try {
    shell = await startChild('main/web/main.ts', [], {
      logPath: join(temp, 'web-shell.log'),
      ready: /(http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/,
      env: { GC_DATA_DIR: folder, GC_NO_BROWSER: '1', GC_PORT: '', GC_DEMO_TRAFFIC: '0' },
      timeoutMs: 60_000,
    });
    // Warm: the embedded server has opened the store before the console is timed.
    const runningBy = Date.now() + 300_000;
    while (!/Embedded server: running/.test(shell.log())) {
      if (/Embedded server: crashed/.test(shell.log()) || Date.now() > runningBy)
        throw new Error(`the embedded server did not start:\n${shell.log().slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const url = shell.url;
    log(`console: web shell at ${new URL(url).origin}, embedded server running`);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const viewport = { width: 1440, height: 900 };

    // 0. First launches on new data folders, while the warm shell idles.
    const firstLaunch = await measureFirstLaunches(browser, temp, viewport, counts.firstLaunches);
    log(
      `console: first launch, page to demo sign-in ${firstLaunch.pageToSignIn.map((ms) => round(ms, 0)).join(', ')} ms`,
    );

    // 1. Page load to the sign-in screen, each in a fresh context: nothing cached.
    const loads: number[] = [];
    let beforeFirstPaint: { file: string; kB: number }[] = [];
    for (let i = 0; i < counts.loads; i++) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      await page.goto(url, { waitUntil: 'commit' });
      loads.push(await untilPainted(page, SIGN_IN_READY, 0));
      if (i === 0) beforeFirstPaint = await scriptsBeforeFirstPaint(page);
      await context.close();
    }
    log(`console: page load to sign-in ${loads.map((ms) => round(ms, 0)).join(', ')} ms`);

    // 2. Sign-in click to the dashboard painted with data, then signing out again.
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    await page.goto(url);
    const signIns: number[] = [];
    for (let i = 0; i < counts.signIns; i++) {
      await untilPainted(page, SIGN_IN_READY, await pageNow(page));
      await goHash(page, '#/analytics');
      const start = await clickInPage(page, '[data-testid="demo-sign-in"]');
      signIns.push(await untilPainted(page, DASHBOARD_READY, start));
      if (i < counts.signIns - 1) await page.getByTestId('sign-out').click();
    }
    log(`console: sign-in to dashboard ${signIns.map((ms) => round(ms, 0)).join(', ')} ms`);

    // 3. Every screen in the navigation's order, several rounds.
    const byScreen: Record<string, number[]> = {};
    const names = await page
      .locator('nav.sidebar [data-testid^="nav-"]')
      .evaluateAll((links) => links.map((link) => [link.getAttribute('data-testid')!, link.textContent ?? '']));
    for (let round = 0; round < counts.switchRounds; round++) {
      for (const [testId, title] of names) {
        // Let the screen left behind finish what it started: a switch is timed from quiet.
        await page.waitForTimeout(300);
        const start = await clickInPage(page, `[data-testid="${testId}"]`);
        (byScreen[title!] ??= []).push(await untilPainted(page, screenReady(title!), start));
      }
    }
    const switches = Object.values(byScreen).flat();
    log(
      `console: screen switch p95 ${round(
        percentile(
          [...switches].sort((a, b) => a - b),
          95,
        ),
        1,
      )} ms`,
    );

    // 4. The request log over every row, scrolled through pages of 200 rows.
    const scroll = await scrollRequestLog(page, options.days + 1, counts.scrollPages);
    log(`console: request log scrolling, longest task ${scroll.longestTaskMs} ms (${scroll.longTasks} long tasks)`);
    const rowsInWindow = await page
      .getByTestId('page-text')
      .textContent()
      .then((text) => Number(/of ([\d,]+)$/.exec(text ?? '')?.[1]?.replaceAll(',', '') ?? NaN));
    await context.close();

    const largestChunk = chunks.reduce((a, b) => (b.kB > a.kB ? b : a));
    const report: Omit<ConsoleReport, 'figures'> = {
      setup: {
        rowsInWindow,
        chromium: browser.version(),
        loads: counts.loads,
        signIns: counts.signIns,
        switchRounds: counts.switchRounds,
      },
      startToSignIn: summarise(loads),
      firstLaunch: {
        pageToSignIn: summarise(firstLaunch.pageToSignIn),
        spawnToSignIn: summarise(firstLaunch.spawnToSignIn),
        launches: counts.firstLaunches,
      },
      signIns: signIns.map((ms) => round(ms, 1)),
      signInToDashboard: summarise(signIns),
      screenSwitch: {
        ...summarise(switches),
        byScreen: Object.fromEntries(Object.entries(byScreen).map(([k, v]) => [k, v.map((ms) => round(ms, 1))])),
      },
      javascript: {
        beforeFirstPaint,
        beforeFirstPaintKB: round(
          beforeFirstPaint.reduce((sum, chunk) => sum + chunk.kB, 0),
          1,
        ),
        chunks: chunks.length,
        largestChunk,
        sizeWarning: chunks.some((chunk) => chunk.kB > CHUNK_WARNING_KB),
      },
      scroll,
    };
    return { ...report, figures: consoleFigures(report) };
  } finally {
    await browser?.close().catch(() => {});
    await shell?.stop();
  }
}

/**
 * A new user's first launch, `launches` times: the compiled web shell, as `npm start` runs
 * it, on a new data folder (its embedded server seeds the demo), the page opened in a new context the moment the shell prints
 * its address, timed to the demo sign-in ready to click; the demo's history is still being written.
 */
async function measureFirstLaunches(
  browser: Browser,
  temp: string,
  viewport: { width: number; height: number },
  launches: number,
): Promise<{ pageToSignIn: number[]; spawnToSignIn: number[] }> {
  const pageToSignIn: number[] = [];
  const spawnToSignIn: number[] = [];
  for (let i = 0; i < launches; i++) {
    const folder = join(temp, `first-launch-${i}`);
    const spawned = Date.now();
    const shell = await startChild('dist/main/web/main.js', [], {
      logPath: join(temp, `first-launch-${i}.log`),
      ready: /(http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/,
      env: { GC_DATA_DIR: folder, GC_NO_BROWSER: '1', GC_PORT: '', GC_DEMO_TRAFFIC: '0' },
      timeoutMs: 60_000,
    });
    const context = await browser.newContext({ viewport });
    try {
      const page = await context.newPage();
      await page.goto(shell.url, { waitUntil: 'commit' });
      const ms = await untilPainted(page, SIGN_IN_READY, 0);
      pageToSignIn.push(ms);
      spawnToSignIn.push(Date.now() - spawned);
    } finally {
      await context.close();
      await shell.stop();
    }
  }
  return { pageToSignIn, spawnToSignIn };
}

/** The scripts fetched before the first contentful paint, decoded kB each. */
function scriptsBeforeFirstPaint(page: Page): Promise<{ file: string; kB: number }[]> {
  return page.evaluate(`(() => {
    const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Infinity;
    return performance
      .getEntriesByType('resource')
      .filter((entry) => entry.name.endsWith('.js') && entry.startTime < paint)
      .map((entry) => ({ file: entry.name.split('/').pop(), kB: Math.round(entry.decodedBodySize / 100) / 10 }));
  })()`);
}

/**
 * Opens the request log on a window holding every row, 200 a page, and scrolls each of
 * `pages` pages from top to bottom a quarter of the box per frame, then goes to the next
 * page, while a PerformanceObserver records the main thread's long tasks (over 50 ms, Chromium's
 * threshold): rendering a page of rows and scrolling through it both count.
 */
async function scrollRequestLog(page: Page, days: number, pages: number): Promise<ConsoleReport['scroll']> {
  await goHash(page, `#/requests?range=${days}d&size=200`);
  await untilPainted(page, screenReady('Request log'), await pageNow(page), 300_000);
  return page.evaluate(`(async () => {
    const pages = ${pages};
    const tasks = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push(entry.duration);
    });
    observer.observe({ type: 'longtask', buffered: false });
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    const scroller = document.querySelector('[data-testid="request-table-scroll"]');
    if (!scroller) throw new Error('no request table');
    const pageText = () => document.querySelector('[data-testid="page-text"]')?.textContent;
    const busy = () => document.querySelector('[data-testid="requests-screen"]')?.getAttribute('aria-busy') === 'true';
    let frames = 0;
    for (let p = 0; p < pages; p++) {
      scroller.scrollTop = 0;
      while (scroller.scrollTop + scroller.clientHeight < scroller.scrollHeight - 1) {
        scroller.scrollTop += Math.max(40, scroller.clientHeight / 4);
        await frame();
        frames++;
      }
      if (p === pages - 1) break;
      const before = pageText();
      document.querySelector('[data-testid="page-next"]')?.click();
      const asked = performance.now();
      // The next page's rows on screen, the screen no longer busy.
      while (pageText() === before || busy()) {
        if (performance.now() - asked > 300000) throw new Error('the next page did not come');
        await frame();
      }
      await frame();
    }
    // A long task is reported once it has ended: two more frames for the last.
    await frame();
    await frame();
    observer.disconnect();
    return {
      pages,
      rowsPerPage: 200,
      longTasks: tasks.length,
      longestTaskMs: Math.round(Math.max(0, ...tasks) * 10) / 10,
      frames,
    };
  })()`);
}
