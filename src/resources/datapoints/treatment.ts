/**
 * How a query treats points by status (`ignoreBadDataPoints`, `treatUncertainAsBad`): which points are
 * usable values, which are shown, and which stored rollups (built with the default treatment) still apply.
 */
import type { StatusTreatment } from './bucket-walker.js';
import { F, type Summary } from './summary.js';

export function treatmentOf(q: { ignoreBadDataPoints?: boolean; treatUncertainAsBad?: boolean }): StatusTreatment {
  return { ignoreBad: q.ignoreBadDataPoints ?? true, uncertainIsBad: q.treatUncertainAsBad ?? true };
}

/** Whether a point with this code is a usable value. */
export function isUsable(code: number, t: StatusTreatment): boolean {
  const cls = code >>> 30;
  return cls === 0 || (cls === 1 && !t.uncertainIsBad);
}

/** Points a raw query or latest shows: all of them, or only the usable ones when bad points are ignored. */
export function shownBy(t: StatusTreatment): (code: number) => boolean {
  return t.ignoreBad ? (code) => isUsable(code, t) : () => true;
}

/** Whether a stored rollup (Good points usable, the rest left out) gives what this treatment would. */
export function rollupSuits(t: StatusTreatment): (s: Summary) => boolean {
  if (t.ignoreBad && t.uncertainIsBad) return () => true;
  if (t.ignoreBad) return (s) => s[F.countUncertain] === 0;
  return (s) => s[F.countUncertain] === 0 && s[F.countBad] === 0;
}
