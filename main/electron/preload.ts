import { contextBridge, ipcRenderer } from 'electron';
import type { BridgeEnvelope, CallName, EmbeddedStatus } from '../core/contract.js';
import { BRIDGE_CHANNEL, EMBEDDED_STATUS_CHANNEL, callNamesFromArgv } from './channels.js';

/**
 * The preload: runs sandboxed, so it imports only `electron` and channels.ts (type imports
 * vanish) and must be bundled into one CommonJS file before packaging.
 *
 * Electron security checklist, 20 "Do not expose Electron APIs to untrusted web content": the
 * page gets `window.gatewayConsole` with two functions, never ipcRenderer, an IPC event or a
 * channel name of its choosing.
 */

/** What the renderer sees as `window.gatewayConsole`. */
export interface GatewayConsoleBridge {
  /** Makes a bridge call; resolves with its envelope (never rejects for a call the host refused). */
  call(name: CallName, args?: unknown): Promise<BridgeEnvelope<unknown>>;
  /** Called with the embedded server's status whenever it changes; returns the unsubscribe function. */
  onEmbeddedStatus(listener: (status: EmbeddedStatus) => void): () => void;
}

const callNames = callNamesFromArgv(process.argv);

const bridge: GatewayConsoleBridge = {
  async call(name, args) {
    if (typeof name !== 'string' || !callNames.has(name)) {
      return { ok: false, error: { status: 404, message: `unknown bridge call ${String(name)}` } };
    }
    try {
      return (await ipcRenderer.invoke(BRIDGE_CHANNEL, name, args ?? {})) as BridgeEnvelope<unknown>;
    } catch {
      return { ok: false, error: { status: 0, message: 'the console host did not answer' } };
    }
  },
  onEmbeddedStatus(listener) {
    if (typeof listener !== 'function') throw new TypeError('onEmbeddedStatus needs a function');
    // The IPC event stays here: it carries `sender`, which is ipcRenderer itself.
    const forward = (_event: unknown, status: EmbeddedStatus) => listener(status);
    ipcRenderer.on(EMBEDDED_STATUS_CHANNEL, forward);
    return () => {
      ipcRenderer.removeListener(EMBEDDED_STATUS_CHANNEL, forward);
    };
  },
};

contextBridge.exposeInMainWorld('gatewayConsole', bridge);
