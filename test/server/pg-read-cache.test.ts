import { describe, expect, it } from 'vitest';
import { PgReadCache, type ChangeCount } from '../../server/stores/control/postgres/read-cache.js';

/** The PostgreSQL store's cache of hot reads (postgres/read-cache.ts), against a change count the test moves. */

function counter(start: number): { changes: ChangeCount; move: () => void } {
  let count = start;
  const changes = { get: () => Promise.resolve(count), forget: () => undefined } as unknown as ChangeCount;
  return { changes, move: () => (count += 1) };
}

describe('the PostgreSQL read cache', () => {
  it('answers from memory while the count stands, and reads again once it moves', async () => {
    const { changes, move } = counter(1);
    const cache = new PgReadCache<string>(changes);
    let reads = 0;
    const read = async () => `value ${++reads}`;
    expect(await cache.get('k', read)).toBe('value 1');
    expect(await cache.get('k', read)).toBe('value 1');
    move();
    expect(await cache.get('k', read)).toBe('value 2');
    expect(reads).toBe(2);
  });

  it('keeps no answer read under a count that moved while it was read', async () => {
    let count = 1;
    const changes = { get: () => Promise.resolve(count) } as unknown as ChangeCount;
    const cache = new PgReadCache<string>(changes);
    let finishSlow!: (value: string) => void;
    const slow = cache.get('k', () => new Promise<string>((resolve) => (finishSlow = resolve)));
    await new Promise((resolve) => setImmediate(resolve));
    // A change commits; a later caller sees the new count and the new value.
    count = 2;
    expect(await cache.get('k', async () => 'after the change')).toBe('after the change');
    finishSlow('before the change');
    expect(await slow).toBe('before the change');
    // The slow answer, older than the change, was not kept over the newer one.
    expect(await cache.get('k', async () => 'read again')).toBe('after the change');
  });

  it('reads through for a caller whose count is older than one already seen, and keeps the newer answers', async () => {
    let answer = 2;
    const changes = { get: () => Promise.resolve(answer) } as unknown as ChangeCount;
    const cache = new PgReadCache<string>(changes);
    expect(await cache.get('k', async () => 'at 2')).toBe('at 2');
    answer = 1;
    expect(await cache.get('k', async () => 'through')).toBe('through');
    answer = 2;
    expect(await cache.get('k', async () => 'never read')).toBe('at 2');
  });
});
