import { useEffect } from 'react';
import { call } from '../../bridge.js';
import { useRoute } from '../../state/route.js';
import { useSession } from '../../state/session.js';
import { useAlerts, type FiredAlert } from './alerts-store.js';

/** How often the page asks the host what fired: a call to the host alone, no server behind it. */
const FEED_MS = 5_000;
/** An alert older than this is not raised any more (notifications allowed late, a profile opened again): it is in the list. */
const RAISE_WITHIN_MS = 3_600_000;

/**
 * Keeps the alert list current while the console is signed in and, in the web shell, raises
 * the browser's notification for each alert the host fired since (the Electron shell's host
 * raises the system's own and marks them delivered). A click opens the screen that explains
 * it. Runs whether or not the tab is seen: a notification is for when it is not. Only alerts
 * raised are acknowledged: those fired while notifications were blocked wait, and are raised
 * once allowed if they are recent. (Two tabs of one console would each raise them.)
 */
export function useAlertFeed(): void {
  const profileId = useSession((s) => s.profileId);
  const load = useAlerts((s) => s.load);
  const go = useRoute((s) => s.go);

  useEffect(() => {
    if (!profileId) return;
    let stopped = false;
    let busy = false;
    let shell: 'web' | 'electron' | null = null;
    const tick = async () => {
      shell ??= (await call('app.info', {}).catch(() => null))?.shell ?? null;
      const view = await load();
      if (!view || stopped || shell !== 'web' || !allowed()) return;
      const now = Date.now();
      const fresh = view.fired
        .filter((alert) => !alert.delivered && now - Date.parse(alert.firedAt) < RAISE_WITHIN_MS)
        .sort((a, b) => a.seq - b.seq);
      if (fresh.length === 0) return;
      for (const alert of fresh) raise(alert, go);
      await call('alerts.delivered', { profileId, through: fresh[fresh.length - 1]!.seq }).catch(() => undefined);
    };
    // One round at a time: a slow host never gets a second round raising the same alerts.
    const round = () => {
      if (busy) return;
      busy = true;
      void tick().finally(() => {
        busy = false;
      });
    };
    round();
    const timer = setInterval(round, FEED_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [profileId, load, go]);
}

function allowed(): boolean {
  return typeof Notification !== 'undefined' && Notification.permission === 'granted';
}

function raise(alert: FiredAlert, go: ReturnType<typeof useRoute.getState>['go']): void {
  const notification = new Notification(alert.title, { body: alert.body, tag: `gateway-console-alert-${alert.seq}` });
  notification.onclick = () => {
    window.focus();
    go(alert.screen, alert.params);
    notification.close();
  };
}
