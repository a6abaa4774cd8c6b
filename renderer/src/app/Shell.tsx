import { useEffect, useMemo } from 'react';
import { Breakable } from '../components/Breakable.js';
import { useAlertFeed } from '../screens/alerts/useAlertFeed.js';
import { useAnalyticsHealth } from '../state/api.js';
import { useOffers } from '../state/offers.js';
import { SCREENS, useRoute } from '../state/route.js';
import { useSession } from '../state/session.js';
import { ThemeSwitch } from '../theme/ThemeSwitch.js';
import { CommandLayer } from '../commands/CommandLayer.js';
import { ariaShortcut, screenShortcut, shortcutLabel, SIGN_OUT_SHORTCUT, type Shortcut } from '../commands/shortcut.js';
import { PaletteButton, SavedViewsNav } from './SavedViewsNav.js';
import { DemoHistoryNote } from './DemoHistoryNote.js';
import { LoadBoundary } from './LoadBoundary.js';
import { preloadScreens, screens } from './screens.js';
import { whenIdle } from '../console-idle.js';

const shortcutTitle = (title: string, shortcut: Shortcut | undefined) =>
  shortcut ? `${title} (${shortcutLabel(shortcut)})` : title;
const keyshortcuts = (shortcut: Shortcut | undefined) => (shortcut ? ariaShortcut(shortcut) : undefined);

/** Screens that show the request log's figures; the others hold nothing the demo's history adds. */
const FILLED_BY_HISTORY: ReadonlySet<string> = new Set(['analytics', 'requests', 'health', 'spend']);

/** The signed-in console: navigation, who is signed in where, the analytics banner, the screen. */
export function Shell() {
  const screen = useRoute((s) => s.screen);
  const go = useRoute((s) => s.go);
  const entry = screens[screen];
  const { title } = entry;
  const spendOffered = useOffers((s) => s.spend);
  const probe = useOffers((s) => s.probe);
  // Screens beyond the contract leave the navigation once the server says it lacks them.
  useAlertFeed();
  const shown = useMemo(() => SCREENS.filter((name) => name !== 'spend' || spendOffered !== false), [spendOffered]);

  // Asked again when the answer is forgotten: another organisation (or profile) may be another server.
  // Asked when the console idles: the probe is a spend query, and the screen's own come first.
  useEffect(() => whenIdle(() => void probe()), [probe, spendOffered]);

  // While the demo's history lands, a screen of its figures opens again on each part (a revisit:
  // its last answer stays while it reads again), so its charts fill without a reload.
  const landed = useSession((s) => s.embedded?.demoHistory?.rows);
  const screenKey = FILLED_BY_HISTORY.has(screen) && landed !== undefined ? `${screen}:${landed}` : screen;

  useEffect(() => {
    document.title = `${title} · Gateway Console`;
  }, [title]);

  // Each screen is a chunk of its own: fetched while the console idles, so a switch waits for none.
  useEffect(() => preloadScreens(), []);

  return (
    <div className="shell">
      <nav className="sidebar" aria-label="Console">
        <p className="brand">Gateway Console</p>
        <PaletteButton />
        <ul>
          {shown.map((name, index) => (
            <li key={name}>
              <a
                href={`#/${name}`}
                title={shortcutTitle(screens[name].title, screenShortcut(index))}
                aria-keyshortcuts={keyshortcuts(screenShortcut(index))}
                aria-current={name === screen ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  go(name);
                }}
                data-testid={`nav-${name}`}
              >
                {screens[name].title}
              </a>
            </li>
          ))}
        </ul>
        <SavedViewsNav />
        <SessionIndicator />
        <ThemeSwitch />
      </nav>
      <main className="content" aria-labelledby="screen-title">
        <AnalyticsBanner />
        <DemoHistoryNote />
        <h1 id="screen-title" tabIndex={-1}>
          {title}
        </h1>
        {/* Keyed by screen: a screen that fails to load leaves the navigation, and the next screen, working. */}
        <LoadBoundary key={screenKey} title={title} retry={entry.retry}>
          {() => <entry.component />}
        </LoadBoundary>
      </main>
      <CommandLayer shown={shown} />
    </div>
  );
}

function SessionIndicator() {
  const me = useSession((s) => s.me);
  const profile = useSession((s) => s.profiles.find((p) => p.id === s.profileId));
  const signOut = useSession((s) => s.signOut);
  if (!me) return null;
  return (
    <section className="session" data-testid="session-indicator" aria-label="Session">
      <span className="dot" aria-hidden="true" />
      <div>
        <strong data-testid="session-email">
          <Breakable text={me.email} />
        </strong>
        <span className="muted">
          {me.role} · {me.organization.name}
        </span>
        <span className="muted">{profile?.name ?? ''}</span>
      </div>
      <button
        type="button"
        onClick={() => void signOut()}
        title={`Sign out (${shortcutLabel(SIGN_OUT_SHORTCUT)})`}
        aria-keyshortcuts={ariaShortcut(SIGN_OUT_SHORTCUT)}
        data-testid="sign-out"
      >
        Sign out
      </button>
    </section>
  );
}

function AnalyticsBanner() {
  const unavailable = useAnalyticsHealth((s) => s.unavailable);
  if (!unavailable) return null;
  return (
    <div role="alert" className="banner" data-testid="analytics-banner">
      Analytics are unavailable right now ({unavailable}). Keys, provider keys, activity and the organisation keep
      working; figures come back once the server can read its request telemetry.
    </div>
  );
}
