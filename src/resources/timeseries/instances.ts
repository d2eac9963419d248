/**
 * Time series managed as instances: a node with data in the core data model's `CogniteTimeSeries` container
 * has a time series bound to it by `instanceId` (bound-items.ts), whose managed fields
 * (MANAGED_BY_DATA_MODELING, and the type) follow the node. When nodes are deleted, their series go, with
 * their data points. The other fields (metadata, data set, security categories, asset link) belong to the
 * time series API and are kept.
 */
import type { InstanceId } from '../../query/refs.js';
import type { ChangeFeed } from '../../storage/changes.js';
import { deleteItem } from '../../storage/items.js';
import type { Queryable } from '../../storage/store.js';
import { boundItemIds, syncBoundItems } from '../bound-items.js';
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

/**
 * Creates the series of nodes that have none, and sets the managed fields of those that do (when they
 * differ); the subscriptions of the series written follow (`changes` wakes their waiters).
 */
export async function syncManagedSeries(db: Queryable, projectId: number, series: readonly ManagedSeries[], now: number, changes?: ChangeFeed): Promise<void> {
  const items = series.map(({ instanceId, ...managed }) => ({ instanceId, fields: { ...managed, type: managed.isString ? 'string' : 'numeric' } }));
  const ids = await syncBoundItems(db, table, projectId, items, now);
  if (ids.length > 0) await syncSeries({ db, now: () => now, changes }, projectId, ids);
}

/** Deletes the series bound to these nodes, with their data points and their places in subscriptions; nodes without one are skipped. */
export async function deleteManagedSeries(db: Queryable, projectId: number, instanceIds: readonly InstanceId[], now: number, changes?: ChangeFeed): Promise<void> {
  const ids = await boundItemIds(db, table, projectId, instanceIds);
  if (ids.length === 0) return;
  await syncSeries({ db, now: () => now, changes }, projectId, ids, true);
  await deleteSeriesData(db, projectId, ids);
  for (const id of ids) await deleteItem(db, table, projectId, id);
}
