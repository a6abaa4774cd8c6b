import { useEffect } from 'react';
import { call } from '../../bridge.js';
import { useRoute } from '../../state/route.js';
import { useSession } from '../../state/session.js';
import { useAlerts, type FiredAlert } from './alerts-store.js';

/** How often the page asks the host what fired: a call to the host alone, no server behind it. */
const FEED_MS = 5_000;

/**
 * Keeps the alert list current while the console is signed in and, in the web shell, raises
 * the browser's notification for each alert the host fired since (the Electron shell's host
 * raises the system's own and marks them delivered). A click opens the screen that explains
 * it. Runs whether or not the tab is seen: a notification is for when it is not.
 */
export function useAlertFeed(): void {
  const profileId = useSession((s) => s.profileId);
  const load = useAlerts((s) => s.load);
  const go = useRoute((s) => s.go);

  useEffect(() => {
    if (!profileId) return;
    let stopped = false;
    let shell: 'web' | 'electron' | null = null;
    const tick = async () => {
      shell ??= (await call('app.info', {}).catch(() => null))?.shell ?? null;
      const view = await load();
      if (!view || stopped) return;
      const fresh = view.fired.filter((alert) => !alert.delivered).sort((a, b) => a.seq - b.seq);
      if (fresh.length === 0) return;
      if (shell === 'web') for (const alert of fresh) raise(alert, go);
      await call('alerts.delivered', { profileId, through: fresh[fresh.length - 1]!.seq }).catch(() => undefined);
    };
    void tick();
    const timer = setInterval(() => void tick(), FEED_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [profileId, load, go]);
}

function raise(alert: FiredAlert, go: ReturnType<typeof useRoute.getState>['go']): void {
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
  const notification = new Notification(alert.title, { body: alert.body, tag: `gateway-console-alert-${alert.seq}` });
  notification.onclick = () => {
    window.focus();
    go(alert.screen, alert.params);
    notification.close();
  };
}
