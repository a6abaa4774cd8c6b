import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import type { ServerExit, ServerProcess } from '../../main/core/server-process.js';
import { nodeSpawner } from '../../main/core/server-process.js';
import { embeddedServerSpawner, utilityProcessSpawner } from '../../main/electron/utility-server.js';

vi.mock('electron', () => import('./fakes/electron.js'));

beforeEach(() => electron.reset());

const launch = {
  entry: '/app/dist/server/cli.js',
  args: ['serve', '--socket', '/data/embedded/control.sock', '--data-dir', '/data/embedded', '--announce'],
  execArgv: ['--import', 'tsx'],
  env: { PATH: '/usr/bin', UNSET: undefined },
};

describe('the utility-process spawner of the embedded server', () => {
  it('forks the entry with its arguments, flags and environment, output piped', () => {
    const server = utilityProcessSpawner('test server')(launch);
    const [child] = electron.utilityProcess.forked;
    expect(child!.modulePath).toBe('/app/dist/server/cli.js');
    expect(child!.args).toEqual(launch.args);
    expect(child!.options).toEqual({
      execArgv: ['--import', 'tsx'],
      env: { PATH: '/usr/bin' },
      stdio: 'pipe',
      serviceName: 'test server',
    });
    expect(server.pid).toBe(4242);
    expect(server.stdout).toBe(child!.stdout);
    expect(server.stderr).toBe(child!.stderr);
  });

  it('reports the exit once, as code and no signal', () => {
    const server = utilityProcessSpawner()(launch);
    const onExit = vi.fn();
    server.onExit(onExit);
    const child = electron.utilityProcess.forked[0]!;
    child.emit('error', 'FatalError', 'somewhere', '{}');
    child.emit('exit', 134);
    child.emit('exit', 0);
    expect(onExit).toHaveBeenCalledExactlyOnceWith({ code: 134, signal: null });
  });

  it('passes on what the server posts to its parent port', () => {
    const server = utilityProcessSpawner()(launch);
    const onMessage = vi.fn();
    server.onMessage(onMessage);
    const ready = {
      kind: 'ready',
      address: 'http://localhost/api',
      socketPath: '/data/embedded/control.sock',
      demo: { seeded: false, account: null },
    };
    electron.utilityProcess.forked[0]!.emit('message', ready);
    expect(onMessage).toHaveBeenCalledExactlyOnceWith(ready);
  });

  it("stops with the utility process's graceful kill for SIGTERM", () => {
    const server = utilityProcessSpawner()(launch);
    server.kill('SIGTERM');
    expect(electron.utilityProcess.forked[0]!.kill).toHaveBeenCalledOnce();
  });

  it('ends the process by its id for SIGKILL, falling back to kill() when it cannot', () => {
    const server = utilityProcessSpawner()(launch);
    const child = electron.utilityProcess.forked[0]!;
    const processKill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    server.kill('SIGKILL');
    expect(processKill).toHaveBeenCalledExactlyOnceWith(4242, 'SIGKILL');
    expect(child.kill).not.toHaveBeenCalled();
    processKill.mockImplementation(() => {
      throw Object.assign(new Error('ESRCH'), { code: 'ESRCH' });
    });
    server.kill('SIGKILL');
    expect(child.kill).toHaveBeenCalledOnce();
    processKill.mockRestore();
  });
});

describe('the system-node spawner of the embedded server (development)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'gc-system-node-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const script = (name: string, source: string) => {
    const path = join(folder, name);
    writeFileSync(path, source);
    return path;
  };
  const output = (stream: Readable | null) => {
    let text = '';
    stream?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    return () => text;
  };
  const exited = (server: ServerProcess) => new Promise<ServerExit>((resolve) => server.onExit(resolve));

  it('runs the entry with the given node, flags, arguments and environment, output piped', async () => {
    const entry = script(
      'echo.mjs',
      'process.stdout.write(JSON.stringify({ args: process.argv.slice(2), execArgv: process.execArgv, env: process.env.GC_TEST }));\n' +
        "process.stderr.write('to stderr\\n');\n",
    );
    const server = nodeSpawner(process.execPath)({
      entry,
      args: ['serve', '--port', '0'],
      execArgv: ['--no-warnings'],
      env: { GC_TEST: 'passed' },
    });
    expect(server.pid).toBeGreaterThan(0);
    const stdout = output(server.stdout);
    const stderr = output(server.stderr);
    expect(await exited(server)).toMatchObject({ code: 0, signal: null });
    const seen = JSON.parse(stdout());
    expect(seen.args).toEqual(['serve', '--port', '0']);
    expect(seen.execArgv[0]).toBe('--no-warnings');
    expect(seen.env).toBe('passed');
    expect(stderr()).toBe('to stderr\n');
    expect(electron.utilityProcess.forked).toHaveLength(0);
  });

  it("hears the server's messages over the IPC channel, which does not keep the server alive", async () => {
    const entry = script(
      'announce.mjs',
      "process.channel.unref();\nprocess.send({ kind: 'ready', pid: process.pid });\n",
    );
    const server = nodeSpawner(process.execPath)({ entry, args: [], execArgv: [], env: {} });
    const message = new Promise<unknown>((resolve) => server.onMessage(resolve));
    expect(await message).toEqual({ kind: 'ready', pid: server.pid });
    expect(await exited(server)).toMatchObject({ code: 0, signal: null });
  });

  it('stops the server with the signal asked for', async () => {
    const entry = script('wait.mjs', "setInterval(() => {}, 1000);\nprocess.stdout.write('up\\n');\n");
    const server = nodeSpawner(process.execPath)({ entry, args: [], execArgv: [], env: {} });
    const exit = exited(server);
    await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
    server.kill('SIGTERM');
    expect(await exit).toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it('reports a node that cannot be started as an exit with its error', async () => {
    const server = nodeSpawner(join(folder, 'no-such-node'))({ entry: 'x.js', args: [], execArgv: [], env: {} });
    const exit = await exited(server);
    expect(exit.code).toBeNull();
    expect(exit.error?.message).toMatch(/ENOENT/);
  });

  it('is the spawner in development, the utility process only once packaged', () => {
    embeddedServerSpawner(true)(launch);
    expect(electron.utilityProcess.forked).toHaveLength(1);
    const server = embeddedServerSpawner(false, join(folder, 'no-such-node'))(launch);
    server.onExit(() => {});
    expect(electron.utilityProcess.forked).toHaveLength(1);
  });
});
