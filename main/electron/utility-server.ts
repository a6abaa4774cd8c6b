import type { Readable } from 'node:stream';
import { utilityProcess } from 'electron';
import { nodeSpawner, type ServerExit, type ServerProcess, type SpawnServer } from '../core/server-process.js';

/**
 * How the Electron shell runs the embedded server.
 *
 * - Packaged (`app.isPackaged`): in a utility process, with Electron's own Node. better-sqlite3
 *   is a native addon built for one ABI, and electron-builder rebuilds it for Electron's
 *   (npmRebuild in electron-builder.yml).
 * - In development: with the system `node`, as a child process, like the web shell. The
 *   checkout's better-sqlite3 is built for Node's ABI (by `npm ci`, for the tests and the web
 *   shell), so Electron's Node could not load it; rebuilding it for Electron would break it
 *   for everything else. `node` is GC_NODE when set (`npm start` sets it to the Node that
 *   runs it), else the first `node` on PATH.
 */
export function embeddedServerSpawner(packaged: boolean, node: string = process.env.GC_NODE || 'node'): SpawnServer {
  return packaged ? utilityProcessSpawner() : nodeSpawner(node);
}

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
      onMessage(listener) {
        // What the server posts to process.parentPort, structured-cloned; checked by the lifecycle.
        child.on('message', (message: unknown) => listener(message));
      },
    };
    return process;
  };
}
