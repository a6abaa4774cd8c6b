import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Session, WebContents } from 'electron';
import * as electron from './fakes/electron.js';
import { CONTENT_SECURITY_POLICY } from '../../main/core/content-security-policy.js';
import {
  applyContentSecurityPolicy,
  denyAllPermissions,
  isSafeExternalUrl,
  restrictContents,
  secureWebPreferences,
} from '../../main/electron/security.js';
import { createConsoleWindow } from '../../main/electron/window.js';

vi.mock('electron', () => import('./fakes/electron.js'));

const asContents = (contents: electron.FakeWebContents) => contents as unknown as WebContents;
const asSession = (session: electron.FakeSession) => session as unknown as Session;

beforeEach(() => electron.reset());

/**
 * Emits will-navigate or will-redirect as Electron does: the first argument is the event with its
 * details (url, isMainFrame, ...). Electron 45 still passes the deprecated positional arguments
 * (url, isInPlace, ...) after it; they are left out here, so a handler that still reads them
 * fails these tests.
 */
function navigate(
  contents: electron.FakeWebContents,
  name: 'will-navigate' | 'will-redirect',
  url: string,
): electron.FakeEvent {
  const details = Object.assign(new electron.FakeEvent(), {
    url,
    isSameDocument: false,
    isMainFrame: true,
    frame: null,
  });
  contents.emit(name, details);
  return details;
}

describe('the console window', () => {
  it('is created with exactly the secure webPreferences and loads the app origin', () => {
    const window = createConsoleWindow({
      preload: '/app/dist/preload/preload.cjs',
      callNames: ['app.info', 'profiles.list'],
    });
    const created = electron.BrowserWindow.instances;
    expect(created).toHaveLength(1);
    expect(created[0]).toBe(window);
    expect(created[0]!.options.webPreferences).toStrictEqual({
      preload: '/app/dist/preload/preload.cjs',
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      contextIsolation: true,
      sandbox: true,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
      additionalArguments: ['--gateway-console-calls=app.info,profiles.list'],
    });
    expect(created[0]!.loadedUrl).toBe('app://console/index.html');
  });

  it('restricts its own contents: navigation away and new windows are refused', () => {
    createConsoleWindow({ preload: '/p.cjs', callNames: [] });
    const contents = electron.BrowserWindow.instances[0]!.webContents;
    expect(navigate(contents, 'will-navigate', 'https://evil.example/').defaultPrevented).toBe(true);
    expect(navigate(contents, 'will-navigate', 'app://console/index.html#/keys').defaultPrevented).toBe(false);
    expect(contents.windowOpenHandler?.({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
  });

  it('spells out every security preference even where it is the default', () => {
    const preferences = secureWebPreferences('/p.cjs');
    expect(preferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    });
    expect(preferences.allowRunningInsecureContent).toBe(false);
    expect(preferences.additionalArguments).toEqual([]);
  });
});

describe('navigation (will-navigate, will-redirect)', () => {
  const contents = () => {
    const fake = new electron.FakeWebContents();
    restrictContents(asContents(fake));
    return fake;
  };

  it.each([
    'app://console/index.html',
    'app://console/',
    'app://console/index.html#/keys',
    'app://console/assets/index.js?v=1',
  ])('allows the app origin: %s', (url) => {
    const fake = contents();
    expect(navigate(fake, 'will-navigate', url).defaultPrevented).toBe(false);
    expect(navigate(fake, 'will-redirect', url).defaultPrevented).toBe(false);
  });

  it.each([
    'https://evil.example/',
    'http://127.0.0.1:8787/api',
    'file:///etc/passwd',
    'app://evil/index.html',
    'app://console:8080/index.html',
    'app://user:pw@console/index.html',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'not a url',
  ])('prevents navigating to %s', (url) => {
    const fake = contents();
    expect(navigate(fake, 'will-navigate', url).defaultPrevented).toBe(true);
    expect(navigate(fake, 'will-redirect', url).defaultPrevented).toBe(true);
  });

  it('refuses to attach a webview', () => {
    expect(contents().fire('will-attach-webview', {}, {}).defaultPrevented).toBe(true);
  });
});

describe('new windows (setWindowOpenHandler) and shell.openExternal', () => {
  const open = (url: string) => {
    const fake = new electron.FakeWebContents();
    restrictContents(asContents(fake));
    return fake.windowOpenHandler!({ url });
  };

  it('denies an https window and opens it in the browser instead', () => {
    expect(open('https://docs.example.com/keys')).toEqual({ action: 'deny' });
    expect(electron.shell.openExternal).toHaveBeenCalledExactlyOnceWith('https://docs.example.com/keys');
  });

  it.each([
    'http://docs.example.com/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'app://console/index.html',
    'smb://share/x',
    'ms-settings:',
    'https://user:pw@example.com/',
    'not a url',
  ])('denies %s and never opens it externally', (url) => {
    expect(open(url)).toEqual({ action: 'deny' });
    expect(electron.shell.openExternal).not.toHaveBeenCalled();
  });

  it('treats only https as safe to open', () => {
    expect(isSafeExternalUrl('HTTPS://EXAMPLE.COM/')).toBe(true);
    expect(isSafeExternalUrl('http://example.com/')).toBe(false);
  });
});

describe('permissions', () => {
  it('denies every permission request and answers every check with no', () => {
    const session = new electron.FakeSession();
    denyAllPermissions(asSession(session));
    for (const permission of ['media', 'notifications', 'geolocation', 'clipboard-read', 'openExternal', 'unknown']) {
      const callback = vi.fn();
      session.permissionRequestHandler!({}, permission, callback, {});
      expect(callback).toHaveBeenCalledExactlyOnceWith(false);
      expect(session.permissionCheckHandler!({}, permission, 'app://console', {})).toBe(false);
    }
    expect(session.devicePermissionHandler!({ deviceType: 'usb' })).toBe(false);
  });
});

describe('content security policy', () => {
  it('is the strict policy of the brief, the one the web shell sends too', () => {
    expect(CONTENT_SECURITY_POLICY).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
        "font-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; " +
        "frame-ancestors 'none'",
    );
  });

  it('is set on every response, replacing any policy the response carried', () => {
    const session = new electron.FakeSession();
    applyContentSecurityPolicy(asSession(session));
    const callback = vi.fn();
    session.headersListener!(
      {
        url: 'app://console/index.html',
        responseHeaders: { 'content-security-policy': ['default-src *'], 'Content-Type': ['text/html'] },
      },
      callback,
    );
    expect(callback).toHaveBeenCalledExactlyOnceWith({
      responseHeaders: { 'Content-Type': ['text/html'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] },
    });
  });

  it('is set on a response without headers', () => {
    const session = new electron.FakeSession();
    applyContentSecurityPolicy(asSession(session));
    const callback = vi.fn();
    session.headersListener!({ url: 'app://console/x.js' }, callback);
    expect(callback.mock.calls[0]![0].responseHeaders['Content-Security-Policy']).toEqual([CONTENT_SECURITY_POLICY]);
  });
});
