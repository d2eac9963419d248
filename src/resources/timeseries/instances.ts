/**
 * Time series managed as instances: a node with data in the core data model's `CogniteTimeSeries` container
 * has a time series bound to it by `instanceId` (bound-items.ts), whose managed fields
 * (MANAGED_BY_DATA_MODELING, and the type) follow the node. When nodes are deleted, their series go, with
 * their data points. The other fields (metadata, data set, security categories, asset link) belong to the
 * time series API and are kept.
 */
import type { InstanceId } from '../../query/refs.js';
import { deleteItem } from '../../storage/items.js';
import type { Queryable } from '../../storage/store.js';
import { boundItemIds, syncBoundItems } from '../bound-items.js';
import { deleteSeriesData } from '../datapoints/series-data.js';
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

/** Creates the series of nodes that have none, and sets the managed fields of those that do (when they differ). */
export async function syncManagedSeries(db: Queryable, projectId: number, series: readonly ManagedSeries[], now: number): Promise<void> {
  const items = series.map(({ instanceId, ...managed }) => ({ instanceId, fields: { ...managed, type: managed.isString ? 'string' : 'numeric' } }));
  await syncBoundItems(db, table, projectId, items, now);
}

/** Deletes the series bound to these nodes, with their data points; nodes without one are skipped. */
export async function deleteManagedSeries(db: Queryable, projectId: number, instanceIds: readonly InstanceId[]): Promise<void> {
  const ids = await boundItemIds(db, table, projectId, instanceIds);
  if (ids.length === 0) return;
  await deleteSeriesData(db, projectId, ids);
  for (const id of ids) await deleteItem(db, table, projectId, id);
}
