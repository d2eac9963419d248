/**
 * Reads one numeric series as a time-ordered stream of points and stored summaries for the walker: over a
 * range, it takes the coarsest rollup cells that fit whole (and that suit the status treatment), and raw
 * points at the edges, in the gaps between stored cells, and where a cell does not suit.
 */
import type { BucketGrid } from './bucket-grid.js';
import { decodeChunk } from './chunk-codec.js';
import { ChunkStore } from './chunk-store.js';
import { lowerBound, type PointBlock } from './point-block.js';
import { ceilTo, floorTo, LEVEL_SIZE } from './rollup-levels.js';
import { RollupStore } from './rollup-store.js';
import type { Summary } from './summary.js';
import type { Queryable } from '../../storage/store.js';

export interface ItemSink {
  point(ts: number, v: number, code: number): void;
  /** Points ts[i..j), all Good with finite values. */
  goodRun(ts: Float64Array, v: Float64Array, i: number, j: number): void;
  summary(s: Summary): void;
  readonly done: boolean;
}

export interface PointAt {
  ts: number;
  /** Numeric value (NaN when the point has none), or the string value. */
  value: number | string | null;
  code: number;
}

interface Segment {
  level: number;
  a: number;
  b: number;
}

const MAX_TIME = Number.MAX_SAFE_INTEGER;

export class SeriesReader {
  readonly chunks: ChunkStore;
  readonly rollups: RollupStore;

  /**
   * @param overlay every stored point of the series between its first and last timestamp, already in
   *   memory (the span a write just touched); reads inside it skip the database.
   */
  constructor(
    db: Queryable,
    projectId: number,
    seriesId: number,
    private readonly overlay?: PointBlock,
  ) {
    this.chunks = new ChunkStore(db, projectId, seriesId);
    this.rollups = new RollupStore(db, projectId, seriesId);
  }

  /** Feeds the raw points in [a, b). */
  async visitRaw(a: number, b: number, sink: ItemSink): Promise<void> {
    const o = this.overlay;
    if (o && o.n > 0) {
      const lo = o.ts[0];
      const hi = o.ts[o.n - 1] + 1;
      if (a < lo) await this.visitStored(a, Math.min(b, lo), sink);
      if (b > lo && a < hi && !sink.done) feedBlock(o, Math.max(a, lo), Math.min(b, hi), sink);
      if (b > hi && !sink.done) await this.visitStored(Math.max(a, hi), b, sink);
      return;
    }
    await this.visitStored(a, b, sink);
  }

  private async visitStored(a: number, b: number, sink: ItemSink): Promise<void> {
    if (a >= b) return;
    await this.chunks.forEach(a, b, (row) => {
      feedBlock(decodeChunk(row.data), a, b, sink);
      return !sink.done;
    });
  }

  /** Feeds [a, b) (aligned to `level`) from that level's cells; gaps and unsuitable cells come from below. */
  private async visitCells(level: number, a: number, b: number, sink: ItemSink, suits: (s: Summary) => boolean): Promise<void> {
    const size = LEVEL_SIZE[level];
    let pos = a;
    for (const cell of await this.rollups.cells(level, a, b)) {
      if (sink.done) return;
      if (cell.start > pos) await this.visitRaw(pos, cell.start, sink);
      if (suits(cell.s)) sink.summary(cell.s);
      else await this.visitRange(cell.start, cell.start + size, level - 1, sink, suits);
      pos = cell.start + size;
    }
    if (pos < b && !sink.done) await this.visitRaw(pos, b, sink);
  }

  /** Feeds [a, b) using levels up to `top`. */
  visitRange(a: number, b: number, top: number, sink: ItemSink, suits: (s: Summary) => boolean): Promise<void> {
    const segments: Segment[] = [];
    decompose(a, b, top, segments);
    return this.visitSegments(segments, sink, suits);
  }

  /** Feeds the points of buckets k0..k1-1 of a grid, reading adjacent runs of one level together. */
  visitBuckets(grid: BucketGrid, k0: number, k1: number, top: number, sink: ItemSink, suits: (s: Summary) => boolean): Promise<void> {
    const segments: Segment[] = [];
    for (let k = k0; k < k1; k++) decompose(grid.start(k), grid.start(k + 1), top, segments);
    return this.visitSegments(segments, sink, suits);
  }

  private async visitSegments(segments: Segment[], sink: ItemSink, suits: (s: Summary) => boolean): Promise<void> {
    for (const s of segments) {
      if (sink.done) return;
      if (s.level === 0) await this.visitRaw(s.a, s.b, sink);
      else await this.visitCells(s.level, s.a, s.b, sink, suits);
    }
  }

  /** The last point before t that `keep` accepts (by status code). */
  async lastBefore(t: number, keep: (code: number) => boolean): Promise<PointAt | undefined> {
    let found: PointAt | undefined;
    await this.chunks.forEachBefore(t, (row) => {
      found = lastInBlock(decodeChunk(row.data), t, keep);
      return found === undefined;
    });
    return found;
  }

  /** The first point at or after t that `keep` accepts. */
  async firstAtOrAfter(t: number, keep: (code: number) => boolean): Promise<PointAt | undefined> {
    let found: PointAt | undefined;
    await this.chunks.forEach(t, MAX_TIME, (row) => {
      const block = decodeChunk(row.data);
      for (let i = lowerBound(block, t); i < block.n; i++) {
        const code = block.codes ? block.codes[i] : 0;
        if (keep(code)) {
          found = pointAt(block, i);
          return false;
        }
      }
      return true;
    }, 1);
    return found;
  }
}

/** The last point of a block before t that `keep` accepts. */
export function lastInBlock(block: PointBlock, t: number, keep: (code: number) => boolean): PointAt | undefined {
  for (let i = lowerBound(block, t) - 1; i >= 0; i--) {
    if (keep(block.codes ? block.codes[i] : 0)) return pointAt(block, i);
  }
  return undefined;
}

export function pointAt(b: PointBlock, i: number): PointAt {
  const code = b.codes ? b.codes[i] : 0;
  if (b.str) return { ts: b.ts[i], value: b.str[i], code };
  return { ts: b.ts[i], value: b.nulls && b.nulls[i] ? null : b.num![i], code };
}

function feedBlock(b: PointBlock, a: number, end: number, sink: ItemSink): void {
  const from = lowerBound(b, a);
  const to = b.n > 0 && b.ts[b.n - 1] < end ? b.n : lowerBound(b, end);
  if (from >= to) return;
  const { ts, codes, nulls } = b;
  const num = b.num!;
  if (!codes) {
    sink.goodRun(ts, num, from, to);
    return;
  }
  for (let i = from; i < to; i++) sink.point(ts[i], nulls && nulls[i] ? NaN : num[i], codes[i]);
}

/** Splits [a, b) into the coarsest aligned cells that fit, finer ones at the edges and raw points below. */
function decompose(a: number, b: number, top: number, out: Segment[]): void {
  if (a >= b) return;
  for (let level = top; level >= 1; level--) {
    const size = LEVEL_SIZE[level];
    const A = ceilTo(a, size);
    const B = floorTo(b, size);
    if (A < B) {
      decompose(a, A, level - 1, out);
      push(out, level, A, B);
      decompose(B, b, level - 1, out);
      return;
    }
  }
  push(out, 0, a, b);
}

function push(out: Segment[], level: number, a: number, b: number): void {
  const last = out[out.length - 1];
  if (last && last.level === level && last.b === a) last.b = b;
  else out.push({ level, a, b });
}
