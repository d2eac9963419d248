/**
 * The records table's partitions on PostgreSQL (SQLite keeps one table; there these are no-ops).
 *
 * `records` is partitioned by stream (`LIST (stream_id)`), each stream's partition created with the stream:
 * deleting a stream drops its partition, in one statement whatever it holds. A mutable stream's partition is
 * a plain table with the table's keys (tables.ts). An immutable stream's is partitioned again by time
 * (`RANGE (last_updated_time)`), in partitions of a fixed width created as writes reach them; its records
 * are only ever appended, at the time of their write, so retention drops the partitions that have wholly
 * expired instead of deleting their rows, and deletes rows only in the one partition that straddles the end
 * of the retention.
 *
 * Partition names carry the stream's id and, for time partitions, the index of the partition's interval
 * (`records_s12_p20420` holds `[20420 × width, 20421 × width)`), so they are found again without parsing
 * bounds. Lock order: a write locks its stream's row (streams.ts `claimStream`) before it creates a
 * partition; retention does the same before it drops one, so neither waits on the other in a cycle.
 */
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import type { Stream } from './streams.js';
import { recordsTable } from './tables.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The widths a stream's time partitions may have, the largest first. */
const WIDTHS = [30 * DAY, 7 * DAY, DAY, HOUR];

/**
 * The width of an immutable stream's time partitions: the largest that fits four times in its retention, so
 * that at most a quarter of the retention is held past its end in the straddling partition (an hour at
 * least), and 30 days for a stream that keeps its records.
 */
export function partitionWidthMs(stream: Pick<Stream, 'retentionMs'>): number {
  if (stream.retentionMs === undefined) return WIDTHS[0];
  return WIDTHS.find((w) => w * 4 <= stream.retentionMs!) ?? HOUR;
}

const streamPartition = (streamId: number) => `records_s${streamId}`;
const timePartition = (streamId: number, index: number) => `${streamPartition(streamId)}_p${index}`;

/** The key and unique indexes each leaf partition carries (the partitioned table has none). */
function keyClause(): string {
  return `(PRIMARY KEY (${recordsTable.primaryKey!.join(', ')}))`;
}

async function exists(tx: Queryable, name: string): Promise<boolean> {
  return (await tx.get<{ t: string | null }>(sql`SELECT to_regclass(${name})::text AS t`))!.t !== null;
}

/** Creates a new stream's partition, in the transaction that creates the stream. */
export async function createStreamPartition(tx: Queryable, streamId: number, mutable: boolean): Promise<void> {
  if (tx.dialect.kind !== 'postgres') return;
  const name = streamPartition(streamId);
  if (!mutable) {
    await tx.run(Sql.raw(`CREATE TABLE ${name} PARTITION OF records FOR VALUES IN (${streamId}) PARTITION BY RANGE (last_updated_time)`));
    return;
  }
  await tx.run(Sql.raw(`CREATE TABLE ${name} PARTITION OF records ${keyClause()} FOR VALUES IN (${streamId})`));
  for (const i of recordsTable.indexes ?? []) {
    if (i.unique) await tx.run(Sql.raw(`CREATE UNIQUE INDEX ${name}_${i.name} ON ${name} (${i.columns.join(', ')})${i.where ? ` WHERE ${i.where}` : ''}`));
  }
}

/** Makes sure an immutable stream has the time partition that a write at `time` goes to; in the write's transaction, with its stream locked. */
export async function ensureTimePartition(tx: Queryable, stream: Stream, time: number): Promise<void> {
  if (tx.dialect.kind !== 'postgres' || stream.type !== 'Immutable') return;
  const width = partitionWidthMs(stream);
  const index = Math.floor(time / width);
  const name = timePartition(stream.id, index);
  if (await exists(tx, name)) return;
  await tx.run(Sql.raw(`CREATE TABLE ${name} PARTITION OF ${streamPartition(stream.id)} ${keyClause()} FOR VALUES FROM (${index * width}) TO (${(index + 1) * width})`));
}

/** Drops a deleted stream's partition and so all its records. */
export async function dropStreamPartition(store: Queryable, streamId: number): Promise<void> {
  await store.run(Sql.raw(`DROP TABLE IF EXISTS ${streamPartition(streamId)}`));
}

/**
 * Drops, one transaction each, the time partitions of an immutable stream that lie wholly before `cutoff`,
 * and takes what they held off the stream's counts; the number of records dropped.
 */
export async function dropExpiredPartitions(store: Queryable, projectId: number, stream: Stream, cutoff: number, signal: AbortSignal): Promise<number> {
  if (store.dialect.kind !== 'postgres' || stream.type !== 'Immutable') return 0;
  const width = partitionWidthMs(stream);
  const prefix = `${streamPartition(stream.id)}_p`;
  const children = await store.all<{ name: string }>(
    sql`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(${streamPartition(stream.id)})`,
  );
  const expired = children
    .map((c) => Number(c.name.slice(prefix.length)))
    .filter((index) => (index + 1) * width <= cutoff)
    .sort((a, b) => a - b);
  let dropped = 0;
  for (const index of expired) {
    if (signal.aborted) break;
    dropped += await store.transaction(async (tx) => {
      const locked = await tx.get(sql`SELECT id FROM streams WHERE id = ${stream.id} AND project_id = ${projectId} FOR UPDATE`);
      const name = timePartition(stream.id, index);
      // Another run of the job may have dropped it since the list was read.
      if (!locked || !(await exists(tx, name))) return 0;
      const held = (await tx.get<{ n: number; bytes: number }>(Sql.raw(`SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM ${name}`)))!;
      await tx.run(sql`UPDATE streams SET record_count = record_count - ${Number(held.n)}, bytes = bytes - ${Number(held.bytes)} WHERE id = ${stream.id} AND project_id = ${projectId}`);
      await tx.run(Sql.raw(`DROP TABLE ${name}`));
      return Number(held.n);
    });
  }
  return dropped;
}
