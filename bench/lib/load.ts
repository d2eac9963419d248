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
