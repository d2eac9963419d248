/**
 * The buckets of an aggregate query. The first bucket starts at the query start rounded down to the
 * granularity's unit (in the query's time zone for hours and longer); each next one starts a multiple of
 * units later, and the last one is the one that contains the query end. Seconds, minutes and hours are
 * fixed lengths; days and months follow the local calendar, so daylight-saving transitions give shorter or
 * longer buckets.
 */
import { isZoned, type Granularity } from './granularity.js';
import { UTC, type Zone } from './time-zone.js';

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

export interface BucketGrid {
  /** Number of buckets: 0 to count-1 lie in the query. */
  readonly count: number;
  /** Start of bucket k (any integer k); start(count) is the end of the last bucket. */
  start(k: number): number;
  /** The bucket that contains t (below 0 before the first bucket, count or more after the last). */
  indexOf(t: number): number;
}

class FixedGrid implements BucketGrid {
  readonly count: number;
  constructor(
    private readonly origin: number,
    private readonly step: number,
    end: number,
  ) {
    this.count = end > origin ? Math.ceil((end - origin) / step) : 0;
  }
  start(k: number): number {
    return this.origin + k * this.step;
  }
  indexOf(t: number): number {
    return Math.floor((t - this.origin) / this.step);
  }
}

/** Buckets of whole local days or months, counted from the local unit that holds the query start. */
class CalendarGrid implements BucketGrid {
  readonly count: number;
  private readonly starts = new Map<number, number>();
  private lastOffset: number;

  constructor(
    private readonly zone: Zone,
    /** Days or months per bucket. */
    private readonly step: number,
    private readonly months: boolean,
    /** Index of the first bucket's local unit: day number since the epoch, or year * 12 + month. */
    private readonly origin: number,
    end: number,
  ) {
    this.lastOffset = zone.offsetAt(end);
    this.count = end > this.start(0) ? this.indexOf(end - 1) + 1 : 0;
  }

  private localStart(k: number): number {
    const unit = this.origin + k * this.step;
    if (!this.months) return unit * DAY;
    const year = Math.floor(unit / 12);
    return Date.UTC(year, unit - year * 12, 1);
  }

  start(k: number): number {
    let t = this.starts.get(k);
    if (t === undefined) {
      t = this.zone.toUtc(this.localStart(k), this.lastOffset);
      this.lastOffset = this.zone.offsetAt(t);
      if (this.starts.size > 100_000) this.starts.clear();
      this.starts.set(k, t);
    }
    return t;
  }

  indexOf(t: number): number {
    const local = t + this.zone.offsetAt(t);
    const unit = this.months ? monthIndex(local) : Math.floor(local / DAY);
    let k = Math.floor((unit - this.origin) / this.step);
    while (this.start(k) > t) k--;
    while (this.start(k + 1) <= t) k++;
    return k;
  }
}

function monthIndex(local: number): number {
  const d = new Date(local);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/**
 * Grids lie between these instants, where every calendar and time zone computation is defined (dates of the
 * first millennium and beyond the year 250,000 are not) and which hold every point with room to spare: a
 * query reaching further is taken to start or end there, and one wholly outside has no buckets.
 */
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = 8e15;

/** The buckets of `granularity` over [start, end) aligned in `zone`. */
export function bucketGrid(g: Granularity, zone: Zone, from: number, to: number): BucketGrid {
  if (from >= LATEST || to <= EARLIEST) return new FixedGrid(EARLIEST, SECOND, EARLIEST);
  const start = Math.max(from, EARLIEST);
  const end = Math.min(to, LATEST);
  const z = isZoned(g) ? zone : UTC;
  switch (g.unit) {
    case 's':
      return new FixedGrid(Math.floor(start / SECOND) * SECOND, g.multiple * SECOND, end);
    case 'm':
      return new FixedGrid(Math.floor(start / MINUTE) * MINUTE, g.multiple * MINUTE, end);
    case 'h': {
      // The local hour that holds `start`, under the offset in force at `start`: converting the local time back
      // would pick the first of the two hours that repeat when clocks go back, an hour too early.
      const offset = z.offsetAt(start);
      const origin = Math.floor((start + offset) / HOUR) * HOUR - offset;
      return new FixedGrid(origin, g.multiple * HOUR, end);
    }
    case 'd':
      return new CalendarGrid(z, g.multiple, false, Math.floor((start + z.offsetAt(start)) / DAY), end);
    case 'mo':
      return new CalendarGrid(z, g.multiple, true, monthIndex(start + z.offsetAt(start)), end);
  }
}

/** How long a bucket of `g` is, for a granularity of fixed length (a day as 24 hours); undefined for months. */
export function fixedLength(g: Granularity): number | undefined {
  const unit = { s: SECOND, m: MINUTE, h: HOUR, d: DAY, mo: undefined }[g.unit];
  return unit === undefined ? undefined : g.multiple * unit;
}

/**
 * Buckets of a fixed-length granularity over [start, end) that start at `alignment` plus whole buckets
 * (milliseconds since the epoch), whatever the time zone: the first is the one that holds the query start.
 */
export function alignedGrid(g: Granularity, alignment: number, from: number, to: number): BucketGrid {
  const step = fixedLength(g)!;
  if (from >= LATEST || to <= EARLIEST) return new FixedGrid(EARLIEST, SECOND, EARLIEST);
  const start = Math.max(from, EARLIEST);
  const origin = Math.floor((start - alignment) / step) * step + alignment;
  return new FixedGrid(origin, step, Math.min(to, LATEST));
}
