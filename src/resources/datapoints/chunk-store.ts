/**
 * Raw points in SQL: rows of `datapoint_chunks`, each holding consecutive points of one series (see
 * `chunk-codec.ts`). Chunks of a series never overlap; a chunk's key is its first timestamp.
 *
 * Walks read chunks in batches, one statement per batch, and decode them synchronously. A walk that knows
 * how many points it will take reads about the chunks that hold them; others start small (a walk often stops
 * within its first chunks) and read more per statement while they go on.
 */
import { Sql, sql, type SqlValue } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { decodeChunk, encodeChunk } from './chunk-codec.js';
import { emptyBlock, lowerBound, mergeBlocks, sliceBlock, type PointBlock } from './point-block.js';

/** Points per chunk: large enough that ingest writes few rows, small enough that a rewrite is cheap. */
export const CHUNK_POINTS = 1024;
/** String chunks also close at this many bytes of text. */
const CHUNK_STRING_BYTES = 256 * 1024;
/** Chunks read by the first query of a walk that does not say how many points it takes, and at most by one query. */
const READ_BATCH = 16;
const MAX_READ_BATCH = 256;
/** Chunks read by the first query of a walk back in time (it usually stops in the first one). */
const BACK_BATCH = 2;
/** Chunks written per INSERT statement (a chunk is up to 256 KiB of string data). */
const INSERT_ROWS = 32;
/** Series per statement when a statement names many. */
const SERIES_PER_STATEMENT = 100;

export interface ChunkRow {
  start: number;
  end: number;
  n: number;
  data: Buffer;
}

const COLUMNS = Sql.raw('start_ts AS "start", end_ts AS "end", n, data');
const INSERT_COLUMNS = '(project_id, series_id, start_ts, end_ts, n, data)';

/** INSERT statement texts by row count: the same string each time, for the statement caches. */
const insertTexts: string[] = [];
const insertText = (rows: number) =>
  (insertTexts[rows] ??= `INSERT INTO datapoint_chunks ${INSERT_COLUMNS} VALUES ${Array(rows).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`);

export class ChunkStore {
  /** The condition selecting this series' chunks. */
  private readonly series: Sql;

  constructor(
    private readonly db: Queryable,
    private readonly projectId: number,
    private readonly seriesId: number,
  ) {
    this.series = sql`project_id = ${projectId} AND series_id = ${seriesId}`;
  }

  /** The first timestamp of the chunk holding `t` or, if none does, of the last chunk before it; else `t`. */
  private startOfChunkAt(t: number): Sql {
    return sql`coalesce((SELECT start_ts FROM datapoint_chunks WHERE ${this.series} AND start_ts <= ${t} ORDER BY start_ts DESC LIMIT 1), ${t})`;
  }

  /**
   * Calls `fn` with every chunk that has points in [a, b), in time order, until it returns false. `points`:
   * how many points the walk expects to take, when it knows.
   */
  async forEach(a: number, b: number, fn: (row: ChunkRow) => boolean, points?: number): Promise<void> {
    // Chunks to hold the points not passed yet (and one for a chunk that starts before a), or more than last time.
    let passed = 0;
    let batch = 0;
    const nextBatch = () => {
      const left = points === undefined ? 0 : points - passed;
      const grown = batch === 0 ? READ_BATCH : batch * 4;
      return Math.min(MAX_READ_BATCH, left > 0 ? Math.ceil(left / CHUNK_POINTS) + 1 : grown);
    };
    batch = nextBatch();
    // The chunk holding a and the ones after it, in one statement.
    let rows = await this.db.all<ChunkRow>(
      sql`SELECT ${COLUMNS} FROM datapoint_chunks WHERE ${this.series} AND start_ts >= ${this.startOfChunkAt(a)} AND start_ts < ${b} ORDER BY start_ts LIMIT ${batch}`,
    );
    for (;;) {
      for (const row of rows) {
        if (row.end < a) continue;
        if (!fn(row)) return;
        passed += row.n;
      }
      if (rows.length < batch) return;
      const after = rows[rows.length - 1].start;
      batch = nextBatch();
      rows = await this.db.all<ChunkRow>(
        sql`SELECT ${COLUMNS} FROM datapoint_chunks WHERE ${this.series} AND start_ts > ${after} AND start_ts < ${b} ORDER BY start_ts LIMIT ${batch}`,
      );
    }
  }

  /** Calls `fn` with the chunks that have points before `t`, latest first, until it returns false. */
  async forEachBefore(t: number, fn: (row: ChunkRow) => boolean): Promise<void> {
    let before = t;
    let batch = BACK_BATCH;
    for (;;) {
      const rows = await this.db.all<ChunkRow>(
        sql`SELECT ${COLUMNS} FROM datapoint_chunks WHERE ${this.series} AND start_ts < ${before} ORDER BY start_ts DESC LIMIT ${batch}`,
      );
      for (const row of rows) if (!fn(row)) return;
      if (rows.length < batch) return;
      before = rows[rows.length - 1].start;
      batch = Math.min(MAX_READ_BATCH, batch * 4);
    }
  }

  /** The timestamp of the first point at or after `t` (Infinity when there is none). */
  async nextPointAtOrAfter(t: number): Promise<number> {
    // The chunk holding t (or the last before it) and the next one.
    const rows = await this.db.all<ChunkRow>(
      sql`SELECT ${COLUMNS} FROM datapoint_chunks WHERE ${this.series} AND start_ts >= ${this.startOfChunkAt(t)} ORDER BY start_ts LIMIT 2`,
    );
    for (const row of rows) {
      if (row.end < t) continue;
      if (row.start >= t) return row.start;
      const block = decodeChunk(row.data);
      return block.ts[lowerBound(block, t)];
    }
    return Infinity;
  }

  /**
   * Writes points (sorted, distinct timestamps), overwriting stored points with the same timestamps.
   * Returns the series' points over the span the write touched: every stored point from the returned
   * block's first to its last timestamp is in it.
   */
  async write(incoming: PointBlock): Promise<PointBlock> {
    const isString = incoming.str !== null;
    const minTs = incoming.ts[0];
    const maxTs = incoming.ts[incoming.n - 1];
    // The chunk holding minTs (or the last one before it), then every chunk starting up to maxTs.
    const rows = await this.db.all<ChunkRow>(
      sql`SELECT ${COLUMNS} FROM datapoint_chunks WHERE ${this.series} AND start_ts >= ${this.startOfChunkAt(minTs)} AND start_ts <= ${maxTs} ORDER BY start_ts`,
    );
    const prev = rows.length > 0 && rows[0].start <= minTs ? rows[0] : undefined;
    // Fill the chunk before the new points when it has room, so appends do not leave small chunks behind.
    const rewritten = prev && prev.end < minTs && prev.n >= CHUNK_POINTS ? rows.slice(1) : rows;
    let old = emptyBlock(isString);
    for (const row of rewritten) old = mergeBlocks(old, decodeChunk(row.data));
    const merged = mergeBlocks(old, incoming);
    // The rewritten chunks are consecutive: one range holds exactly them.
    if (rewritten.length > 0) {
      await this.db.run(
        sql`DELETE FROM datapoint_chunks WHERE ${this.series} AND start_ts >= ${rewritten[0].start} AND start_ts <= ${rewritten[rewritten.length - 1].start}`,
      );
    }
    await this.insertChunks(merged);
    return merged;
  }

  /** Deletes the points in [a, b); returns whether any existed. */
  async deleteRange(a: number, b: number): Promise<boolean> {
    // Only the chunks that reach over either end of the range keep some of their points: the last chunks
    // starting before a and before b.
    const lastBefore = (t: number) => sql`(SELECT start_ts FROM datapoint_chunks WHERE ${this.series} AND start_ts < ${t} ORDER BY start_ts DESC LIMIT 1)`;
    const candidates = await this.db.all<ChunkRow>(
      sql`SELECT ${COLUMNS} FROM datapoint_chunks WHERE ${this.series} AND start_ts IN (${lastBefore(a)}, ${lastBefore(b)}) ORDER BY start_ts`,
    );
    const edges = candidates.filter((row) => (row.start < a ? row.end >= a : row.end >= b));
    const removed = (await this.db.run(sql`DELETE FROM datapoint_chunks WHERE ${this.series} AND start_ts >= ${a} AND start_ts < ${b} AND end_ts < ${b}`)).changes;
    let changed = removed > 0;
    for (const row of edges) {
      const block = decodeChunk(row.data);
      const i = lowerBound(block, a);
      const j = lowerBound(block, b);
      if (i === j) continue;
      changed = true;
      await this.db.run(sql`DELETE FROM datapoint_chunks WHERE ${this.series} AND start_ts = ${row.start}`);
      const kept = mergeBlocks(sliceBlock(block, 0, i), sliceBlock(block, j, block.n));
      if (kept.n > 0) await this.insertChunks(kept);
    }
    return changed;
  }

  /** Stores a block as chunks, several per statement. */
  private async insertChunks(block: PointBlock): Promise<void> {
    const rows: SqlValue[] = [];
    let count = 0;
    const flush = async () => {
      if (count === 0) return;
      await this.db.run(new Sql(insertText(count), rows.splice(0)));
      count = 0;
    };
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
      rows.push(this.projectId, this.seriesId, block.ts[i], block.ts[j - 1], j - i, encodeChunk(block, i, j));
      if (++count === INSERT_ROWS) await flush();
      i = j;
    }
    await flush();
  }
}

/**
 * The last chunk starting before `before` of each series asked for (undefined where there is none), in one
 * statement per hundred series: the latest point of a series is almost always in it. Where planning is
 * cheap (SQLite) the statement is a UNION ALL of one ordered, limited subquery per series, each a seek
 * backwards in the primary key; where it is not (PostgreSQL, 41 ms to plan that UNION) the series are a
 * VALUES list joined to their last chunk's key, a `max` over the primary key. SQLite answered the join at
 * half the rate of the UNION (23,863 against 44,649 series/s), PostgreSQL the UNION at 0.04× the join.
 */
export async function lastChunksBefore(db: Queryable, projectId: number, wanted: ReadonlyArray<{ seriesId: number; before: number }>): Promise<Array<ChunkRow | undefined>> {
  const out: Array<ChunkRow | undefined> = new Array(wanted.length).fill(undefined);
  const integer = Sql.raw(db.dialect.types.integer);
  for (let from = 0; from < wanted.length; from += SERIES_PER_STATEMENT) {
    const part = wanted.slice(from, from + SERIES_PER_STATEMENT);
    let query: Sql;
    if (db.dialect.planning === 'low') {
      query = Sql.join(
        part.map(
          ({ seriesId, before }, k) =>
            sql`SELECT * FROM (SELECT ${Sql.raw(String(k))} AS k, ${COLUMNS} FROM datapoint_chunks WHERE project_id = ${projectId} AND series_id = ${seriesId} AND start_ts < ${before} ORDER BY start_ts DESC LIMIT 1) ${Sql.raw(`c${k}`)}`,
        ),
        ' UNION ALL ',
      );
    } else {
      const values = Sql.join(
        part.map(({ seriesId, before }, k) => sql`(CAST(${k} AS ${integer}), CAST(${seriesId} AS ${integer}), CAST(${before} AS ${integer}))`),
        ', ',
      );
      query = sql`SELECT w.column1 AS k, ${Sql.raw('c.start_ts AS "start", c.end_ts AS "end", c.n, c.data')} FROM (VALUES ${values}) w JOIN datapoint_chunks c ON c.project_id = ${projectId} AND c.series_id = w.column2 AND c.start_ts = (SELECT max(x.start_ts) FROM datapoint_chunks x WHERE x.project_id = ${projectId} AND x.series_id = w.column2 AND x.start_ts < w.column3)`;
    }
    for (const row of await db.all<ChunkRow & { k: number }>(query)) out[from + Number(row.k)] = row;
  }
  return out;
}

/** Removes every point of the given series (their time series are being deleted). */
export async function deleteSeriesChunks(db: Queryable, projectId: number, seriesIds: readonly number[]): Promise<void> {
  for (let i = 0; i < seriesIds.length; i += SERIES_PER_STATEMENT) {
    await db.run(sql`DELETE FROM datapoint_chunks WHERE project_id = ${projectId} AND series_id IN (${seriesIds.slice(i, i + SERIES_PER_STATEMENT)})`);
  }
}
