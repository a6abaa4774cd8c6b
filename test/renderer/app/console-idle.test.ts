import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { counted, whenIdle } from '../../../renderer/src/console-idle.js';

/** A bridge call the test answers when it likes. */
function pendingCall() {
  let answer: () => void = () => {};
  const done = counted(() => new Promise<void>((resolve) => (answer = resolve)));
  return { answer, done };
}

describe('work that waits for the console to idle', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'requestIdleCallback'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs only once every bridge call is answered and a pause follows', async () => {
    const run = vi.fn();
    const first = pendingCall();
    const second = pendingCall();
    whenIdle(run);
    await vi.advanceTimersByTimeAsync(1000);
    expect(run).not.toHaveBeenCalled();

    first.answer();
    await first.done;
    await vi.advanceTimersByTimeAsync(1000);
    expect(run).not.toHaveBeenCalled();

    second.answer();
    await second.done;
    // A call that follows at once (the next of a sequence) holds it back again.
    await vi.advanceTimersByTimeAsync(50);
    const third = pendingCall();
    await vi.advanceTimersByTimeAsync(500);
    expect(run).not.toHaveBeenCalled();
    third.answer();
    await third.done;
    await vi.advanceTimersByTimeAsync(2000);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('runs after a few seconds however busy the console stays, and not once cancelled', async () => {
    const run = vi.fn();
    const cancelled = vi.fn();
    const busy = pendingCall();
    whenIdle(run);
    whenIdle(cancelled)();
    await vi.advanceTimersByTimeAsync(4000);
    expect(run).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1500);
    expect(run).toHaveBeenCalledTimes(1);
    busy.answer();
    await busy.done;
    await vi.advanceTimersByTimeAsync(6000);
    expect(run).toHaveBeenCalledTimes(1);
    expect(cancelled).not.toHaveBeenCalled();
  });
});
