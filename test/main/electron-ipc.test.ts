import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { BrowserWindow } from 'electron';
import * as electron from './fakes/electron.js';
import { FORBIDDEN, registerBridge } from '../../main/electron/ipc.js';

vi.mock('electron', () => import('./fakes/electron.js'));

const ENVELOPE = { ok: true as const, result: { shell: 'electron', version: '0.1.0' } };

function setup() {
  electron.reset();
  const window = new electron.BrowserWindow({});
  window.webContents.mainFrame.url = 'app://console/index.html';
  const dispatch = vi.fn(async (_name: string, _args: unknown) => ENVELOPE);
  let current: electron.BrowserWindow | null = window;
  const unregister = registerBridge({ dispatch }, () => current as unknown as BrowserWindow | null);
  const invoke = (event: { sender: unknown; senderFrame: unknown }, ...args: unknown[]) =>
    electron.ipcMain.invoke('bridge:call', event, ...args);
  return { window, dispatch, invoke, unregister, close: () => (current = null) };
}

let t: ReturnType<typeof setup>;
beforeEach(() => {
  t = setup();
});

describe('the bridge IPC handler', () => {
  it('hands a call from the console window top frame to the host and returns its envelope', async () => {
    const contents = t.window.webContents;
    const answer = await t.invoke({ sender: contents, senderFrame: contents.mainFrame }, 'app.info', {});
    expect(answer).toEqual(ENVELOPE);
    expect(t.dispatch).toHaveBeenCalledExactlyOnceWith('app.info', {});
  });

  it('passes missing arguments as an empty object, for the host to validate', async () => {
    const contents = t.window.webContents;
    await t.invoke({ sender: contents, senderFrame: contents.mainFrame }, 'profiles.list');
    expect(t.dispatch).toHaveBeenCalledExactlyOnceWith('profiles.list', {});
  });

  it('refuses a subframe of the console window with 403, never dispatching', async () => {
    const contents = t.window.webContents;
    const subframe = new electron.FakeFrame('app://console/index.html', contents.mainFrame);
    expect(await t.invoke({ sender: contents, senderFrame: subframe }, 'app.info', {})).toEqual(FORBIDDEN);
    expect(t.dispatch).not.toHaveBeenCalled();
  });

  it('refuses another webContents, even at the app origin', async () => {
    const other = new electron.FakeWebContents();
    other.mainFrame.url = 'app://console/index.html';
    expect(await t.invoke({ sender: other, senderFrame: other.mainFrame }, 'app.info', {})).toEqual(FORBIDDEN);
    expect(t.dispatch).not.toHaveBeenCalled();
  });

  it('refuses a frame of another webContents claiming the window as sender', async () => {
    const other = new electron.FakeWebContents();
    other.mainFrame.url = 'app://console/index.html';
    const answer = await t.invoke({ sender: t.window.webContents, senderFrame: other.mainFrame }, 'app.info', {});
    expect(answer).toEqual(FORBIDDEN);
    expect(t.dispatch).not.toHaveBeenCalled();
  });

  it.each(['https://evil.example/', 'file:///tmp/index.html', 'app://other/index.html', 'about:blank'])(
    'refuses the window top frame once it shows %s',
    async (url) => {
      const contents = t.window.webContents;
      contents.mainFrame.url = url;
      expect(await t.invoke({ sender: contents, senderFrame: contents.mainFrame }, 'app.info', {})).toEqual(FORBIDDEN);
      expect(t.dispatch).not.toHaveBeenCalled();
    },
  );

  it('refuses a frame that is gone (senderFrame null) and a destroyed or closed window', async () => {
    const contents = t.window.webContents;
    expect(await t.invoke({ sender: contents, senderFrame: null }, 'app.info', {})).toEqual(FORBIDDEN);
    t.window.destroyed = true;
    expect(await t.invoke({ sender: contents, senderFrame: contents.mainFrame }, 'app.info', {})).toEqual(FORBIDDEN);
    t.window.destroyed = false;
    t.close();
    expect(await t.invoke({ sender: contents, senderFrame: contents.mainFrame }, 'app.info', {})).toEqual(FORBIDDEN);
    expect(t.dispatch).not.toHaveBeenCalled();
  });

  it('never throws across IPC: a name that is not a string is a 400, a host failure a 500', async () => {
    const contents = t.window.webContents;
    const good = { sender: contents, senderFrame: contents.mainFrame };
    expect(await t.invoke(good, 42, {})).toMatchObject({ ok: false, error: { status: 400 } });
    expect(t.dispatch).not.toHaveBeenCalled();
    t.dispatch.mockRejectedValueOnce(new Error('boom'));
    expect(await t.invoke(good, 'app.info', {})).toEqual({
      ok: false,
      error: { status: 500, message: 'the console host failed; see its log' },
    });
  });

  it('returns the host’s refusal whole, with the field it concerns', async () => {
    const contents = t.window.webContents;
    const refusal = {
      ok: false as const,
      error: {
        status: 422,
        message: 'invalid arguments for api.updateKey: /body/rate_limit_rpm',
        field: 'rate_limit_rpm',
      },
    };
    t.dispatch.mockResolvedValueOnce(refusal as never);
    const answer = await t.invoke({ sender: contents, senderFrame: contents.mainFrame }, 'api.updateKey', {});
    expect(answer).toEqual(refusal);
  });

  it('is one channel, removed by the function registerBridge returns', () => {
    expect([...electron.ipcMain.handlers.keys()]).toEqual(['bridge:call']);
    t.unregister();
    expect(electron.ipcMain.handlers.size).toBe(0);
  });
});
