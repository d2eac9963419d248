/**
 * Folds a time-ordered stream of points and summaries (rollups) into per-bucket summaries, and hands each
 * finished bucket to a sink in bucket order. The same fold builds stored rollups (one bucket, the cell) and
 * answers aggregate queries (the query's buckets).
 *
 * The interpolated function joins consecutive points of the "chain": the usable points, or with
 * `ignoreBadDataPoints: false` every point, where the stretch after an unusable point is undefined and the
 * stretch from a usable point to an unusable one holds the usable value. Each stretch is split at bucket
 * boundaries, so a bucket's integral, variation and interpolated start value include the stretches that
 * cross its edges, and a bucket between two far-apart points still gets its share.
 *
 * A bucket is final once nothing later in the stream can add to it: the next chain point closes the
 * stretches that reach back into earlier buckets. Buckets are emitted while fewer than `limit` have been;
 * the next bucket that would be emitted becomes `cursorBucket` and the walk is `done`.
 */
import type { BucketGrid } from './bucket-grid.js';
import { F, summarizeGoodRun, SUMMARY_FIELDS, type Summary } from './summary.js';

/** Per-bucket state beyond the summary fields. */
export const A = { interpolation: SUMMARY_FIELDS, stepInterpolation: SUMMARY_FIELDS + 1, durationDefined: SUMMARY_FIELDS + 2 } as const;
const ACC_FIELDS = SUMMARY_FIELDS + 3;

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

export interface WalkerOptions {
  isStep: boolean;
  treatment: StatusTreatment;
  wants: Wants;
  /** Buckets to emit before stopping. */
  limit: number;
  emit(k: number, acc: Float64Array): void;
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

  constructor(
    private readonly grid: BucketGrid,
    private readonly o: WalkerOptions,
  ) {
    this.K = grid.count;
    this.chainGaps = o.wants.moments || o.wants.interpolation || o.wants.stepInterpolation;
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
    if (k < 0 || k >= this.K || k >= this.capped) return null;
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
    if (capping && this.emitted + (open.length - this.head) >= this.o.limit + 1) {
      this.capped = k;
      return null;
    }
    const acc = resetAcc(this.free.pop() ?? new Float64Array(ACC_FIELDS));
    open.splice(lo, 0, { k, acc });
    return acc;
  }

  point(ts: number, v: number, code: number): void {
    if (this.done) return;
    this.items++;
    const cls = code >>> 30;
    const usable = cls === 0 || (cls === 1 && !this.o.treatment.uncertainIsBad);
    const inChain = usable || !this.o.treatment.ignoreBad;
    const k = this.bucketOf(ts);
    const start = this.curStart;
    if (this.o.wants.durations && this.prevAnyTs === this.prevAnyTs) this.spreadDuration(k, ts);
    if (inChain && this.chainGaps && this.prevTs === this.prevTs) this.spreadChain(k, ts, v, usable);
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
    this.lastItemK = k;
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
      if (m - i < 3) for (let k = i; k < m; k++) this.point(ts[k], v[k], 0);
      else this.summary(summarizeGoodRun(ts, v, i, m));
      i = m;
    }
  }

  /** Adds a stored summary that lies inside one bucket (the caller checked it suits the treatment). */
  summary(s: Summary): void {
    if (this.done) return;
    this.items++;
    const firstAny = s[F.firstAnyTs];
    const k = this.bucketOf(firstAny);
    const start = this.curStart;
    const hasChain = s[F.firstTs] === s[F.firstTs];
    if (this.o.wants.durations && this.prevAnyTs === this.prevAnyTs) this.spreadDuration(k, firstAny);
    if (hasChain && this.chainGaps && this.prevTs === this.prevTs) this.spreadChain(k, s[F.firstTs], s[F.firstValue], s[F.firstUsable] === 1);
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
    }
    this.lastItemK = k;
    this.flush();
  }

  /** Ends the stream: a step value holds on to the last bucket, and every pending bucket is emitted. */
  finish(): void {
    if (this.done) return;
    if (this.o.wants.stepInterpolation && this.prevTs === this.prevTs && this.prevUsable) {
      for (let k = Math.max(this.prevK + 1, 0); k < this.K; k++) {
        const a = this.acc(k, true);
        if (!a) break;
        if (a[A.stepInterpolation] !== a[A.stepInterpolation]) a[A.stepInterpolation] = this.prevValue;
      }
    }
    this.emitUpTo(this.capped);
    if (!this.done && this.capped < this.K) {
      this.cursorBucket = this.capped;
      this.done = true;
    }
  }

  /** Time after the previous point of any status, up to `t`, goes to that point's class. */
  private spreadDuration(kEnd: number, t: number): void {
    const from = this.prevAnyTs;
    const field = F.durationGood + this.prevAnyClass;
    const kStart = this.prevAnyK;
    if (kStart === kEnd) {
      const a = this.acc(kStart, false);
      if (a) a[field] += t - from;
      return;
    }
    for (let k = Math.max(kStart, 0); k <= kEnd && k < this.K; k++) {
      const b0 = this.grid.start(k);
      const b1 = this.grid.start(k + 1);
      const x0 = from > b0 ? from : b0;
      const x1 = t < b1 ? t : b1;
      if (x1 <= x0) continue;
      const a = this.acc(k, true);
      if (!a) return;
      a[field] += x1 - x0;
      a[A.durationDefined] = 1;
    }
  }

  /** The stretch from the previous chain point to (tb, vb), split over the buckets it crosses. */
  private spreadChain(kEnd: number, tb: number, vb: number, usableB: boolean): void {
    if (!this.prevUsable) return;
    const ta = this.prevTs;
    const va = this.prevValue;
    const kStart = this.prevK;
    if (kStart === kEnd) {
      const a = this.acc(kStart, false);
      if (a) {
        this.addStretch(a, ta, tb, ta, va, tb, vb, usableB);
        if (usableB) a[F.variationStep] += Math.abs(vb - va);
      }
      return;
    }
    const isStep = this.o.isStep;
    for (let k = Math.max(kStart, 0); k <= kEnd && k < this.K; k++) {
      const b0 = this.grid.start(k);
      const b1 = this.grid.start(k + 1);
      const x0 = ta > b0 ? ta : b0;
      const x1 = tb < b1 ? tb : b1;
      const startsInside = k > kStart && b0 < tb;
      if (x1 <= x0 && !startsInside) continue;
      const a = this.acc(k, true);
      if (!a) return;
      if (x1 > x0) this.addStretch(a, x0, x1, ta, va, tb, vb, usableB);
      if (startsInside) {
        a[A.interpolation] = isStep || !usableB ? va : va + ((vb - va) * (b0 - ta)) / (tb - ta);
        a[A.stepInterpolation] = va;
      }
    }
    if (usableB) {
      const a = this.acc(kEnd, false);
      if (a) a[F.variationStep] += Math.abs(vb - va);
    }
  }

  /** Adds the part [x0, x1) of the stretch from (ta, va) to (tb, vb) to a bucket. */
  private addStretch(a: Float64Array, x0: number, x1: number, ta: number, va: number, tb: number, vb: number, usableB: boolean): void {
    const w = x1 - x0;
    if (a[F.ref] !== a[F.ref]) a[F.ref] = va;
    const c = va - a[F.ref];
    a[F.step1] += w * c;
    a[F.step2] += w * c * c;
    if (usableB) {
      const slope = (vb - va) / (tb - ta);
      const f0 = c + slope * (x0 - ta);
      const f1 = c + slope * (x1 - ta);
      a[F.linear1] += (w * (f0 + f1)) / 2;
      a[F.linear2] += (w * (f0 * f0 + f0 * f1 + f1 * f1)) / 3;
      a[F.variationLinear] += Math.abs(slope) * w;
    } else {
      a[F.linear1] += w * c;
      a[F.linear2] += w * c * c;
    }
    a[F.len] += w;
  }

  /**
   * Emits the buckets nothing later can change: those before the latest item's bucket (time after it is
   * split from there on), and before the last chain point's bucket, whose stretch to the next chain point
   * is still open.
   */
  private flush(): void {
    let before = this.lastItemK;
    if (this.chainGaps && this.prevTs === this.prevTs && this.prevK < before) before = this.prevK;
    this.emitUpTo(before < this.capped ? before : this.capped);
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
      (w.moments && (a[F.len] > 0 || a[F.n] > 0)) ||
      (w.interpolation && a[A.interpolation] === a[A.interpolation]) ||
      (w.stepInterpolation && a[A.stepInterpolation] === a[A.stepInterpolation]) ||
      (w.durations && a[A.durationDefined] === 1)
    );
  }
}
