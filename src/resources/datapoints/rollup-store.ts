/**
 * Rollups in SQL: one `datapoint_rollups` row per series, level and block of adjacent cells (see
 * `rollup-levels.ts`). A row's blob is a 32-bit mask of the cells present followed by their summaries, in
 * cell order.
 */
import { prepare, type Db } from '../../storage/db.js';
import { CELLS_PER_BLOCK, floorTo, LEVEL_SIZE } from './rollup-levels.js';
import { SUMMARY_FIELDS, type Summary } from './summary.js';

const HEADER = 8;
const CELL_BYTES = SUMMARY_FIELDS * 8;

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

function decodeBlock(blob: Buffer): Map<number, Summary> {
  const cells = new Map<number, Summary>();
  forEachCell(blob, (i, s) => cells.set(i, s));
  return cells;
}

function encodeBlock(cells: Map<number, Summary>): Buffer {
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

export class RollupStore {
  constructor(
    private readonly db: Db,
    private readonly projectId: number,
    private readonly seriesId: number,
  ) {}

  /** The stored cells of a level that start in [a, b), in time order. */
  cells(level: number, a: number, b: number): Cell[] {
    const size = LEVEL_SIZE[level];
    const rows = prepare(
      this.db,
      'SELECT block_start AS start, data FROM datapoint_rollups WHERE project_id = ? AND series_id = ? AND level = ? AND block_start >= ? AND block_start < ? ORDER BY block_start',
    ).all(this.projectId, this.seriesId, level, floorTo(a, blockSize(level)), b) as Array<{ start: number; data: Buffer }>;
    const out: Cell[] = [];
    for (const row of rows) {
      forEachCell(row.data, (i, s) => {
        const start = row.start + i * size;
        if (start >= a && start < b) out.push({ start, s });
      });
    }
    return out;
  }

  /** The stored cells among the given cell starts of a level, reading each block once. */
  cellsAt(level: number, starts: readonly number[]): Map<number, Summary> {
    const size = LEVEL_SIZE[level];
    const bsize = blockSize(level);
    const read = prepare(this.db, 'SELECT data FROM datapoint_rollups WHERE project_id = ? AND series_id = ? AND level = ? AND block_start = ?');
    const out = new Map<number, Summary>();
    const blocks = new Set(starts.map((start) => floorTo(start, bsize)));
    for (const block of blocks) {
      const row = read.get(this.projectId, this.seriesId, level, block) as { data: Buffer } | undefined;
      if (row) forEachCell(row.data, (i, s) => out.set(block + i * size, s));
    }
    return out;
  }

  /** Stores (or, for null, removes) cells of a level, rewriting each block they fall in once. */
  update(level: number, changes: ReadonlyMap<number, Summary | null>): void {
    const size = LEVEL_SIZE[level];
    const bsize = blockSize(level);
    const byBlock = new Map<number, Array<[number, Summary | null]>>();
    for (const [start, s] of changes) {
      const block = floorTo(start, bsize);
      let list = byBlock.get(block);
      if (!list) byBlock.set(block, (list = []));
      list.push([(start - block) / size, s]);
    }
    const read = prepare(this.db, 'SELECT data FROM datapoint_rollups WHERE project_id = ? AND series_id = ? AND level = ? AND block_start = ?');
    for (const [block, list] of byBlock) {
      const row = read.get(this.projectId, this.seriesId, level, block) as { data: Buffer } | undefined;
      const cells = row ? decodeBlock(row.data) : new Map<number, Summary>();
      for (const [i, s] of list) {
        if (s) cells.set(i, s);
        else cells.delete(i);
      }
      this.writeBlock(level, block, cells);
    }
  }

  /** Removes the cells of a level that start in [a, b). */
  removeRange(level: number, a: number, b: number): void {
    if (a >= b) return;
    const bsize = blockSize(level);
    const first = floorTo(a, bsize);
    const last = floorTo(b - 1, bsize);
    // Blocks wholly inside go at once; the (at most two) blocks across the ends keep their other cells.
    prepare(this.db, 'DELETE FROM datapoint_rollups WHERE project_id = ? AND series_id = ? AND level = ? AND block_start > ? AND block_start < ?').run(
      this.projectId,
      this.seriesId,
      level,
      first,
      last,
    );
    const changes = new Map<number, null>();
    const size = LEVEL_SIZE[level];
    for (const block of first === last ? [first] : [first, last]) {
      for (let start = Math.max(block, a); start < Math.min(block + bsize, b); start += size) changes.set(start, null);
    }
    this.update(level, changes);
  }

  private writeBlock(level: number, block: number, cells: Map<number, Summary>): void {
    if (cells.size === 0) {
      prepare(this.db, 'DELETE FROM datapoint_rollups WHERE project_id = ? AND series_id = ? AND level = ? AND block_start = ?').run(
        this.projectId,
        this.seriesId,
        level,
        block,
      );
      return;
    }
    prepare(
      this.db,
      'INSERT INTO datapoint_rollups (project_id, series_id, level, block_start, data) VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, series_id, level, block_start) DO UPDATE SET data = excluded.data',
    ).run(this.projectId, this.seriesId, level, block, encodeBlock(cells));
  }
}

/** Removes every rollup of the given series (their time series are being deleted). */
export function deleteSeriesRollups(db: Db, projectId: number, seriesIds: readonly number[]): void {
  const stmt = prepare(db, 'DELETE FROM datapoint_rollups WHERE project_id = ? AND series_id = ?');
  for (const id of seriesIds) stmt.run(projectId, id);
}
