/**
 * Generic storage of a resource's items: one row per item in the resource table (API fields in columns,
 * maps and lists as JSON), plus the side tables the query layer filters on (metadata keys/values, array
 * values). A resource declares its table once; inserting, updating, deleting and reading rows is shared.
 */
import type { ArrayProperty, MetadataStore } from '../query/catalog.js';
import type { Dialect } from './dialect.js';
import { allocateIds } from './ids.js';
import { Sql, sql, type SqlValue } from './sql.js';
import type { Queryable } from './store.js';

/** `instanceId` is stored in the columns `instance_space` and `instance_external_id`, so it can be looked up. */
export type FieldType = 'integer' | 'string' | 'boolean' | 'json' | 'instanceId';

export interface FieldDef {
  /** API field name. */
  name: string;
  column: string;
  type: FieldType;
  /** Stored but never part of the API form (the parent's row id of an item under a parent). */
  hidden?: boolean;
  /**
   * The JSON text the API form gives when the field is absent (`{}` for a metadata map, `[]` for a list
   * that is always present); without it an absent field is left out.
   */
  absent?: string;
}

/** A key of the items other than the internal id: the fields that name an item (see ItemTable.key). */
export type KeyField = Pick<FieldDef, 'name' | 'column'>;

export interface ItemTable {
  table: string;
  alias: string;
  /** API fields stored on the row, in response order (id, createdTime and lastUpdatedTime are implicit). */
  fields: readonly FieldDef[];
  /** The field that holds the metadata map, indexed in `metadata.table`. */
  metadata?: { field: string; store: MetadataStore };
  /** Array fields indexed one value per row in a side table. */
  arrays?: ReadonlyArray<{ field: string; index: ArrayProperty }>;
  /**
   * The table keeps each row's JSON rendering (see `renderItemJsonSql`) in a column `item_json`, written
   * with the row by insertItems and updateItem, so reads return stored text instead of rendering it: for
   * a page of 1000 events that halves the SQL. Only for tables whose rows nothing else updates (assets
   * move their hierarchy columns in place, so they render on read).
   */
  storesJson?: boolean;
  /**
   * The fields that name an item, when that is not the internal id (an external id alone, or several
   * fields, for example a version under its parent). Such a table still has an internal id, for storage
   * and keyset cursors, but the API form leaves it out.
   */
  key?: readonly KeyField[];
  /** The items live under an item of `table`, whose row id the hidden field `column` holds. */
  parent?: { table: ItemTable; column: string };
  /** Tables whose items live under this table's items: deleted with them. */
  children?: ItemTable[];
}

/** The column of a table that `storesJson`. */
const ITEM_JSON_COLUMN = 'item_json';

export type Values = Record<string, unknown>;
export type Row = Record<string, unknown> & { id: number; created_time: number; last_updated_time: number };
export type Item = Record<string, unknown> & { id: number; createdTime: number; lastUpdatedTime: number };

/** Metadata values longer than this are kept on the item but are not filterable (spec: up to 256). */
export const FILTERABLE_METADATA_LENGTH = 256;

const INSTANCE_COLUMNS = ['instance_space', 'instance_external_id'];

function fieldColumns(f: FieldDef): string[] {
  return f.type === 'instanceId' ? INSTANCE_COLUMNS : [f.column];
}

function dataColumns(t: ItemTable): string[] {
  return t.fields.flatMap(fieldColumns);
}

/**
 * A text derived from a table (and fields left out) on one engine, built once and then returned as the same
 * string: SQL texts are long, and the prepared-statement cache hashes a newly built one on every request.
 */
export function perTable(build: (d: Dialect, t: ItemTable, omit?: ReadonlySet<string>) => string): (d: Dialect, t: ItemTable, omit?: ReadonlySet<string>) => string {
  const cache = new WeakMap<Dialect, WeakMap<ItemTable, Map<string, string>>>();
  return (d, t, omit) => {
    let byTable = cache.get(d);
    if (!byTable) cache.set(d, (byTable = new WeakMap()));
    let byOmit = byTable.get(t);
    if (!byOmit) byTable.set(t, (byOmit = new Map()));
    const key = omit?.size ? [...omit].sort().join(',') : '';
    let text = byOmit.get(key);
    if (text === undefined) byOmit.set(key, (text = build(d, t, omit)));
    return text;
  };
}

/** The stored columns of a table under its alias (the same on every engine). */
const selectColumnsOf = perTable((_d, t) => ['id', ...dataColumns(t), 'created_time', 'last_updated_time'].map((c) => `${t.alias}.${c}`).join(', '));
const NEUTRAL = {} as Dialect;
export const selectColumns = (t: ItemTable): string => selectColumnsOf(NEUTRAL, t);

/**
 * An empty list or map (no labels, no asset ids, no metadata) is no value: stored as absent, so responses
 * leave it out as they leave out every other absent field (but for those with an `absent` form, see toItem).
 */
function isAbsent(f: FieldDef, v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (f.type !== 'json' || typeof v !== 'object') return false;
  return Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
}

function toColumns(f: FieldDef, v: unknown): unknown[] {
  if (f.type === 'instanceId') {
    const n = v as { space: string; externalId: string } | null | undefined;
    return n ? [n.space, n.externalId] : [null, null];
  }
  if (isAbsent(f, v)) return [null];
  if (f.type === 'json') return [JSON.stringify(v)];
  if (f.type === 'boolean') return [v ? 1 : 0];
  return [v];
}

function fromColumns(f: FieldDef, row: Row): unknown {
  if (f.type === 'instanceId') {
    const space = row.instance_space;
    return space === null || space === undefined ? null : { space, externalId: row.instance_external_id };
  }
  const v = row[f.column];
  if (v === null || v === undefined) return null;
  if (f.type === 'json') return JSON.parse(v as string);
  if (f.type === 'boolean') return v === 1;
  return v;
}

/**
 * The API form of a row: absent (null) fields are left out, but for those with an `absent` form (a
 * metadata map is given as `{}`, as the reference service does: the official Python SDK reads a missing
 * map as None, so `"key" in item.metadata` would fail).
 */
export function toItem(t: ItemTable, row: Row, omit?: ReadonlySet<string>): Item {
  const item: Record<string, unknown> = t.key ? {} : { id: row.id };
  for (const f of t.fields) {
    if (f.hidden || omit?.has(f.name)) continue;
    const v = fromColumns(f, row);
    if (v !== null) item[f.name] = v;
    else if (f.absent !== undefined) item[f.name] = JSON.parse(f.absent);
  }
  item.createdTime = row.created_time;
  item.lastUpdatedTime = row.last_updated_time;
  return item as Item;
}

/** SQL of one field's value as JSON text, on the row under alias `a`; `test` is null exactly when the field is absent. */
function fieldJsonSql(d: Dialect, f: FieldDef, a: string): { test: string; value: string } {
  if (f.type === 'instanceId') {
    return {
      test: `${a}.instance_space`,
      value: `'{"space":' || ${d.jsonQuote(`${a}.instance_space`)} || ',"externalId":' || ${d.jsonQuote(`${a}.instance_external_id`)} || '}'`,
    };
  }
  const c = `${a}.${f.column}`;
  // JSON fields are written only through JSON.stringify (toColumns), so the stored text is already the
  // response's text; re-rendering it with json() would parse and print every value again.
  if (f.type === 'json') return { test: c, value: c };
  // As fromColumns: 1 is true, any other stored value false.
  if (f.type === 'boolean') return { test: c, value: `CASE ${c} WHEN 1 THEN 'true' ELSE 'false' END` };
  return { test: c, value: d.jsonQuote(c) };
}

/**
 * SQL giving a row (under the table's alias) as the JSON text of its API form: the stored rendering when
 * the table keeps one (and nothing is omitted), otherwise rendered now.
 */
export const itemJsonSql = perTable((d, t, omit) => {
  const render = renderItemJsonSql(d, t, omit);
  // coalesce evaluates the rendering only for a row without a stored text, which no write leaves.
  return t.storesJson && !omit?.size ? `coalesce(${t.alias}.${ITEM_JSON_COLUMN}, ${render})` : render;
});

/**
 * SQL rendering a row (under the table's alias) as the JSON text of its API form, byte for byte what
 * `JSON.stringify(toItem(t, row, omit))` gives, so pages can be answered without building and serializing an
 * object per row. The text is concatenated key by key rather than built as json_object then json_patch'ed
 * against '{}' to drop nulls, because that patch would also drop nulls nested inside JSON fields (for
 * example in a geoLocation's properties). `json_quote` escapes strings as JSON.stringify does.
 */
export const renderItemJsonSql = perTable(buildItemJsonSql);

function buildItemJsonSql(d: Dialect, t: ItemTable, omit?: ReadonlySet<string>): string {
  const a = t.alias;
  // Field names are identifiers from the table declaration; the quote doubling only keeps the literal well formed.
  const key = (name: string) => `',${JSON.stringify(name).replaceAll("'", "''")}:'`;
  // Without the id, every key is written with a leading comma; the first one is cut off below.
  const parts = t.key ? [] : [`'{"id":' || ${a}.id`];
  for (const f of t.fields) {
    if (f.hidden || omit?.has(f.name)) continue;
    const { test, value } = fieldJsonSql(d, f, a);
    parts.push(f.absent !== undefined ? `${key(f.name)} || coalesce(${value}, '${f.absent}')` : `CASE WHEN ${test} IS NULL THEN '' ELSE ${key(f.name)} || ${value} END`);
  }
  parts.push(`${key('createdTime')} || ${a}.created_time`, `${key('lastUpdatedTime')} || ${a}.last_updated_time || '}'`);
  return t.key ? `'{' || substr(concat(${parts.join(', ')}), 2)` : `concat(${parts.join(', ')})`;
}

/** The stored values of a row, by API field name (null when absent). */
export function toValues(t: ItemTable, row: Row): Values {
  const values: Values = {};
  for (const f of t.fields) values[f.name] = fromColumns(f, row);
  return values;
}

/**
 * Rows by id; `where` (a condition on the table's alias, such as the request's scope) narrows them further.
 * `select` replaces the stored columns (it must include the id).
 */
/**
 * Locks the rows of items a write is about to change or delete until its transaction ends (a no-op where
 * writes are serialized anyway), in id order so that two writes never wait for each other. A write reads
 * the rows after this, so it never computes a change from a version another write is replacing, and a
 * delete's clean-up sees whatever a concurrent write attached to the item before it.
 */
export async function lockItems(db: Queryable, t: ItemTable, projectId: number, ids: readonly number[]): Promise<void> {
  if (!db.dialect.forUpdate || ids.length === 0) return;
  await db.all(sql`SELECT id FROM ${Sql.raw(t.table)} WHERE project_id = ${projectId} AND id IN (${db.dialect.idList(ids)}) ORDER BY id${Sql.raw(db.dialect.forUpdate)}`);
}

export async function rowsByIds(db: Queryable, t: ItemTable, projectId: number, ids: readonly number[], where?: Sql, select = selectColumns(t)): Promise<Map<number, Row>> {
  const out = new Map<number, Row>();
  const extra = where ? ` AND ${where.text}` : '';
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    const text = byIdsText(t, select, extra, part.length);
    for (const r of await db.all<Row>(new Sql(text, [projectId, ...part, ...(where?.params ?? [])]))) out.set(r.id, r);
  }
  return out;
}

/** Statement texts of rowsByIds by table, select list, extra condition and id count: the same string each time. */
const byIdsTexts = new WeakMap<ItemTable, Map<string, Map<string, string[]>>>();

function byIdsText(t: ItemTable, select: string, extra: string, count: number): string {
  let bySelect = byIdsTexts.get(t);
  if (!bySelect) byIdsTexts.set(t, (bySelect = new Map()));
  let byExtra = bySelect.get(select);
  if (!byExtra) bySelect.set(select, (byExtra = new Map()));
  let byCount = byExtra.get(extra);
  if (!byCount) {
    // Conditions come from access scopes, whose shapes are few; forget them all if they ever are not.
    if (byExtra.size >= 256) byExtra.clear();
    byExtra.set(extra, (byCount = []));
  }
  return (byCount[count] ??= `SELECT ${select} FROM ${t.table} ${t.alias} WHERE ${t.alias}.project_id = ? AND ${t.alias}.id IN (${Array(count).fill('?').join(', ')})${extra}`);
}

/** Bound parameters per statement, under SQLite's limit of 32766 (PostgreSQL's is 65535). */
const MAX_PARAMS = 30_000;
const MAX_ROWS_PER_STATEMENT = 500;

/** Inserts `rows` of `columns` into `table` with multi-row statements (per-statement cost dominates bulk writes). */
export async function insertRows(db: Queryable, table: string, columns: readonly string[], rows: readonly unknown[][], conflict = ''): Promise<void> {
  if (rows.length === 0) return;
  const one = `(${columns.map(() => '?').join(', ')})`;
  const perStatement = Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMS / columns.length)));
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    await db.run(new Sql(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array(chunk.length).fill(one).join(', ')}${conflict}`, chunk.flat() as SqlValue[]));
  }
}

/**
 * The side-table rows (metadata keys and values, array values) of items, from their values. Rows are sorted
 * in index order, which keeps the B-tree inserts local. Keys and values are lower-cased with JavaScript's
 * full Unicode case mapping, the one filters apply to the values they compare.
 */
async function fillSideTables(db: Queryable, t: ItemTable, projectId: number, items: ReadonlyArray<{ id: number; v: Values }>): Promise<void> {
  if (t.metadata) {
    const m = t.metadata.store;
    const rows: unknown[][] = [];
    for (const { id, v } of items) {
      const map = v[t.metadata.field] as Record<string, string> | null | undefined;
      if (!map) continue;
      for (const [key, value] of Object.entries(map)) {
        const short = value.length <= m.maxFilterableLength;
        rows.push([id, projectId, key, key.toLowerCase(), short ? value : null, short ? value.toLowerCase() : null]);
      }
    }
    rows.sort((a, b) => compareText(a[3] as string, b[3] as string) || compareText(a[5] as string | null, b[5] as string | null));
    await insertRows(db, m.table, [m.itemColumn, 'project_id', 'key', 'key_lc', 'value', 'value_lc'], rows);
  }
  for (const { field, index } of t.arrays ?? []) {
    const rows: unknown[][] = [];
    for (const { id, v } of items) {
      const list = v[field] as unknown[] | null | undefined;
      if (!list) continue;
      for (const value of new Set(list)) rows.push([id, projectId, value]);
    }
    await insertRows(db, index.table, [index.itemColumn, 'project_id', index.valueColumn], rows, ' ON CONFLICT DO NOTHING');
  }
}

function compareText(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

async function clearSideTables(db: Queryable, t: ItemTable, projectId: number, id: number): Promise<void> {
  if (t.metadata) await db.run(sql`DELETE FROM ${Sql.raw(t.metadata.store.table)} WHERE project_id = ${projectId} AND ${Sql.raw(t.metadata.store.itemColumn)} = ${id}`);
  for (const { index } of t.arrays ?? []) await db.run(sql`DELETE FROM ${Sql.raw(index.table)} WHERE project_id = ${projectId} AND ${Sql.raw(index.itemColumn)} = ${id}`);
}

/** The row's stored JSON, when the table keeps one: the item's API form, as responses give it. */
function storedJson(t: ItemTable, id: number, v: Values, createdTime: number, lastUpdatedTime: number): unknown[] {
  return t.storesJson ? [JSON.stringify(itemFromValues(t, id, v, createdTime, lastUpdatedTime))] : [];
}

/**
 * Inserts items, returning their ids in order (allocated by `allocateIds`). Rows and side-table rows go in
 * with multi-row statements.
 */
export async function insertItems(db: Queryable, t: ItemTable, projectId: number, values: readonly Values[], now: number): Promise<number[]> {
  if (values.length === 0) return [];
  const ids = await allocateIds(db, t.table, values.length);
  const columns = ['id', 'project_id', ...dataColumns(t), 'created_time', 'last_updated_time', ...(t.storesJson ? [ITEM_JSON_COLUMN] : [])];
  const rows = values.map((v, k) => [ids[k], projectId, ...t.fields.flatMap((f) => toColumns(f, v[f.name])), now, now, ...storedJson(t, ids[k], v, now, now)]);
  await insertRows(db, t.table, columns, rows);
  await fillSideTables(db, t, projectId, values.map((v, k) => ({ id: ids[k], v })));
  return ids;
}

/** The API form of an item just written, from the values it was written with (no read back). */
export function itemFromValues(t: ItemTable, id: number, v: Values, createdTime: number, lastUpdatedTime: number): Item {
  const item: Record<string, unknown> = t.key ? {} : { id };
  for (const f of t.fields) {
    if (f.hidden) continue;
    const value = v[f.name];
    if (!isAbsent(f, value)) item[f.name] = value;
    else if (f.absent !== undefined) item[f.name] = JSON.parse(f.absent);
  }
  item.createdTime = createdTime;
  item.lastUpdatedTime = lastUpdatedTime;
  return item as Item;
}

/** Writes an item's new values; `createdTime` is what the row holds (it is part of the stored JSON). */
export async function updateItem(db: Queryable, t: ItemTable, projectId: number, id: number, v: Values, now: number, createdTime: number): Promise<void> {
  const assignments = [...dataColumns(t).map((c) => `${c} = ?`), 'last_updated_time = ?', ...(t.storesJson ? [`${ITEM_JSON_COLUMN} = ?`] : [])];
  const params = [...t.fields.flatMap((f) => toColumns(f, v[f.name])), now, ...storedJson(t, id, v, createdTime, now), projectId, id];
  await db.run(new Sql(`UPDATE ${t.table} SET ${assignments.join(', ')} WHERE project_id = ? AND id = ?`, params as SqlValue[]));
  await clearSideTables(db, t, projectId, id);
  await fillSideTables(db, t, projectId, [{ id, v }]);
}

/**
 * Data migrations of item tables. Rows whose stored JSON is missing get it rendered (by SQL, from their
 * columns); empty lists and maps are stored as absent (see isAbsent).
 */
export async function renderMissingJson(db: Queryable, t: ItemTable): Promise<void> {
  if (!t.storesJson) return;
  await db.run(Sql.raw(`UPDATE ${t.table} AS ${t.alias} SET ${ITEM_JSON_COLUMN} = ${renderItemJsonSql(db.dialect, t)} WHERE ${ITEM_JSON_COLUMN} IS NULL`));
}

/** Renders again the stored JSON of rows without metadata, which responses give as `{}`. */
export async function renderEmptyMetadata(db: Queryable, t: ItemTable): Promise<void> {
  const field = t.fields.find((f) => f.name === t.metadata?.field);
  if (!t.storesJson || !field) return;
  await db.run(Sql.raw(`UPDATE ${t.table} SET ${ITEM_JSON_COLUMN} = NULL WHERE ${field.column} IS NULL`));
  await renderMissingJson(db, t);
}

export async function emptyCollectionsAbsent(db: Queryable, t: ItemTable): Promise<void> {
  const columns = t.fields.filter((f) => f.type === 'json').map((f) => f.column);
  if (columns.length === 0) return;
  const empty = (c: string) => `${c} IN ('[]', '{}')`;
  const cleared = columns.map((c) => `${c} = CASE WHEN ${empty(c)} THEN NULL ELSE ${c} END`);
  if (t.storesJson) cleared.push(`${ITEM_JSON_COLUMN} = NULL`);
  await db.run(Sql.raw(`UPDATE ${t.table} SET ${cleared.join(', ')} WHERE ${columns.map(empty).join(' OR ')}`));
  await renderMissingJson(db, t);
}

/** Deletes an item, and first the items that live under it (ItemTable.children), theirs first. */
export async function deleteItem(db: Queryable, t: ItemTable, projectId: number, id: number): Promise<void> {
  for (const child of t.children ?? []) {
    const rows = await db.all<{ id: number }>(sql`SELECT id FROM ${Sql.raw(child.table)} WHERE project_id = ${projectId} AND ${Sql.raw(child.parent!.column)} = ${id}`);
    for (const r of rows) await deleteItem(db, child, projectId, r.id);
  }
  await clearSideTables(db, t, projectId, id);
  await db.run(sql`DELETE FROM ${Sql.raw(t.table)} WHERE project_id = ${projectId} AND id = ${id}`);
}
