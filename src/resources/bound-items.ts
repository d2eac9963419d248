/**
 * Items bound to data modeling nodes by their `instanceId` (time series, files): a node with data in the
 * resource's container has one, created with the node, whose managed fields follow the node's data and
 * whose other fields belong to the resource's own API. Data modeling calls the resource's functions, which
 * come here, in the instance write's transaction.
 */
import { existingRefs, refKey, type InstanceId } from '../query/refs.js';
import { insertItems, rowsByIds, toValues, updateItem, type ItemTable, type Values } from '../storage/items.js';
import type { Queryable } from '../storage/store.js';

export interface BoundItem {
  instanceId: InstanceId;
  /** The managed fields, as the node's data says. */
  fields: Values;
}

const refsOf = (instanceIds: readonly InstanceId[]) => instanceIds.map((instanceId) => ({ instanceId }));

/**
 * Creates the items of nodes that have none (with `defaults` for what the node does not say), and sets the
 * managed fields of those that do, when they differ. Answers the ids of the items it changed or created.
 */
export async function syncBoundItems(db: Queryable, table: ItemTable, projectId: number, items: readonly BoundItem[], now: number, defaults: Values = {}): Promise<number[]> {
  if (items.length === 0) return [];
  const found = await existingRefs(db, table.table, projectId, refsOf(items.map((s) => s.instanceId)));
  const idOf = new Map(found.map((f) => [refKey(f.ref), f.id]));
  const rows = await rowsByIds(db, table, projectId, found.map((f) => f.id));
  const created: Values[] = [];
  const updated: number[] = [];
  for (const { instanceId, fields } of items) {
    const id = idOf.get(refKey({ instanceId }));
    if (id === undefined) {
      created.push({ ...Object.fromEntries(table.fields.map((f) => [f.name, null])), ...defaults, ...fields, instanceId });
      continue;
    }
    const row = rows.get(id)!;
    const current = toValues(table, row);
    if (Object.entries(fields).every(([k, v]) => current[k] === v)) continue;
    await updateItem(db, table, projectId, id, { ...current, ...fields }, now, row.created_time);
    updated.push(id);
  }
  return [...updated, ...(await insertItems(db, table, projectId, created, now))];
}

/** The ids of the items bound to these nodes (nodes without one are skipped). */
export async function boundItemIds(db: Queryable, table: ItemTable, projectId: number, instanceIds: readonly InstanceId[]): Promise<number[]> {
  if (instanceIds.length === 0) return [];
  return (await existingRefs(db, table.table, projectId, refsOf(instanceIds))).map((f) => f.id);
}
