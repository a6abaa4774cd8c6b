import { shell, type Session, type WebContents, type WebPreferences } from 'electron';
import { isAppUrl } from './app-protocol.js';
import { CONTENT_SECURITY_POLICY } from '../core/content-security-policy.js';

/**
 * The Electron shell's security restrictions, each citing the item of Electron's security
 * checklist it implements (https://www.electronjs.org/docs/latest/tutorial/security#checklist-security-recommendations).
 * Items not implemented here: 17 (IPC sender checks) in ipc.ts, 18 (custom protocol instead
 * of file://) in app-protocol.ts, 19 (fuses) and 16 (a current Electron) in electron-builder.yml
 * and package.json (test/main/electron-version.test.ts holds both), 20 (expose no Electron API)
 * in preload.ts.
 */

/** The console window's webPreferences; every value is spelled out even where it is Electron's default. */
export function secureWebPreferences(preload: string, additionalArguments: string[] = []): WebPreferences {
  return {
    preload,
    // 2. "Do not enable Node.js integration for remote content" (nor for our own).
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    // 3. "Enable Context Isolation": the preload's world is not the page's.
    contextIsolation: true,
    // 4. "Enable process sandboxing".
    sandbox: true,
    // 6. "Do not disable webSecurity" (same-origin policy on).
    webSecurity: true,
    // 8. "Do not enable allowRunningInsecureContent".
    allowRunningInsecureContent: false,
    // 9. "Do not enable experimental features".
    experimentalFeatures: false,
    // 11./12. "<webview>": no webview tag at all (and will-attach-webview is refused below).
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
    additionalArguments,
  };
}

/**
 * 7. "Define a Content Security Policy": set on every response of the session through
 * webRequest.onHeadersReceived, replacing any policy the response carried. app-protocol.ts sets
 * the same header on the renderer's own files.
 */
export function applyContentSecurityPolicy(session: Session): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    const responseHeaders: Record<string, string[]> = {};
    for (const [name, value] of Object.entries(details.responseHeaders ?? {})) {
      if (name.toLowerCase() !== 'content-security-policy') responseHeaders[name] = value;
    }
    responseHeaders['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY];
    callback({ responseHeaders });
  });
}

/**
 * 5. "Handle session permission requests from remote content": the console needs no
 * permission (camera, notifications, geolocation, clipboard, ...), so every request is refused
 * and every check answers no.
 */
export function denyAllPermissions(session: Session): void {
  session.setPermissionRequestHandler((_webContents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler(() => false);
}

/** 15. "Do not use shell.openExternal with untrusted content": only https: addresses leave the app. */
export function isSafeExternalUrl(address: string): boolean {
  try {
    const url = new URL(address);
    return url.protocol === 'https:' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** Navigation, new windows and webviews, for the console window's contents. */
export function restrictContents(contents: WebContents): void {
  // 13. "Disable or limit navigation": the window stays on the console's own origin. The address
  // is read from the event's details: the positional `url` argument after it is deprecated.
  contents.on('will-navigate', (details) => {
    if (!isAppUrl(details.url)) details.preventDefault();
  });
  // 13. again for redirects, which will-navigate does not see.
  contents.on('will-redirect', (details) => {
    if (!isAppUrl(details.url)) details.preventDefault();
  });
  // 14. "Disable or limit creation of new windows": never a new window; a link to an https
  // address opens in the user's browser instead (15, see isSafeExternalUrl).
  contents.setWindowOpenHandler(({ url }) => {
    if (isSafeExternalUrl(url)) void shell.openExternal(url).catch(() => undefined);
    return { action: 'deny' };
  });
  // 12. "Verify WebView options before creation": there is no webview to verify; refuse any.
  contents.on('will-attach-webview', (event) => event.preventDefault());
}
