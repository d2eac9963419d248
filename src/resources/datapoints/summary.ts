/**
 * A summary of the points of one series inside a window: what every aggregate needs, in a form that
 * combines. Summaries of adjacent windows fold into the summary of their union (the walker in
 * `bucket-walker.ts` does the folding, joining the windows across the gap between one window's last point
 * and the next one's first), so a day's aggregates follow from 24 hourly rollups instead of 86,400 points.
 *
 * Everything interior to the window is kept: counts per status class, the moments of the usable values
 * (count, sum, sum of squared deviations, min and max with their timestamps), the integral of the
 * interpolated function over the stretches between points inside the window, in both interpolation styles
 * (linear and step, so changing a series' `isStep` needs no recomputation), relative to a reference value
 * for numeric stability, and the time spent in each status class. The first and last points are kept so
 * the stretches across window edges can be added when windows are joined.
 *
 * Stored rollups are built with the default status treatment (only Good points are usable; Bad and
 * Uncertain ones are left out of values but counted); a query with other treatment uses a rollup only when
 * the window holds no point the treatment would see differently.
 */
export const F = {
  /** Points per status class: Good, Uncertain, Bad. */
  countGood: 0,
  countUncertain: 1,
  countBad: 2,
  /** Usable points: count, sum, sum of squared deviations from their mean. */
  n: 3,
  sum: 4,
  m2: 5,
  min: 6,
  minTs: 7,
  minCode: 8,
  max: 9,
  maxTs: 10,
  maxCode: 11,
  /** Length (ms) of the window over which the interpolated function is defined. */
  len: 12,
  /** Reference value r; the integrals below are of (f - r) and (f - r)^2. */
  ref: 13,
  linear1: 14,
  linear2: 15,
  step1: 16,
  step2: 17,
  /** Total variation under linear and under step interpolation. */
  variationLinear: 18,
  variationStep: 19,
  /** Time (ms) spent after a Good, Uncertain or Bad point before the next point. */
  durationGood: 20,
  durationUncertain: 21,
  durationBad: 22,
  /** First and last point of any status: timestamp and class. */
  firstAnyTs: 23,
  firstAnyClass: 24,
  lastAnyTs: 25,
  lastAnyClass: 26,
  /** First and last point of the interpolation chain: timestamp, value, usable (1) or not (0). */
  firstTs: 27,
  firstValue: 28,
  firstUsable: 29,
  lastTs: 30,
  lastValue: 31,
  lastUsable: 32,
} as const;

export const SUMMARY_FIELDS = 33;

export type Summary = Float64Array;

export const totalCount = (s: Summary) => s[F.countGood] + s[F.countUncertain] + s[F.countBad];

/**
 * The summary of points ts[i..j) that are all Good with finite values, in one tight pass: the shape of
 * nearly all sampled data, so ingest and queries over raw points take this path instead of point by point.
 */
export function summarizeGoodRun(ts: Float64Array, v: Float64Array, i: number, j: number): Summary {
  const s = new Float64Array(SUMMARY_FIELDS);
  const n = j - i;
  const ref = v[i];
  let sum = 0;
  let min = v[i];
  let max = v[i];
  let minTs = ts[i];
  let maxTs = ts[i];
  for (let k = i; k < j; k++) {
    const x = v[k];
    sum += x;
    if (x < min) {
      min = x;
      minTs = ts[k];
    }
    if (x > max) {
      max = x;
      maxTs = ts[k];
    }
  }
  const mean = sum / n;
  let m2 = 0;
  let linear1 = 0;
  let linear2 = 0;
  let step1 = 0;
  let step2 = 0;
  let variation = 0;
  let a = v[i] - ref;
  m2 += (v[i] - mean) * (v[i] - mean);
  for (let k = i + 1; k < j; k++) {
    const d = v[k] - mean;
    m2 += d * d;
    const w = ts[k] - ts[k - 1];
    const b = v[k] - ref;
    linear1 += (w * (a + b)) / 2;
    linear2 += (w * (a * a + a * b + b * b)) / 3;
    step1 += w * a;
    step2 += w * a * a;
    variation += Math.abs(b - a);
    a = b;
  }
  const len = ts[j - 1] - ts[i];
  s[F.countGood] = n;
  s[F.n] = n;
  s[F.sum] = sum;
  s[F.m2] = m2;
  s[F.min] = min;
  s[F.minTs] = minTs;
  s[F.max] = max;
  s[F.maxTs] = maxTs;
  s[F.len] = len;
  s[F.ref] = ref;
  s[F.linear1] = linear1;
  s[F.linear2] = linear2;
  s[F.step1] = step1;
  s[F.step2] = step2;
  s[F.variationLinear] = variation;
  s[F.variationStep] = variation;
  s[F.durationGood] = len;
  s[F.firstAnyTs] = ts[i];
  s[F.lastAnyTs] = ts[j - 1];
  s[F.firstTs] = ts[i];
  s[F.firstValue] = v[i];
  s[F.firstUsable] = 1;
  s[F.lastTs] = ts[j - 1];
  s[F.lastValue] = v[j - 1];
  s[F.lastUsable] = 1;
  return s;
}
