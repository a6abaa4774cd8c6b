import {
  Menu,
  Tray,
  nativeImage,
  type BrowserWindow,
  type MenuItemConstructorOptions,
  type NativeImage,
} from 'electron';

/**
 * The console's tray icon: the app keeps running there when its window is closed, so the host
 * goes on checking alert rules and raising notifications (see alert-notifications.ts).
 */

export const TRAY_TOOLTIP = 'Gateway Console: alerts keep being checked while the window is closed';

/**
 * The icon, a blue disc with a white centre, embedded because the project ships no icon file
 * (electron-builder.yml's buildResources, build/, holds none): 16 px, with a 32 px
 * representation for scale factor 2. Both were drawn by a script, not taken from anywhere.
 */
const ICON_16 =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAi0lEQVR42mNQTX7NgAUnqCa/nq+a/Ho/FM+HimGoRRcIUE1+fV81+fV/HPg+VA1WAxLwaETHCegGBJCgGYYDkA3A6my/hvdgjMc7DFidDtJ07dHv/zAAYuMwKIEBGsIoEsiakQ3BYsB8Bmg0odiOC2BxxX6qGECxFygORIqjkSoJieKkTJXMRFZ2BgC9jWHLLzcfTwAAAABJRU5ErkJggg==';
const ICON_32 =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAABDklEQVR42mNQTX7NQAJWUE1+nQBkN6gmv96PhhugcgqkmEmswgSoJf+JxPuheih2gINq8uv7JFiMju9DzSDLAf0UWIyO+0lxgACJwU1KtAgQ4wBaWI7sCLwO6Keh5VijAz3B/acTdsDmgPt0dMB9dAckkGqIX8P7/+XzPoMxiE2GIxKQHUB0wsuc8vH/kzd//6MDkBhIjtQECSteidK09uiP/4QASA0JjlAgOvhBviMWkBASCQzQSoSgYmzBjguA1BLpgAai4h+UyEgFRCbM/UQ5AJTSSQUgPcPHAbSOggFPhAOeDQe8IBrwonhQVEYDXh0PigbJgDfJBkWjdFA0ywe8YzJoumaDonNK8+45ANjGnBgtzc2oAAAAAElFTkSuQmCC';

export function trayIcon(): NativeImage {
  const icon = nativeImage.createFromDataURL(ICON_16);
  // Should the PNG not decode, an empty image: the tray still works (its menu, its tooltip), unseen.
  if (icon.isEmpty()) return nativeImage.createEmpty();
  icon.addRepresentation({ scaleFactor: 2, dataURL: ICON_32 });
  return icon;
}

export interface TrayActions {
  /** Shows the console window, opening it when it is gone. */
  open(): void;
  /** Quits for real (the app's quit path, which stops the host and the embedded server). */
  quit(): void;
  /** Checks every profile's alert rules now; the menu offers it only when given. */
  checkAlerts?: () => void;
}

/** The tray icon with its tooltip and menu. Keep the returned Tray referenced: one collected is removed. */
export function createTray(actions: TrayActions): Tray {
  const tray = new Tray(trayIcon());
  tray.setToolTip(TRAY_TOOLTIP);
  const checkAlerts = actions.checkAlerts;
  const template: MenuItemConstructorOptions[] = [
    { label: 'Open Gateway Console', click: () => actions.open() },
    ...(checkAlerts ? [{ label: 'Check alerts now', click: () => checkAlerts() }] : []),
    { type: 'separator' },
    { label: 'Quit', click: () => actions.quit() },
  ];
  tray.setContextMenu(Menu.buildFromTemplate(template));
  // A left click opens the window on Windows (and the Linux desktops that report one); on macOS
  // a click opens the menu, as menu bar items do.
  if (process.platform !== 'darwin') tray.on('click', () => actions.open());
  return tray;
}

/**
 * Hides the window to the tray. A full-screen window (macOS) leaves full screen first: hidden
 * as it is, it would leave an empty full-screen space behind.
 */
export function hideToTray(window: BrowserWindow): void {
  if (window.isFullScreen()) {
    window.once('leave-full-screen', () => window.hide());
    window.setFullScreen(false);
    return;
  }
  window.hide();
}
