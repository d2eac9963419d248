/**
 * Create, retrieve, update and delete for any resource declared as a `ResourceSpec`: external id
 * uniqueness (409 `duplicated`), references (400 `missing`), patches, and one transaction per request.
 * Resources add their own rules through the spec's hooks.
 */
import { duplicatedItems, notFound } from '../http/errors.js';
import { applyArrayPatch, applyMetadataPatch, applyNullablePatch, checkMetadata } from '../http/patch.js';
import type { Services } from '../http/services.js';
import type { MetadataLimits } from '../http/common-schemas.js';
import type { ResourceCatalog } from '../query/catalog.js';
import { checkRef, existingExternalIds, rejectDuplicateRefs, resolveRefs, type Ref, type RefInput } from '../query/refs.js';
import { all, inTransaction, prepare, type Db } from '../storage/db.js';
import { Sql, sql } from '../storage/sql.js';
import type { FilterNode } from '../query/filter.js';
import { DEFAULT_LIMIT, parseQuery, runList } from '../query/list.js';
import type { SortSpecInput } from '../query/sort.js';
import {
  deleteItem,
  insertItem,
  rowsByIds,
  selectColumns,
  toItem,
  toValues,
  updateItem,
  type Item,
  type ItemTable,
  type Row,
  type Values,
} from '../storage/items.js';

export type Path = Array<string | number>;

/** How an update request may change a field. */
export type PatchKind = 'nullable' | 'required' | 'metadata' | { array: number };

export interface WriteContext {
  db: Db;
  projectId: number;
  services: Services;
}

export interface ResourceSpec<Create> {
  table: ItemTable;
  catalog: ResourceCatalog;
  /** The stored values of a create item (null for absent fields). */
  fromCreate(item: Create): Values;
  patches: Readonly<Record<string, PatchKind>>;
  /** Items can also be addressed by `instanceId` (columns `instance_space`, `instance_external_id`). */
  instanceIds?: boolean;
  /** Limits of the metadata map, when they differ from the events' ones. */
  metadataLimits?: MetadataLimits;
  /** Rules across the fields of one item, on create and after an update is applied. */
  check?(values: Values, path: Path, ctx: WriteContext): void;
  /** Rules an update must obey given the item as stored (for example read-only fields). */
  checkUpdate?(current: Values, update: Record<string, unknown>, path: Path): void;
  /** Checks of what the items refer to (other resources), over a whole write at once. */
  checkReferences?(values: Values[], ctx: WriteContext): void;
  /** Work to do before items are deleted (dependent data, refusals). */
  beforeDelete?(ids: number[], ctx: WriteContext): void;
}

export interface UpdateItem extends RefInput {
  update: Record<string, unknown>;
}

function rejectDuplicateExternalIds(externalIds: string[]): void {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const x of externalIds) (seen.has(x) ? dup : seen).add(x);
  if (dup.size) throw duplicatedItems([...dup].map((externalId) => ({ externalId })));
}

export function checkRefs(items: readonly RefInput[], allowInstanceIds = false): Ref[] {
  const refs = items.map((r, i) => checkRef(r, ['items', i], allowInstanceIds));
  rejectDuplicateRefs(refs);
  return refs;
}

function rowsInOrder(db: Db, t: ItemTable, projectId: number, ids: number[]): Row[] {
  const rows = rowsByIds(db, t, projectId, ids);
  return ids.map((id) => rows.get(id)!);
}

export function createItems<C>(spec: ResourceSpec<C>, services: Services, projectId: number, items: readonly C[]): Item[] {
  const { db } = services;
  const ctx: WriteContext = { db, projectId, services };
  const values = items.map((item, i) => {
    const v = spec.fromCreate(item);
    const md = spec.table.metadata?.field;
    if (md) checkMetadata(v[md] as Record<string, string> | null, ['items', i, md], spec.metadataLimits);
    spec.check?.(v, ['items', i], ctx);
    return v;
  });
  const externalIds = values.map((v) => v.externalId).filter((x): x is string => typeof x === 'string');
  rejectDuplicateExternalIds(externalIds);
  return inTransaction(db, () => {
    const existing = existingExternalIds(db, spec.table.table, projectId, externalIds);
    if (existing.size) throw duplicatedItems([...existing.keys()].map((externalId) => ({ externalId })));
    spec.checkReferences?.(values, ctx);
    const now = services.now();
    const ids = values.map((v) => insertItem(db, spec.table, projectId, v, now));
    return rowsInOrder(db, spec.table, projectId, ids).map((r) => toItem(spec.table, r));
  });
}

export function retrieveItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  items: readonly RefInput[],
  ignoreUnknownIds = false,
): Item[] {
  const ids = resolveRefs(services.db, spec.table.table, projectId, checkRefs(items, spec.instanceIds), ignoreUnknownIds);
  return rowsInOrder(services.db, spec.table, projectId, ids).map((r) => toItem(spec.table, r));
}

export function getItem(spec: ResourceSpec<unknown>, services: Services, projectId: number, id: number): Item {
  const row = rowsByIds(services.db, spec.table, projectId, [id]).get(id);
  if (!row) throw notFound(`No ${spec.catalog.noun} with id ${id} in this project`);
  return toItem(spec.table, row);
}

export function deleteItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  items: readonly RefInput[],
  ignoreUnknownIds = false,
): void {
  const refs = checkRefs(items);
  const { db } = services;
  inTransaction(db, () => {
    const ids = [...new Set(resolveRefs(db, spec.table.table, projectId, refs, ignoreUnknownIds))];
    spec.beforeDelete?.(ids, { db, projectId, services });
    for (const id of ids) deleteItem(db, spec.table, id);
  });
}

function applyPatch(kind: PatchKind, current: unknown, patch: unknown, path: Path, limits?: MetadataLimits): unknown {
  if (kind === 'metadata') return applyMetadataPatch(current as Record<string, string> | null, patch as never, path, limits);
  if (typeof kind === 'object') return applyArrayPatch(current as unknown[] | null, patch as never, path, kind.array);
  // `required` fields accept only `set`, which the schema enforces; the rule is shared with nullable ones.
  return applyNullablePatch(current, patch as never, path);
}

export function updateItems(spec: ResourceSpec<unknown>, services: Services, projectId: number, items: readonly UpdateItem[]): Item[] {
  const refs = checkRefs(items, spec.instanceIds);
  const { db } = services;
  const ctx: WriteContext = { db, projectId, services };
  const t = spec.table;
  return inTransaction(db, () => {
    const ids = resolveRefs(db, t.table, projectId, refs);
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (twice.length) throw duplicatedItems([...new Set(twice)].map((id) => ({ id })), 400);
    const rows = rowsInOrder(db, t, projectId, ids);
    const next = items.map((item, i) => {
      const current = toValues(t, rows[i]);
      const path: Path = ['items', i, 'update'];
      spec.checkUpdate?.(current, item.update, path);
      const v: Values = { ...current };
      for (const [field, patch] of Object.entries(item.update)) {
        if (patch === undefined) continue;
        v[field] = applyPatch(spec.patches[field], current[field], patch, [...path, field], spec.metadataLimits);
      }
      spec.check?.(v, ['items', i], ctx);
      return v;
    });
    // External ids stay unique: among the updated items, and against items this request does not change.
    rejectDuplicateExternalIds(next.map((v) => v.externalId).filter((x): x is string => typeof x === 'string'));
    const changed = next.map((v, i) => ({ v, i })).filter(({ v, i }) => v.externalId !== null && v.externalId !== rows[i].external_id);
    const taken = existingExternalIds(
      db,
      t.table,
      projectId,
      changed.map(({ v }) => v.externalId as string),
    );
    const updating = new Set(ids);
    const conflicts = [...taken].filter(([, id]) => !updating.has(id)).map(([externalId]) => ({ externalId }));
    if (conflicts.length) throw duplicatedItems(conflicts);
    spec.checkReferences?.(next, ctx);
    // Release changed external ids first, so that swaps within one request do not collide on the unique index.
    for (const { i } of changed) prepare(db, `UPDATE ${t.table} SET external_id = NULL WHERE id = ?`).run(ids[i]);
    const now = services.now();
    next.forEach((v, i) => updateItem(db, t, projectId, ids[i], v, now));
    return rowsInOrder(db, t, projectId, ids).map((r) => toItem(t, r));
  });
}


export interface ListInput {
  advancedFilter?: unknown;
  sort?: Array<SortSpecInput | string>;
  limit?: number;
  cursor?: string;
  partition?: string;
}

/** A list page of any resource; `filterNode` is its basic filter translated to the filter language. */
export function listItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  input: ListInput & { filter?: unknown },
  filterNode: FilterNode | undefined,
  omit?: ReadonlySet<string>,
): { items: Item[]; nextCursor?: string } {
  const { filter, advancedFilter, sort, partition, limit, cursor } = input;
  const result = runList<Row>(services, spec.catalog, projectId, selectColumns(spec.table), {
    filter: filterNode,
    advancedFilter,
    sort,
    partition,
    limit,
    cursor,
    fingerprint: { resource: spec.table.table, filter, advancedFilter, sort, partition },
  });
  const items = result.rows.map((r) => toItem(spec.table, r, omit));
  return result.nextCursor ? { items, nextCursor: result.nextCursor } : { items };
}

/**
 * Relevance-ranked full-text search over the resource's text index, narrowed by the basic filter.
 * `match` is an FTS query (see `ftsQuery`); without one, items come in creation order.
 */
export function searchItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  filterNode: FilterNode | undefined,
  match: string | undefined,
  limit = DEFAULT_LIMIT,
): { items: Item[] } {
  const { catalog, table } = spec;
  const { where } = parseQuery(catalog, projectId, filterNode, undefined);
  const columns = Sql.raw(selectColumns(table));
  const from = Sql.raw(`${table.table} ${table.alias}`);
  const alias = Sql.raw(table.alias);
  let query: Sql;
  if (match !== undefined && catalog.fts) {
    const fts = Sql.raw(catalog.fts.table);
    query = sql`SELECT ${columns} FROM ${fts} JOIN ${from} ON ${alias}.id = ${fts}.rowid
      WHERE ${fts} MATCH ${match} AND ${where} ORDER BY bm25(${fts}), ${alias}.id LIMIT ${limit}`;
  } else {
    query = sql`SELECT ${columns} FROM ${from} WHERE ${where} ORDER BY ${alias}.created_time, ${alias}.id LIMIT ${limit}`;
  }
  return { items: all<Row>(services.db, query).map((r) => toItem(table, r)) };
}
