import { useEffect, useMemo } from 'react';
import { useAlertFeed } from '../screens/alerts/useAlertFeed.js';
import { useAnalyticsHealth } from '../state/api.js';
import { useOffers } from '../state/offers.js';
import { SCREENS, useRoute } from '../state/route.js';
import { useSession } from '../state/session.js';
import { screens } from './screens.js';

/** The signed-in console: navigation, who is signed in where, the analytics banner, the screen. */
export function Shell() {
  const screen = useRoute((s) => s.screen);
  const go = useRoute((s) => s.go);
  const { title, component: Screen } = screens[screen];
  const spendOffered = useOffers((s) => s.spend);
  const probe = useOffers((s) => s.probe);
  // Screens beyond the contract leave the navigation once the server says it lacks them.
  useAlertFeed();
  const shown = useMemo(() => SCREENS.filter((name) => name !== 'spend' || spendOffered !== false), [spendOffered]);

  // Asked again when the answer is forgotten: another organisation (or profile) may be another server.
  useEffect(() => {
    void probe();
  }, [probe, spendOffered]);

  useEffect(() => {
    document.title = `${title} · Gateway Console`;
  }, [title]);

  // Alt+1, Alt+2 … open the screens in the order the navigation shows them.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!event.altKey || event.ctrlKey || event.metaKey) return;
      // The physical digit key: Option+1 types "¡" on a Mac, so event.key would not do.
      const digit = /^Digit([1-9])$/.exec(event.code)?.[1];
      const target = digit ? shown[Number(digit) - 1] : undefined;
      if (!target) return;
      event.preventDefault();
      go(target);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [go, shown]);

  return (
    <div className="shell">
      <nav className="sidebar" aria-label="Console">
        <p className="brand">Gateway Console</p>
        <ul>
          {shown.map((name, index) => (
            <li key={name}>
              <a
                href={`#/${name}`}
                title={`${screens[name].title} (Alt+${index + 1})`}
                aria-keyshortcuts={`Alt+${index + 1}`}
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
        <SessionIndicator />
      </nav>
      <main className="content" aria-labelledby="screen-title">
        <AnalyticsBanner />
        <h1 id="screen-title">{title}</h1>
        <Screen />
      </main>
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
        <strong data-testid="session-email">{me.email}</strong>
        <span className="muted">
          {me.role} · {me.organization.name}
        </span>
        <span className="muted">{profile?.name ?? ''}</span>
      </div>
      <button type="button" onClick={() => void signOut()} data-testid="sign-out">
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
