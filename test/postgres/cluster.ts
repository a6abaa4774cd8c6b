import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway PostgreSQL cluster for a test run: made in a temporary folder, on a free loopback
 * port, with no password (trust) and fsync off (nothing here outlives the run), stopped and
 * removed at the end. PostgreSQL refuses to run as root: as root, it runs as the `postgres` user
 * Debian's package makes.
 */
export interface Cluster {
  /** postgres://… of the cluster's `postgres` database, as its superuser. */
  url: string;
  /** The postmaster's process id: its children are the cluster's backends (the benchmark sums their CPU). */
  pid(): number;
  stop(): void;
}

/** The newest installed server's programs (Debian keeps them out of PATH, in /usr/lib/postgresql/<major>/bin), or null. */
export function serverPrograms(): string | null {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length > 0) return join(root, majors[0]!, 'bin');
  const found = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  return found.status === 0 ? join(found.stdout.trim(), '..') : null;
}

/** Why a PostgreSQL test cannot run here. */
export const NOT_INSTALLED = 'PostgreSQL is not installed: its tests need the server (apt-get install -y postgresql).';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * `durable`: fsync and synchronous commits on, as an operator's database has them (the benchmark);
 * tests leave them off.
 */
export async function startCluster(options: { durable?: boolean } = {}): Promise<Cluster> {
  const bin = serverPrograms();
  if (bin === null) throw new Error(NOT_INSTALLED);
  const folder = mkdtempSync(join(tmpdir(), 'gc-postgres-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // The folder is made by root; the server's own user must own it.
    execFileSync('chown', ['postgres:postgres', folder]);
    chmodSync(folder, 0o700);
  }
  const run = (program: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, program), ...args], { stdio: 'pipe' })
      : execFileSync(join(bin, program), args, { stdio: 'pipe' });
  const data = join(folder, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const settings = [
    `-p ${port}`,
    `-k ${folder}`,
    '-c listen_addresses=127.0.0.1',
    ...(options.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    '-c max_connections=200',
  ].join(' ');
  run('pg_ctl', ['-D', data, '-o', settings, '-l', join(folder, 'server.log'), '-w', 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    pid: () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  };
}
