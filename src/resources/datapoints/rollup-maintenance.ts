/**
 * Keeps the rollups of a numeric series equal to what its points give, in the transaction of the write
 * that changed them: after an insert, each cell that received points is recomputed (level by level, each
 * from the one below, the lowest from the points); after a delete, the cells inside the range go and the
 * cells across its ends are recomputed.
 */
import type { Queryable } from '../../storage/store.js';
import type { BucketGrid } from './bucket-grid.js';
import { BucketWalker, DEFAULT_TREATMENT, WANTS_ALL } from './bucket-walker.js';
import type { PointBlock } from './point-block.js';
import { floorTo, LEVEL_SIZE, MIN_CELL_POINTS, TOP_LEVEL } from './rollup-levels.js';
import { SeriesReader } from './series-reader.js';
import { F, SUMMARY_FIELDS, totalCount, type Summary } from './summary.js';

const suitsAll = () => true;

function oneCell(start: number, size: number): BucketGrid {
  return { count: 1, start: (k) => start + k * size, indexOf: (t) => Math.floor((t - start) / size) };
}

/** Folds what `feed` gives into the summary of one cell; null when it holds too few points to be stored. */
async function fold(level: number, start: number, feed: (walker: BucketWalker) => Promise<void>): Promise<Summary | null> {
  let cell: Summary | null = null;
  const walker = new BucketWalker(oneCell(start, LEVEL_SIZE[level]), {
    isStep: false,
    treatment: DEFAULT_TREATMENT,
    wants: WANTS_ALL,
    limit: 1,
    emit: (_k, acc) => {
      cell = acc.slice(0, SUMMARY_FIELDS);
    },
  });
  await feed(walker);
  // A cell is a window of the series, not its end: nothing is held past its last point.
  walker.finish({ chain: false, any: false });
  return cell && totalCount(cell) >= MIN_CELL_POINTS ? cell : null;
}

/** The summary of one cell from the level below. */
function recompute(reader: SeriesReader, level: number, start: number): Promise<Summary | null> {
  return fold(level, start, (walker) => reader.visitRange(start, start + LEVEL_SIZE[level], level - 1, walker, suitsAll));
}

/** Recomputes the given cells of a level, in order, and stores the results. */
async function refresh(reader: SeriesReader, level: number, starts: Iterable<number>): Promise<void> {
  const changes = new Map<number, Summary | null>();
  for (const start of starts) changes.set(start, await recompute(reader, level, start));
  if (changes.size) await reader.rollups.update(level, changes);
}

/**
 * After points were written: `written` are their timestamps (ascending); `span` holds every stored point
 * between the first and last timestamp the write touched.
 */
export async function refreshAfterWrite(db: Queryable, projectId: number, seriesId: number, written: Float64Array, span: PointBlock): Promise<void> {
  const reader = new SeriesReader(db, projectId, seriesId, span);
  // The lowest level's cells, each with the first timestamp written into it.
  let starts: number[] = [];
  const firstWritten: number[] = [];
  for (let i = 0; i < written.length; i++) {
    const c = floorTo(written[i], LEVEL_SIZE[1]);
    if (starts.length === 0 || starts[starts.length - 1] !== c) {
      starts.push(c);
      firstWritten.push(written[i]);
    }
  }
  // Points appended after the end of a stored cell extend it; recomputing it would read every point of it
  // again, which for fast signals written in small batches is most of the work.
  const stored = await reader.rollups.cellsAt(1, starts);
  const changes = new Map<number, Summary | null>();
  for (const [i, start] of starts.entries()) {
    const old = stored.get(start);
    const end = start + LEVEL_SIZE[1];
    if (old && firstWritten[i] > old[F.lastAnyTs]) {
      changes.set(
        start,
        await fold(1, start, (walker) => {
          walker.summary(old);
          return reader.visitRaw(old[F.lastAnyTs] + 1, end, walker);
        }),
      );
    } else changes.set(start, await recompute(reader, 1, start));
  }
  await reader.rollups.update(1, changes);
  for (let level = 2; level <= TOP_LEVEL; level++) {
    const parents: number[] = [];
    for (const s of starts) {
      const c = floorTo(s, LEVEL_SIZE[level]);
      if (parents.length === 0 || parents[parents.length - 1] !== c) parents.push(c);
    }
    starts = parents;
    await refresh(reader, level, starts);
  }
}

/** After the points in [a, b) were deleted. */
export async function refreshAfterDelete(db: Queryable, projectId: number, seriesId: number, a: number, b: number): Promise<void> {
  const reader = new SeriesReader(db, projectId, seriesId);
  for (let level = 1; level <= TOP_LEVEL; level++) {
    const size = LEVEL_SIZE[level];
    await reader.rollups.removeRange(level, Math.ceil(a / size) * size, floorTo(b, size));
    const first = floorTo(a, size);
    const last = floorTo(b - 1, size);
    const edges = new Set<number>();
    if (first < a || first + size > b) edges.add(first);
    if (last + size > b) edges.add(last);
    await refresh(reader, level, edges);
  }
}
