/**
 * The change log of data point subscriptions. Every write that changes what a subscription delivers (points
 * inserted into or deleted from a series it holds, a series joining or leaving it) records it here, in the
 * write's own transaction: a write that rolls back leaves nothing, and one that commits leaves all of it.
 * Each recording takes the next position of the project's counter (storage/positions.ts), so positions
 * become visible in the order their writes commit, and a reader that has read up to a position has seen
 * every change before it. A subscription partition's stream is its rows in position order; a cursor is a
 * position in it.
 *
 * A row holds one series' change of one recording, for one subscription partition: the points inserted
 * (encoded as a chunk, chunk-codec.ts), the ranges deleted, or the series added or removed. It keeps what
 * the series was at the time (its identifiers, type and data set), so it reads the same after the series
 * changed or went. Once committed, waiters of the subscriptions are woken (storage/changes.ts).
 */
import type { Services } from '../../http/services.js';
import type { InstanceId } from '../../query/refs.js';
import { insertRows } from '../../storage/items.js';
import { claimPositions, counterTable, lastPosition } from '../../storage/positions.js';
import type { TableDef } from '../../storage/schema.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { encodeChunk } from '../datapoints/chunk-codec.js';
import type { PointBlock } from '../datapoints/point-block.js';
import { inCategoriesOf } from '../securitycategories/visibility.js';

const COUNTER = 'subscription_positions';

export const changeLogTables: readonly TableDef[] = [
  counterTable(COUNTER),
  {
    name: 'subscription_changes',
    columns: {
      project_id: { type: 'integer', notNull: true },
      subscription_id: { type: 'integer', notNull: true },
      part: { type: 'integer', notNull: true },
      pos: { type: 'integer', notNull: true },
      series_id: { type: 'integer', notNull: true },
      kind: { type: 'integer', notNull: true },
      /** Results the change counts for: points, ranges, or 1 for a series added or removed. */
      n: { type: 'integer', notNull: true },
      time: { type: 'integer', notNull: true },
      external_id: { type: 'text' },
      instance_space: { type: 'text' },
      instance_external_id: { type: 'text' },
      is_string: { type: 'integer', notNull: true },
      data_set_id: { type: 'integer' },
      security_categories: { type: 'text' },
      data: { type: 'blob' },
    },
    primaryKey: ['project_id', 'subscription_id', 'part', 'pos', 'series_id', 'kind'],
    withoutRowid: true,
  },
];

/** What a change row keeps of its series. */
export interface SeriesIdentity {
  id: number;
  externalId: string | null;
  instanceId: InstanceId | null;
  isString: boolean;
  dataSetId: number | null;
  securityCategories: string | null;
}

export const KIND = { upsert: 0, delete: 1, added: 2, removed: 3 } as const;

/** A change of one series' data points. */
export type DataChange =
  | { kind: 'upsert'; series: SeriesIdentity; points: PointBlock }
  | { kind: 'delete'; series: SeriesIdentity; ranges: ReadonlyArray<{ begin: number; end: number }> };

/** A series joining (`added`) or leaving a subscription. */
export interface MembershipChange {
  subscriptionId: number;
  part: number;
  series: SeriesIdentity;
  added: boolean;
}

const COLUMNS = [
  'project_id',
  'subscription_id',
  'part',
  'pos',
  'series_id',
  'kind',
  'n',
  'time',
  'external_id',
  'instance_space',
  'instance_external_id',
  'is_string',
  'data_set_id',
  'security_categories',
  'data',
];

interface Entry {
  subscriptionId: number;
  part: number;
  series: SeriesIdentity;
  kind: number;
  n: number;
  data: Buffer | null;
}

/** What recording needs of a write: its transaction, its clock, and the feed that wakes waiters (absent: none is woken). */
export type LogWriter = Pick<Services, 'db' | 'now' | 'changes'>;

/** The area and key of the changes a waiter of a subscription waits for (storage/changes.ts). */
export const subscriptionChange = (projectId: number, subscriptionId: number) => ({ area: 'subscriptions', projectId, key: String(subscriptionId) });

async function record(services: LogWriter, projectId: number, entries: readonly Entry[]): Promise<void> {
  if (entries.length === 0) return;
  const { db } = services;
  const pos = await claimPositions(db, COUNTER, projectId, 1);
  const time = services.now();
  const rows = entries.map((e) => {
    const s = e.series;
    return [projectId, e.subscriptionId, e.part, pos, s.id, e.kind, e.n, time, s.externalId, s.instanceId?.space ?? null, s.instanceId?.externalId ?? null, s.isString ? 1 : 0, s.dataSetId, s.securityCategories, e.data];
  });
  await insertRows(db, 'subscription_changes', COLUMNS, rows);
  const woken = [...new Set(entries.map((e) => e.subscriptionId))];
  await services.changes?.record(db, woken.map((id) => subscriptionChange(projectId, id)));
}

/** Where each of these series is held: its subscriptions, each with the partition the series is in there. */
async function holders(db: Queryable, projectId: number, seriesIds: readonly number[]): Promise<Map<number, Array<{ subscriptionId: number; part: number }>>> {
  const out = new Map<number, Array<{ subscriptionId: number; part: number }>>();
  const rows = await db.all<{ subscription_id: number; series_id: number; part: number }>(
    sql`SELECT subscription_id, series_id, part FROM subscription_series WHERE project_id = ${projectId} AND series_id IN (${db.dialect.idList(seriesIds)})`,
  );
  for (const r of rows) {
    const seriesId = r.series_id;
    const list = out.get(seriesId) ?? [];
    list.push({ subscriptionId: r.subscription_id, part: r.part });
    out.set(seriesId, list);
  }
  return out;
}

/**
 * Records changes of data points, in the writer's transaction, for every subscription that holds their
 * series. The writer holds the series' rows locked, as membership changes of them do, so a series joins or
 * leaves a subscription either before this write or after it, never during it.
 */
export async function recordDataChanges(services: LogWriter, projectId: number, changes: readonly DataChange[]): Promise<void> {
  if (changes.length === 0) return;
  const held = await holders(services.db, projectId, changes.map((c) => c.series.id));
  if (held.size === 0) return;
  const entries: Entry[] = [];
  for (const c of changes) {
    const data =
      c.kind === 'upsert' ? encodeChunk(c.points, 0, c.points.n) : Buffer.from(JSON.stringify(c.ranges.map((r) => [r.begin, r.end])));
    const n = c.kind === 'upsert' ? c.points.n : c.ranges.length;
    for (const h of held.get(c.series.id) ?? []) entries.push({ ...h, series: c.series, kind: KIND[c.kind], n, data });
  }
  await record(services, projectId, entries);
}

/** Records series joining and leaving subscriptions, in the transaction that changes the membership. */
export function recordMembershipChanges(services: LogWriter, projectId: number, changes: readonly MembershipChange[]): Promise<void> {
  return record(
    services,
    projectId,
    changes.map((c) => ({ subscriptionId: c.subscriptionId, part: c.part, series: c.series, kind: c.added ? KIND.added : KIND.removed, n: 1, data: null })),
  );
}

/** A row of a partition's stream. */
export interface ChangeRow {
  pos: number;
  series_id: number;
  kind: number;
  n: number;
  external_id: string | null;
  instance_space: string | null;
  instance_external_id: string | null;
  is_string: number;
  data_set_id: number | null;
  data: Uint8Array | null;
}

/** The ranges of a delete row. */
export function deletedRanges(data: Uint8Array): Array<[number, number]> {
  return JSON.parse(Buffer.from(data).toString('utf8')) as Array<[number, number]>;
}

/** A partition of one subscription. */
export interface Partition {
  projectId: number;
  subscriptionId: number;
  part: number;
}

const where = (p: Partition) => sql`project_id = ${p.projectId} AND subscription_id = ${p.subscriptionId} AND part = ${p.part}`;

/** The first `limit` positions after `after` in the partition's stream, each with the results its rows count for. */
export function positionsAfter(db: Queryable, p: Partition, after: number, limit: number): Promise<Array<{ pos: number; n: number }>> {
  return db.all<{ pos: number; n: number }>(
    sql`SELECT pos, SUM(n) AS n FROM subscription_changes WHERE ${where(p)} AND pos > ${after} GROUP BY pos ORDER BY pos LIMIT ${limit}`,
  );
}

/** A change row keeps its series' security categories as they were, as JSON text. */
const inCategories = inCategoriesOf('security_categories');

/**
 * The partition's rows after `after`, up to and including `upTo`, in stream order; with `memberOf`, only
 * those of series that were in no category but these when the change was made.
 */
export function changesBetween(db: Queryable, p: Partition, after: number, upTo: number, memberOf?: readonly number[]): Promise<ChangeRow[]> {
  const categories = memberOf === undefined ? sql`` : sql` AND ${inCategories('subscription_changes', memberOf)}`;
  return db.all<ChangeRow>(
    sql`SELECT pos, series_id, kind, n, external_id, instance_space, instance_external_id, is_string, data_set_id, data
        FROM subscription_changes WHERE ${where(p)} AND pos > ${after} AND pos <= ${upTo}${categories} ORDER BY pos, series_id, kind`,
  );
}

/** The last position of the project's log that a reader can see: where a stream that starts "now" starts. */
export function lastLogPosition(db: Queryable, projectId: number): Promise<number> {
  return lastPosition(db, COUNTER, projectId);
}

/** The position a stream starting at `time` starts after: its last change recorded before then. */
export async function positionBefore(db: Queryable, p: Partition, time: number): Promise<number> {
  const row = await db.get<{ pos: number }>(sql`SELECT pos FROM subscription_changes WHERE ${where(p)} AND time < ${time} ORDER BY pos DESC LIMIT 1`);
  return row ? row.pos : 0;
}

/** Deletes a subscription's log (with the subscription). */
export async function deleteChanges(db: Queryable, projectId: number, subscriptionId: number): Promise<void> {
  await db.run(sql`DELETE FROM subscription_changes WHERE project_id = ${projectId} AND subscription_id = ${subscriptionId}`);
}

/** How long the log keeps a change: the service keeps a week of it, and clients are told older changes may go. */
export const CHANGE_RETENTION_MS = 7 * 24 * 3600_000;
const RETENTION_BATCH = 1000;

/**
 * Deletes the changes of a partition recorded before `cutoff`. They lie at the start of its stream (positions
 * follow write time), so each step reads the oldest batch by the primary key and deletes its old prefix: the
 * cost follows what is deleted, not the size of the log.
 */
export async function deleteChangesBefore(db: Queryable, p: Partition, cutoff: number, signal: AbortSignal): Promise<number> {
  let deleted = 0;
  for (let after = 0; !signal.aborted; ) {
    const rows = await db.all<{ pos: number; time: number }>(
      sql`SELECT pos, MAX(time) AS time FROM subscription_changes WHERE ${where(p)} AND pos > ${after} GROUP BY pos ORDER BY pos LIMIT ${RETENTION_BATCH}`,
    );
    const old = rows.findIndex((r) => Number(r.time) >= cutoff);
    const last = old === -1 ? rows.length - 1 : old - 1;
    if (last < 0) break;
    const upTo = Number(rows[last].pos);
    deleted += (await db.run(sql`DELETE FROM subscription_changes WHERE ${where(p)} AND pos > ${after} AND pos <= ${upTo}`)).changes;
    if (old !== -1 || rows.length < RETENTION_BATCH) break;
    after = upTo;
  }
  return deleted;
}
