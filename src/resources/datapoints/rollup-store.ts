/**
 * Rollups in SQL: one `datapoint_rollups` row per series, level and block of adjacent cells (see
 * `rollup-levels.ts`). A row's blob is a 32-bit mask of the cells present followed by their summaries, in
 * cell order.
 *
 * A store remembers the blocks it looked up by cell (`cellsAt`) or changed (`update`), as the database holds
 * them (within a write, its series' rollups change only through it): keeping rollups current after a write
 * reads each block it changes once, writes the changed blocks together, and recomputes a level's cells from
 * the blocks of the level below that it just wrote, without reading them again.
 */
import { Sql, sql, type SqlValue } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { CELLS_PER_BLOCK, floorTo, LEVEL_SIZE } from './rollup-levels.js';
import { SUMMARY_FIELDS, type Summary } from './summary.js';

const HEADER = 8;
const CELL_BYTES = SUMMARY_FIELDS * 8;

/** A block's cells by their index in it. */
type Cells = Map<number, Summary>;

export interface Cell {
  start: number;
  s: Summary;
}

const blockSize = (level: number) => LEVEL_SIZE[level] * CELLS_PER_BLOCK[level];

/** The cells of a block blob: `visit(index within the block, summary)` in cell order. */
function forEachCell(blob: Buffer, visit: (i: number, s: Summary) => void): void {
  // Typed-array views need 8-byte alignment: copy unless the blob already has it.
  let aligned: Uint8Array = blob;
  if (blob.byteOffset % 8 !== 0) {
    aligned = new Uint8Array(blob.length);
    aligned.set(blob);
  }
  const mask = blob.readUInt32LE(0);
  const all = new Float64Array(aligned.buffer, aligned.byteOffset + HEADER, (aligned.length - HEADER) / 8);
  let at = 0;
  for (let i = 0; i < 32; i++) {
    if (mask & (1 << i)) {
      visit(i, all.subarray(at, at + SUMMARY_FIELDS));
      at += SUMMARY_FIELDS;
    }
  }
}

function decodeBlock(blob: Buffer): Cells {
  const cells: Cells = new Map();
  forEachCell(blob, (i, s) => cells.set(i, s));
  return cells;
}

function encodeBlock(cells: Cells): Buffer {
  const indexes = [...cells.keys()].sort((x, y) => x - y);
  const out = Buffer.alloc(HEADER + indexes.length * CELL_BYTES);
  let mask = 0;
  indexes.forEach((i, k) => {
    mask |= 1 << i;
    const s = cells.get(i)!;
    Buffer.from(s.buffer, s.byteOffset, CELL_BYTES).copy(out, HEADER + k * CELL_BYTES);
  });
  out.writeUInt32LE(mask >>> 0, 0);
  return out;
}

/** Blocks per statement when a statement names many. */
const BLOCKS_PER_STATEMENT = 500;
/** Rows written per INSERT statement. */
const INSERT_ROWS = 100;

/** Upsert statement texts by row count: the same string each time, for the statement caches. */
const upsertTexts: string[] = [];
const upsertText = (rows: number) =>
  (upsertTexts[rows] ??= `INSERT INTO datapoint_rollups (project_id, series_id, level, block_start, data) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?)').join(', ')}
   ON CONFLICT (project_id, series_id, level, block_start) DO UPDATE SET data = excluded.data`);

export class RollupStore {
  /** The condition selecting this series' rollups. */
  private readonly series: Sql;
  /** By level: the blocks as the database holds them (an empty map: no row), for the blocks read whole or written. */
  private readonly known: Array<Map<number, Cells>> = [];

  constructor(
    private readonly db: Queryable,
    private readonly projectId: number,
    private readonly seriesId: number,
  ) {
    this.series = sql`project_id = ${projectId} AND series_id = ${seriesId}`;
  }

  private knownOf(level: number): Map<number, Cells> {
    return (this.known[level] ??= new Map());
  }

  /** The stored cells of a level that start in [a, b), in time order. */
  async cells(level: number, a: number, b: number): Promise<Cell[]> {
    const size = LEVEL_SIZE[level];
    const bsize = blockSize(level);
    const first = floorTo(a, bsize);
    const out: Cell[] = [];
    const known = this.knownBlocks(level, first, b);
    if (known) {
      for (const [block, cells] of known) {
        for (const i of [...cells.keys()].sort((x, y) => x - y)) {
          const start = block + i * size;
          if (start >= a && start < b) out.push({ start, s: cells.get(i)! });
        }
      }
      return out;
    }
    const rows = await this.db.all<{ start: number; data: Buffer }>(
      sql`SELECT block_start AS "start", data FROM datapoint_rollups WHERE ${this.series} AND level = ${level} AND block_start >= ${first} AND block_start < ${b} ORDER BY block_start`,
    );
    for (const row of rows) {
      forEachCell(row.data, (i, s) => {
        const start = row.start + i * size;
        if (start >= a && start < b) out.push({ start, s });
      });
    }
    return out;
  }

  /** The blocks of a level from `first` up to `b`, when every one of them is known; else undefined. */
  private knownBlocks(level: number, first: number, b: number): Array<[number, Cells]> | undefined {
    const known = this.known[level];
    if (!known || known.size === 0) return undefined;
    const out: Array<[number, Cells]> = [];
    for (let block = first; block < b; block += blockSize(level)) {
      const cells = known.get(block);
      if (!cells) return undefined;
      out.push([block, cells]);
    }
    return out;
  }

  /** Reads the blocks of a level not known yet, in as few statements as their number allows. */
  private async load(level: number, blocks: Iterable<number>): Promise<void> {
    const known = this.knownOf(level);
    const missing = [...blocks].filter((b) => !known.has(b));
    for (let i = 0; i < missing.length; i += BLOCKS_PER_STATEMENT) {
      const part = missing.slice(i, i + BLOCKS_PER_STATEMENT);
      for (const b of part) known.set(b, new Map());
      const rows = await this.db.all<{ start: number; data: Buffer }>(
        sql`SELECT block_start AS "start", data FROM datapoint_rollups WHERE ${this.series} AND level = ${level} AND block_start IN (${part})`,
      );
      for (const row of rows) known.set(row.start, decodeBlock(row.data));
    }
  }

  /** The stored cells among the given cell starts of a level, reading each block once. */
  async cellsAt(level: number, starts: readonly number[]): Promise<Map<number, Summary>> {
    const size = LEVEL_SIZE[level];
    const bsize = blockSize(level);
    const blocks = new Set(starts.map((start) => floorTo(start, bsize)));
    await this.load(level, blocks);
    const known = this.knownOf(level);
    const out = new Map<number, Summary>();
    for (const block of blocks) for (const [i, s] of known.get(block)!) out.set(block + i * size, s);
    return out;
  }

  /** Stores (or, for null, removes) cells of a level, rewriting each block they fall in once. */
  async update(level: number, changes: ReadonlyMap<number, Summary | null>): Promise<void> {
    const size = LEVEL_SIZE[level];
    const bsize = blockSize(level);
    const byBlock = new Map<number, Array<[number, Summary | null]>>();
    for (const [start, s] of changes) {
      const block = floorTo(start, bsize);
      let list = byBlock.get(block);
      if (!list) byBlock.set(block, (list = []));
      list.push([(start - block) / size, s]);
    }
    await this.load(level, byBlock.keys());
    const known = this.knownOf(level);
    const written: SqlValue[][] = [];
    const emptied: number[] = [];
    for (const [block, list] of byBlock) {
      const cells = known.get(block)!;
      // A block without cells has no row.
      const stored = cells.size > 0;
      for (const [i, s] of list) {
        if (s) cells.set(i, s);
        else cells.delete(i);
      }
      if (cells.size > 0) written.push([this.projectId, this.seriesId, level, block, encodeBlock(cells)]);
      else if (stored) emptied.push(block);
    }
    for (let i = 0; i < written.length; i += INSERT_ROWS) {
      const part = written.slice(i, i + INSERT_ROWS);
      await this.db.run(new Sql(upsertText(part.length), part.flat()));
    }
    for (let i = 0; i < emptied.length; i += BLOCKS_PER_STATEMENT) {
      await this.db.run(
        sql`DELETE FROM datapoint_rollups WHERE ${this.series} AND level = ${level} AND block_start IN (${emptied.slice(i, i + BLOCKS_PER_STATEMENT)})`,
      );
    }
  }

  /** Removes the cells of a level that start in [a, b). */
  async removeRange(level: number, a: number, b: number): Promise<void> {
    if (a >= b) return;
    const bsize = blockSize(level);
    const first = floorTo(a, bsize);
    const last = floorTo(b - 1, bsize);
    // Blocks wholly inside go at once; the (at most two) blocks across the ends keep their other cells.
    await this.db.run(sql`DELETE FROM datapoint_rollups WHERE ${this.series} AND level = ${level} AND block_start > ${first} AND block_start < ${last}`);
    const known = this.knownOf(level);
    for (const block of known.keys()) if (block > first && block < last) known.set(block, new Map());
    const changes = new Map<number, null>();
    const size = LEVEL_SIZE[level];
    for (const block of first === last ? [first] : [first, last]) {
      for (let start = Math.max(block, a); start < Math.min(block + bsize, b); start += size) changes.set(start, null);
    }
    await this.update(level, changes);
  }
}

/** Removes every rollup of the given series (their time series are being deleted). */
export async function deleteSeriesRollups(db: Queryable, projectId: number, seriesIds: readonly number[]): Promise<void> {
  for (let i = 0; i < seriesIds.length; i += BLOCKS_PER_STATEMENT) {
    await db.run(sql`DELETE FROM datapoint_rollups WHERE project_id = ${projectId} AND series_id IN (${seriesIds.slice(i, i + BLOCKS_PER_STATEMENT)})`);
  }
}
