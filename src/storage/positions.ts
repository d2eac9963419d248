/**
 * Positions in a project's feed of changes: a write stamps what it changed with the next positions of a
 * counter, so "what changed since" is a range of positions, read in order through an index (data modeling's
 * instance changes, the change log of data point subscriptions).
 *
 * A reader must never see a position before an earlier one is visible, or it would step past a change that
 * commits later. Positions come from one counter row per project, which a writing transaction updates and
 * holds (a row lock, on SQLite the database's write lock) until it commits: the next writer takes its
 * positions only after the previous one committed, so positions become visible in their order. The cost is
 * that the writes of one project that take positions from one counter commit one at a time.
 */
import type { Reader } from './read-pool.js';
import type { TableDef } from './schema.js';
import { Sql, sql } from './sql.js';
import type { Queryable } from './store.js';

/** A counter table: its last position per project. */
export function counterTable(name: string): TableDef {
  return {
    name,
    columns: { project_id: { type: 'integer', notNull: true }, seq: { type: 'integer', notNull: true } },
    primaryKey: ['project_id'],
  };
}

/**
 * Takes `count` positions of the project's counter in `table` and returns the last of them (the first is
 * `last - count + 1`). With `count` 0 it only takes the counter, to wait for the previous writer before
 * locking anything else.
 */
export async function claimPositions(db: Queryable, table: string, projectId: number, count: number): Promise<number> {
  const t = Sql.raw(table);
  const row = await db.get<{ seq: number }>(
    sql`INSERT INTO ${t} (project_id, seq) VALUES (${projectId}, ${count}) ON CONFLICT (project_id) DO UPDATE SET seq = ${t}.seq + excluded.seq RETURNING seq`,
  );
  return Number(row!.seq);
}

/** The last position of the project's counter in `table` that a reader can see (0 before the first). */
export async function lastPosition(reads: Reader | Queryable, table: string, projectId: number): Promise<number> {
  const [row] = await reads.all<{ seq: number }>(sql`SELECT seq FROM ${Sql.raw(table)} WHERE project_id = ${projectId}`);
  return row ? Number(row.seq) : 0;
}
