/**
 * What each aggregate is, given a bucket's summary (see `bucket-walker.ts` for which stretches between points
 * a bucket takes, and docs/datapoints.md for the rules in full). Values are over the usable points (Good,
 * and Uncertain unless it is treated as Bad); the interpolated function joins consecutive chain points
 * linearly, or holds each value until the next point on step series.
 *
 *   count, sum, min, max                 over the usable points in the bucket
 *   maxDatapoint, minDatapoint           the first point holding the max (min), with its timestamp
 *   discreteVariance                     variance of those values (population: divided by their count)
 *   average                              integral of f over the bucket / length where f is defined
 *   continuousVariance                   the same average of (f - average)^2
 *   totalVariation                       total variation of f over the bucket, without gap filling of f
 *                                        through the usable points alone (step series: the jumps at points
 *                                        in the bucket)
 *   interpolation                        f at the bucket start, likewise (step series: the step
 *                                        interpolation)
 *   stepInterpolation                    the value of the last chain point at or before the bucket start,
 *                                        when it is usable (in an empty bucket: only the first after a
 *                                        bucket with a chain point, or the query's first)
 *   countGood, countUncertain, countBad  points of each class in the bucket, whatever the treatment
 *   durationGood, ...Uncertain, ...Bad   time in the bucket after a point of that class and before the next
 *                                        point, whatever the treatment
 */
import { A, type Wants } from './bucket-walker.js';
import type { AggregateName } from './schema.js';
import { statusOutput } from './status-codes.js';
import { F } from './summary.js';

export type AggregateValue = number | { timestamp: number; value: number; status?: { code: number; symbol: string } };

const VALUES = new Set<AggregateName>(['count', 'sum', 'min', 'max', 'minDatapoint', 'maxDatapoint', 'discreteVariance']);
const MOMENTS = new Set<AggregateName>(['average', 'continuousVariance', 'totalVariation']);
const COUNTS = new Set<AggregateName>(['countGood', 'countUncertain', 'countBad']);
const DURATIONS = new Set<AggregateName>(['durationGood', 'durationUncertain', 'durationBad']);

export function wantsOf(aggregates: readonly AggregateName[]): Wants {
  return {
    values: aggregates.some((a) => VALUES.has(a)),
    counts: aggregates.some((a) => COUNTS.has(a)),
    moments: aggregates.some((a) => MOMENTS.has(a)),
    interpolation: aggregates.includes('interpolation'),
    stepInterpolation: aggregates.includes('stepInterpolation'),
    durations: aggregates.some((a) => DURATIONS.has(a)),
  };
}

function datapoint(ts: number, value: number, code: number, includeStatus: boolean): AggregateValue {
  const status = includeStatus ? statusOutput(code) : undefined;
  return status ? { timestamp: ts, value, status } : { timestamp: ts, value };
}

/** The value of one aggregate in a bucket, or undefined where it is not defined. */
export function aggregateValue(name: AggregateName, a: Float64Array, isStep: boolean, includeStatus: boolean): AggregateValue | undefined {
  const n = a[F.n];
  const len = a[F.len];
  switch (name) {
    case 'count':
      return n > 0 ? n : undefined;
    case 'sum':
      return n > 0 ? a[F.sum] : undefined;
    case 'min':
      return n > 0 ? a[F.min] : undefined;
    case 'max':
      return n > 0 ? a[F.max] : undefined;
    case 'minDatapoint':
      return n > 0 ? datapoint(a[F.minTs], a[F.min], a[F.minCode], includeStatus) : undefined;
    case 'maxDatapoint':
      return n > 0 ? datapoint(a[F.maxTs], a[F.max], a[F.maxCode], includeStatus) : undefined;
    case 'discreteVariance':
      return n > 0 ? a[F.m2] / n : undefined;
    case 'average':
      if (len > 0) return a[F.ref] + a[isStep ? F.step1 : F.linear1] / len;
      return n > 0 ? a[F.sum] / n : undefined;
    case 'continuousVariance': {
      if (len > 0) {
        const m1 = a[isStep ? F.step1 : F.linear1] / len;
        return Math.max(0, a[isStep ? F.step2 : F.linear2] / len - m1 * m1);
      }
      return n > 0 ? 0 : undefined;
    }
    case 'totalVariation':
      return n > 0 || a[A.usableLength] > 0 ? a[isStep ? F.variationStep : F.variationLinear] : undefined;
    case 'interpolation':
      return a[A.interpolation] === a[A.interpolation] ? a[A.interpolation] : undefined;
    case 'stepInterpolation':
      return a[A.stepInterpolation] === a[A.stepInterpolation] ? a[A.stepInterpolation] : undefined;
    case 'countGood':
    case 'countUncertain':
    case 'countBad': {
      const total = a[F.countGood] + a[F.countUncertain] + a[F.countBad];
      if (total === 0) return undefined;
      return a[name === 'countGood' ? F.countGood : name === 'countUncertain' ? F.countUncertain : F.countBad];
    }
    case 'durationGood':
      return a[A.durationDefined] === 1 ? a[F.durationGood] : undefined;
    case 'durationUncertain':
      return a[A.durationDefined] === 1 ? a[F.durationUncertain] : undefined;
    case 'durationBad':
      return a[A.durationDefined] === 1 ? a[F.durationBad] : undefined;
  }
}
