/**
 * The members of a subscription as its users see them: the references it was given (by external id or
 * instance id, each with the id of the series it names now, if the request sees one), or, for a filter
 * subscription, the series it holds that the request sees. A request sees the series its time series
 * grants reach; others are listed as if they did not exist.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { lookupRefs, refKey, resolvedId, type InstanceId, type Ref } from '../../query/refs.js';
import { visibleIn } from '../../query/visibility.js';
import { Sql, sql, TRUE } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { timeSeriesCatalog } from '../timeseries/model.js';
import { visibleSeries, type Definition } from './membership.js';
import { SUBSCRIPTION_LIMITS as L } from './model.js';

export type MemberRef = { externalId: string } | { instanceId: InstanceId };

type Path = Array<string | number>;

const refColumns = (r: MemberRef) =>
  'externalId' in r ? sql`external_id = ${r.externalId}` : sql`instance_space = ${r.instanceId.space} AND instance_external_id = ${r.instanceId.externalId}`;

const of = (projectId: number, subscriptionId: number) => sql`project_id = ${projectId} AND subscription_id = ${subscriptionId}`;

/** Adds references a subscription does not hold yet, after those it holds. */
export async function addReferences(db: Queryable, projectId: number, subscriptionId: number, refs: readonly MemberRef[]): Promise<void> {
  const unique = [...new Map(refs.map((r) => [refKey(r), r])).values()];
  const [{ last }] = await db.all<{ last: number | null }>(sql`SELECT MAX(seq) AS last FROM subscription_members WHERE ${of(projectId, subscriptionId)}`);
  let seq = last ?? 0;
  for (const r of unique) {
    const held = await db.get(sql`SELECT 1 AS one FROM subscription_members WHERE ${of(projectId, subscriptionId)} AND ${refColumns(r)}`);
    if (held) continue;
    const [externalId, space, instanceExternalId] = 'externalId' in r ? [r.externalId, null, null] : [null, r.instanceId.space, r.instanceId.externalId];
    await db.run(
      sql`INSERT INTO subscription_members (project_id, subscription_id, seq, external_id, instance_space, instance_external_id) VALUES (${projectId}, ${subscriptionId}, ${++seq}, ${externalId}, ${space}, ${instanceExternalId})`,
    );
  }
}

export async function removeReferences(db: Queryable, projectId: number, subscriptionId: number, refs: readonly MemberRef[]): Promise<void> {
  for (const r of refs) await db.run(sql`DELETE FROM subscription_members WHERE ${of(projectId, subscriptionId)} AND ${refColumns(r)}`);
}

/** Removes every reference of one kind (`set` replaces them). */
export async function clearReferences(db: Queryable, projectId: number, subscriptionId: number, kind: 'externalId' | 'instanceId'): Promise<void> {
  const column = Sql.raw(kind === 'externalId' ? 'external_id' : 'instance_space');
  await db.run(sql`DELETE FROM subscription_members WHERE ${of(projectId, subscriptionId)} AND ${column} IS NOT NULL`);
}

/** Refuses a subscription holding more references than allowed; `path` names the change that made it so. */
export async function requireReferenceRoom(db: Queryable, projectId: number, subscriptionId: number, path: Path): Promise<void> {
  const [{ n }] = await db.all<{ n: number }>(sql`SELECT count(*) AS n FROM subscription_members WHERE ${of(projectId, subscriptionId)}`);
  if (n > L.members) throw badRequest(`${formatPath(path)}: the subscription would list ${n} time series; a subscription lists at most ${L.members}`);
}

/** The deletion of subscriptions' members and references. */
export async function deleteMembers(db: Queryable, projectId: number, subscriptionId: number): Promise<void> {
  await db.run(sql`DELETE FROM subscription_members WHERE ${of(projectId, subscriptionId)}`);
  await db.run(sql`DELETE FROM subscription_series WHERE ${of(projectId, subscriptionId)}`);
}

/** The number of time series in subscriptions (by row id), as a request sees them: references, or the series a filter holds. */
export async function seriesCounts(services: Services, projectId: number, ids: readonly number[]): Promise<Map<number, number>> {
  const { db } = services;
  if (ids.length === 0) return new Map();
  const which = sql`s.project_id = ${projectId} AND s.id IN (${db.dialect.idList(ids)})`;
  const rows = await db.all<{ id: number; n: number }>(
    sql`SELECT s.id, count(*) AS n FROM subscriptions s JOIN subscription_members m ON m.project_id = s.project_id AND m.subscription_id = s.id
        WHERE ${which} AND s.filter IS NULL GROUP BY s.id
        UNION ALL
        SELECT s.id, count(*) AS n FROM subscriptions s JOIN subscription_series ss ON ss.project_id = s.project_id AND ss.subscription_id = s.id
          JOIN timeseries t ON t.project_id = ss.project_id AND t.id = ss.series_id
        WHERE ${which} AND s.filter IS NOT NULL AND ${visibleSeries(services) ?? TRUE} GROUP BY s.id`,
  );
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** A member as the listing gives it. */
type Member = { id?: number; externalId?: string; instanceId?: InstanceId };

/** One page of a subscription's members, after the position `after` (0 for the first page); `next` when more follow. */
export async function membersPage(services: Services, projectId: number, sub: Definition, after: number, limit: number): Promise<{ items: Member[]; next?: number }> {
  const { db } = services;
  if (sub.filter !== null) {
    const rows = await db.all<{ id: number; external_id: string | null; instance_space: string | null; instance_external_id: string | null }>(
      sql`SELECT t.id, t.external_id, t.instance_space, t.instance_external_id FROM subscription_series ss JOIN timeseries t ON t.project_id = ss.project_id AND t.id = ss.series_id
          WHERE ss.project_id = ${projectId} AND ss.subscription_id = ${sub.id} AND ss.series_id > ${after} AND ${visibleSeries(services) ?? TRUE}
          ORDER BY ss.series_id LIMIT ${limit + 1}`,
    );
    const items = rows.slice(0, limit).map((r) => ({
      id: r.id,
      ...(r.external_id !== null ? { externalId: r.external_id } : {}),
      ...(r.instance_space !== null ? { instanceId: { space: r.instance_space, externalId: r.instance_external_id! } } : {}),
    }));
    return rows.length > limit ? { items, next: rows[limit - 1].id } : { items };
  }
  const rows = await db.all<{ seq: number; external_id: string | null; instance_space: string | null; instance_external_id: string | null }>(
    sql`SELECT seq, external_id, instance_space, instance_external_id FROM subscription_members WHERE ${of(projectId, sub.id)} AND seq > ${after} ORDER BY seq LIMIT ${limit + 1}`,
  );
  const page = rows.slice(0, limit);
  const refs: Ref[] = page.map((r) => (r.external_id !== null ? { externalId: r.external_id } : { instanceId: { space: r.instance_space!, externalId: r.instance_external_id! } }));
  const found = await lookupRefs(db, 'timeseries', projectId, refs, visibleIn(services, timeSeriesCatalog).where);
  const items = refs.map((ref) => {
    const id = resolvedId(ref, found);
    return { ...(ref as Member), ...(id !== undefined ? { id } : {}) };
  });
  return rows.length > limit ? { items, next: rows[limit - 1].seq } : { items };
}
