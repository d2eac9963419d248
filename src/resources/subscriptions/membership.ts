/**
 * Which time series each subscription holds. A subscription listed by reference holds the series its
 * references name now (by external id or instance id: a reference to no series holds nothing until a series
 * takes that identifier); a filter subscription holds the series its filter matches, but never one with
 * security categories. `subscription_series` keeps the answer, brought up to date in the transaction of
 * every write that can change it: of a subscription (`syncSubscription`), and of time series (`syncSeries`,
 * called by the time series writes). A series joining or leaving is recorded in the change log.
 *
 * Two locks keep concurrent writes from missing each other (they cost nothing on SQLite, whose writes take
 * turns). Writes of subscriptions hold the project's member lock exclusively and writes of time series hold
 * it shared, so one sees the definitions or the series the other committed. And a membership change holds
 * the rows of the series it adds or removes, as data point writes do, so a data point write comes wholly
 * before a series joins (or leaves) a subscription or wholly after.
 */
import { scopeCondition } from '../../auth/access.js';
import { badRequest, formatPath } from '../../http/errors.js';
import type { ArrayProperty } from '../../query/catalog.js';
import { leaves, parseAdvancedFilter } from '../../query/filter.js';
import { parseQuery } from '../../query/list.js';
import { visibleAccess, type RequestScope } from '../../query/visibility.js';
import { insertRows, lockItems } from '../../storage/items.js';
import { holdLock } from '../../storage/locks.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { findSeries } from '../datapoints/series-lookup.js';
import { timeSeriesCatalog as TS, timeSeriesTable } from '../timeseries/model.js';
import { recordMembershipChanges, type LogWriter, type MembershipChange } from './change-log.js';
import { partitionOf } from './model.js';

type Path = Array<string | number>;

/** A subscription as membership reads it. */
export interface Definition {
  id: number;
  partitionCount: number;
  /** The filter of a filter subscription; null for one listed by reference. */
  filter: unknown;
}

/** Checks a subscription's filter: the time series' filter language, without `search`. */
export function checkFilter(raw: unknown, path: Path): void {
  const node = parseAdvancedFilter(raw, TS, path);
  if (leaves(node).some((l) => l.op === 'search')) throw badRequest(`${formatPath(path)}: a subscription's filter cannot use the search filter`);
}

/** The series (rows of `timeseries t`) a filter subscription holds. */
function filterCondition(db: Queryable, projectId: number, filter: unknown): Sql {
  const { where } = parseQuery(TS, projectId, undefined, filter, { db });
  const categories = TS.properties.securityCategories as ArrayProperty;
  return sql`${where} AND NOT EXISTS (SELECT 1 FROM ${Sql.raw(categories.table)} c WHERE c.project_id = t.project_id AND c.${Sql.raw(categories.itemColumn)} = t.id)`;
}

/** The series (rows of `timeseries t`) that the references of subscriptions name, as (subscription, series) rows. */
function referenced(projectId: number, condition: Sql): Sql {
  const join = (on: string) =>
    sql`SELECT m.subscription_id, t.id FROM subscription_members m JOIN timeseries t ON t.project_id = m.project_id AND ${Sql.raw(on)} WHERE m.project_id = ${projectId} AND ${condition}`;
  return sql`${join('t.external_id = m.external_id')} UNION ${join('t.instance_space = m.instance_space AND t.instance_external_id = m.instance_external_id')}`;
}

const pairKey = (subscriptionId: number, seriesId: number) => `${subscriptionId}:${seriesId}`;

interface Pair {
  subscriptionId: number;
  seriesId: number;
}

/**
 * Moves the table from the pairs held (`current`) to those wanted, holding the rows of the series that join
 * or leave, and records the change.
 */
async function apply(services: LogWriter, projectId: number, partitions: ReadonlyMap<number, number>, current: readonly Pair[], wanted: readonly Pair[]): Promise<void> {
  const { db } = services;
  const have = new Set(current.map((p) => pairKey(p.subscriptionId, p.seriesId)));
  const want = new Set(wanted.map((p) => pairKey(p.subscriptionId, p.seriesId)));
  const added = wanted.filter((p) => !have.has(pairKey(p.subscriptionId, p.seriesId)));
  const removed = current.filter((p) => !want.has(pairKey(p.subscriptionId, p.seriesId)));
  if (added.length === 0 && removed.length === 0) return;
  const seriesIds = [...new Set([...added, ...removed].map((p) => p.seriesId))];
  await lockItems(db, timeSeriesTable, projectId, seriesIds);
  const series = new Map((await findSeries(db, projectId, seriesIds.map((id) => ({ id })))).flatMap((s) => (s ? [[s.id, s] as const] : [])));
  const changes: MembershipChange[] = [];
  for (const [list, isAdded] of [[removed, false], [added, true]] as const) {
    for (const p of [...list].sort((a, b) => a.subscriptionId - b.subscriptionId || a.seriesId - b.seriesId)) {
      const s = series.get(p.seriesId);
      if (!s) continue;
      changes.push({ subscriptionId: p.subscriptionId, part: partitionOf(p.seriesId, partitions.get(p.subscriptionId)!), series: s, added: isAdded });
    }
  }
  const leaving = new Map<number, number[]>();
  for (const p of removed) leaving.set(p.subscriptionId, [...(leaving.get(p.subscriptionId) ?? []), p.seriesId]);
  for (const [subscriptionId, ids] of leaving) {
    await db.run(sql`DELETE FROM subscription_series WHERE project_id = ${projectId} AND subscription_id = ${subscriptionId} AND series_id IN (${db.dialect.idList(ids)})`);
  }
  const rows = added.map((p) => [projectId, p.subscriptionId, p.seriesId, partitionOf(p.seriesId, partitions.get(p.subscriptionId)!)]);
  await insertRows(db, 'subscription_series', ['project_id', 'subscription_id', 'series_id', 'part'], rows);
  await recordMembershipChanges(services, projectId, changes);
}

/** Brings the series a subscription holds up to date with its definition, in the transaction that (re)defined it. */
export async function syncSubscription(services: LogWriter, projectId: number, sub: Definition): Promise<void> {
  const { db } = services;
  await holdLock(db, 'subscriptionMembers', projectId);
  const wanted =
    sub.filter === null
      ? await db.all<{ id: number }>(sql`SELECT DISTINCT r.id FROM (${referenced(projectId, sql`m.subscription_id = ${sub.id}`)}) r`)
      : await db.all<{ id: number }>(sql`SELECT t.id FROM timeseries t WHERE ${filterCondition(db, projectId, sub.filter)}`);
  const current = await db.all<{ series_id: number }>(sql`SELECT series_id FROM subscription_series WHERE project_id = ${projectId} AND subscription_id = ${sub.id}`);
  await apply(
    services,
    projectId,
    new Map([[sub.id, sub.partitionCount]]),
    current.map((r) => ({ subscriptionId: sub.id, seriesId: r.series_id })),
    wanted.map((r) => ({ subscriptionId: sub.id, seriesId: r.id })),
  );
}

/** The subscriptions of a project with these row ids (all of them when absent), as membership reads them, in id order. */
export async function definitions(db: Queryable, projectId: number, ids?: readonly number[]): Promise<Definition[]> {
  const which = ids ? sql` AND id IN (${db.dialect.idList(ids)})` : Sql.raw('');
  const rows = await db.all<{ id: number; partition_count: number; filter: string | null }>(
    sql`SELECT id, partition_count, filter FROM subscriptions WHERE project_id = ${projectId}${which} ORDER BY id`,
  );
  return rows.map((r) => ({ id: r.id, partitionCount: r.partition_count, filter: r.filter === null ? null : JSON.parse(r.filter) }));
}

/**
 * Brings the subscriptions of these series up to date, in the transaction of a write of them (which holds
 * their rows): after they were created or changed, or, with `deleting`, before they are deleted.
 */
export async function syncSeries(services: LogWriter, projectId: number, seriesIds: readonly number[], deleting = false): Promise<void> {
  const { db } = services;
  if (seriesIds.length === 0) return;
  await holdLock(db, 'subscriptionMembers', projectId, 'shared');
  const subs = await definitions(db, projectId);
  if (subs.length === 0) return;
  const ids = sql`(${db.dialect.idList(seriesIds)})`;
  const current = await db.all<{ subscription_id: number; series_id: number }>(
    sql`SELECT subscription_id, series_id FROM subscription_series WHERE project_id = ${projectId} AND series_id IN ${ids}`,
  );
  const wanted: Pair[] = [];
  if (!deleting) {
    for (const r of await db.all<{ subscription_id: number; id: number }>(referenced(projectId, sql`t.id IN ${ids}`))) wanted.push({ subscriptionId: r.subscription_id, seriesId: r.id });
    for (const sub of subs.filter((s) => s.filter !== null)) {
      for (const r of await db.all<{ id: number }>(sql`SELECT t.id FROM timeseries t WHERE ${filterCondition(db, projectId, sub.filter)} AND t.id IN ${ids}`)) {
        wanted.push({ subscriptionId: sub.id, seriesId: r.id });
      }
    }
  }
  await apply(
    services,
    projectId,
    new Map(subs.map((s) => [s.id, s.partitionCount])),
    current.map((r) => ({ subscriptionId: r.subscription_id, seriesId: r.series_id })),
    wanted,
  );
}

/** The condition (on `timeseries t`) that a request sees a series; undefined when it sees them all. */
export function visibleSeries(request: RequestScope): Sql | undefined {
  return scopeCondition(visibleAccess(request, TS), TS, 't');
}
