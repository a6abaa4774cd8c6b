import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { vi } from 'vitest';

/**
 * A small stand-in for the `electron` module, for tests that import the Electron shell with
 * vi.mock('electron', () => import('./fakes/electron.js')). It records what the shell asks of
 * Electron and lets a test play Electron's side (events, IPC, handlers). Call reset() between tests.
 */

export class FakeEvent {
  defaultPrevented = false;
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

let nextFrameId = 1;

export class FakeFrame {
  readonly processId: number;
  readonly routingId: number;
  constructor(
    public url: string,
    public parent: FakeFrame | null = null,
  ) {
    this.processId = 1;
    this.routingId = nextFrameId++;
  }
}

type WindowOpenHandler = (details: { url: string }) => { action: 'allow' | 'deny' };

export class FakeWebContents extends EventEmitter {
  mainFrame = new FakeFrame('about:blank');
  windowOpenHandler: WindowOpenHandler | null = null;
  readonly sent: unknown[][] = [];

  setWindowOpenHandler(handler: WindowOpenHandler): void {
    this.windowOpenHandler = handler;
  }

  send(channel: string, ...args: unknown[]): void {
    this.sent.push([channel, ...args]);
  }

  executeJavaScript = vi.fn((_code: string): Promise<unknown> => Promise.resolve(undefined));

  /** Emits `name` with a fresh event and the given arguments; returns the event to inspect. */
  fire(name: string, ...args: unknown[]): FakeEvent {
    const event = new FakeEvent();
    this.emit(name, event, ...args);
    return event;
  }
}

export class BrowserWindow extends EventEmitter {
  static instances: BrowserWindow[] = [];
  static getAllWindows(): BrowserWindow[] {
    return BrowserWindow.instances.filter((w) => !w.destroyed);
  }

  readonly webContents = new FakeWebContents();
  destroyed = false;
  loadedUrl: string | null = null;
  visible = false;
  fullScreen = false;
  focus = vi.fn();
  restore = vi.fn();

  constructor(readonly options: Record<string, unknown>) {
    super();
    BrowserWindow.instances.push(this);
  }

  loadURL(url: string): Promise<void> {
    this.loadedUrl = url;
    this.webContents.mainFrame.url = url;
    return Promise.resolve();
  }

  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  isVisible(): boolean {
    return this.visible;
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isMinimized(): boolean {
    return false;
  }
  isFullScreen(): boolean {
    return this.fullScreen;
  }
  setFullScreen(flag: boolean): void {
    if (flag === this.fullScreen) return;
    this.fullScreen = flag;
    this.emit(flag ? 'enter-full-screen' : 'leave-full-screen');
  }
  /** As Electron's: emits a cancellable `close` first; returns the event to inspect. */
  close(): FakeEvent {
    const event = new FakeEvent();
    if (this.destroyed) return event;
    this.emit('close', event);
    if (!event.defaultPrevented) this.destroy();
    return event;
  }
  /** As Electron's: gone at once, with no `close` to cancel. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.visible = false;
    this.emit('closed');
  }
}

export class Notification extends EventEmitter {
  static supported = true;
  static instances: Notification[] = [];
  static isSupported(): boolean {
    return Notification.supported;
  }
  shown = false;
  constructor(readonly options: { title?: string; body?: string }) {
    super();
    Notification.instances.push(this);
  }
  show(): void {
    this.shown = true;
  }
}

export class FakeNativeImage {
  readonly representations: { scaleFactor: number; dataURL?: string }[] = [];
  constructor(readonly dataURL: string | null) {}
  isEmpty(): boolean {
    return this.dataURL === null;
  }
  addRepresentation(options: { scaleFactor: number; dataURL?: string }): void {
    this.representations.push(options);
  }
}

export const nativeImage = {
  createFromDataURL(dataURL: string): FakeNativeImage {
    return new FakeNativeImage(/^data:image\/png;base64,./.test(dataURL) ? dataURL : null);
  },
  createEmpty(): FakeNativeImage {
    return new FakeNativeImage(null);
  },
};

interface FakeMenuItem {
  label?: string;
  type?: string;
  click?: (...args: unknown[]) => void;
}

export class FakeMenu {
  constructor(readonly items: FakeMenuItem[]) {}
  /** Plays a click on the item with this label. */
  click(label: string): void {
    const item = this.items.find((candidate) => candidate.label === label);
    if (!item) throw new Error(`no menu item ${label}`);
    item.click?.();
  }
  labels(): (string | undefined)[] {
    return this.items.map((item) => (item.type === 'separator' ? '---' : item.label));
  }
}

export const Menu = {
  buildFromTemplate(template: FakeMenuItem[]): FakeMenu {
    return new FakeMenu(template);
  },
};

export class Tray extends EventEmitter {
  static instances: Tray[] = [];
  /** Set to play a system where no tray icon can be made (the constructor throws). */
  static unavailable = false;
  toolTip = '';
  menu: FakeMenu | null = null;
  destroyed = false;
  constructor(readonly image: FakeNativeImage | string) {
    super();
    if (Tray.unavailable) throw new Error('no tray on this system');
    Tray.instances.push(this);
  }
  setToolTip(toolTip: string): void {
    this.toolTip = toolTip;
  }
  setContextMenu(menu: FakeMenu | null): void {
    this.menu = menu;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

export const shell = { openExternal: vi.fn((_url: string) => Promise.resolve()) };

export const dialog = { showMessageBox: vi.fn((_options: unknown) => Promise.resolve({ response: 0 })) };

type HeadersListener = (
  details: { url: string; responseHeaders?: Record<string, string[]> },
  callback: (response: { responseHeaders?: Record<string, string[]> }) => void,
) => void;

export class FakeSession {
  headersListener: HeadersListener | null = null;
  permissionRequestHandler: ((...args: any[]) => void) | null = null;
  permissionCheckHandler: ((...args: any[]) => boolean) | null = null;
  devicePermissionHandler: ((...args: any[]) => boolean) | null = null;
  readonly webRequest = {
    onHeadersReceived: (listener: HeadersListener) => {
      this.headersListener = listener;
    },
  };
  setPermissionRequestHandler(handler: (...args: any[]) => void): void {
    this.permissionRequestHandler = handler;
  }
  setPermissionCheckHandler(handler: (...args: any[]) => boolean): void {
    this.permissionCheckHandler = handler;
  }
  setDevicePermissionHandler(handler: (...args: any[]) => boolean): void {
    this.devicePermissionHandler = handler;
  }
}

export const session = { defaultSession: new FakeSession() };

export const protocol = {
  privileged: [] as unknown[],
  handlers: new Map<string, (request: Request) => Promise<Response> | Response>(),
  registerSchemesAsPrivileged(schemes: unknown[]): void {
    this.privileged.push(...schemes);
  },
  handle(scheme: string, handler: (request: Request) => Promise<Response> | Response): void {
    this.handlers.set(scheme, handler);
  },
};

type InvokeHandler = (event: unknown, ...args: unknown[]) => unknown;

export const ipcMain = {
  handlers: new Map<string, InvokeHandler>(),
  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
    this.handlers.set(channel, handler);
  },
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  },
  /** Plays a renderer's ipcRenderer.invoke, with the given event as Electron would build it. */
  async invoke(channel: string, event: unknown, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return handler(event, ...args);
  },
};

class FakeIpcRenderer extends EventEmitter {
  invoke = vi.fn((_channel: string, ..._args: unknown[]): Promise<unknown> => Promise.resolve(undefined));
}
export const ipcRenderer = new FakeIpcRenderer();

export const contextBridge = {
  exposed: new Map<string, unknown>(),
  exposeInMainWorld(key: string, api: unknown): void {
    this.exposed.set(key, api);
  },
};

/** A reversible stand-in for the OS key store: not encryption, only recognisably not plaintext. */
export const safeStorage = {
  available: true,
  backend: 'gnome_libsecret' as string,
  isEncryptionAvailable(): boolean {
    return this.available;
  },
  getSelectedStorageBackend(): string {
    return this.backend;
  },
  encryptString(plain: string): Buffer {
    if (!this.available) throw new Error('Encryption is not available.');
    return Buffer.concat([Buffer.from('SEALED:'), Buffer.from(plain, 'utf8').map((byte) => byte ^ 0x5a)]);
  },
  decryptString(sealed: Buffer): string {
    if (!this.available) throw new Error('Decryption is not available.');
    if (!sealed.subarray(0, 7).equals(Buffer.from('SEALED:'))) throw new Error('Error while decrypting the ciphertext');
    return Buffer.from(sealed.subarray(7).map((byte) => byte ^ 0x5a)).toString('utf8');
  },
};

export class FakeUtilityProcess extends EventEmitter {
  pid: number | undefined = 4242;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  kill = vi.fn(() => true);
  constructor(
    readonly modulePath: string,
    readonly args: string[],
    readonly options: Record<string, unknown>,
  ) {
    super();
  }
}

export const utilityProcess = {
  forked: [] as FakeUtilityProcess[],
  fork(modulePath: string, args: string[] = [], options: Record<string, unknown> = {}): FakeUtilityProcess {
    const child = new FakeUtilityProcess(modulePath, args, options);
    this.forked.push(child);
    return child;
  },
};

class FakeApp extends EventEmitter {
  lock = true;
  ready = false;
  userData = '/nonexistent';
  appPath = '/app';
  isPackaged = false;
  quit = vi.fn();
  requestSingleInstanceLock(): boolean {
    return this.lock;
  }
  whenReady(): Promise<void> {
    this.ready = true;
    return Promise.resolve();
  }
  isReady(): boolean {
    return this.ready;
  }
  getPath(name: string): string {
    if (name !== 'userData') throw new Error(`the fake knows only userData, not ${name}`);
    return this.userData;
  }
  getAppPath(): string {
    return this.appPath;
  }
  getVersion(): string {
    return '0.1.0-test';
  }
  /** Emits `name` with a fresh event; returns it to inspect. */
  fire(name: string, ...args: unknown[]): FakeEvent {
    const event = new FakeEvent();
    this.emit(name, event, ...args);
    return event;
  }
}
export const app = new FakeApp();

export function reset(): void {
  BrowserWindow.instances = [];
  Notification.instances = [];
  Notification.supported = true;
  Tray.instances = [];
  Tray.unavailable = false;
  shell.openExternal.mockClear();
  dialog.showMessageBox.mockClear();
  session.defaultSession = new FakeSession();
  protocol.privileged = [];
  protocol.handlers.clear();
  ipcMain.handlers.clear();
  ipcRenderer.removeAllListeners();
  ipcRenderer.invoke.mockReset();
  ipcRenderer.invoke.mockImplementation(() => Promise.resolve(undefined));
  contextBridge.exposed.clear();
  safeStorage.available = true;
  safeStorage.backend = 'gnome_libsecret';
  utilityProcess.forked = [];
  app.removeAllListeners();
  app.lock = true;
  app.ready = false;
  app.isPackaged = false;
  app.appPath = '/app';
  app.quit.mockClear();
}

export default {
  app,
  BrowserWindow,
  contextBridge,
  dialog,
  ipcMain,
  ipcRenderer,
  Menu,
  nativeImage,
  Notification,
  protocol,
  safeStorage,
  session,
  shell,
  Tray,
  utilityProcess,
};
