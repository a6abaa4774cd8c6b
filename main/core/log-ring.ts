import type { Readable } from 'node:stream';

/** Longest line kept; longer ones are cut, so one runaway line cannot fill the memory. */
const MAX_LINE = 2000;

/**
 * Keeps the last lines of output, dropping any that carries a password: one that looks like
 * it, an account listing after "Sign in with:", or one of the secrets the host was told of.
 */
export class LogRing {
  private readonly lines: string[] = [];
  private readonly secrets = new Set<string>();

  constructor(
    private readonly capacity: number,
    private readonly onLog?: (line: string) => void,
  ) {}

  /** Reads a stream line by line into the ring, the safe lines only. */
  follow(stream: Readable | null): void {
    if (!stream) return;
    stream.setEncoding('utf8');
    let partial = '';
    // After "Sign in with:" the server lists the demo accounts, one indented line each.
    let inCredentials = false;
    const take = (raw: string) => {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (inCredentials && /^\s/.test(line)) return;
      inCredentials = /sign in with:\s*$/i.test(line);
      if (this.isSecret(line)) return;
      this.push(line);
    };
    stream.on('data', (chunk: string) => {
      partial += chunk;
      let newline = partial.indexOf('\n');
      while (newline >= 0) {
        take(partial.slice(0, newline));
        partial = partial.slice(newline + 1);
        newline = partial.indexOf('\n');
      }
      if (partial.length > 64 * 1024) {
        take(partial);
        partial = '';
      }
    });
    stream.on('end', () => {
      if (partial) take(partial);
      partial = '';
    });
    stream.on('error', () => {});
  }

  /** From now on, drops every line that contains `secret` (a password the host learned). */
  hide(secret: string): void {
    if (secret.length > 0) this.secrets.add(secret);
  }

  isSecret(line: string): boolean {
    for (const secret of this.secrets) if (line.includes(secret)) return true;
    // `"password":"…"`, `password=…`, `password: …` in whatever a log line holds.
    return /pass(word|wd|phrase)["']?\s*[:=]/i.test(line);
  }

  push(line: string): void {
    const kept = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line;
    this.lines.push(kept);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
    this.onLog?.(kept);
  }

  clear(): void {
    this.lines.length = 0;
  }

  snapshot(): string[] {
    return [...this.lines];
  }
}
