import { Notification, type BrowserWindow } from 'electron';
import type { StoredAlert } from '../core/alerts/alert-store.js';

/** The renderer's address hash for the screen that explains the alert, from its screen and parameters only. */
export function alertHash(alert: Pick<StoredAlert, 'screen' | 'params'>): string {
  return `#/${alert.screen}${Object.keys(alert.params).length ? `?${new URLSearchParams(alert.params)}` : ''}`;
}

/**
 * The host's alerts as the system's own notifications. A click brings the console forward on the
 * screen that explains the alert: the window shown again when it was hidden to the tray or
 * minimized, or opened on that screen when it is gone. The hash is built from the alert's screen
 * and parameters, never from text the server chose. Each notification is held until clicked or
 * closed: one collected early loses its click handler (electron/electron#16922).
 */
export function alertNotifier(window: () => BrowserWindow | null, openWindow: (hash: string) => void) {
  const shown = new Set<Notification>();
  return (_profileId: string, alert: StoredAlert): boolean => {
    if (!Notification.isSupported()) return false;
    const notification = new Notification({ title: alert.title, body: alert.body });
    shown.add(notification);
    notification.on('close', () => shown.delete(notification));
    notification.on('click', () => {
      shown.delete(notification);
      const hash = alertHash(alert);
      const target = window();
      if (!target || target.isDestroyed()) {
        // A new window loads that screen from the start, and shows itself once it is ready to.
        openWindow(hash);
        return;
      }
      if (target.isMinimized()) target.restore();
      target.show();
      target.focus();
      target.webContents.executeJavaScript(`location.hash = ${JSON.stringify(hash)};`).catch(() => undefined);
    });
    notification.show();
    return true;
  };
}
