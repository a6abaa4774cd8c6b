import { Notification, type BrowserWindow } from 'electron';
import type { StoredAlert } from '../core/alerts/alert-store.js';

/**
 * The host's alerts as the system's own notifications. A click brings the console forward
 * (opening its window when it was closed) on the screen that explains the alert. The hash is
 * built from the alert's screen and parameters, never from text the server chose. Each
 * notification is held until clicked or closed: one collected early loses its click handler
 * (electron/electron#16922).
 */
export function alertNotifier(window: () => BrowserWindow | null, openWindow: () => BrowserWindow) {
  const shown = new Set<Notification>();
  return (_profileId: string, alert: StoredAlert): boolean => {
    if (!Notification.isSupported()) return false;
    const notification = new Notification({ title: alert.title, body: alert.body });
    shown.add(notification);
    notification.on('close', () => shown.delete(notification));
    notification.on('click', () => {
      shown.delete(notification);
      const target = window() ?? openWindow();
      if (target.isMinimized()) target.restore();
      target.show();
      target.focus();
      const hash = `#/${alert.screen}${Object.keys(alert.params).length ? `?${new URLSearchParams(alert.params)}` : ''}`;
      void target.webContents.executeJavaScript(`location.hash = ${JSON.stringify(hash)};`);
    });
    notification.show();
    return true;
  };
}
