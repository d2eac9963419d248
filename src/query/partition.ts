/**
 * Parallel retrieval: `partition: "m/n"` splits a result into n disjoint parts that together are exactly the
 * unpartitioned result. Items are assigned by id, so membership never changes while a client pages.
 *
 * Ids are dealt out in runs of PARTITION_RUN consecutive ids rather than one by one: ids are allocated in
 * creation order, so rows with neighbouring ids sit on the same table pages, and a partition that reads
 * runs touches a page once instead of every partition touching every page. What counts as consecutive is
 * the id's count (storage/ids.ts): ids since ID_FLOOR take one slot of ID_SLOT each; ids below it, of
 * databases written before, are consecutive integers.
 */
import { badRequest } from '../http/errors.js';
import { ID_FLOOR, ID_SLOT } from '../storage/ids.js';
import { Sql } from '../storage/sql.js';

export const MAX_PARTITIONS = 10;

/** Consecutive ids that go to the same partition. */
export const PARTITION_RUN = 16;

export interface Partition {
  index: number;
  count: number;
}

export function parsePartition(value: string | undefined, field = 'partition'): Partition | undefined {
  if (value === undefined) return undefined;
  const match = /^([1-9]\d*)\/([1-9]\d*)$/.exec(value);
  if (!match) throw badRequest(`${field}: expected "m/n" with whole numbers 1 <= m <= n <= ${MAX_PARTITIONS}, got ${JSON.stringify(value)}`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count > MAX_PARTITIONS) throw badRequest(`${field}: at most ${MAX_PARTITIONS} partitions are allowed, got ${count}`);
  if (index > count) throw badRequest(`${field}: partition ${index} does not exist when there are ${count} partitions`);
  return { index, count };
}

/** The partition (1 to `count`) an id belongs to; partitionCondition is the same in SQL. */
export function partitionOf(id: number, count: number): number {
  const run = id < ID_FLOOR ? Math.floor(id / PARTITION_RUN) : Math.floor(id / (ID_SLOT * PARTITION_RUN));
  return (run % count) + 1;
}

export function partitionCondition(partition: Partition | undefined, idColumn: string): Sql | undefined {
  if (!partition || partition.count === 1) return undefined;
  const run = `CASE WHEN ${idColumn} < ${ID_FLOOR} THEN ${idColumn} / ${PARTITION_RUN} ELSE ${idColumn} / ${ID_SLOT * PARTITION_RUN} END`;
  return new Sql(`(${run}) % ${partition.count} = ${partition.index - 1}`);
}
