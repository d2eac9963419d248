/**
 * The change feed of a project's instances, which sync reads: every write of an instance row (an apply that
 * changes it, a delete that leaves its tombstone) stamps it with the next position of the project's feed,
 * `change_seq`, so "what changed since" is a range of that column, read in order through an index.
 *
 * A reader must never see a position before an earlier one is visible, or it would step past a change that
 * commits later. Positions come from one counter row per project, which a writing transaction updates
 * before it touches any instance and holds (a row lock, on SQLite the database's write lock) until it
 * commits: the next writer takes its positions only after the previous one committed, so positions become
 * visible in their order. The cost is that instance writes of one project commit one at a time.
 */
import type { Reader } from '../../storage/read-pool.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';

/**
 * Takes `count` positions of the project's feed and returns the last of them (the first is `last - count + 1`).
 * With `count` 0 it only takes the counter: a write calls it first, so that it waits for the previous writer
 * before it locks any instance (two writers locking in opposite orders would deadlock).
 */
export async function claimChanges(db: Queryable, projectId: number, count: number): Promise<number> {
  const row = await db.get<{ seq: number }>(
    sql`INSERT INTO dm_changes (project_id, seq) VALUES (${projectId}, ${count}) ON CONFLICT (project_id) DO UPDATE SET seq = dm_changes.seq + excluded.seq RETURNING seq`,
  );
  return Number(row!.seq);
}

/** The last position of the project's feed that a reader can see. */
export async function lastChange(reads: Reader | Queryable, projectId: number): Promise<number> {
  const [row] = await reads.all<{ seq: number }>(sql`SELECT seq FROM dm_changes WHERE project_id = ${projectId}`);
  return row ? Number(row.seq) : 0;
}
