/**
 * Writes a transformation's result rows to its destination through the API (`api.call`), with the
 * destination credentials, in batches, so the writes pass the same checks and scope as the user's own
 * requests would. `conflictMode` says what happens to rows whose item exists (`abort`: the job fails;
 * `upsert`: created or updated; `update`: updated, and a row without an item fails the job; `delete`: the
 * named items are deleted), `ignoreNullFields` whether a null column leaves a field as it is or clears it.
 * Whatever the API refuses ends the job with its message.
 */
import type { Credential, SelfCaller } from '../../http/self-calls.js';
import type { ConflictMode, Destination } from './model.js';

const BATCH = 1000;

/** Counts of what was written, by the job's metric names. */
export type Metrics = Record<string, number>;

export class WriteFailed extends Error {
  override readonly name = 'WriteFailed';
}

export interface WriteTarget {
  api: SelfCaller;
  project: string;
  credential: Credential;
  destination: Destination;
  conflictMode: ConflictMode;
  ignoreNullFields: boolean;
  signal?: AbortSignal;
}

/** The fields each classic destination takes from a row, besides `id` and `externalId`. */
const RESOURCE_FIELDS: Record<string, readonly string[]> = {
  assets: ['name', 'parentId', 'parentExternalId', 'description', 'metadata', 'source', 'dataSetId', 'labels'],
  events: ['startTime', 'endTime', 'type', 'subtype', 'description', 'metadata', 'assetIds', 'source', 'dataSetId'],
  timeseries: ['name', 'isString', 'isStep', 'metadata', 'unit', 'assetId', 'description', 'dataSetId', 'securityCategories'],
};

function chunks<T>(items: readonly T[], size = BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function add(metrics: Metrics, name: string, count: number): void {
  if (count > 0) metrics[name] = (metrics[name] ?? 0) + count;
}

async function call(target: WriteTarget, path: string, body: unknown, metrics: Metrics): Promise<any> {
  target.signal?.throwIfAborted();
  const res = await target.api.call({ project: target.project, credential: target.credential, method: 'POST', path, body });
  add(metrics, 'requests', 1);
  if (res.status >= 300) {
    const error = (res.body as { error?: { message?: string } } | undefined)?.error;
    throw new WriteFailed(`POST ${path} answered ${res.status}: ${error?.message ?? JSON.stringify(res.body)}`);
  }
  return res.body;
}

type Row = Record<string, unknown>;

function refOf(row: Row, i: number): { id: number } | { externalId: string } {
  if (typeof row.externalId === 'string') return { externalId: row.externalId };
  if (typeof row.id === 'number') return { id: row.id };
  throw new WriteFailed(`row ${i + 1} has neither externalId nor id`);
}

const refKey = (ref: { id: number } | { externalId: string }) => ('id' in ref ? `id:${ref.id}` : `x:${ref.externalId}`);

/** The row as a create item, with the columns it may have; a column the destination does not take fails the job. */
function createItem(row: Row, fields: readonly string[], type: string, ignoreNull: boolean, i: number): Row {
  const item: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === 'id') continue;
    if (k !== 'externalId' && !fields.includes(k)) throw new WriteFailed(`row ${i + 1}: the column "${k}" is not a field of ${type} (the fields are externalId, ${fields.join(', ')})`);
    if (v === null && ignoreNull) continue;
    if (v !== null) item[k] = v;
  }
  return item;
}

function updateItem(row: Row, ref: { id: number } | { externalId: string }, ignoreNull: boolean): Row {
  const update: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (k === 'id' || k === 'externalId') continue;
    if (v === null) {
      if (!ignoreNull) update[k] = { setNull: true };
    } else update[k] = { set: v };
  }
  return { ...ref, update };
}

async function writeResources(target: WriteTarget, type: string, rows: readonly Row[], metrics: Metrics): Promise<void> {
  const fields = RESOURCE_FIELDS[type];
  const refs = rows.map(refOf);
  const items = rows.map((row, i) => createItem(row, fields, type, target.ignoreNullFields, i));
  const base = `/${type}`;
  if (target.conflictMode === 'delete') {
    for (const part of chunks(refs)) await call(target, `${base}/delete`, { items: part, ignoreUnknownIds: true }, metrics);
    add(metrics, `${type}.deleted`, refs.length);
    return;
  }
  if (target.conflictMode === 'abort') {
    for (const part of chunks(items)) await call(target, base, { items: part }, metrics);
    add(metrics, `${type}.created`, items.length);
    return;
  }
  const existing = new Set<string>();
  for (const part of chunks(refs)) {
    const found = await call(target, `${base}/byids`, { items: part, ignoreUnknownIds: true }, metrics);
    for (const item of (found as { items: Array<{ id: number; externalId?: string }> }).items) {
      existing.add(`id:${item.id}`);
      if (item.externalId !== undefined) existing.add(`x:${item.externalId}`);
    }
  }
  const updates = rows.flatMap((row, i) => (existing.has(refKey(refs[i])) ? [updateItem(row, refs[i], target.ignoreNullFields)] : []));
  const creates = items.filter((_, i) => !existing.has(refKey(refs[i])));
  if (target.conflictMode === 'update' && creates.length > 0) {
    throw new WriteFailed(`conflictMode "update" updates existing ${type} only; ${creates.length} row(s) name none, the first ${JSON.stringify(refs.find((r) => !existing.has(refKey(r))))}`);
  }
  for (const part of chunks(creates)) await call(target, base, { items: part }, metrics);
  for (const part of chunks(updates)) await call(target, `${base}/update`, { items: part }, metrics);
  add(metrics, `${type}.created`, creates.length);
  add(metrics, `${type}.updated`, updates.length);
}

async function writeDatapoints(target: WriteTarget, rows: readonly Row[], metrics: Metrics): Promise<void> {
  const bySeries = new Map<string, { ref: { id: number } | { externalId: string }; points: Array<{ timestamp: number; value: unknown }> }>();
  for (const [i, row] of rows.entries()) {
    const ref = refOf(row, i);
    if (typeof row.timestamp !== 'number') throw new WriteFailed(`row ${i + 1}: a data point needs a timestamp (milliseconds or a timestamp column)`);
    const entry = bySeries.get(refKey(ref)) ?? { ref, points: [] };
    entry.points.push({ timestamp: row.timestamp, value: row.value ?? null });
    bySeries.set(refKey(ref), entry);
  }
  if (target.conflictMode === 'delete') {
    const ranges = [...bySeries.values()].flatMap(({ ref, points }) => points.map((p) => ({ ...ref, inclusiveBegin: p.timestamp, exclusiveEnd: p.timestamp + 1 })));
    for (const part of chunks(ranges)) await call(target, '/timeseries/data/delete', { items: part }, metrics);
    add(metrics, 'datapoints.deleted', ranges.length);
    return;
  }
  const items = [...bySeries.values()].map(({ ref, points }) => ({ ...ref, datapoints: points }));
  for (const part of chunks(items, 100)) await call(target, '/timeseries/data', { items: part }, metrics);
  add(metrics, 'datapoints.created', rows.length);
}

async function writeInstances(target: WriteTarget, destination: Extract<Destination, { type: 'nodes' | 'edges' }>, rows: readonly Row[], metrics: Metrics): Promise<void> {
  const instanceType = destination.type === 'nodes' ? 'node' : 'edge';
  const refs = rows.map((row, i) => {
    const space = destination.instanceSpace ?? row.space;
    if (typeof space !== 'string' || typeof row.externalId !== 'string') throw new WriteFailed(`row ${i + 1}: an instance needs an externalId and a space (a column, or the destination's instanceSpace)`);
    return { instanceType, space, externalId: row.externalId };
  });
  if (target.conflictMode === 'delete') {
    for (const part of chunks(refs)) await call(target, '/models/instances/delete', { items: part }, metrics);
    add(metrics, `${destination.type}.deleted`, refs.length);
    return;
  }
  const items = rows.map((row, i) => {
    const { externalId: _x, space: _s, startNode, endNode, type, ...rest } = row;
    const properties = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null || !target.ignoreNullFields));
    const edge = instanceType === 'edge' ? { startNode, endNode, type: type ?? destination.edgeType } : {};
    return {
      ...refs[i],
      ...edge,
      ...(target.conflictMode === 'abort' ? { existingVersion: 0 } : {}),
      ...(destination.view ? { sources: [{ source: { type: 'view', ...destination.view }, properties }] } : {}),
    };
  });
  const autoCreate = destination.autoCreate ?? {};
  const flags = {
    autoCreateStartNodes: autoCreate.startNodes ?? false,
    autoCreateEndNodes: autoCreate.endNodes ?? false,
    autoCreateDirectRelations: autoCreate.directRelations ?? true,
  };
  let created = 0;
  let updated = 0;
  for (const part of chunks(items)) {
    const res = await call(target, '/models/instances', { items: part, ...flags }, metrics);
    for (const item of (res as { items: Array<{ wasModified: boolean; version: number }> }).items) {
      if (item.version === 1) created++;
      else updated++;
    }
  }
  add(metrics, `${destination.type}.created`, created);
  add(metrics, `${destination.type}.updated`, updated);
}

export async function writeRows(target: WriteTarget, rows: readonly Row[]): Promise<Metrics> {
  const metrics: Metrics = {};
  const { destination } = target;
  if (destination.type === 'nodes' || destination.type === 'edges') {
    if (target.conflictMode === 'update') throw new WriteFailed(`conflictMode "update" is not available for ${destination.type}; use "upsert"`);
    await writeInstances(target, destination as Extract<Destination, { type: 'nodes' | 'edges' }>, rows, metrics);
  } else if (destination.type === 'datapoints') {
    await writeDatapoints(target, rows, metrics);
  } else if (RESOURCE_FIELDS[destination.type]) {
    await writeResources(target, destination.type, rows, metrics);
  } else {
    throw new WriteFailed(`transformations do not write to "${destination.type}"`);
  }
  return metrics;
}
