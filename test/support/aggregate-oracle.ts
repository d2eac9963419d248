/**
 * Aggregates computed directly from their documented definitions (docs/datapoints.md, "Aggregates"), bucket
 * by bucket, from the whole list of points: no rollups, no streaming, nothing shared between buckets. The
 * server's answers are checked against this. Slow and plain on purpose.
 *
 * Also the bucket edges of a granularity in a time zone, found by scanning local clock readings (from
 * `Intl`), independent of the server's calendar code.
 */

export interface OraclePoint {
  ts: number;
  /** null: no value (Bad points only); NaN, infinities and values beyond ±1e100 appear on Bad points only. */
  value: number | null;
  code: number;
}

export interface OracleQuery {
  isStep: boolean;
  ignoreBad: boolean;
  uncertainIsBad: boolean;
  /** Gap filling limit in ms. */
  fill?: number;
  aggregates: readonly string[];
}

export const HOUR = 3_600_000;
const MINUTE = 60_000;
const DAY = 86_400_000;
/** Two points of a continuous series this far apart or further are not joined across a bucket edge. */
const GAP = HOUR;

const cls = (code: number) => code >>> 30;

/** A part of the interpolated function: linear from (x0, f0) to (x1, f1). */
interface Piece {
  x0: number;
  x1: number;
  f0: number;
  f1: number;
}

/** A stretch between two consecutive points (or after the last one: `b` undefined). */
interface Stretch {
  a: OraclePoint;
  b?: OraclePoint;
  t0: number;
  t1: number;
}

/**
 * The aggregates of `points` (in time order, one per timestamp) in the buckets [bounds[k], bounds[k + 1]),
 * as the service returns them: a bucket only when one of the asked aggregates is defined in it.
 */
export function oracleAggregates(points: OraclePoint[], bounds: number[], q: OracleQuery): Array<Record<string, unknown>> {
  const usable = (p: OraclePoint) => cls(p.code) === 0 || (cls(p.code) === 1 && !q.uncertainIsBad);
  const chain = q.ignoreBad ? points.filter(usable) : points;
  const K = bounds.length - 1;
  const bucketEnd = (t: number) => bounds.find((b) => b > t);

  /** The stretches of a sequence of points: between neighbours, and after the last one where it holds. */
  const stretchesOf = (seq: OraclePoint[]): Stretch[] => {
    const out: Stretch[] = [];
    for (let i = 0; i + 1 < seq.length; i++) out.push({ a: seq[i], b: seq[i + 1], t0: seq[i].ts, t1: seq[i + 1].ts });
    const z = seq[seq.length - 1];
    if (z) {
      const end = q.fill !== undefined ? z.ts + q.fill : q.isStep ? bucketEnd(z.ts) : undefined;
      if (end !== undefined) out.push({ a: z, t0: z.ts, t1: end });
    }
    return out;
  };
  /**
   * Whether a stretch counts in the bucket [B0, B1), which holds one of its points: one between two points in
   * the bucket always; one across the bucket's edge on a step series always, on a continuous series when its
   * points are less than an hour apart. With gap filling, wherever its points are at most the limit apart.
   */
  const counts = (s: Stretch, B0: number, B1: number): boolean => {
    if (q.fill !== undefined) return s.b === undefined || s.t1 - s.t0 <= q.fill;
    if (s.t0 < B0 && s.t1 >= B1) return false;
    if (q.isStep) return true;
    if (s.b === undefined) return false;
    return (s.t0 >= B0 && s.t1 < B1) || s.t1 - s.t0 < GAP;
  };
  const chainStretches = stretchesOf(chain).filter((s) => usable(s.a));
  // Without gap filling, totalVariation and a continuous series' interpolation follow the usable points
  // alone, whatever ignoreBadDataPoints says; with it, the chain.
  const usablePoints = q.fill === undefined ? points.filter(usable) : chain;
  const usableStretches = q.fill === undefined ? stretchesOf(usablePoints) : chainStretches;
  const allStretches = stretchesOf(points);
  const valueAt = (s: Stretch, x: number) => {
    const v0 = s.a.value!;
    if (q.isStep || !s.b || !usable(s.b)) return v0;
    return v0 + ((s.b.value! - v0) * (x - s.t0)) / (s.t1 - s.t0);
  };
  /** The parts of the stretches that count in the bucket [B0, B1). */
  const piecesIn = (stretches: Stretch[], B0: number, B1: number): Piece[] => {
    const out: Piece[] = [];
    for (const s of stretches) {
      const x0 = Math.max(s.t0, B0);
      const x1 = Math.min(s.t1, B1);
      if (x1 > x0 && counts(s, B0, B1)) out.push({ x0, x1, f0: valueAt(s, x0), f1: valueAt(s, x1) });
    }
    return out;
  };

  const stepInterpolation = (k: number): number | undefined => {
    const B0 = bounds[k];
    let i = chain.length - 1;
    while (i >= 0 && chain[i].ts > B0) i--;
    const a = chain[i];
    if (!a || !usable(a)) return undefined;
    if (a.ts === B0) return a.value!;
    const b = chain[i + 1];
    if (q.fill !== undefined) return (b ? b.ts - a.ts <= q.fill : B0 - a.ts < q.fill) ? a.value! : undefined;
    // In a bucket that holds a chain point, in the query's first bucket, and in the bucket after one that
    // holds a chain point.
    if ((b && b.ts < bounds[k + 1]) || k === 0 || a.ts >= bounds[k - 1]) return a.value!;
    return undefined;
  };

  const out: Array<Record<string, unknown>> = [];
  for (let k = 0; k < K; k++) {
    const B0 = bounds[k];
    const B1 = bounds[k + 1];
    const inB = points.filter((p) => p.ts >= B0 && p.ts < B1);
    const chainInB = chain.filter((p) => p.ts >= B0 && p.ts < B1);
    const u = inB.filter(usable);
    const r: Record<string, unknown> = {};
    const n = u.length;
    if (n > 0) {
      const vals = u.map((p) => p.value!);
      const sum = vals.reduce((x, y) => x + y, 0);
      const mean = sum / n;
      let minP = u[0];
      let maxP = u[0];
      for (const p of u) {
        if (p.value! < minP.value!) minP = p;
        if (p.value! > maxP.value!) maxP = p;
      }
      Object.assign(r, {
        count: n,
        sum,
        min: minP.value,
        max: maxP.value,
        minDatapoint: { timestamp: minP.ts, value: minP.value },
        maxDatapoint: { timestamp: maxP.ts, value: maxP.value },
        discreteVariance: vals.reduce((x, v) => x + (v - mean) ** 2, 0) / n,
      });
    }

    // The interpolated function in this bucket.
    const pieces = piecesIn(chainStretches, B0, B1);
    const len = pieces.reduce((x, p) => x + (p.x1 - p.x0), 0);
    if (q.fill !== undefined || chainInB.length > 0) {
      if (len > 0) {
        const avg = pieces.reduce((x, p) => x + ((p.x1 - p.x0) * (p.f0 + p.f1)) / 2, 0) / len;
        r.average = avg;
        r.continuousVariance =
          pieces.reduce((x, p) => {
            const a = p.f0 - avg;
            const b = p.f1 - avg;
            return x + ((p.x1 - p.x0) * (a * a + a * b + b * b)) / 3;
          }, 0) / len;
      } else if (n > 0) {
        r.average = (r.sum as number) / n;
        r.continuousVariance = 0;
      }
    }

    // Through the usable points alone (without gap filling): where it is defined, as average would be with
    // ignoreBadDataPoints: true.
    const usablePieces = piecesIn(usableStretches, B0, B1);
    if (n > 0 || (q.fill !== undefined && usablePieces.length > 0)) {
      if (q.isStep) {
        // The jumps at the points in the bucket, from the value held before each.
        let tv = 0;
        for (const s of usableStretches) {
          if (s.b && s.t1 >= B0 && s.t1 < B1 && usable(s.b) && counts(s, B0, B1)) tv += Math.abs(s.b.value! - s.a.value!);
        }
        r.totalVariation = tv;
      } else r.totalVariation = usablePieces.reduce((x, p) => x + Math.abs(p.f1 - p.f0), 0);
    }

    const step = stepInterpolation(k);
    if (step !== undefined) r.stepInterpolation = step;
    if (q.isStep) {
      if (step !== undefined) r.interpolation = step;
    } else if (n > 0 || q.fill !== undefined) {
      const at = usablePoints.find((p) => p.ts === B0);
      if (at) {
        if (usable(at)) r.interpolation = at.value;
      } else {
        const s = usableStretches.find((s) => s.t0 < B0 && B0 < s.t1 && counts(s, B0, B1));
        if (s) r.interpolation = valueAt(s, B0);
      }
    }

    if (inB.length > 0) {
      r.countGood = inB.filter((p) => cls(p.code) === 0).length;
      r.countUncertain = inB.filter((p) => cls(p.code) === 1).length;
      r.countBad = inB.filter((p) => cls(p.code) === 2).length;
    }
    const d = [0, 0, 0];
    for (const s of allStretches) {
      const w = Math.min(s.t1, B1) - Math.max(s.t0, B0);
      if (w > 0 && counts(s, B0, B1)) d[cls(s.a.code)] += w;
    }
    if (inB.length > 0 || (q.fill !== undefined && d[0] + d[1] + d[2] > 0)) Object.assign(r, { durationGood: d[0], durationUncertain: d[1], durationBad: d[2] });

    const shown: Record<string, unknown> = {};
    for (const a of q.aggregates) if (r[a] !== undefined) shown[a] = r[a];
    if (Object.keys(shown).length > 0) out.push({ timestamp: B0, ...shown });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Bucket edges

const QUARTER = 15 * MINUTE;

function fixedOffset(zone: string): number | undefined {
  if (zone === 'UTC') return 0;
  const m = /^UTC([+-])(\d{2}):(\d{2})$/.exec(zone);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * HOUR + Number(m[3]) * MINUTE) : undefined;
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The local wall-clock reading at t, as ms since the epoch of that reading taken as UTC. */
function localAt(zone: string, t: number): number {
  const fixed = fixedOffset(zone);
  if (fixed !== undefined) return t + fixed;
  let fmt = formats.get(zone);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat('en-GB', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formats.set(zone, fmt);
  }
  const p = Object.fromEntries(fmt.formatToParts(t).map((x) => [x.type, Number(x.value)]));
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
}

function unitKey(unit: string, local: number): number {
  if (unit === 'h') return Math.floor(local / HOUR);
  if (unit === 'd') return Math.floor(local / DAY);
  const d = new Date(local);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/**
 * The edges of the buckets of `granularity` (`<n><s|m|h|d|mo>`) in `zone` for a query [start, end): the first
 * bucket holds start, the last one holds end - 1. Hours, days and months start where the local clock starts
 * a new one (a repeated hour when clocks go back is a new hour), found by scanning quarter hours.
 */
export function oracleBounds(granularity: string, zone: string, start: number, end: number): number[] {
  const m = /^(\d+)(s|m|h|d|mo)$/.exec(granularity)!;
  const n = Number(m[1]);
  const unit = m[2];
  if (unit === 's' || unit === 'm') {
    const size = unit === 's' ? 1000 : MINUTE;
    const out = [Math.floor(start / size) * size];
    while (out[out.length - 1] < end) out.push(out[out.length - 1] + n * size);
    return out;
  }
  const starts: number[] = [];
  let prev = NaN;
  let prevLocal = -Infinity;
  const lookBack = unit === 'h' ? DAY : unit === 'd' ? 2 * DAY : 32 * DAY;
  for (let x = Math.floor(start / QUARTER) * QUARTER - lookBack; ; x += QUARTER) {
    const local = localAt(zone, x);
    const key = unitKey(unit, local);
    const repeated = unit === 'h' && local <= prevLocal;
    prevLocal = local;
    if (key !== prev || repeated) {
      starts.push(x);
      if (x > end && starts.filter((s) => s > end).length > n) break;
    }
    prev = key;
  }
  let i = starts.length - 1;
  while (starts[i] > start) i--;
  const out = [starts[i]];
  while (out[out.length - 1] < end) {
    i += n;
    out.push(starts[i]);
  }
  return out;
}
