import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import type { BridgeEnvelope } from '../core/contract.js';
import type { ConsoleHost } from '../core/host.js';
import { isAppUrl } from './app-protocol.js';
import { BRIDGE_CHANNEL } from './channels.js';

export const FORBIDDEN: BridgeEnvelope<never> = {
  ok: false,
  error: { status: 403, message: 'the bridge answers the console window only' },
};

/**
 * Electron security checklist, 17 "Validate the sender of all IPC messages": the sender must be
 * the console window's own top frame, showing the console's own origin. A subframe, another
 * window or webContents, or the window after it navigated away, is refused.
 */
export function isTrustedSender(event: IpcMainInvokeEvent, window: BrowserWindow | null): boolean {
  if (!window || window.isDestroyed()) return false;
  const contents = window.webContents;
  if (event.sender !== contents) return false;
  const frame = event.senderFrame;
  const top = contents.mainFrame;
  if (!frame || frame.parent !== null) return false;
  if (frame !== top && (frame.processId !== top.processId || frame.routingId !== top.routingId)) return false;
  return isAppUrl(frame.url);
}

/**
 * The bridge's one IPC channel: `invoke(BRIDGE_CHANNEL, name, args)` answers with the host's
 * envelope. The host validates the name and arguments against the contract; nothing is ever
 * thrown across IPC (a thrown error would reach the renderer as a bare string).
 * Returns a function that removes the handler.
 */
export function registerBridge(
  host: Pick<ConsoleHost, 'dispatch'>,
  mainWindow: () => BrowserWindow | null,
): () => void {
  ipcMain.handle(BRIDGE_CHANNEL, async (event, name: unknown, args: unknown): Promise<BridgeEnvelope<unknown>> => {
    if (!isTrustedSender(event, mainWindow())) return FORBIDDEN;
    if (typeof name !== 'string') return { ok: false, error: { status: 400, message: 'a bridge call needs a name' } };
    try {
      return await host.dispatch(name, args ?? {});
    } catch {
      return { ok: false, error: { status: 500, message: 'the console host failed; see its log' } };
    }
  });
  return () => ipcMain.removeHandler(BRIDGE_CHANNEL);
}
