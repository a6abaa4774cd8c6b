import { useEffect, useState } from 'react';

/**
 * A throttled action's wait (the server's `Retry-After`), counted down once a second so that a
 * form can say how long is left and keep its button off until then.
 */
export function useRetryCountdown(): { secondsLeft: number; waitFor(seconds: number): void } {
  const [until, setUntil] = useState(0);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until <= now) return;
    const timer = setTimeout(() => setNow(Date.now()), Math.min(1000, until - now));
    return () => clearTimeout(timer);
  }, [until, now]);
  const waitFor = (seconds: number) => {
    const start = Date.now();
    setNow(start);
    setUntil(start + seconds * 1000);
  };
  return { secondsLeft: Math.max(0, Math.ceil((until - now) / 1000)), waitFor };
}
