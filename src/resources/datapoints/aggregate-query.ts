/**
 * Aggregates of one numeric series over a bucket grid: the points and rollups of the buckets are fed to a
 * walker, with the nearest points outside the grid as context (of the chain, usable when the walker follows
 * the usable points too, of any status for the durations: they shape the stretches that cross its edges, and
 * their absence tells the walker the series ends). Long empty stretches are skipped without visiting their
 * buckets.
 */
import type { Queryable } from '../../storage/store.js';
import { aggregateValue, wantsOf, type AggregateValue } from './aggregates.js';
import type { BucketGrid } from './bucket-grid.js';
import { BucketWalker, type StatusTreatment } from './bucket-walker.js';
import { levelHolding, TOP_LEVEL } from './rollup-levels.js';
import type { AggregateName } from './schema.js';
import { SeriesReader, type PointAt } from './series-reader.js';
import { isUsable, rollupSuits, shownBy } from './treatment.js';

/**
 * Buckets are planned and read in windows that start at the next point and grow while they keep finding
 * data, so dense series are read in long runs and sparse ones do not plan the empty buckets between points.
 */
const MIN_WINDOW = 16;
const MAX_WINDOW = 4096;

export interface AggregateQuery {
  grid: BucketGrid;
  aggregates: readonly AggregateName[];
  treatment: StatusTreatment;
  isStep: boolean;
  includeStatus: boolean;
  /** Gap filling: the longest gap (ms) the interpolated function is defined across. */
  fill?: number;
  limit: number;
  /** The grid starts at a cursor into the query, after its first bucket. */
  resumed: boolean;
}

export type AggregateBucket = { timestamp: number } & Partial<Record<AggregateName, AggregateValue>>;

export async function aggregateSeries(db: Queryable, projectId: number, seriesId: number, q: AggregateQuery): Promise<{ buckets: AggregateBucket[]; nextStart?: number }> {
  const { grid, aggregates, isStep, includeStatus } = q;
  const buckets: AggregateBucket[] = [];
  const wants = wantsOf(aggregates);
  const walker = new BucketWalker(grid, {
    isStep,
    treatment: q.treatment,
    wants,
    fill: q.fill,
    limit: q.limit,
    resumed: q.resumed,
    emit(k, acc) {
      const bucket: AggregateBucket = { timestamp: grid.start(k) };
      for (const name of aggregates) {
        const v = aggregateValue(name, acc, isStep, includeStatus);
        if (v !== undefined) bucket[name] = v as never;
      }
      buckets.push(bucket);
    },
  });
  const reader = new SeriesReader(db, projectId, seriesId);
  const inChain = shownBy(q.treatment);
  const usable = (code: number) => isUsable(code, q.treatment);
  const any = () => true;
  const needsChain = wants.moments || wants.interpolation || wants.stepInterpolation;
  const start = grid.start(0);
  const end = grid.start(grid.count);

  const context = (...points: Array<PointAt | undefined>) => {
    const pts = points.filter((p): p is PointAt => p !== undefined).sort((x, y) => x.ts - y.ts);
    for (let i = 0; i < pts.length; i++) {
      if (i > 0 && pts[i].ts === pts[i - 1].ts) continue;
      const p = pts[i];
      walker.point(p.ts, typeof p.value === 'number' ? p.value : NaN, p.code);
    }
  };

  if (grid.count > 0) {
    context(
      needsChain ? await reader.lastBefore(start, inChain) : undefined,
      walker.followsUsable ? await reader.lastBefore(start, usable) : undefined,
      wants.durations ? await reader.lastBefore(start, any) : undefined,
    );
    const suits = rollupSuits(q.treatment);
    // Stored cells hold the stretches between their points whole; with gap filling only cells too short to
    // hold a gap longer than the limit can stand for their points.
    const top = q.fill === undefined ? TOP_LEVEL : levelHolding(q.fill);
    let k = 0;
    let window = MIN_WINDOW;
    while (k < grid.count && !walker.done) {
      const next = await reader.chunks.nextPointAtOrAfter(grid.start(k));
      if (next >= end) break;
      k = Math.max(k, grid.indexOf(next));
      const k1 = Math.min(grid.count, k + window);
      const before = walker.items;
      await reader.visitBuckets(grid, k, k1, top, walker, suits);
      window = walker.items - before >= (k1 - k) / 2 ? Math.min(MAX_WINDOW, window * 2) : Math.max(MIN_WINDOW, window >> 1);
      k = k1;
    }
    if (!walker.done) {
      const chain = needsChain ? await reader.firstAtOrAfter(end, inChain) : undefined;
      const all = wants.durations ? await reader.firstAtOrAfter(end, any) : undefined;
      context(chain, walker.followsUsable ? await reader.firstAtOrAfter(end, usable) : undefined, all);
      walker.finish({ chain: chain === undefined, any: all === undefined });
    }
  }
  return walker.cursorBucket === undefined ? { buckets } : { buckets, nextStart: grid.start(walker.cursorBucket) };
}
