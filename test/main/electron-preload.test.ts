import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import type { GatewayConsoleBridge } from '../../main/electron/preload.js';

vi.mock('electron', () => import('./fakes/electron.js'));

let bridge: GatewayConsoleBridge;

beforeAll(async () => {
  // What webPreferences.additionalArguments puts on the sandboxed renderer's command line.
  process.argv.push('--gateway-console-calls=app.info,profiles.list,api.listKeys');
  await import('../../main/electron/preload.js');
  bridge = electron.contextBridge.exposed.get('gatewayConsole') as GatewayConsoleBridge;
  process.argv.pop();
});

beforeEach(() => {
  electron.ipcRenderer.invoke.mockReset();
  electron.ipcRenderer.removeAllListeners();
});

describe('the preload', () => {
  it('exposes one object, with call and the status subscription only', () => {
    expect([...electron.contextBridge.exposed.keys()]).toEqual(['gatewayConsole']);
    expect(Object.keys(bridge).sort()).toEqual(['call', 'onEmbeddedStatus']);
    expect(typeof bridge.call).toBe('function');
  });

  it('invokes the bridge channel for a contract call and returns the envelope', async () => {
    const envelope = { ok: true, result: { profiles: [] } };
    electron.ipcRenderer.invoke.mockResolvedValueOnce(envelope);
    expect(await bridge.call('profiles.list', {})).toBe(envelope);
    expect(electron.ipcRenderer.invoke).toHaveBeenCalledExactlyOnceWith('bridge:call', 'profiles.list', {});
  });

  it('returns a refusal’s envelope whole, with the field it concerns', async () => {
    const refusal = {
      ok: false,
      error: { status: 400, message: 'expires_at must be in the future', field: 'expires_at' },
    };
    // IPC delivers a structured clone of what the main process answered.
    electron.ipcRenderer.invoke.mockResolvedValueOnce(structuredClone(refusal));
    expect(await bridge.call('api.listKeys', { profileId: 'p' })).toEqual(refusal);
  });

  it('sends an empty object when a call has no arguments', async () => {
    electron.ipcRenderer.invoke.mockResolvedValueOnce({ ok: true, result: {} });
    await bridge.call('app.info');
    expect(electron.ipcRenderer.invoke).toHaveBeenCalledExactlyOnceWith('bridge:call', 'app.info', {});
  });

  it.each(['shell.exec', 'constructor', '__proto__', 'toString', '', 'app.info,profiles.list'])(
    'refuses %j, which is not in the contract, without invoking IPC',
    async (name) => {
      const answer = await bridge.call(name as never, {});
      expect(answer).toMatchObject({ ok: false, error: { status: 404 } });
      expect(electron.ipcRenderer.invoke).not.toHaveBeenCalled();
    },
  );

  it('refuses a name that is not a string without invoking IPC', async () => {
    expect(await bridge.call({ toString: () => 'app.info' } as never)).toMatchObject({ ok: false });
    expect(electron.ipcRenderer.invoke).not.toHaveBeenCalled();
  });

  it('turns an IPC failure into an envelope rather than a rejection', async () => {
    electron.ipcRenderer.invoke.mockRejectedValueOnce(new Error('Error invoking remote method'));
    expect(await bridge.call('app.info', {})).toEqual({
      ok: false,
      error: { status: 0, message: 'the console host did not answer' },
    });
  });

  it('forwards embedded status messages without the IPC event, until unsubscribed', () => {
    const listener = vi.fn();
    const unsubscribe = bridge.onEmbeddedStatus(listener);
    const status = { state: 'crashed', baseUrl: null, lastLog: ['boom'], demoAccount: null };
    electron.ipcRenderer.emit('embedded:status', { sender: electron.ipcRenderer }, status);
    expect(listener).toHaveBeenCalledExactlyOnceWith(status);
    unsubscribe();
    electron.ipcRenderer.emit('embedded:status', { sender: electron.ipcRenderer }, status);
    expect(listener).toHaveBeenCalledOnce();
    expect(electron.ipcRenderer.listenerCount('embedded:status')).toBe(0);
  });

  it('listens on no other channel', () => {
    bridge.onEmbeddedStatus(() => {});
    expect(electron.ipcRenderer.eventNames()).toEqual(['embedded:status']);
  });
});
