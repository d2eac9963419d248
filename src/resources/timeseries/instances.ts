/**
 * Time series managed as instances: a node with data in the core data model's `CogniteTimeSeries` container
 * has a time series bound to it by `instanceId`, whose managed fields (MANAGED_BY_DATA_MODELING, and the
 * type) follow the node. Data modeling calls in here, in the instance write's transaction: when nodes are
 * written (the series is created or its managed fields set) and when they are deleted (the series goes, with
 * its data points). The other fields (metadata, data set, security categories, asset link) belong to the time
 * series API and are kept.
 */
import { existingRefs, refKey, type InstanceId } from '../../query/refs.js';
import { deleteItem, insertItems, rowsByIds, toValues, updateItem, type Values } from '../../storage/items.js';
import type { ChangeFeed } from '../../storage/changes.js';
import type { Queryable } from '../../storage/store.js';
import { deleteSeriesData } from '../datapoints/series-data.js';
import { syncSeries } from '../subscriptions/membership.js';
import { timeSeriesTable as table } from './model.js';

/** A node's series as its data says: the fields of MANAGED_BY_DATA_MODELING (service.ts), and the type. */
export interface ManagedSeries {
  instanceId: InstanceId;
  name: string | null;
  description: string | null;
  isStep: boolean;
  isString: boolean;
  unit: string | null;
  unitExternalId: string | null;
}

const refsOf = (instanceIds: readonly InstanceId[]) => instanceIds.map((instanceId) => ({ instanceId }));

/**
 * Creates the series of nodes that have none, and sets the managed fields of those that do (when they
 * differ); the subscriptions of the series written follow (`changes` wakes their waiters).
 */
export async function syncManagedSeries(db: Queryable, projectId: number, series: readonly ManagedSeries[], now: number, changes?: ChangeFeed): Promise<void> {
  if (series.length === 0) return;
  const found = await existingRefs(db, table.table, projectId, refsOf(series.map((s) => s.instanceId)));
  const idOf = new Map(found.map((f) => [refKey(f.ref), f.id]));
  const rows = await rowsByIds(db, table, projectId, found.map((f) => f.id));
  const created: Values[] = [];
  const updated: number[] = [];
  for (const s of series) {
    const { instanceId, ...managed } = s;
    const fields = { ...managed, type: managed.isString ? 'string' : 'numeric' };
    const id = idOf.get(refKey({ instanceId }));
    if (id === undefined) {
      const v: Values = Object.fromEntries(table.fields.map((f) => [f.name, null]));
      created.push({ ...v, ...fields, instanceId });
      continue;
    }
    const row = rows.get(id)!;
    const current = toValues(table, row);
    if (Object.entries(fields).every(([k, v]) => current[k] === v)) continue;
    await updateItem(db, table, projectId, id, { ...current, ...fields }, now, row.created_time);
    updated.push(id);
  }
  const ids = await insertItems(db, table, projectId, created, now);
  await syncSeries({ db, now: () => now, changes }, projectId, [...updated, ...ids]);
}

/** Deletes the series bound to these nodes, with their data points and their places in subscriptions; nodes without one are skipped. */
export async function deleteManagedSeries(db: Queryable, projectId: number, instanceIds: readonly InstanceId[], now: number, changes?: ChangeFeed): Promise<void> {
  if (instanceIds.length === 0) return;
  const ids = (await existingRefs(db, table.table, projectId, refsOf(instanceIds))).map((f) => f.id);
  if (ids.length === 0) return;
  await syncSeries({ db, now: () => now, changes }, projectId, ids, true);
  await deleteSeriesData(db, projectId, ids);
  for (const id of ids) await deleteItem(db, table, projectId, id);
}
