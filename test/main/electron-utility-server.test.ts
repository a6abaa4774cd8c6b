import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as electron from './fakes/electron.js';
import { utilityProcessSpawner } from '../../main/electron/utility-server.js';

vi.mock('electron', () => import('./fakes/electron.js'));

beforeEach(() => electron.reset());

const launch = {
  entry: '/app/dist/server/cli.js',
  args: ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', '/data/embedded'],
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
