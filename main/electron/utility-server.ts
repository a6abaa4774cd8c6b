import type { Readable } from 'node:stream';
import { utilityProcess } from 'electron';
import type { ServerExit, ServerProcess, SpawnServer } from '../core/embedded-server.js';

/**
 * The embedded server in an Electron utility process (a Node process Chromium supervises,
 * needing no RunAsNode fuse) instead of a child_process: EmbeddedServer's `spawn` option.
 *
 * utilityProcess.fork takes no signal: kill('SIGTERM') is its graceful kill() (SIGTERM on
 * POSIX, so the server closes its stores; TerminateProcess on Windows), kill('SIGKILL') ends
 * the process outright by its id. Electron ends utility processes with the app by itself.
 */
export function utilityProcessSpawner(serviceName = 'Gateway Console embedded server'): SpawnServer {
  return (launch) => {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(launch.env)) if (value !== undefined) env[name] = value;
    const child = utilityProcess.fork(launch.entry, launch.args, {
      execArgv: launch.execArgv,
      env,
      stdio: 'pipe',
      serviceName,
    });
    // A V8 fatal error; 'exit' always follows and is what the lifecycle hears. Without a listener,
    // the EventEmitter would throw the event in the main process.
    child.on('error', () => undefined);
    const process: ServerProcess = {
      get pid() {
        return child.pid;
      },
      // Node Readable streams at run time; Electron's types name them NodeJS.ReadableStream.
      stdout: child.stdout as Readable | null,
      stderr: child.stderr as Readable | null,
      kill(signal) {
        if (signal === 'SIGKILL' && child.pid !== undefined) {
          try {
            globalThis.process.kill(child.pid, 'SIGKILL');
            return;
          } catch {
            // Already gone, or not ours to signal: fall back to Electron's own kill.
          }
        }
        child.kill();
      },
      onExit(listener) {
        let told = false;
        const tell = (exit: ServerExit) => {
          if (told) return;
          told = true;
          listener(exit);
        };
        child.once('exit', (code) => tell({ code, signal: null }));
      },
    };
    return process;
  };
}
