import { Notification, type BrowserWindow } from 'electron';
import type { StoredAlert } from '../core/alerts/alert-store.js';

/**
 * The host's alerts as the system's own notifications. A click brings the console forward
 * (opening its window when it was closed) on the screen that explains the alert. The hash is
 * built from the alert's screen and parameters, never from text the server chose.
 */
export function alertNotifier(window: () => BrowserWindow | null, openWindow: () => BrowserWindow) {
  return (_profileId: string, alert: StoredAlert): void => {
    if (!Notification.isSupported()) return;
    const notification = new Notification({ title: alert.title, body: alert.body });
    notification.on('click', () => {
      const target = window() ?? openWindow();
      if (target.isMinimized()) target.restore();
      target.show();
      target.focus();
      const hash = `#/${alert.screen}${Object.keys(alert.params).length ? `?${new URLSearchParams(alert.params)}` : ''}`;
      void target.webContents.executeJavaScript(`location.hash = ${JSON.stringify(hash)};`);
    });
    notification.show();
  };
}
