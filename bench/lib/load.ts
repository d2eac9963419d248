/**
 * Load shapes: sequential requests (latency), a closed loop of N workers for a fixed time (throughput), and
 * a bounded task pool. Every loop is bounded by a count or a deadline.
 */
import { now } from './stats.js';

/** Runs `fn` `count` times one after another; returns each call's latency in ms. */
export async function sequential(count: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    await fn(i);
    latencies.push(now() - t0);
  }
  return latencies;
}

export interface ClosedLoopResult {
  requests: number;
  elapsedMs: number;
  perSecond: number;
  latencies: number[];
}

/**
 * `concurrency` workers each call `fn` back to back until `durationMs` has passed (or `maxRequests` calls
 * were made). Throughput counts completed calls over the whole elapsed time.
 */
export async function closedLoop(opts: {
  concurrency: number;
  durationMs: number;
  maxRequests?: number;
  fn: (i: number) => Promise<void>;
}): Promise<ClosedLoopResult> {
  const { concurrency, durationMs, fn } = opts;
  const maxRequests = opts.maxRequests ?? Number.MAX_SAFE_INTEGER;
  const latencies: number[] = [];
  let issued = 0;
  const start = now();
  const deadline = start + durationMs;
  async function worker(): Promise<void> {
    while (issued < maxRequests && now() < deadline) {
      const i = issued++;
      const t0 = now();
      await fn(i);
      latencies.push(now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = now() - start;
  return { requests: latencies.length, elapsedMs, perSecond: (latencies.length * 1000) / elapsedMs, latencies };
}

/** Runs tasks 0..count-1 with at most `concurrency` in flight; rejects on the first failure. */
export async function pool(count: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  async function worker(): Promise<void> {
    while (!failed && next < count) {
      const i = next++;
      try {
        await fn(i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

export interface FixedRateResult<T> {
  /** Calls made (started). */
  sent: number;
  /** Calls not started because `maxInFlight` were already outstanding at their scheduled time. */
  skipped: number;
  elapsedMs: number;
  /** Per call: its result, latency from its actual start, and latency from its scheduled start. */
  results: Array<{ value: T; ms: number; fromDueMs: number }>;
}

/**
 * Open loop: starts calls at a fixed arrival rate for `durationMs`, whether or not earlier ones have finished
 * (at most `maxInFlight` at once; a call due while that many are outstanding is skipped and counted). Unlike a
 * closed loop, whose N workers measure about N ÷ throughput per call, this measures how long one call takes
 * at that offered load. Each call has two latencies: `ms` from when it was started (what the server and
 * network took) and `fromDueMs` from its scheduled time (adds the load generator's own lateness; no
 * coordinated omission). Arrivals are released on ~1 ms timer ticks (no busy loop, which would take a core
 * from the server on a small machine), so within a tick they go out together.
 */
export async function fixedRate<T>(opts: {
  ratePerSecond: number;
  durationMs: number;
  maxInFlight: number;
  fn: (i: number) => Promise<T>;
}): Promise<FixedRateResult<T>> {
  const { ratePerSecond, durationMs, maxInFlight, fn } = opts;
  const intervalMs = 1000 / ratePerSecond;
  const total = Math.floor((durationMs * ratePerSecond) / 1000);
  const results: Array<{ value: T; ms: number; fromDueMs: number }> = [];
  const pending = new Set<Promise<void>>();
  let next = 0;
  let skipped = 0;
  let failure: unknown;
  const start = now();
  while (next < total && failure === undefined) {
    const t = now();
    while (next < total && start + next * intervalMs <= t) {
      const due = start + next * intervalMs;
      const i = next++;
      if (pending.size >= maxInFlight) {
        skipped++;
        continue;
      }
      const sent = now();
      const p: Promise<void> = fn(i).then(
        (value) => {
          const end = now();
          results.push({ value, ms: end - sent, fromDueMs: end - due });
          pending.delete(p);
        },
        (err: unknown) => {
          failure ??= err;
          pending.delete(p);
        },
      );
      pending.add(p);
    }
    if (next < total) {
      const wait = start + next * intervalMs - now();
      await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.floor(wait))));
    }
  }
  await Promise.all(pending);
  if (failure !== undefined) throw failure;
  return { sent: total - skipped, skipped, elapsedMs: now() - start, results };
}
