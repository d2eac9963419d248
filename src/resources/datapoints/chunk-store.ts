/**
 * Raw points in SQL: rows of `datapoint_chunks`, each holding consecutive points of one series (see
 * `chunk-codec.ts`). Chunks of a series never overlap; a chunk's key is its first timestamp.
 */
import { prepare, type Db } from '../../storage/db.js';
import { decodeChunk, encodeChunk } from './chunk-codec.js';
import { emptyBlock, lowerBound, mergeBlocks, sliceBlock, type PointBlock } from './point-block.js';

/** Points per chunk: large enough that ingest writes few rows, small enough that a rewrite is cheap. */
export const CHUNK_POINTS = 1024;
/** String chunks also close at this many bytes of text. */
const CHUNK_STRING_BYTES = 256 * 1024;
/** Chunks read per query when walking a range. */
const READ_BATCH = 16;

export interface ChunkRow {
  start: number;
  end: number;
  n: number;
  data: Buffer;
}

const COLUMNS = 'start_ts AS start, end_ts AS end, n, data';

export class ChunkStore {
  constructor(
    private readonly db: Db,
    private readonly projectId: number,
    private readonly seriesId: number,
  ) {}

  /** Calls `fn` with every chunk that has points in [a, b), in time order, until it returns false. */
  forEach(a: number, b: number, fn: (row: ChunkRow) => boolean): void {
    const first = prepare(
      this.db,
      `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts <= ? ORDER BY start_ts DESC LIMIT 1`,
    ).get(this.projectId, this.seriesId, a) as ChunkRow | undefined;
    if (first && first.end >= a && !fn(first)) return;
    const next = prepare(
      this.db,
      `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts > ? AND start_ts < ? ORDER BY start_ts LIMIT ${READ_BATCH}`,
    );
    let after = first ? first.start : a - 1;
    for (;;) {
      const rows = next.all(this.projectId, this.seriesId, after, b) as ChunkRow[];
      for (const row of rows) if (!fn(row)) return;
      if (rows.length < READ_BATCH) return;
      after = rows[rows.length - 1].start;
    }
  }

  /** Calls `fn` with the chunks that have points before `t`, latest first, until it returns false. */
  forEachBefore(t: number, fn: (row: ChunkRow) => boolean): void {
    const stmt = prepare(
      this.db,
      `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts < ? ORDER BY start_ts DESC LIMIT 4`,
    );
    let before = t;
    for (;;) {
      const rows = stmt.all(this.projectId, this.seriesId, before) as ChunkRow[];
      for (const row of rows) if (!fn(row)) return;
      if (rows.length < 4) return;
      before = rows[rows.length - 1].start;
    }
  }

  /** The timestamp of the first point at or after `t` (Infinity when there is none). */
  nextPointAtOrAfter(t: number): number {
    const covering = prepare(
      this.db,
      `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts <= ? ORDER BY start_ts DESC LIMIT 1`,
    ).get(this.projectId, this.seriesId, t) as ChunkRow | undefined;
    if (covering && covering.end >= t) {
      const block = decodeChunk(covering.data);
      return block.ts[lowerBound(block, t)];
    }
    const next = prepare(
      this.db,
      'SELECT start_ts AS start FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts > ? ORDER BY start_ts LIMIT 1',
    ).get(this.projectId, this.seriesId, t) as { start: number } | undefined;
    return next ? next.start : Infinity;
  }

  /**
   * Writes points (sorted, distinct timestamps), overwriting stored points with the same timestamps.
   * Returns the series' points over the span the write touched: every stored point from the returned
   * block's first to its last timestamp is in it.
   */
  write(incoming: PointBlock): PointBlock {
    const isString = incoming.str !== null;
    const minTs = incoming.ts[0];
    const maxTs = incoming.ts[incoming.n - 1];
    const prev = prepare(
      this.db,
      `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts <= ? ORDER BY start_ts DESC LIMIT 1`,
    ).get(this.projectId, this.seriesId, minTs) as ChunkRow | undefined;
    const overlapped = prepare(
      this.db,
      `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts > ? AND start_ts <= ? ORDER BY start_ts`,
    ).all(this.projectId, this.seriesId, minTs, maxTs) as ChunkRow[];
    // Fill the chunk before the new points when it has room, so appends do not leave small chunks behind.
    const rewritten = prev && (prev.end >= minTs || prev.n < CHUNK_POINTS) ? [prev, ...overlapped] : overlapped;
    let old = emptyBlock(isString);
    for (const row of rewritten) old = mergeBlocks(old, decodeChunk(row.data));
    const merged = mergeBlocks(old, incoming);
    const remove = prepare(this.db, 'DELETE FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts = ?');
    for (const row of rewritten) remove.run(this.projectId, this.seriesId, row.start);
    this.insertChunks(merged);
    return merged;
  }

  /** Deletes the points in [a, b); returns whether any existed. */
  deleteRange(a: number, b: number): boolean {
    const lastBefore = (t: number) =>
      prepare(
        this.db,
        `SELECT ${COLUMNS} FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts < ? ORDER BY start_ts DESC LIMIT 1`,
      ).get(this.projectId, this.seriesId, t) as ChunkRow | undefined;
    // Only the chunks that reach over either end of the range keep some of their points.
    const edges: ChunkRow[] = [];
    const head = lastBefore(a);
    if (head && head.end >= a) edges.push(head);
    const tail = lastBefore(b);
    if (tail && tail.start >= a && tail.end >= b) edges.push(tail);
    const removed = prepare(
      this.db,
      'DELETE FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts >= ? AND start_ts < ? AND end_ts < ?',
    ).run(this.projectId, this.seriesId, a, b, b).changes;
    let changed = removed > 0;
    const remove = prepare(this.db, 'DELETE FROM datapoint_chunks WHERE project_id = ? AND series_id = ? AND start_ts = ?');
    for (const row of edges) {
      const block = decodeChunk(row.data);
      const i = lowerBound(block, a);
      const j = lowerBound(block, b);
      if (i === j) continue;
      changed = true;
      remove.run(this.projectId, this.seriesId, row.start);
      const kept = mergeBlocks(sliceBlock(block, 0, i), sliceBlock(block, j, block.n));
      if (kept.n > 0) this.insertChunks(kept);
    }
    return changed;
  }

  private insertChunks(block: PointBlock): void {
    const insert = prepare(
      this.db,
      'INSERT INTO datapoint_chunks (project_id, series_id, start_ts, end_ts, n, data) VALUES (?, ?, ?, ?, ?, ?)',
    );
    let i = 0;
    while (i < block.n) {
      let j = Math.min(block.n, i + CHUNK_POINTS);
      if (block.str) {
        let bytes = 0;
        for (let k = i; k < j; k++) {
          bytes += Buffer.byteLength(block.str[k] ?? '', 'utf8');
          if (bytes > CHUNK_STRING_BYTES && k > i) {
            j = k;
            break;
          }
        }
      }
      insert.run(this.projectId, this.seriesId, block.ts[i], block.ts[j - 1], j - i, encodeChunk(block, i, j));
      i = j;
    }
  }
}

/** Removes every point of the given series (their time series are being deleted). */
export function deleteSeriesChunks(db: Db, projectId: number, seriesIds: readonly number[]): void {
  const stmt = prepare(db, 'DELETE FROM datapoint_chunks WHERE project_id = ? AND series_id = ?');
  for (const id of seriesIds) stmt.run(projectId, id);
}
