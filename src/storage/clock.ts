/**
 * Time for the mechanisms that wait (change waiters' deadlines, job leases, backoff, schedules): the time now
 * and timers at a time, behind one interface, so that tests move time by hand instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once the clock reaches `at` (soon, when it already has); the result cancels the call. */
  at(at: number, fn: () => void): () => void;
}

/** setTimeout's longest delay; a later time is reached in steps. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * A clock reading `now`, with real timers that look at `now` again when they fire. The timers do not keep
 * the process alive: what waits on them (a request, a job runner) belongs to a server that does.
 */
export function clockOf(now: () => number): Clock {
  return {
    now,
    at(at, fn) {
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        const delay = at - now();
        if (delay <= 0) return fn();
        timer = setTimeout(arm, Math.min(delay, MAX_DELAY));
        timer.unref();
      };
      timer = setTimeout(arm, 0);
      timer.unref();
      return () => clearTimeout(timer);
    },
  };
}

export const systemClock: Clock = clockOf(() => Date.now());
