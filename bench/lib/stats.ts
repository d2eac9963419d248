/**
 * Timing and summary statistics. Latencies are in milliseconds; percentiles use the nearest-rank method.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

export const now = (): number => performance.now();

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

export function summarize(latencies: readonly number[]): LatencySummary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

/** Runs `fn` once and returns its result and the elapsed milliseconds. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t0 = now();
  const value = await fn();
  return { value, ms: now() - t0 };
}

export function fmtInt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(1)} ms`;
}

export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return 'n/a';
  return r < 10 ? `${r.toFixed(2)}×` : `${r.toFixed(0)}×`;
}

/** CPU time (user + system) this process has used, in ms. */
export function cpuNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** A process's event-loop delay over a window (ms, beyond the sampling interval). */
export interface LoopDelaySummary {
  p50: number;
  p99: number;
  max: number;
}

/** Starts recording this process's event-loop delay; the returned function stops it and summarizes. */
export function recordLoopDelay(): () => LoopDelaySummary {
  const resolutionMs = 1;
  const h = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  return () => {
    h.disable();
    // The histogram holds the time between its timer's runs, the sampling interval included: the delay is the rest.
    const ms = (ns: number) => Math.max(0, ns / 1e6 - resolutionMs);
    return { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
  };
}
