/**
 * Folds a time-ordered stream of points and summaries (rollups) into per-bucket summaries, and hands each
 * finished bucket to a sink in bucket order. The same fold builds stored rollups (one bucket, the cell) and
 * answers aggregate queries (the query's buckets).
 *
 * The interpolated function joins consecutive points of the "chain": the usable points, or with
 * `ignoreBadDataPoints: false` every point, where the stretch after an unusable point is undefined and the
 * stretch from a usable point to an unusable one holds the usable value. A stretch between two points in one
 * bucket always counts. A stretch across bucket edges counts in the buckets at its ends (the ones that hold
 * its points) on a step series always, on a continuous series only when its points are less than an hour
 * apart; with gap filling (`fill`) wherever its points are at most the fill limit apart, in the empty buckets
 * it crosses too. Without gap filling an empty bucket gets only the step interpolation, and only the first
 * one after a bucket with a chain point (or the query's first bucket). After the series' last point a step
 * series holds its value to the end of that point's bucket, and with gap filling every series holds it for
 * the fill limit. Time per status class (the duration aggregates) follows the same rules over the points of
 * every status.
 *
 * Without gap filling, totalVariation and a continuous series' interpolation follow the function through the
 * usable points alone, whatever `ignoreBadDataPoints` says: with `ignoreBadDataPoints: false` the walker
 * follows the usable points as a second chain, and a stretch between two usable points with unusable ones
 * between them gives those two aggregates only.
 *
 * A bucket is final once nothing later in the stream can add to it: the next chain point (and the next usable
 * point) closes the stretches that reach back into earlier buckets. Buckets are emitted while fewer than
 * `limit` have been; the next bucket that would be emitted becomes `cursorBucket` and the walk is `done`.
 *
 * Buckets after an open stretch wait for it to close, since buckets are emitted in order: a long run of
 * points outside the chain (Bad points with `ignoreBadDataPoints`) opens a bucket per point while the last
 * chain point's bucket stays open. So that they stay few whatever the run's length, the waiting buckets
 * that show nothing the query asks for and hold nothing a stretch reads are let go (one made again later
 * starts the same), and once more buckets that will be emitted wait than the page has room for, the page
 * ends after the last of them that fits (see `compact`).
 */
import type { BucketGrid } from './bucket-grid.js';
import { F, summarizeGoodRun, SUMMARY_FIELDS, type Summary } from './summary.js';

/** Per-bucket state beyond the summary fields. */
export const A = {
  interpolation: SUMMARY_FIELDS,
  stepInterpolation: SUMMARY_FIELDS + 1,
  durationDefined: SUMMARY_FIELDS + 2,
  /** Length (ms) over which the function through the usable points is defined (where totalVariation is). */
  usableLength: SUMMARY_FIELDS + 3,
} as const;
const ACC_FIELDS = SUMMARY_FIELDS + 4;

export interface StatusTreatment {
  /** Leave Bad (and, below, Uncertain-as-Bad) points out of the interpolation chain altogether. */
  ignoreBad: boolean;
  uncertainIsBad: boolean;
}

/** Which families of aggregates are asked for; a bucket is emitted when one of them is defined in it. */
export interface Wants {
  values: boolean;
  counts: boolean;
  moments: boolean;
  interpolation: boolean;
  stepInterpolation: boolean;
  durations: boolean;
}

export const WANTS_ALL: Wants = { values: true, counts: true, moments: true, interpolation: true, stepInterpolation: true, durations: true };
export const DEFAULT_TREATMENT: StatusTreatment = { ignoreBad: true, uncertainIsBad: true };

/** Points of a continuous series this far apart or further are not joined across a bucket edge. */
const GAP = 3_600_000;

/**
 * What a stretch gives the buckets it counts in: INTEGRAL, the function of average and continuousVariance,
 * and the step interpolation (a step series' interpolation too); USABLE, the function through the usable
 * points, for totalVariation and a continuous series' interpolation. A stretch between two usable points
 * that are neighbours in the chain gives both.
 */
const INTEGRAL = 1;
const USABLE = 2;
const BOTH = INTEGRAL | USABLE;

export interface WalkerOptions {
  isStep: boolean;
  treatment: StatusTreatment;
  wants: Wants;
  /** Gap filling: the longest gap (ms) between points the function is defined across, and how long it holds after the last one. */
  fill?: number;
  /** Buckets to emit before stopping. */
  limit: number;
  /** The grid's first bucket continues a page of the same query (a cursor): it is not the query's first. */
  resumed?: boolean;
  emit(k: number, acc: Float64Array): void;
}

/** What the stream knows of the series after its last item: that no more points (of the chain, of any status) follow. */
export interface SeriesEnd {
  chain: boolean;
  any: boolean;
}

interface Open {
  k: number;
  acc: Float64Array;
}

/** Clears a bucket accumulator (new or reused) to the state of an empty bucket. */
function resetAcc(a: Float64Array): Float64Array {
  a.fill(0);
  a[F.min] = Infinity;
  a[F.max] = -Infinity;
  a[F.minTs] = NaN;
  a[F.maxTs] = NaN;
  a[F.ref] = NaN;
  a[F.firstAnyTs] = NaN;
  a[F.lastAnyTs] = NaN;
  a[F.firstTs] = NaN;
  a[F.lastTs] = NaN;
  a[A.interpolation] = NaN;
  a[A.stepInterpolation] = NaN;
  return a;
}

export class BucketWalker {
  done = false;
  /** Points, runs and summaries fed so far. */
  items = 0;
  /** The first bucket left for the next page, when the walk stopped at its limit. */
  cursorBucket: number | undefined;
  /** Whether the usable points are followed as a chain of their own (the stream must give the usable points just outside the grid). */
  readonly followsUsable: boolean;

  private readonly K: number;
  private readonly chainGaps: boolean;
  private readonly open: Open[] = [];
  /** Accumulators of emitted buckets, for reuse (the sink reads a bucket during `emit` only). */
  private readonly free: Float64Array[] = [];
  private head = 0;
  private emitted = 0;
  /** Buckets from here on are beyond this page (too many buckets were already pending). */
  private capped = Infinity;
  private lastItemK = -Infinity;
  private lastItemTs = -Infinity;
  /** Buckets before this one are emitted or dropped: nothing may open them again. */
  private settled = -Infinity;
  /** Buckets waiting to be emitted at which they are compacted next. */
  private compactAt: number;

  private curK = NaN;
  private curStart = 0;
  private curEnd = 0;

  private prevAnyTs = NaN;
  private prevAnyClass = 0;
  private prevAnyK = 0;
  private prevTs = NaN;
  private prevValue = 0;
  private prevUsable = false;
  private prevK = 0;
  private prevUsableTs = NaN;
  private prevUsableValue = 0;
  private prevUsableK = 0;

  constructor(
    private readonly grid: BucketGrid,
    private readonly o: WalkerOptions,
  ) {
    this.K = grid.count;
    this.chainGaps = o.wants.moments || o.wants.interpolation || o.wants.stepInterpolation;
    // With every point in the chain, two usable points can have unusable ones between them.
    this.followsUsable = o.fill === undefined && !o.treatment.ignoreBad && (o.wants.moments || (o.wants.interpolation && !o.isStep));
    this.compactAt = o.limit + COMPACT_SLACK;
  }

  private bucketOf(t: number): number {
    if (t >= this.curStart && t < this.curEnd) return this.curK;
    const k = this.grid.indexOf(t);
    this.curK = k;
    this.curStart = this.grid.start(k);
    this.curEnd = this.grid.start(k + 1);
    return k;
  }

  /** The accumulator of bucket k, created on first use; null when k is out of range or beyond this page. */
  private acc(k: number, capping: boolean): Float64Array | null {
    if (k < this.settled || k < 0 || k >= this.K || k >= this.capped) return null;
    const open = this.open;
    const last = open.length - 1;
    if (last >= this.head && open[last].k === k) return open[last].acc;
    let lo = this.head;
    let hi = open.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (open[mid].k < k) lo = mid + 1;
      else hi = mid;
    }
    if (lo < open.length && open[lo].k === k) return open[lo].acc;
    // Only the open buckets before k count: a later one (a point ahead of a stretch still being spread) is
    // past the cap once it is set, and counting it would end the page short of the limit.
    if (capping && this.emitted + (lo - this.head) >= this.o.limit + 1) {
      this.capped = k;
      return null;
    }
    const acc = resetAcc(this.free.pop() ?? new Float64Array(ACC_FIELDS));
    open.splice(lo, 0, { k, acc });
    return acc;
  }

  /**
   * The stretches that end at a chain point (ts, v) in bucket k: from the previous chain point, and from the
   * previous usable point where unusable points lie between them.
   */
  private join(ts: number, v: number, usable: boolean, k: number): void {
    if (this.chainGaps && this.prevTs === this.prevTs && this.prevUsable) {
      this.spread(this.prevTs, this.prevValue, this.prevK, ts, v, usable, k, usable || !this.followsUsable ? BOTH : INTEGRAL);
    } else if (usable && this.followsUsable && this.prevUsableTs === this.prevUsableTs) {
      this.spread(this.prevUsableTs, this.prevUsableValue, this.prevUsableK, ts, v, true, k, USABLE);
    }
  }

  point(ts: number, v: number, code: number): void {
    if (this.done) return;
    this.items++;
    const cls = code >>> 30;
    const usable = cls === 0 || (cls === 1 && !this.o.treatment.uncertainIsBad);
    const inChain = usable || !this.o.treatment.ignoreBad;
    const k = this.bucketOf(ts);
    const start = this.curStart;
    if (this.o.wants.durations && this.prevAnyTs === this.prevAnyTs) this.spreadDuration(this.prevAnyTs, this.prevAnyClass, this.prevAnyK, ts, k);
    if (inChain) this.join(ts, v, usable, k);
    const a = this.acc(k, false);
    if (a) {
      a[cls]++;
      if (a[F.firstAnyTs] !== a[F.firstAnyTs]) {
        a[F.firstAnyTs] = ts;
        a[F.firstAnyClass] = cls;
      }
      a[F.lastAnyTs] = ts;
      a[F.lastAnyClass] = cls;
      a[A.durationDefined] = 1;
      if (usable) {
        const n = a[F.n];
        if (n === 0) {
          a[F.n] = 1;
          a[F.sum] = v;
        } else {
          const mean = a[F.sum] / n;
          a[F.n] = n + 1;
          a[F.sum] += v;
          a[F.m2] += (v - mean) * (v - a[F.sum] / (n + 1));
        }
        if (v < a[F.min]) {
          a[F.min] = v;
          a[F.minTs] = ts;
          a[F.minCode] = code;
        }
        if (v > a[F.max]) {
          a[F.max] = v;
          a[F.maxTs] = ts;
          a[F.maxCode] = code;
        }
        if (ts === start) {
          a[A.interpolation] = v;
          a[A.stepInterpolation] = v;
        }
      }
      if (inChain) {
        if (a[F.firstTs] !== a[F.firstTs]) {
          a[F.firstTs] = ts;
          a[F.firstValue] = v;
          a[F.firstUsable] = usable ? 1 : 0;
        }
        a[F.lastTs] = ts;
        a[F.lastValue] = v;
        a[F.lastUsable] = usable ? 1 : 0;
      }
    }
    this.prevAnyTs = ts;
    this.prevAnyClass = cls;
    this.prevAnyK = k;
    if (inChain) {
      this.prevTs = ts;
      this.prevValue = v;
      this.prevUsable = usable;
      this.prevK = k;
    }
    if (usable) {
      this.prevUsableTs = ts;
      this.prevUsableValue = v;
      this.prevUsableK = k;
    }
    this.lastItemK = k;
    this.lastItemTs = ts;
    this.flush();
  }

  /** Adds points ts[i..j) that are all Good with finite values: per bucket, as a summary of the run. */
  goodRun(ts: Float64Array, v: Float64Array, i: number, j: number): void {
    while (i < j && !this.done) {
      this.bucketOf(ts[i]);
      const end = this.curEnd;
      let m = i + 1;
      if (ts[j - 1] < end) m = j;
      else while (m < j && ts[m] < end) m++;
      if (this.o.fill !== undefined) m = gapEnd(ts, i, m, this.o.fill);
      if (m - i < 3) for (let k = i; k < m; k++) this.point(ts[k], v[k], 0);
      else this.summary(summarizeGoodRun(ts, v, i, m));
      i = m;
    }
  }

  /**
   * Adds a stored summary that lies inside one bucket (the caller checked it suits the treatment: its chain
   * points are all usable).
   */
  summary(s: Summary): void {
    if (this.done) return;
    this.items++;
    const firstAny = s[F.firstAnyTs];
    const k = this.bucketOf(firstAny);
    const start = this.curStart;
    const hasChain = s[F.firstTs] === s[F.firstTs];
    if (this.o.wants.durations && this.prevAnyTs === this.prevAnyTs) this.spreadDuration(this.prevAnyTs, this.prevAnyClass, this.prevAnyK, firstAny, k);
    if (hasChain) this.join(s[F.firstTs], s[F.firstValue], s[F.firstUsable] === 1, k);
    const a = this.acc(k, false);
    if (a) {
      a[F.countGood] += s[F.countGood];
      a[F.countUncertain] += s[F.countUncertain];
      a[F.countBad] += s[F.countBad];
      if (a[F.firstAnyTs] !== a[F.firstAnyTs]) {
        a[F.firstAnyTs] = firstAny;
        a[F.firstAnyClass] = s[F.firstAnyClass];
      }
      a[F.lastAnyTs] = s[F.lastAnyTs];
      a[F.lastAnyClass] = s[F.lastAnyClass];
      a[A.durationDefined] = 1;
      a[F.durationGood] += s[F.durationGood];
      a[F.durationUncertain] += s[F.durationUncertain];
      a[F.durationBad] += s[F.durationBad];
      const nb = s[F.n];
      if (nb > 0) {
        const na = a[F.n];
        if (na === 0) {
          a[F.n] = nb;
          a[F.sum] = s[F.sum];
          a[F.m2] = s[F.m2];
        } else {
          const d = s[F.sum] / nb - a[F.sum] / na;
          a[F.m2] += s[F.m2] + (d * d * na * nb) / (na + nb);
          a[F.n] = na + nb;
          a[F.sum] += s[F.sum];
        }
        if (s[F.min] < a[F.min]) {
          a[F.min] = s[F.min];
          a[F.minTs] = s[F.minTs];
          a[F.minCode] = s[F.minCode];
        }
        if (s[F.max] > a[F.max]) {
          a[F.max] = s[F.max];
          a[F.maxTs] = s[F.maxTs];
          a[F.maxCode] = s[F.maxCode];
        }
      }
      const len = s[F.len];
      if (len > 0) {
        if (a[F.ref] !== a[F.ref]) a[F.ref] = s[F.ref];
        const d = s[F.ref] - a[F.ref];
        a[F.linear2] += s[F.linear2] + 2 * d * s[F.linear1] + d * d * len;
        a[F.linear1] += s[F.linear1] + d * len;
        a[F.step2] += s[F.step2] + 2 * d * s[F.step1] + d * d * len;
        a[F.step1] += s[F.step1] + d * len;
        a[F.len] += len;
        a[A.usableLength] += len;
      }
      a[F.variationLinear] += s[F.variationLinear];
      a[F.variationStep] += s[F.variationStep];
      if (hasChain) {
        if (s[F.firstTs] === start && s[F.firstUsable] === 1) {
          a[A.interpolation] = s[F.firstValue];
          a[A.stepInterpolation] = s[F.firstValue];
        }
        if (a[F.firstTs] !== a[F.firstTs]) {
          a[F.firstTs] = s[F.firstTs];
          a[F.firstValue] = s[F.firstValue];
          a[F.firstUsable] = s[F.firstUsable];
        }
        a[F.lastTs] = s[F.lastTs];
        a[F.lastValue] = s[F.lastValue];
        a[F.lastUsable] = s[F.lastUsable];
      }
    }
    this.prevAnyTs = s[F.lastAnyTs];
    this.prevAnyClass = s[F.lastAnyClass];
    this.prevAnyK = k;
    if (hasChain) {
      this.prevTs = s[F.lastTs];
      this.prevValue = s[F.lastValue];
      this.prevUsable = s[F.lastUsable] === 1;
      this.prevK = k;
      if (this.prevUsable) {
        this.prevUsableTs = this.prevTs;
        this.prevUsableValue = this.prevValue;
        this.prevUsableK = k;
      }
    }
    this.lastItemK = k;
    this.lastItemTs = s[F.lastAnyTs];
    this.flush();
  }

  /**
   * Ends the stream. When the series has no chain point after the last one fed, the first bucket after that
   * point's bucket gets its value as the step interpolation, and a step series holds the value to the end of
   * the point's bucket (with gap filling: every series holds it for the fill limit); the same for the
   * duration of the last point of any status. Every pending bucket is then emitted.
   */
  finish(ended: SeriesEnd): void {
    if (this.done) return;
    const fill = this.o.fill;
    if (ended.chain && this.chainGaps && this.prevTs === this.prevTs && this.prevUsable) {
      const ta = this.prevTs;
      const roles = this.followsUsable ? INTEGRAL : BOTH;
      if (fill !== undefined) {
        this.spread(ta, this.prevValue, this.prevK, ta + fill, this.prevValue, false, this.bucketOf(ta + fill), roles);
      } else {
        const end = this.grid.start(this.prevK + 1);
        const last = this.o.isStep && this.o.wants.moments ? this.acc(this.prevK, false) : null;
        if (last) this.addStretch(last, ta, end, ta, this.prevValue, end, this.prevValue, false, roles);
        const w = this.o.wants;
        if (w.stepInterpolation || (this.o.isStep && w.interpolation)) {
          const next = this.acc(this.firstAfter(this.prevK), true);
          if (next) this.setStartValues(next, INTEGRAL, NaN, this.prevValue);
        }
      }
    }
    if (ended.any && this.o.wants.durations && this.prevAnyTs === this.prevAnyTs) {
      const from = this.prevAnyTs;
      if (fill !== undefined) this.spreadDuration(from, this.prevAnyClass, this.prevAnyK, from + fill, this.bucketOf(from + fill));
      else if (this.o.isStep) {
        const a = this.acc(this.prevAnyK, false);
        if (a) a[F.durationGood + this.prevAnyClass] += this.grid.start(this.prevAnyK + 1) - from;
      }
    }
    this.emitUpTo(this.capped);
    if (!this.done && this.capped < this.K) {
      this.cursorBucket = this.capped;
      this.done = true;
    }
  }

  /**
   * Whether a stretch from ta to tb counts in the buckets at its ends when they differ: with gap filling when
   * no longer than the limit (the caller checked), on a step series always, on a continuous series when
   * shorter than an hour.
   */
  private acrossEdges(ta: number, tb: number): boolean {
    return this.o.fill !== undefined || this.o.isStep || tb - ta < GAP;
  }

  /** Time from `from` (a point of class `cls` in bucket kStart) to `t` (in bucket kEnd) goes to that class where it counts. */
  private spreadDuration(from: number, cls: number, kStart: number, t: number, kEnd: number): void {
    const fill = this.o.fill;
    if (fill !== undefined && t - from > fill) return;
    const field = F.durationGood + cls;
    if (kStart === kEnd) {
      const a = this.acc(kStart, false);
      if (a) a[field] += t - from;
      return;
    }
    const counts = this.acrossEdges(from, t);
    if (counts) {
      const a = this.acc(kStart, false);
      if (a) a[field] += this.grid.start(kStart + 1) - from;
    }
    if (fill !== undefined) {
      for (let k = Math.max(kStart + 1, 0); k < kEnd && k < this.K; k++) {
        const a = this.acc(k, true);
        if (!a) return;
        a[field] += this.grid.start(k + 1) - this.grid.start(k);
        a[A.durationDefined] = 1;
      }
    }
    const lastStart = this.grid.start(kEnd);
    if (counts && lastStart < t) {
      const a = this.acc(kEnd, fill !== undefined);
      if (a) {
        a[field] += t - lastStart;
        a[A.durationDefined] = 1;
      }
    }
  }

  /**
   * The stretch from the point (ta, va) in bucket kStart to (tb, vb) in bucket kEnd (or the value held from
   * ta to tb, when `usableB` is false and tb is no point): what its `roles` give the buckets where it counts,
   * and the values at the starts of the buckets after kStart that it reaches into.
   */
  private spread(ta: number, va: number, kStart: number, tb: number, vb: number, usableB: boolean, kEnd: number, roles: number): void {
    const fill = this.o.fill;
    if (fill !== undefined && tb - ta > fill) return;
    const jumps = usableB && (roles & USABLE) !== 0;
    if (kStart === kEnd) {
      const a = this.acc(kStart, false);
      if (a) {
        this.addStretch(a, ta, tb, ta, va, tb, vb, usableB, roles);
        if (jumps) a[F.variationStep] += Math.abs(vb - va);
      }
      return;
    }
    const w = this.o.wants;
    const across = this.acrossEdges(ta, tb);
    const counts = w.moments && across;
    if (counts) {
      const a = this.acc(kStart, false);
      if (a) this.addStretch(a, ta, this.grid.start(kStart + 1), ta, va, tb, vb, usableB, roles);
    }
    // The empty buckets in between: whole with gap filling; otherwise only the first, for its step interpolation.
    const k1 = this.middleEnd(kStart, kEnd, roles);
    for (let k = Math.max(kStart + 1, 0); k < k1; k++) {
      const a = this.acc(k, true);
      if (!a) return;
      const b0 = this.grid.start(k);
      if (fill === undefined) this.setStartValues(a, roles, NaN, va);
      else {
        if (w.moments) this.addStretch(a, b0, this.grid.start(k + 1), ta, va, tb, vb, usableB, roles);
        this.setStartValues(a, roles, valueAt(b0, ta, va, tb, vb, usableB), va);
      }
    }
    const lastStart = this.grid.start(kEnd);
    // A point at the bucket's start gives the start values itself, and leaves only its jump to add.
    if (lastStart >= tb && !(counts && jumps)) return;
    const a = this.acc(kEnd, fill !== undefined);
    if (!a) return;
    if (lastStart < tb) this.setStartValues(a, roles, across ? valueAt(lastStart, ta, va, tb, vb, usableB) : NaN, va);
    if (counts) {
      if (lastStart < tb) this.addStretch(a, lastStart, tb, ta, va, tb, vb, usableB, roles);
      if (jumps) a[F.variationStep] += Math.abs(vb - va);
    }
  }

  /**
   * The end of the empty buckets, from max(kStart + 1, 0) on and before kEnd, that a stretch with these
   * roles gives something: with gap filling all of them, when it gives them aggregates or start values;
   * otherwise only the first bucket after kStart (or the query's first bucket), for its step interpolation.
   */
  private middleEnd(kStart: number, kEnd: number, roles: number): number {
    const w = this.o.wants;
    const k1 = Math.min(kEnd, this.K);
    const stepValues = (roles & INTEGRAL) !== 0 && (w.stepInterpolation || (this.o.isStep && w.interpolation));
    if (this.o.fill === undefined) return stepValues ? Math.min(k1, this.firstAfter(kStart) + 1) : 0;
    const interpolated = (roles & USABLE) !== 0 && w.interpolation && !this.o.isStep;
    return w.moments || stepValues || interpolated ? k1 : 0;
  }

  /**
   * The bucket after bucket k that takes the step interpolation of k's last chain point: the next one, or the
   * query's first when k lies before it (not a page's first bucket after a cursor, where k is the query's).
   */
  private firstAfter(k: number): number {
    return this.o.resumed ? k + 1 : Math.max(k + 1, 0);
  }

  /**
   * The values at a bucket's start: the held value as the step interpolation (a step series' interpolation
   * too) for the chain, the interpolated value (NaN: none) as a continuous series' interpolation for the
   * usable points.
   */
  private setStartValues(a: Float64Array, roles: number, interpolated: number, held: number): void {
    if (roles & INTEGRAL) {
      a[A.stepInterpolation] = held;
      if (this.o.isStep) a[A.interpolation] = held;
    }
    if (roles & USABLE && !this.o.isStep) a[A.interpolation] = interpolated;
  }

  /** Adds what its roles give of the part [x0, x1) of the stretch from (ta, va) to (tb, vb) to a bucket. */
  private addStretch(a: Float64Array, x0: number, x1: number, ta: number, va: number, tb: number, vb: number, usableB: boolean, roles: number): void {
    const w = x1 - x0;
    const slope = usableB ? (vb - va) / (tb - ta) : 0;
    if (roles & USABLE) {
      a[F.variationLinear] += Math.abs(slope) * w;
      a[A.usableLength] += w;
    }
    if (!(roles & INTEGRAL)) return;
    if (a[F.ref] !== a[F.ref]) a[F.ref] = va;
    const c = va - a[F.ref];
    a[F.step1] += w * c;
    a[F.step2] += w * c * c;
    if (usableB) {
      const f0 = c + slope * (x0 - ta);
      const f1 = c + slope * (x1 - ta);
      a[F.linear1] += (w * (f0 + f1)) / 2;
      a[F.linear2] += (w * (f0 * f0 + f0 * f1 + f1 * f1)) / 3;
    } else {
      a[F.linear1] += w * c;
      a[F.linear2] += w * c * c;
    }
    a[F.len] += w;
  }

  /**
   * Emits the buckets nothing later can change: those before the latest item's bucket (time after it is
   * split from there on), and before the bucket of the last chain point, whose stretch to the next one is
   * still open; when the usable points are followed too, before the last usable point's bucket while a
   * usable point to come could still join it across the bucket's edge (less than an hour later on a
   * continuous series; a step series' stretch gives that bucket nothing more).
   */
  private flush(): void {
    let before = this.lastItemK;
    if (this.chainGaps && this.prevTs === this.prevTs && this.prevK < before) before = this.prevK;
    if (this.followsUsable && !this.o.isStep && this.lastItemTs - this.prevUsableTs < GAP && this.prevUsableK < before) before = this.prevUsableK;
    this.emitUpTo(before < this.capped ? before : this.capped);
    if (this.open.length - this.head >= this.compactAt) this.compact();
  }

  /**
   * Lets go of the waiting buckets that are idle (see `idle`), and caps the page once the waiting buckets
   * that will be emitted (emittable now: nothing later takes an aggregate away) outnumber the room left in
   * it: the first `limit` buckets to emit are then all before the cap, and so is the cursor's bucket.
   */
  private compact(): void {
    const kept: Open[] = [];
    let room = this.o.limit + 1 - this.emitted;
    for (let i = this.head; i < this.open.length; i++) {
      const b = this.open[i];
      if (b.k >= this.capped || (!this.emittable(b.acc) && idle(b.acc))) {
        this.free.push(b.acc);
        continue;
      }
      kept.push(b);
      if (this.emittable(b.acc) && --room === 0) this.capped = b.k + 1;
    }
    this.open.length = 0;
    this.open.push(...kept);
    this.head = 0;
    this.compactAt = Math.max(this.o.limit + COMPACT_SLACK, 2 * kept.length);
  }

  private emitUpTo(before: number): void {
    const open = this.open;
    while (this.head < open.length && open[this.head].k < before) {
      const { k, acc } = open[this.head++];
      if (!this.emittable(acc)) {
        this.free.push(acc);
        continue;
      }
      if (this.emitted === this.o.limit) {
        this.cursorBucket = k;
        this.done = true;
        return;
      }
      this.emitted++;
      this.o.emit(k, acc);
      this.free.push(acc);
    }
    if (before > this.settled) this.settled = before;
    if (this.head > 1024 && this.head * 2 > open.length) {
      open.splice(0, this.head);
      this.head = 0;
    }
  }

  private emittable(a: Float64Array): boolean {
    const w = this.o.wants;
    return (
      (w.values && a[F.n] > 0) ||
      (w.counts && a[F.countGood] + a[F.countUncertain] + a[F.countBad] > 0) ||
      (w.moments && (a[F.len] > 0 || a[F.n] > 0 || a[A.usableLength] > 0)) ||
      (w.interpolation && a[A.interpolation] === a[A.interpolation]) ||
      (w.stepInterpolation && a[A.stepInterpolation] === a[A.stepInterpolation]) ||
      (w.durations && a[A.durationDefined] === 1)
    );
  }
}

/** Waiting buckets beyond the limit before they are compacted; past it, compaction at twice what is left. */
const COMPACT_SLACK = 64;

/**
 * Whether a bucket holds only what points outside the chain leave: their counts, times and classes, which
 * no aggregate but the counts and durations reads (and with those asked for, the bucket is emittable). It
 * holds no chain point, usable point, stretch or start value: a fresh bucket in its place ends the same.
 */
function idle(a: Float64Array): boolean {
  return (
    a[F.n] === 0 &&
    a[F.len] === 0 &&
    a[A.usableLength] === 0 &&
    a[F.firstTs] !== a[F.firstTs] &&
    a[F.ref] !== a[F.ref] &&
    a[A.interpolation] !== a[A.interpolation] &&
    a[A.stepInterpolation] !== a[A.stepInterpolation] &&
    a[F.variationLinear] === 0 &&
    a[F.variationStep] === 0
  );
}

/** The value at x of the stretch from (ta, va) to (tb, vb): linear, or held when it ends at no usable point. */
function valueAt(x: number, ta: number, va: number, tb: number, vb: number, usableB: boolean): number {
  return usableB ? va + ((vb - va) * (x - ta)) / (tb - ta) : va;
}

/** The end of the run from i (before m) at the first gap between points longer than `limit`. */
function gapEnd(ts: Float64Array, i: number, m: number, limit: number): number {
  for (let k = i + 1; k < m; k++) if (ts[k] - ts[k - 1] > limit) return k;
  return m;
}
