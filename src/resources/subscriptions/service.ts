/**
 * Data point subscriptions: their own rules on top of the shared item operations. A subscription lists its
 * time series by reference or selects them by a filter, never both, and keeps that kind; its partition
 * count is fixed. Every write of one brings the series it holds up to date in the same transaction
 * (membership.ts). Responses carry `timeSeriesCount`, counted as the request sees the series.
 */
import { scopeCondition } from '../../auth/access.js';
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { resolveRefs, type InstanceId, type RefInput } from '../../query/refs.js';
import type { Item } from '../../storage/items.js';
import { holdLock } from '../../storage/locks.js';
import { sql } from '../../storage/sql.js';
import {
  createItems,
  deleteItems,
  fromModel,
  inWrite,
  listItems,
  retrieveItems,
  updateItems,
  writableIds,
  type ResourceSpec,
} from '../crud.js';
import { dataSetCatalog } from '../datasets/model.js';
import { deleteChanges, subscriptionChange } from './change-log.js';
import { addReferences, clearReferences, deleteMembers, removeReferences, requireReferenceRoom, seriesCounts, type MemberRef } from './members.js';
import { checkFilter, definitions, syncSubscription, type Definition } from './membership.js';
import { SUBSCRIPTION_LIMITS as L, subscriptionModel } from './model.js';
import { scheduleRetention } from './retention.js';
import type { SubscriptionCreate, SubscriptionPatch } from './schema.js';

type Path = Array<string | number>;

export const subscriptionSpec: ResourceSpec<SubscriptionCreate> = {
  ...fromModel(subscriptionModel),
  check(values, path) {
    if (values.filter !== null) checkFilter(values.filter, [...path, 'filter']);
  },
  references: [{ field: 'dataSetId', catalog: dataSetCatalog }],
  async beforeDelete(ids, { db, projectId, services }) {
    // As every write of subscriptions: no write of time series is bringing their members up to date meanwhile.
    await holdLock(db, 'subscriptionMembers', projectId);
    for (const id of ids) {
      await deleteMembers(db, projectId, id);
      await deleteChanges(db, projectId, id);
    }
    // A long poll of a deleted subscription ends, and finds it gone.
    await services.changes?.record(db, ids.map((id) => subscriptionChange(projectId, id)));
  },
};
const spec = subscriptionSpec as ResourceSpec<unknown>;
const { table, catalog } = subscriptionModel;

/** The row id of every item, by external id: what membership and the change log are keyed by. */
async function rowIds(services: Services, projectId: number, externalIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await services.db.all<{ id: number; external_id: string }>(
    sql`SELECT id, external_id FROM subscriptions WHERE project_id = ${projectId} AND external_id IN (${externalIds})`,
  );
  return new Map(rows.map((r) => [r.external_id, r.id]));
}

/** Items with their `timeSeriesCount`, before the timestamps (as the reference orders its fields). */
async function present(services: Services, projectId: number, items: readonly Item[]): Promise<Item[]> {
  const ids = await rowIds(services, projectId, items.map((item) => item.externalId as string));
  const counts = await seriesCounts(services, projectId, [...ids.values()]);
  return items.map(({ createdTime, lastUpdatedTime, ...fields }) => ({
    ...fields,
    timeSeriesCount: counts.get(ids.get(fields.externalId as string)!) ?? 0,
    createdTime,
    lastUpdatedTime,
  }));
}

const referencesOf = (externalIds: readonly string[] = [], instanceIds: readonly InstanceId[] = []): MemberRef[] => [
  ...externalIds.map((externalId) => ({ externalId })),
  ...instanceIds.map((instanceId) => ({ instanceId })),
];

/** Refuses a create that would take the project past its number of subscriptions, or of filter subscriptions. */
async function requireProjectRoom(services: Services, projectId: number, items: readonly SubscriptionCreate[]): Promise<void> {
  const [held] = await services.db.all<{ n: number; filters: number }>(sql`SELECT count(*) AS n, count(filter) AS filters FROM subscriptions WHERE project_id = ${projectId}`);
  const filters = items.filter((item) => item.filter !== undefined).length;
  if (held.n + items.length > L.perProject) throw badRequest(`items: a project holds at most ${L.perProject} subscriptions, and this one holds ${held.n}`);
  if (held.filters + filters > L.filtersPerProject) {
    throw badRequest(`items: a project holds at most ${L.filtersPerProject} filter subscriptions, and this one holds ${held.filters}`);
  }
}

export function createSubscriptions(services: Services, projectId: number, items: readonly SubscriptionCreate[]): Promise<Item[]> {
  items.forEach((item, i) => {
    const listed = item.timeSeriesIds !== undefined || item.instanceIds !== undefined;
    if (listed && item.filter !== undefined) {
      throw badRequest(`${formatPath(['items', i, 'filter'])}: a subscription has either a filter or a list of time series (timeSeriesIds, instanceIds), not both`);
    }
    if (!listed && item.filter === undefined) throw badRequest(`${formatPath(['items', i])}: give the time series to subscribe to: timeSeriesIds, instanceIds, or a filter`);
  });
  return inWrite(services, async (services) => {
    const { db } = services;
    await holdLock(db, 'subscriptionMembers', projectId);
    await requireProjectRoom(services, projectId, items);
    const created = await createItems(subscriptionSpec, services, projectId, items);
    const ids = await rowIds(services, projectId, items.map((item) => item.externalId!));
    for (const sub of await definitions(db, projectId, [...ids.values()])) {
      const item = items.find((x) => ids.get(x.externalId!) === sub.id)!;
      await addReferences(db, projectId, sub.id, referencesOf(item.timeSeriesIds, item.instanceIds));
      await syncSubscription(services, projectId, sub);
    }
    await scheduleRetention(services, db, projectId);
    return present(services, projectId, created);
  });
}

/** The checks of an update's member changes that need no stored state. */
function checkMemberPatches(update: SubscriptionPatch, path: Path): void {
  const ops = (['timeSeriesIds', 'instanceIds'] as const).flatMap((kind) => {
    const patch = update[kind];
    if (!patch) return [];
    if (patch.set !== undefined && (patch.add !== undefined || patch.remove !== undefined)) {
      throw badRequest(`${formatPath([...path, kind])}: give either set, or add and remove`);
    }
    return [{ kind, replaces: patch.set !== undefined }];
  });
  if (ops.length === 2 && ops[0].replaces !== ops[1].replaces) {
    throw badRequest(`${formatPath(path)}: timeSeriesIds and instanceIds must both be set, or both be added to and removed from`);
  }
}

/** The update's changes of what the subscription holds, refused where they do not fit its kind. */
function checkKind(sub: Definition, update: SubscriptionPatch, path: Path): void {
  if (sub.filter === null && update.filter !== undefined) {
    throw badRequest(`${formatPath([...path, 'filter'])}: this subscription lists its time series; a subscription cannot change from a list to a filter`);
  }
  const listed = (['timeSeriesIds', 'instanceIds'] as const).find((k) => update[k] !== undefined);
  if (sub.filter !== null && listed) {
    throw badRequest(`${formatPath([...path, listed])}: this subscription selects its time series by a filter; a subscription cannot change from a filter to a list`);
  }
}

async function changeReferences(services: Services, projectId: number, subscriptionId: number, update: SubscriptionPatch, path: Path): Promise<void> {
  const { db } = services;
  for (const name of ['timeSeriesIds', 'instanceIds'] as const) {
    const patch = update[name];
    if (!patch) continue;
    const refs = (list: ReadonlyArray<string | InstanceId> | undefined) =>
      name === 'timeSeriesIds' ? referencesOf(list as string[] | undefined) : referencesOf(undefined, list as InstanceId[] | undefined);
    if (patch.set !== undefined) await clearReferences(db, projectId, subscriptionId, name === 'timeSeriesIds' ? 'externalId' : 'instanceId');
    await removeReferences(db, projectId, subscriptionId, refs(patch.remove));
    await addReferences(db, projectId, subscriptionId, refs(patch.set ?? patch.add));
    await requireReferenceRoom(db, projectId, subscriptionId, [...path, name, patch.set !== undefined ? 'set' : 'add']);
  }
}

export function updateSubscriptions(services: Services, projectId: number, items: ReadonlyArray<RefInput & { update: SubscriptionPatch }>): Promise<Item[]> {
  items.forEach((item, i) => checkMemberPatches(item.update, ['items', i, 'update']));
  return inWrite(services, async (services) => {
    const { db } = services;
    const ids = await writableIds(spec, services, projectId, items);
    const before = new Map((await definitions(db, projectId, ids)).map((d) => [d.id, d]));
    items.forEach((item, i) => checkKind(before.get(ids[i])!, item.update, ['items', i, 'update']));
    const stored = items.map(({ update: { timeSeriesIds: _x, instanceIds: _i, ...fields }, ...ref }) => ({ ...ref, update: fields }));
    const updated = await updateItems(spec, services, projectId, stored);
    const after = new Map((await definitions(db, projectId, ids)).map((d) => [d.id, d]));
    for (const [i, item] of items.entries()) {
      await changeReferences(services, projectId, ids[i], item.update, ['items', i, 'update']);
      await syncSubscription(services, projectId, after.get(ids[i])!);
    }
    return present(services, projectId, updated);
  });
}

export function deleteSubscriptions(services: Services, projectId: number, items: readonly RefInput[], ignoreUnknownIds: boolean | undefined): Promise<void> {
  return deleteItems(spec, services, projectId, items, ignoreUnknownIds);
}

export async function retrieveSubscriptions(services: Services, projectId: number, items: readonly RefInput[], ignoreUnknownIds: boolean | undefined): Promise<Item[]> {
  return present(services, projectId, await retrieveItems(spec, services, projectId, items, ignoreUnknownIds));
}

export async function listSubscriptions(services: Services, projectId: number, query: { limit?: number; cursor?: string }): Promise<{ items: Item[]; nextCursor?: string }> {
  const page = await listItems(spec, services, projectId, query, undefined);
  const items = await present(services, projectId, page.items);
  return page.nextCursor ? { items, nextCursor: page.nextCursor } : { items };
}

/** The subscription a request names by external id, among those it may read: a 400 with `missing` otherwise. */
export async function subscriptionNamed(services: Services, projectId: number, externalId: string): Promise<Definition> {
  const [id] = await resolveRefs(services.db, table.table, projectId, [{ key: { externalId } }], false, scopeCondition(services.access, catalog, table.table), table.key);
  return (await definitions(services.db, projectId, [id]))[0];
}
