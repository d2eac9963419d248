/**
 * The precomputed levels: summaries of aligned UTC cells of 15 minutes, 1 hour and 1 day. Each level's
 * cells tile the next one's, so a cell is computed from the level below. Quarter hours serve time zones
 * with half- and quarter-hour offsets and minute granularities that are multiples of 15; hours and days
 * serve the common granularities directly.
 *
 * Cells are stored in blocks of adjacent cells, one row per block. A cell is stored only when it holds at least MIN_CELL_POINTS points: below that, reading its points is as
 * cheap as reading its summary, and sparse series would otherwise pay a summary per point. A missing cell
 * therefore means "few points here; read them".
 */
const MINUTE = 60_000;

/** Cell length in ms by level; level 0 is the raw points. */
export const LEVEL_SIZE = [0, 15 * MINUTE, 60 * MINUTE, 24 * 60 * MINUTE] as const;
/**
 * Cells per stored row by level (4 hours, a day, 16 days): a query over a year of hours reads 365 rows,
 * not 8,760, and a write rewrites one small row per block it touches.
 */
export const CELLS_PER_BLOCK = [0, 16, 24, 16] as const;
export const TOP_LEVEL = 3;
export const MIN_CELL_POINTS = 32;

export const floorTo = (t: number, size: number) => Math.floor(t / size) * size;
export const ceilTo = (t: number, size: number) => Math.ceil(t / size) * size;

/**
 * The coarsest level whose cells hold no gap between points longer than `gap`: a gap inside a cell is
 * shorter than the cell. 0 (raw points) when even the finest cells are longer.
 */
export function levelHolding(gap: number): number {
  let level = 0;
  while (level < TOP_LEVEL && LEVEL_SIZE[level + 1] <= gap) level++;
  return level;
}
