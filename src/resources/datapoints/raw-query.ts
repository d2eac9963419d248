/**
 * Raw points of one series in a time range, decoded chunk by chunk: as response objects (`rawSeries`), or
 * as the JSON text of the `datapoints` array (`rawSeriesJson`, what `/timeseries/data/list` sends: the
 * same bytes JSON.stringify would make of the objects, without making them).
 */
import type { Queryable } from '../../storage/store.js';
import type { StatusTreatment } from './bucket-walker.js';
import { decodeChunk } from './chunk-codec.js';
import { ChunkStore, lastChunksBefore } from './chunk-store.js';
import { lowerBound, type PointBlock } from './point-block.js';
import { lastInBlock, SeriesReader, type PointAt } from './series-reader.js';
import { statusOutput } from './status-codes.js';
import { shownBy } from './treatment.js';

export interface RawPoint {
  timestamp: number;
  value?: number | string;
  status?: { code: number; symbol: string };
}

export interface RawQuery {
  start: number;
  end: number;
  limit: number;
  treatment: StatusTreatment;
  includeStatus: boolean;
  includeOutsidePoints: boolean;
  /** Numeric values into the unit asked for (`targetUnit`); as stored when absent. */
  convert?: (v: number) => number;
}

/** JSON has no NaN or infinities; bad numeric points carry them as these strings. */
function jsonValue(v: number): number | string {
  if (Number.isFinite(v)) return v;
  return v !== v ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

function toRaw(p: PointAt, includeStatus: boolean, convert?: (v: number) => number): RawPoint {
  const out: RawPoint = { timestamp: p.ts };
  if (p.value !== null) out.value = typeof p.value === 'number' ? jsonValue(convert ? convert(p.value) : p.value) : p.value;
  if (includeStatus) {
    const status = statusOutput(p.code);
    if (status) out.status = status;
  }
  return out;
}

/** Point i of a block (with status code `code`) as a response object. */
export function blockPoint(b: PointBlock, i: number, code: number, includeStatus: boolean): RawPoint {
  const p: RawPoint = { timestamp: b.ts[i] };
  if (b.num) {
    if (!(b.nulls && b.nulls[i])) p.value = jsonValue(b.num[i]);
  } else if (b.str![i] !== null) p.value = b.str![i]!;
  if (includeStatus && code !== 0) p.status = statusOutput(code);
  return p;
}

/** The block with its numeric values in the unit asked for. */
function convertBlock(b: PointBlock, convert: ((v: number) => number) | undefined): PointBlock {
  return convert && b.num ? { ...b, num: b.num.map(convert) } : b;
}

/** Where a raw query puts the points it takes, in time order. */
interface RawSink {
  /** Points taken so far. */
  readonly count: number;
  /** Timestamp of the last point taken. */
  readonly lastTs: number;
  /** Takes the points of b from index `from` that are before `end` and that `keep` accepts, up to `max` in all; returns the index it stopped at. */
  block(b: PointBlock, from: number, end: number, max: number, keep: (code: number) => boolean, includeStatus: boolean): number;
}

class ObjectSink implements RawSink {
  readonly points: RawPoint[] = [];
  get count(): number {
    return this.points.length;
  }
  get lastTs(): number {
    return this.points[this.points.length - 1].timestamp;
  }
  block(b: PointBlock, from: number, end: number, max: number, keep: (code: number) => boolean, includeStatus: boolean): number {
    const out = this.points;
    const { ts, num, codes, nulls } = b;
    let i = from;
    if (!codes && !nulls && !includeStatus && num) {
      // All Good numeric points: the common case, without per-point status work.
      for (; i < b.n && ts[i] < end && out.length < max; i++) out.push({ timestamp: ts[i], value: num[i] });
      return i;
    }
    for (; i < b.n && ts[i] < end && out.length < max; i++) {
      const code = codes ? codes[i] : 0;
      if (keep(code)) out.push(blockPoint(b, i, code, includeStatus));
    }
    return i;
  }
}

/** Most bytes a point takes besides its value: separator, braces, names, and a safe integer timestamp with sign. */
const POINT_BYTES = 1 + '{"timestamp":'.length + 17 + ',"value":'.length + 1;
const [COMMA, MINUS, ZERO, CLOSE_BRACKET] = [0x2c, 0x2d, 0x30, 0x5d];
/** "00".."99", two bytes each. */
const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1');

/** Writes a non-negative integer below 1e8; returns the end offset. */
function writeSmall(out: Buffer, o: number, x: number): number {
  let len = 1;
  for (let y = x; y >= 10; y = (y / 10) | 0) len++;
  const end = o + len;
  let e = end;
  do {
    const q = (x / 10) | 0;
    out[--e] = ZERO + x - q * 10;
    x = q;
  } while (x > 0);
  return end;
}

/** Writes 0 <= x < 1e8 as exactly 8 digits. */
function writeEight(out: Buffer, o: number, x: number): void {
  const a = (x / 10000) | 0;
  const b = x - a * 10000;
  const a1 = (a / 100) | 0;
  const a2 = (a - a1 * 100) << 1;
  const b1 = (b / 100) | 0;
  const b2 = (b - b1 * 100) << 1;
  out[o] = PAIRS[a1 << 1];
  out[o + 1] = PAIRS[(a1 << 1) + 1];
  out[o + 2] = PAIRS[a2];
  out[o + 3] = PAIRS[a2 + 1];
  out[o + 4] = PAIRS[b1 << 1];
  out[o + 5] = PAIRS[(b1 << 1) + 1];
  out[o + 6] = PAIRS[b2];
  out[o + 7] = PAIRS[b2 + 1];
}

/** A run of Good numeric points of one block: indexes from..to-1 of ts. */
interface GoodRun {
  ts: Float64Array;
  from: number;
  to: number;
}

/**
 * `{"timestamp":t,"value":v}` for each point of the runs, comma-separated: the text JSON.stringify makes of
 * these points. The values (one per point, in order) are formatted by JSON.stringify itself, all in one
 * call; the timestamps, safe integers, digit by digit (the digits above the last eight, which change only
 * once a day, kept from the previous point). No per-point strings or objects are made.
 */
function goodPointsJson(runs: GoodRun[], values: number[]): string {
  const v = Buffer.from(JSON.stringify(values), 'latin1');
  const out = Buffer.allocUnsafe(v.length + values.length * POINT_BYTES);
  const high = Buffer.allocUnsafe(24);
  let highOf = -1;
  let highLen = 0;
  let o = 0;
  let k = 1; // past the '['
  let first = true;
  for (const run of runs) {
    const ts = run.ts;
    for (let i = run.from; i < run.to; i++) {
      if (first) first = false;
      else out[o++] = COMMA;
      // {"timestamp":
      out[o] = 0x7b;
      out[o + 1] = 0x22;
      out[o + 2] = 0x74;
      out[o + 3] = 0x69;
      out[o + 4] = 0x6d;
      out[o + 5] = 0x65;
      out[o + 6] = 0x73;
      out[o + 7] = 0x74;
      out[o + 8] = 0x61;
      out[o + 9] = 0x6d;
      out[o + 10] = 0x70;
      out[o + 11] = 0x22;
      out[o + 12] = 0x3a;
      o += 13;
      let t = ts[i];
      if (!Number.isSafeInteger(t)) {
        o += out.write(JSON.stringify(t), o, 'latin1');
      } else {
        if (t < 0) {
          out[o++] = MINUS;
          t = -t;
        }
        if (t < 1e8) o = writeSmall(out, o, t);
        else {
          let hi = Math.floor(t / 1e8);
          let lo = t - hi * 1e8;
          if (lo < 0) {
            hi--;
            lo += 1e8;
          } else if (lo >= 1e8) {
            hi++;
            lo -= 1e8;
          }
          if (hi !== highOf) {
            highOf = hi;
            highLen = high.write(String(hi), 0, 'latin1');
          }
          for (let j = 0; j < highLen; j++) out[o + j] = high[j];
          o += highLen;
          writeEight(out, o, lo);
          o += 8;
        }
      }
      // ,"value":
      out[o] = 0x2c;
      out[o + 1] = 0x22;
      out[o + 2] = 0x76;
      out[o + 3] = 0x61;
      out[o + 4] = 0x6c;
      out[o + 5] = 0x75;
      out[o + 6] = 0x65;
      out[o + 7] = 0x22;
      out[o + 8] = 0x3a;
      o += 9;
      // Numbers are ASCII without commas or brackets: each value ends at the next ',' (or the closing ']').
      let c = v[k++];
      while (c !== COMMA && c !== CLOSE_BRACKET) {
        out[o++] = c;
        c = v[k++];
      }
      out[o++] = 0x7d;
    }
  }
  return out.toString('latin1', 0, o);
}

/** Collects the points as JSON text: runs of Good numeric points through `goodPointsJson`, others as objects. */
class JsonSink implements RawSink {
  count = 0;
  lastTs = NaN;
  private readonly parts: string[] = [];
  private runs: GoodRun[] = [];
  private values: number[] = [];
  private others: RawPoint[] = [];

  block(b: PointBlock, from: number, end: number, max: number, keep: (code: number) => boolean, includeStatus: boolean): number {
    const { ts, num, codes, nulls } = b;
    let i = from;
    if (!codes && !nulls && num) {
      // All Good numeric points (no status to show): the common case.
      if (this.others.length) this.flush();
      const values = this.values;
      const stop = Math.min(b.n, from + (max - this.count));
      for (; i < stop && ts[i] < end; i++) values.push(num[i]);
      if (i > from) {
        this.runs.push({ ts, from, to: i });
        this.count += i - from;
        this.lastTs = ts[i - 1];
      }
      return i;
    }
    if (this.runs.length) this.flush();
    for (; i < b.n && ts[i] < end && this.count < max; i++) {
      const code = codes ? codes[i] : 0;
      if (!keep(code)) continue;
      this.others.push(blockPoint(b, i, code, includeStatus));
      this.count++;
      this.lastTs = ts[i];
    }
    return i;
  }

  private flush(): void {
    if (this.runs.length) {
      this.parts.push(goodPointsJson(this.runs, this.values));
      this.runs = [];
      this.values = [];
    }
    if (this.others.length) {
      this.parts.push(JSON.stringify(this.others).slice(1, -1));
      this.others = [];
    }
  }

  /** The `datapoints` array, with the outside points (as objects) around the ones taken. */
  json(before?: RawPoint, after?: RawPoint): string {
    this.flush();
    if (before) this.parts.unshift(JSON.stringify(before));
    if (after) this.parts.push(JSON.stringify(after));
    return `[${this.parts.join(',')}]`;
  }
}

/**
 * Feeds the points in [start, end) to the sink up to `limit`; `nextStart` is where the next page begins
 * when more remain. With `includeOutsidePoints`, returns the points just outside the range instead. A limit
 * of 0 takes no points and has no next page (with `includeOutsidePoints`: the outside points alone).
 */
async function scanRaw(db: Queryable, projectId: number, seriesId: number, q: RawQuery, sink: RawSink): Promise<{ nextStart?: number; before?: RawPoint; after?: RawPoint }> {
  const keep = shownBy(q.treatment);
  let nextStart: number | undefined;
  const store = new ChunkStore(db, projectId, seriesId);
  if (q.start < q.end && q.limit > 0) {
    await store.forEach(q.start, q.end, (row) => {
      const block = convertBlock(decodeChunk(row.data), q.convert);
      let i = sink.block(block, lowerBound(block, q.start), q.end, q.limit, keep, q.includeStatus);
      if (sink.count < q.limit) return true;
      for (; i < block.n && block.ts[i] < q.end; i++) {
        if (keep(block.codes ? block.codes[i] : 0)) {
          nextStart = block.ts[i];
          return false;
        }
      }
      return false;
    }, q.limit);
  }
  if (q.limit > 0 && sink.count === q.limit && nextStart === undefined) {
    const after = sink.count ? sink.lastTs + 1 : q.start;
    const more = await new SeriesReader(db, projectId, seriesId).firstAtOrAfter(after, keep);
    if (more && more.ts < q.end) nextStart = more.ts;
  }
  if (q.includeOutsidePoints) {
    const reader = new SeriesReader(db, projectId, seriesId);
    const before = await reader.lastBefore(q.start, keep);
    const after = await reader.firstAtOrAfter(q.end, keep);
    return { before: before && toRaw(before, q.includeStatus, q.convert), after: after && toRaw(after, q.includeStatus, q.convert) };
  }
  return nextStart === undefined ? {} : { nextStart };
}

/** Points in [start, end) up to `limit`; `nextStart` is where the next page begins when more remain. */
export async function rawSeries(db: Queryable, projectId: number, seriesId: number, q: RawQuery): Promise<{ points: RawPoint[]; nextStart?: number }> {
  const sink = new ObjectSink();
  const { nextStart, before, after } = await scanRaw(db, projectId, seriesId, q, sink);
  const { points } = sink;
  if (before) points.unshift(before);
  if (after) points.push(after);
  return nextStart === undefined ? { points } : { points, nextStart };
}

/** `rawSeries` with the points as the JSON text of the array: exactly JSON.stringify(rawSeries(...).points). */
export async function rawSeriesJson(db: Queryable, projectId: number, seriesId: number, q: RawQuery): Promise<{ json: string; nextStart?: number }> {
  const sink = new JsonSink();
  const { nextStart, before, after } = await scanRaw(db, projectId, seriesId, q, sink);
  const json = sink.json(before, after);
  return nextStart === undefined ? { json } : { json, nextStart };
}

export interface LatestQuery {
  seriesId: number;
  before: number;
  treatment: StatusTreatment;
  includeStatus: boolean;
  /** As in RawQuery. */
  convert?: (v: number) => number;
}

/**
 * The last point before `before` that the treatment shows, of each series asked for. The last chunk of every
 * series is read in one statement; only a series whose last chunk holds no point the treatment shows is
 * read further back.
 */
export async function latestPoints(db: Queryable, projectId: number, queries: readonly LatestQuery[]): Promise<Array<RawPoint | undefined>> {
  const last = await lastChunksBefore(db, projectId, queries);
  const out: Array<RawPoint | undefined> = [];
  for (const [i, q] of queries.entries()) {
    const row = last[i];
    const keep = shownBy(q.treatment);
    let p = row && lastInBlock(decodeChunk(row.data), q.before, keep);
    if (row && !p) p = await new SeriesReader(db, projectId, q.seriesId).lastBefore(row.start, keep);
    out.push(p && toRaw(p, q.includeStatus, q.convert));
  }
  return out;
}
