import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Clock ticks a second, as /proc counts CPU time. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

interface Stat {
  ppid: number;
  /** utime + stime, in ticks. */
  own: number;
  /** cutime + cstime: children that have ended and been waited for. */
  reaped: number;
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const field = (n: number) => Number(fields[n - 3]);
    return { ppid: field(4), own: field(14) + field(15), reaped: field(16) + field(17) };
  } catch {
    return null;
  }
}

/** CPU milliseconds a process has used so far, on Linux; null elsewhere or when it is gone. */
export function cpuMs(pid: number): number | null {
  const found = stat(pid);
  return found && (found.own * 1000) / TICKS;
}

/**
 * CPU milliseconds a process and all its children have used so far: the ended ones through its
 * own counters, the running ones each (a PostgreSQL postmaster and its backends).
 */
export function treeCpuMs(pid: number): number | null {
  // The children first, the parent's account of the ended ones last: a child that ends between
  // the two is counted twice rather than not at all, so the figure errs high, never low.
  let ticks = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const child = stat(Number(name));
    if (child?.ppid === pid) ticks += child.own;
  }
  const parent = stat(pid);
  if (!parent) return null;
  return ((ticks + parent.own + parent.reaped) * 1000) / TICKS;
}
