import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

/** What to run: `execArgv` for the runtime, then `entry`, then `args`. */
export interface ServerLaunch {
  entry: string;
  args: string[];
  execArgv: string[];
  env: NodeJS.ProcessEnv;
}

export interface ServerExit {
  code: number | null;
  signal: string | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

/** The running server as the lifecycle sees it; the spawner adapts its runtime's process to this. */
export interface ServerProcess {
  readonly pid: number | undefined;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
  /** Called once, when the process has ended (after its output, where the runtime can tell) or failed to start. */
  onExit(listener: (exit: ServerExit) => void): void;
  /** Called with each message the server sends its parent (Node's IPC, a utility process's parent port), unchecked. */
  onMessage(listener: (message: unknown) => void): void;
}

/**
 * Starts the server process. The web shell uses the default ({@link spawnWithNode}); the
 * Electron shell adapts `utilityProcess.fork(launch.entry, launch.args, { execArgv:
 * launch.execArgv, env: launch.env, stdio: 'pipe' })`: `kill()` ignores the signal,
 * `onExit` listens for its `exit` event and `onMessage` for its `message` event (what the
 * server posts to `process.parentPort`).
 */
export type SpawnServer = (launch: ServerLaunch) => ServerProcess;

/**
 * Ends the server when the host's end of its stdin pipe closes: the host exited or was
 * killed. SIGTERM lets the server close its stores cleanly. In the main thread only: the
 * server's worker threads inherit its `--import` flags, and a worker's stdin is no pipe.
 */
const PARENT_WATCH =
  'data:text/javascript,' +
  encodeURIComponent(
    "import{isMainThread}from'node:worker_threads';if(isMainThread){process.stdin.on('end',()=>process.kill(process.pid,'SIGTERM'));process.stdin.on('error',()=>{});process.stdin.resume();process.stdin.unref();}",
  );

/**
 * A spawner running the server as a child process of a Node binary (a path, or a name looked
 * up on PATH), watching its stdin to die with the host, with an IPC channel for the server's
 * messages. The Electron shell passes the system Node in development, where its own
 * process.execPath is the Electron binary.
 */
export function nodeSpawner(node: string = process.execPath): SpawnServer {
  return (launch) => {
    const child = spawn(node, [...launch.execArgv, '--import', PARENT_WATCH, launch.entry, ...launch.args], {
      env: launch.env,
      stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
      windowsHide: true,
    });
    // Never written to; kept open so that only the host's death closes it.
    child.stdin?.on('error', () => {});
    return {
      get pid() {
        return child.pid;
      },
      stdout: child.stdout,
      stderr: child.stderr,
      kill: (signal) => {
        child.kill(signal);
      },
      onExit: (listener) => {
        let told = false;
        const tell = (exit: ServerExit) => {
          if (told) return;
          told = true;
          listener(exit);
        };
        // 'close' comes after the output streams have ended, so the last lines are in.
        child.once('close', (code, signal) => tell({ code, signal }));
        child.once('error', (error) => {
          if (child.pid === undefined) tell({ code: null, signal: null, error });
        });
      },
      onMessage: (listener) => {
        child.on('message', (message: unknown) => listener(message));
      },
    };
  };
}

/** The default spawner: this Node binary. */
export const spawnWithNode: SpawnServer = nodeSpawner();
