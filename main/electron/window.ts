import { BrowserWindow } from 'electron';
import { APP_ENTRY_URL } from './app-protocol.js';
import { callNamesArgument } from './channels.js';
import { restrictContents, secureWebPreferences } from './security.js';

export interface ConsoleWindowOptions {
  /** The bundled preload script (one CommonJS file). */
  preload: string;
  /** The contract's call names, handed to the preload (see channels.ts). */
  callNames: readonly string[];
  /** The screen to open on, as the renderer's address hash (`#/spend?key=…`); its default screen without. */
  hash?: string;
}

/** The console's window: secure webPreferences, navigation and new windows restricted, the renderer from app://console. */
export function createConsoleWindow(options: ConsoleWindowOptions): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 900,
    minHeight: 600,
    title: 'Gateway Console',
    show: false,
    webPreferences: secureWebPreferences(options.preload, [callNamesArgument(options.callNames)]),
  });
  restrictContents(window.webContents);
  window.once('ready-to-show', () => window.show());
  // Electron security checklist, 1 "Only load secure content": the app's own files, never a remote page.
  void window.loadURL(`${APP_ENTRY_URL}${options.hash ?? ''}`);
  return window;
}
