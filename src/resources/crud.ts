/**
 * Create, retrieve, update and delete for any resource declared as a `ResourceSpec`: external id
 * uniqueness (409 `duplicated`), references (400 `missing`), patches, and one transaction per request.
 * Resources add their own rules through the spec's hooks. The request's scope (`services.access`) applies
 * here: items outside it read as unknown; a write naming an item the principal cannot see at all
 * (query/visibility.ts) answers as for an unknown one, and one naming an item it sees but may not write is
 * refused with 403, as are writes into write-protected data sets the principal does not own
 * (`requireWritableTargets`, which every write path goes through).
 */
import { requireDataSetOwner, requireWritable, scopeCondition, type Access, type ScopeTarget } from '../auth/access.js';
import { badRequest, duplicatedItems, formatPath, missingItems } from '../http/errors.js';
import { itemsJson, joinedItemsJson, JsonText } from '../http/json-text.js';
import { applyArrayPatch, applyMetadataPatch, applyModifyPatch, applyNullablePatch, checkMetadata } from '../http/patch.js';
import type { Services } from '../http/services.js';
import type { MetadataLimits } from '../http/common-schemas.js';
import type { ResourceCatalog } from '../query/catalog.js';
import { requireExistingIn } from '../query/references.js';
import { checkKeyRef, checkRef, claimedRefs, existingRefs, refBody, rejectDuplicateRefs, resolveRefs, type KeyInput, type Ref, type RefInput } from '../query/refs.js';
import { visibleIn } from '../query/visibility.js';
import type { Dialect, TextSearch } from '../storage/dialect.js';
import type { Queryable } from '../storage/store.js';
import { PARENT_FIELD, type Model, type PatchKind } from './model.js';
import { Sql, sql } from '../storage/sql.js';
import { writeProtectedDataSets } from './datasets/service.js';
import { textIndex, type FilterNode } from '../query/filter.js';
import { and } from '../query/basic.js';
import { DEFAULT_LIMIT, parseQuery, runList, type ListResult } from '../query/list.js';
import type { SortSpecInput } from '../query/sort.js';
import {
  deleteItem,
  insertItems,
  itemFromValues,
  itemJsonSql,
  perTable,
  lockItems,
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

export interface WriteContext {
  /** The write's transaction. */
  db: Queryable;
  projectId: number;
  /** The request's services, with `db` the write's transaction. */
  services: Services;
}

/** The parts of a resource's model the shared operations use (see model.ts). */
export function fromModel(model: Pick<Model<never>, 'table' | 'catalog' | 'patches' | 'metadataLimits'>) {
  return { table: model.table, catalog: model.catalog, patches: model.patches, metadataLimits: model.metadataLimits };
}

/** Runs `fn` in one transaction with the request's services bound to it: everything it does is one write. */
export function inWrite<T>(services: Services, fn: (services: Services) => Promise<T>): Promise<T> {
  return services.db.transaction((tx) => fn({ ...services, db: tx }));
}

export interface ResourceSpec<Create> {
  table: ItemTable;
  catalog: ResourceCatalog;
  /**
   * Stored values of a create item that are not simply the item's field of the same name (null when
   * absent): defaults, derived fields, fields set later in the same transaction. `now` is the item's
   * createdTime; `path` names the item in messages.
   */
  createValues?(item: Create, now: number, path: Path): Values;
  patches: Readonly<Record<string, PatchKind>>;
  /**
   * Applies the change `patch` of a field declared with a `custom` patch to the item's values `v` (which it
   * may change beyond that field), or refuses it with a 400 naming `path`; `now` is the update's time.
   */
  applyPatch?(field: string, v: Values, patch: unknown, path: Path, now: number): void;
  /** Items can also be addressed by `instanceId` (columns `instance_space`, `instance_external_id`). */
  instanceIds?: boolean;
  /** Limits of the metadata map, when they differ from the events' ones. */
  metadataLimits?: MetadataLimits;
  /** Rules across the fields of one item, on create and after an update is applied. */
  check?(values: Values, path: Path, ctx: WriteContext): void;
  /** Rules an update must obey given the item as stored (for example read-only fields). */
  checkUpdate?(current: Values, update: Record<string, unknown>, path: Path): void;
  /** Fields holding ids of items elsewhere (a data set, assets); a write may only introduce ones the request sees. */
  references?: ReadonlyArray<{ field: string; catalog: ResourceCatalog }>;
  /** Work to do before items are deleted (dependent data, refusals), in the delete's transaction. */
  beforeDelete?(ids: number[], ctx: WriteContext): Promise<void>;
  /** Work to do once items are created or updated (what depends on their values), in the write's transaction. */
  afterWrite?(ids: number[], ctx: WriteContext): Promise<void>;
  /** The item, with these values, write-protects its own data set (data sets themselves). */
  writeProtects?(values: Values): boolean;
  /** The status of a by-id request that names one item twice, as the reference has it for the resource; 400 unless stated. */
  duplicateStatus?: 400 | 422;
  /** For items that live under a parent (ItemTable.parent): the parent's row id, set by `underParent`. */
  parentId?: number;
  /** Where the parent stands for scopes: items under a parent stand where it does. Set by `underParent`. */
  parentTarget?: ScopeTarget;
  /** The creation time a create item gives for itself (an extraction pipeline run's), when the request may set it. */
  createdTimeOf?(item: Create): number | undefined;
}

/**
 * The resource's operations under one parent item, named by `ref` (`{externalId}`): every read and write
 * of the returned spec creates, names, lists and counts items under it. A parent that does not exist, or
 * that the request's scope does not reach, is a 400 naming it (at `path`, where the request names it in its
 * body or query).
 */
export async function underParent<C>(
  spec: ResourceSpec<C>,
  parent: Pick<ResourceSpec<unknown>, 'table' | 'catalog'>,
  services: Services,
  projectId: number,
  ref: KeyInput,
  path?: Path,
): Promise<ResourceSpec<C>> {
  const key = parent.table.key;
  const refs = [key ? checkKeyRef(ref, key, path ?? ['path']) : checkRef(ref, path ?? ['path'])];
  const [id] = await resolveRefs(services.db, parent.table.table, projectId, refs, true, scopeCondition(services.access, parent.catalog, parent.table.table), key);
  if (id === undefined) throw badRequest(`${path ? `${formatPath(path)}: the` : 'The'} ${parent.catalog.noun} ${JSON.stringify(refBody(refs[0]))} does not exist`);
  const row = (await rowsByIds(services.db, parent.table, projectId, [id])).get(id)!;
  return { ...spec, parentId: id, parentTarget: scopeTarget(parent, toValues(parent.table, row), id) };
}

function parentIdOf(spec: ResourceSpec<unknown>): number {
  if (spec.parentId === undefined) throw new Error(`${spec.catalog.noun}: items under a parent are reached through underParent`);
  return spec.parentId;
}

/** The condition that keeps a spec's reads to its parent's items (none when it has no parent), naming the table by `name`. */
function parentCondition(spec: ResourceSpec<unknown>, name: string): Sql | undefined {
  const parent = spec.table.parent;
  return parent && sql`${Sql.raw(`${name}.${parent.column}`)} = ${parentIdOf(spec)}`;
}

function andWhere(...conditions: Array<Sql | undefined>): Sql | undefined {
  const present = conditions.filter((c): c is Sql => c !== undefined);
  return present.length === 0 ? undefined : present.length === 1 ? present[0] : Sql.and(present);
}

/** A filter of a spec's items, kept to its parent's when it has one: for lists, searches and aggregates. */
export function withinParent(spec: ResourceSpec<unknown>, node: FilterNode | undefined): FilterNode | undefined {
  const parent = spec.table.parent;
  if (!parent) return node;
  const target = { type: 'property' as const, name: PARENT_FIELD, def: { kind: 'integer' as const, column: parent.column, nullable: false } };
  return and([{ op: 'equals', target, value: parentIdOf(spec) }, node]);
}

export interface UpdateItem extends RefInput {
  update: Record<string, unknown>;
}

/** The references of a by-id request, each checked; one named twice is refused with the resource's status. */
export function checkRefs(items: readonly RefInput[], spec: ResourceSpec<unknown>, allowInstanceIds = spec.instanceIds): Ref[] {
  const key = spec.table.key;
  const refs = items.map((r, i) => (key ? checkKeyRef(r as Record<string, unknown>, key, ['items', i]) : checkRef(r, ['items', i], allowInstanceIds)));
  rejectDuplicateRefs(refs, spec.duplicateStatus);
  return refs;
}

/** Each stored field as the create item gives it, null when absent. */
function copyFields(t: ItemTable, item: Record<string, unknown>): Values {
  const values: Values = {};
  for (const f of t.fields) values[f.name] = item[f.name] ?? null;
  return values;
}

async function checkReferences(spec: ResourceSpec<unknown>, { db, projectId, services }: WriteContext, values: Values[], previous?: Values[]): Promise<void> {
  for (const r of spec.references ?? []) await requireExistingIn(db, visibleIn(services, r.catalog), projectId, values, r.field, previous);
}

async function rowsInOrder(db: Queryable, t: ItemTable, projectId: number, ids: number[], select?: string): Promise<Row[]> {
  const rows = await rowsByIds(db, t, projectId, ids, undefined, select);
  return ids.map((id) => rows.get(id)!);
}

/**
 * How the read operations give items: as objects, for callers that work on them (the assets' present step,
 * writes), or as the JSON text of each rendered by SQL, for responses, which saves building and serializing
 * an object per item. Both read the same rows; only the select list and the mapping of a row differ.
 */
interface ItemReader<T> {
  /** The select list over the table's alias on one engine; it includes the id. */
  select(d: Dialect, t: ItemTable, omit?: ReadonlySet<string>): string;
  read(t: ItemTable, row: Row, omit?: ReadonlySet<string>): T;
}

const asObjects: ItemReader<Item> = { select: (_d, t) => selectColumns(t), read: toItem };

const ITEM_JSON = 'item_json';

const asJson: ItemReader<string> = {
  select: perTable((d, t, omit) => `${t.alias}.id, ${itemJsonSql(d, t, omit)} AS ${ITEM_JSON}`),
  read: (_t, row) => row[ITEM_JSON] as string,
};

/** Where an item stands for scopes: its id and its data set (the catalog's `dataSetColumn`). */
export function scopeTarget(spec: Pick<ResourceSpec<unknown>, 'table' | 'catalog' | 'parentTarget'>, values: Values, id?: number): ScopeTarget {
  if (spec.parentTarget) return spec.parentTarget;
  const column = spec.catalog.dataSetColumn;
  if (column === undefined) return { id, dataSetId: null };
  if (column === 'id') return { id, dataSetId: id ?? null };
  const field = spec.table.fields.find((f) => f.column === column);
  const value = field ? values[field.name] : null;
  return { id, dataSetId: typeof value === 'number' ? value : null };
}

/** One item a write touches, as it is before or after the write; `protects` when the write protects its data set. */
export interface WriteTarget {
  target: ScopeTarget;
  path: Path;
  protects?: boolean;
}

const limited = (a: Access | undefined) => a !== undefined && !a.all;

/** Whether writes of this request are checked item by item: its scope or its data set ownership is limited. */
function guarded(services: Services): boolean {
  return limited(services.access) || limited(services.dataSetOwner);
}

/**
 * Refuses (403, before anything is written) a write that touches an item outside the request's scope, or
 * an item in a write-protected data set (before or after the write) that the principal does not own. Every
 * write of items goes through here, in the write's transaction.
 */
export async function requireWritableTargets(services: Services, projectId: number, noun: string, targets: readonly WriteTarget[]): Promise<void> {
  requireWritable(services.access, noun, targets);
  const owner = services.dataSetOwner;
  if (!limited(owner)) return;
  const dataSetIds = new Set<number>();
  for (const { target } of targets) if (target.dataSetId !== null) dataSetIds.add(target.dataSetId);
  requireDataSetOwner(owner, await writeProtectedDataSets(services.db, projectId, [...dataSetIds]), noun, targets);
}

/** The write targets of stored items (by id, as rows of `spec`'s table). */
function storedTargets(spec: ResourceSpec<unknown>, rows: readonly Row[], ids: readonly number[], path: (i: number) => Path): WriteTarget[] {
  return rows.map((row, i) => ({ target: scopeTarget(spec, toValues(spec.table, row), ids[i]), path: path(i) }));
}

/**
 * Ids of the referenced items the request may read, in request order. A reference to an item outside the
 * scope is missing exactly like an unknown one, so a scoped principal learns nothing about other items.
 */
function resolveReadable(spec: ResourceSpec<unknown>, services: Services, projectId: number, refs: readonly Ref[], ignoreUnknownIds: boolean): Promise<number[]> {
  const { table, catalog } = spec;
  const where = andWhere(scopeCondition(services.access, catalog, table.table), parentCondition(spec, table.table));
  return resolveRefs(services.db, table.table, projectId, refs, ignoreUnknownIds, where, table.key);
}

/**
 * Ids of the items a write names, in request order: an item the principal cannot see is missing like an
 * unknown one; one it sees but may not write is refused with 403 (`requireWritable`). Their rows come along,
 * in the same order.
 */
async function resolveWritable(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  refs: readonly Ref[],
  ignoreUnknownIds = false,
): Promise<{ ids: number[]; rows: Row[] }> {
  const { db } = services;
  const t = spec.table;
  const ids = await resolveRefs(db, t.table, projectId, refs, ignoreUnknownIds, andWhere(visibleIn(services, spec.catalog).where, parentCondition(spec, t.table)), t.key);
  await lockItems(db, t, projectId, ids);
  const rows = await rowsInOrder(db, t, projectId, ids);
  if (guarded(services)) {
    await requireWritableTargets(services, projectId, spec.catalog.noun, storedTargets(spec, rows, ids, (i) => (ignoreUnknownIds ? ['items'] : ['items', i])));
  }
  return { ids, rows };
}

/** The ids of the items an update or delete request names, checked as the write itself checks them (see `resolveWritable`). */
export async function writableIds(spec: ResourceSpec<unknown>, services: Services, projectId: number, items: readonly RefInput[]): Promise<number[]> {
  return (await resolveWritable(spec, services, projectId, checkRefs(items, spec))).ids;
}

/** The stored values of create items, checked by the resource's rules and its scope (the start of a create and an upsert). */
async function createValuesOf<C>(spec: ResourceSpec<C>, ctx: WriteContext, items: readonly C[], now: number): Promise<Values[]> {
  const parent = spec.table.parent && { [PARENT_FIELD]: spec.parentId };
  const values = items.map((item, i) => {
    const v: Values = { ...copyFields(spec.table, item as Record<string, unknown>), ...spec.createValues?.(item, now, ['items', i]), ...parent };
    const md = spec.table.metadata?.field;
    if (md) checkMetadata(v[md] as Record<string, string> | null, ['items', i, md], spec.metadataLimits);
    spec.check?.(v, ['items', i], ctx);
    return v;
  });
  await requireWritableTargets(ctx.services, ctx.projectId, spec.catalog.noun, values.map((v, i) => ({ target: scopeTarget(spec as ResourceSpec<unknown>, v), path: ['items', i] })));
  return values;
}

interface KeyedWrite {
  ctx: WriteContext;
  now: number;
  /** Each item's values, checked. */
  values: Values[];
  /** The items whose key is stored, with the id of the item holding it. */
  existing: Array<{ ref: Ref; id: number }>;
  /** Each item's claimed key, in order. */
  claimed: Ref[];
}

/** A create or an upsert, in one write: the items' values checked, and which of their keys are stored. */
function writeKeyed<C, T>(spec: ResourceSpec<C>, services: Services, projectId: number, items: readonly C[], write: (w: KeyedWrite) => Promise<T>): Promise<T> {
  const claimed = claimedRefs(items as ReadonlyArray<Record<string, unknown>>, spec.table.key);
  return inWrite(services, async (services) => {
    const ctx: WriteContext = { db: services.db, projectId, services };
    const now = services.now();
    const values = await createValuesOf(spec, ctx, items, now);
    const existing = await existingRefs(services.db, spec.table.table, projectId, claimed, parentCondition(spec as ResourceSpec<unknown>, spec.table.table), spec.table.key);
    return write({ ctx, now, values, existing, claimed });
  });
}

export function createItems<C>(spec: ResourceSpec<C>, services: Services, projectId: number, items: readonly C[]): Promise<Item[]> {
  return writeKeyed(spec, services, projectId, items, async ({ ctx, now, values, existing }) => {
    if (existing.length) throw duplicatedItems(existing.map((e) => refBody(e.ref)));
    await checkReferences(spec, ctx, values);
    const created = items.map((item) => spec.createdTimeOf?.(item) ?? now);
    const ids = await insertItems(ctx.db, spec.table, projectId, values, now, created);
    await spec.afterWrite?.(ids, ctx);
    return values.map((v, i) => itemFromValues(spec.table, ids[i], v, created[i], now));
  });
}

/**
 * Create-or-update by the resource's key, in one write: an item whose key is stored replaces that item's
 * values whole (its createdTime stays), the others are created.
 */
export function upsertItems<C>(spec: ResourceSpec<C>, services: Services, projectId: number, items: readonly C[]): Promise<Item[]> {
  return writeKeyed(spec, services, projectId, items, async ({ ctx, now, values, existing, claimed }) => {
    const { db } = ctx;
    const storedIds = claimed.map((ref) => existing.find((e) => e.ref === ref)?.id);
    const stored = await rowsByIds(db, spec.table, projectId, existing.map((e) => e.id));
    await checkReferences(spec, ctx, values);
    const freshIds = await insertItems(db, spec.table, projectId, values.filter((_, i) => storedIds[i] === undefined), now);
    const ids: number[] = [];
    const createdTimes: number[] = [];
    for (const [i, v] of values.entries()) {
      const id = storedIds[i];
      if (id === undefined) {
        ids.push(freshIds.shift()!);
        createdTimes.push(now);
        continue;
      }
      const createdTime = stored.get(id)!.created_time;
      await updateItem(db, spec.table, projectId, id, v, now, createdTime);
      ids.push(id);
      createdTimes.push(createdTime);
    }
    await spec.afterWrite?.(ids, ctx);
    return values.map((v, i) => itemFromValues(spec.table, ids[i], v, createdTimes[i], now));
  });
}

async function retrieve<T>(
  reader: ItemReader<T>,
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  items: readonly RefInput[],
  ignoreUnknownIds: boolean,
): Promise<T[]> {
  const ids = await resolveReadable(spec, services, projectId, checkRefs(items, spec), ignoreUnknownIds);
  const rows = await rowsInOrder(services.db, spec.table, projectId, ids, reader.select(services.db.dialect, spec.table));
  return rows.map((r) => reader.read(spec.table, r));
}

export function retrieveItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  items: readonly RefInput[],
  ignoreUnknownIds = false,
): Promise<Item[]> {
  return retrieve(asObjects, spec, services, projectId, items, ignoreUnknownIds);
}

/** The byids response `{items}`, rendered by SQL. */
export async function retrieveItemsJson(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  items: readonly RefInput[],
  ignoreUnknownIds = false,
): Promise<JsonText> {
  return itemsJson(await retrieve(asJson, spec, services, projectId, items, ignoreUnknownIds));
}

/** One item, by its id, or by its declared key (`{externalId}`) for a resource keyed otherwise. */
async function getOne<T>(reader: ItemReader<T>, spec: ResourceSpec<unknown>, services: Services, projectId: number, id: number | RefInput | KeyInput): Promise<T> {
  if (typeof id !== 'number') return (await retrieve(reader, spec, services, projectId, [id as RefInput], false))[0];
  const where = scopeCondition(services.access, spec.catalog);
  const row = (await rowsByIds(services.db, spec.table, projectId, [id], where, reader.select(services.db.dialect, spec.table))).get(id);
  // An unknown id is missing as in a by-ids read (400 with `missing`): the reference lists no 404 here.
  if (!row) throw missingItems([{ id }]);
  return reader.read(spec.table, row);
}

export function getItem(spec: ResourceSpec<unknown>, services: Services, projectId: number, id: number | RefInput | KeyInput): Promise<Item> {
  return getOne(asObjects, spec, services, projectId, id);
}

/** The item as the response, rendered by SQL. */
export async function getItemJson(spec: ResourceSpec<unknown>, services: Services, projectId: number, id: number | RefInput | KeyInput): Promise<JsonText> {
  return new JsonText(await getOne(asJson, spec, services, projectId, id));
}

export async function deleteItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  items: readonly RefInput[],
  ignoreUnknownIds = false,
): Promise<void> {
  const refs = checkRefs(items, spec, false);
  await inWrite(services, async (services) => {
    const { db } = services;
    const ids = [...new Set((await resolveWritable(spec, services, projectId, refs, ignoreUnknownIds)).ids)];
    await spec.beforeDelete?.(ids, { db, projectId, services });
    for (const id of ids) await deleteItem(db, spec.table, projectId, id);
  });
}

function applyPatch(kind: Exclude<PatchKind, { custom: unknown }>, current: unknown, patch: unknown, path: Path, limits?: MetadataLimits): unknown {
  if (kind === 'metadata') return applyMetadataPatch(current as Record<string, string> | null, patch as never, path, limits);
  if (typeof kind === 'object' && 'modify' in kind) return applyModifyPatch(current as Record<string, unknown> | null, patch as never, [...path, 'modify']);
  if (typeof kind === 'object') return applyArrayPatch(current as unknown[] | null, patch as never, path, kind.array, kind.byValue);
  // `required` fields accept only `set`, which the schema enforces; the rule is shared with nullable ones.
  return applyNullablePatch(current, patch as never, path);
}

/** Refuses a change of a field that cannot be changed (`patch: false`, or a key field), naming it. */
function requirePatchable(spec: ResourceSpec<unknown>, field: string, path: Path): PatchKind {
  const kind = spec.patches[field];
  if (kind === undefined) throw badRequest(`${formatPath([...path, field])}: ${field} is fixed when a ${spec.catalog.noun} is created and cannot be changed`);
  return kind;
}

export async function updateItems(spec: ResourceSpec<unknown>, services: Services, projectId: number, items: readonly UpdateItem[]): Promise<Item[]> {
  const refs = checkRefs(items, spec);
  const t = spec.table;
  return inWrite(services, async (services) => {
    const { db } = services;
    const ctx: WriteContext = { db, projectId, services };
    const { ids, rows } = await resolveWritable(spec, services, projectId, refs);
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (twice.length) throw duplicatedItems([...new Set(twice)].map((id) => ({ id })), spec.duplicateStatus ?? 400);
    const before = storedTargets(spec, rows, ids, (i) => ['items', i]);
    const now = services.now();
    const next = items.map((item, i) => {
      const current = toValues(t, rows[i]);
      const path: Path = ['items', i, 'update'];
      spec.checkUpdate?.(current, item.update, path);
      const v: Values = { ...current };
      for (const [field, patch] of Object.entries(item.update)) {
        if (patch === undefined) continue;
        const kind = requirePatchable(spec, field, path);
        if (typeof kind === 'object' && 'custom' in kind) spec.applyPatch!(field, v, patch, [...path, field], now);
        else v[field] = applyPatch(kind, current[field], patch, [...path, field], spec.metadataLimits);
      }
      spec.check?.(v, ['items', i], ctx);
      return v;
    });
    const after = next.map((v, i) => ({ target: scopeTarget(spec, v, ids[i]), path: ['items', i, 'update'], protects: spec.writeProtects?.(v) }));
    await requireWritableTargets(services, projectId, spec.catalog.noun, [...before, ...after]);
    // External ids stay unique: among the updated items, and against items this request does not change.
    // (An update cannot change an instanceId, nor the fields of a declared key.)
    if (!t.key) claimedRefs(next.map((v) => ({ externalId: v.externalId })));
    const changed = t.key ? [] : next.map((v, i) => ({ v, i })).filter(({ v, i }) => v.externalId !== null && v.externalId !== rows[i].external_id);
    const updating = new Set(ids);
    const conflicts = (await existingRefs(db, t.table, projectId, changed.map(({ v }) => ({ externalId: v.externalId as string }))))
      .filter((e) => !updating.has(e.id))
      .map((e) => e.ref);
    if (conflicts.length) throw duplicatedItems(conflicts.map(refBody));
    await checkReferences(spec, ctx, next, rows.map((r) => toValues(t, r)));
    // Release changed external ids first, so that swaps within one request do not collide on the unique index.
    for (const { i } of changed) await db.run(sql`UPDATE ${Sql.raw(t.table)} SET external_id = NULL WHERE project_id = ${projectId} AND id = ${ids[i]}`);
    for (const [i, v] of next.entries()) await updateItem(db, t, projectId, ids[i], v, now, rows[i].created_time);
    await spec.afterWrite?.(ids, ctx);
    return (await rowsInOrder(db, t, projectId, ids)).map((r) => toItem(t, r));
  });
}


export interface ListInput {
  advancedFilter?: unknown;
  sort?: Array<SortSpecInput | string>;
  limit?: number;
  /** null asks for the first page, as absent does (see ListCursor). */
  cursor?: string | null;
  partition?: string;
}

/** A list page of any resource; `filterNode` is its basic filter translated to the filter language. */
function listPage(
  select: string,
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  input: ListInput & { filter?: unknown },
  filterNode: FilterNode | undefined,
  join?: string,
): Promise<ListResult<Row>> {
  const { filter, advancedFilter, sort, partition, limit, cursor } = input;
  return runList<Row>(services, spec.catalog, projectId, select, {
    filter: filterNode,
    advancedFilter,
    sort,
    partition,
    limit,
    cursor: cursor ?? undefined,
    fingerprint: { resource: spec.table.table, parent: spec.parentId, filter, advancedFilter, sort, partition },
    join,
  });
}

export async function listItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  input: ListInput & { filter?: unknown },
  filterNode: FilterNode | undefined,
  omit?: ReadonlySet<string>,
): Promise<{ items: Item[]; nextCursor?: string }> {
  const { rows, nextCursor } = await listPage(asObjects.select(services.db.dialect, spec.table, omit), spec, services, projectId, input, withinParent(spec, filterNode));
  const items = rows.map((r) => asObjects.read(spec.table, r, omit));
  return nextCursor ? { items, nextCursor } : { items };
}

/** The list page response `{items, nextCursor}`, rendered by SQL and joined by the thread that read it. */
export async function listItemsJson(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  input: ListInput & { filter?: unknown },
  filterNode: FilterNode | undefined,
  omit?: ReadonlySet<string>,
): Promise<JsonText> {
  const { joined, nextCursor } = await listPage(asJson.select(services.db.dialect, spec.table, omit), spec, services, projectId, input, withinParent(spec, filterNode), ITEM_JSON);
  return joinedItemsJson(joined, nextCursor);
}

/**
 * Relevance-ranked full-text search over the resource's text index, narrowed by the basic filter; without a
 * text search (`search` undefined), items come in creation order.
 */
async function search<T>(
  reader: ItemReader<T>,
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  filterNode: FilterNode | undefined,
  text: TextSearch | undefined,
  limit: number,
): Promise<T[]> {
  const { catalog, table } = spec;
  const { db } = services;
  const { where } = parseQuery(catalog, projectId, withinParent(spec, filterNode), undefined, services);
  const columns = Sql.raw(reader.select(db.dialect, table));
  let query: Sql;
  if (text !== undefined && catalog.fts) {
    const ranked = db.dialect.rankedSearch(textIndex(catalog), text);
    query = sql`SELECT ${columns} FROM ${ranked.from} WHERE ${ranked.where} AND ${where} ORDER BY ${ranked.order} LIMIT ${limit}`;
  } else {
    const alias = Sql.raw(table.alias);
    query = sql`SELECT ${columns} FROM ${Sql.raw(`${table.table} ${table.alias}`)} WHERE ${where} ORDER BY ${alias}.created_time, ${alias}.id LIMIT ${limit}`;
  }
  return (await db.all<Row>(query)).map((r) => reader.read(table, r));
}

export async function searchItems(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  filterNode: FilterNode | undefined,
  text: TextSearch | undefined,
  limit = DEFAULT_LIMIT,
): Promise<{ items: Item[] }> {
  return { items: await search(asObjects, spec, services, projectId, filterNode, text, limit) };
}

/** The search response `{items}`, rendered by SQL. */
export async function searchItemsJson(
  spec: ResourceSpec<unknown>,
  services: Services,
  projectId: number,
  filterNode: FilterNode | undefined,
  text: TextSearch | undefined,
  limit = DEFAULT_LIMIT,
): Promise<JsonText> {
  return itemsJson(await search(asJson, spec, services, projectId, filterNode, text, limit));
}
