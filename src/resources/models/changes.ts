/**
 * The change feed of a project's instances, which sync reads: every write of an instance row (an apply that
 * changes it, a delete that leaves its tombstone) stamps it with the next position of the project's feed,
 * `change_seq` (storage/positions.ts), so "what changed since" is a range of that column, read in order
 * through an index. Instance writes of one project therefore commit one at a time.
 */
import { claimPositions, lastPosition } from '../../storage/positions.js';
import type { Reader } from '../../storage/read-pool.js';
import type { Queryable } from '../../storage/store.js';

const COUNTER = 'dm_changes';

/**
 * Takes `count` positions of the project's feed and returns the last of them (the first is `last - count + 1`).
 * With `count` 0 it only takes the counter: a write calls it first, so that it waits for the previous writer
 * before it locks any instance (two writers locking in opposite orders would deadlock).
 */
export function claimChanges(db: Queryable, projectId: number, count: number): Promise<number> {
  return claimPositions(db, COUNTER, projectId, count);
}

/** The last position of the project's feed that a reader can see. */
export function lastChange(reads: Reader | Queryable, projectId: number): Promise<number> {
  return lastPosition(reads, COUNTER, projectId);
}
