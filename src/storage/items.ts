/**
 * Generic storage of a resource's items: one row per item in the resource table (API fields in columns,
 * maps and lists as JSON), plus the side tables the query layer filters on (metadata keys/values, array
 * values). A resource declares its table once; inserting, updating, deleting and reading rows is shared.
 */
import type { ArrayProperty, MetadataStore } from '../query/catalog.js';
import { prepare, type Db } from './db.js';
import type { Sql } from './sql.js';

/** `instanceId` is stored in the columns `instance_space` and `instance_external_id`, so it can be looked up. */
export type FieldType = 'integer' | 'string' | 'boolean' | 'json' | 'instanceId';

export interface FieldDef {
  /** API field name. */
  name: string;
  column: string;
  type: FieldType;
}

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
 * A text derived from a table (and fields left out), built once and then returned as the same string: SQL
 * texts are long, and the prepared-statement cache hashes a newly built one on every request.
 */
export function perTable(build: (t: ItemTable, omit?: ReadonlySet<string>) => string): (t: ItemTable, omit?: ReadonlySet<string>) => string {
  const cache = new WeakMap<ItemTable, Map<string, string>>();
  return (t, omit) => {
    let byOmit = cache.get(t);
    if (!byOmit) cache.set(t, (byOmit = new Map()));
    const key = omit?.size ? [...omit].sort().join(',') : '';
    let text = byOmit.get(key);
    if (text === undefined) byOmit.set(key, (text = build(t, omit)));
    return text;
  };
}

export const selectColumns = perTable((t) => ['id', ...dataColumns(t), 'created_time', 'last_updated_time'].map((c) => `${t.alias}.${c}`).join(', '));

/**
 * An empty list or map (no labels, no asset ids, no metadata) is no value: stored as absent, so responses
 * leave it out as they leave out every other absent field.
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

/** The API form of a row: absent (null) fields are left out. */
export function toItem(t: ItemTable, row: Row, omit?: ReadonlySet<string>): Item {
  const item: Record<string, unknown> = { id: row.id };
  for (const f of t.fields) {
    if (omit?.has(f.name)) continue;
    const v = fromColumns(f, row);
    if (v !== null) item[f.name] = v;
  }
  item.createdTime = row.created_time;
  item.lastUpdatedTime = row.last_updated_time;
  return item as Item;
}

/** SQL of one field's value as JSON text, on the row under alias `a`; `test` is null exactly when the field is absent. */
function fieldJsonSql(f: FieldDef, a: string): { test: string; value: string } {
  if (f.type === 'instanceId') {
    return { test: `${a}.instance_space`, value: `json_object('space', ${a}.instance_space, 'externalId', ${a}.instance_external_id)` };
  }
  const c = `${a}.${f.column}`;
  // JSON fields are written only through JSON.stringify (toColumns), so the stored text is already the
  // response's text; re-rendering it with json() would parse and print every value again.
  if (f.type === 'json') return { test: c, value: c };
  // As fromColumns: 1 is true, any other stored value false.
  if (f.type === 'boolean') return { test: c, value: `CASE ${c} WHEN 1 THEN 'true' ELSE 'false' END` };
  return { test: c, value: `json_quote(${c})` };
}

/**
 * SQL giving a row (under the table's alias) as the JSON text of its API form: the stored rendering when
 * the table keeps one (and nothing is omitted), otherwise rendered now.
 */
export const itemJsonSql = perTable((t, omit) => {
  const render = renderItemJsonSql(t, omit);
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

function buildItemJsonSql(t: ItemTable, omit?: ReadonlySet<string>): string {
  const a = t.alias;
  // Field names are identifiers from the table declaration; the quote doubling only keeps the literal well formed.
  const key = (name: string) => `',${JSON.stringify(name).replaceAll("'", "''")}:'`;
  const parts = [`'{"id":' || ${a}.id`];
  for (const f of t.fields) {
    if (omit?.has(f.name)) continue;
    const { test, value } = fieldJsonSql(f, a);
    parts.push(`CASE WHEN ${test} IS NULL THEN '' ELSE ${key(f.name)} || ${value} END`);
  }
  parts.push(`${key('createdTime')} || ${a}.created_time`, `${key('lastUpdatedTime')} || ${a}.last_updated_time || '}'`);
  return `concat(${parts.join(', ')})`;
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
export function rowsByIds(db: Db, t: ItemTable, projectId: number, ids: readonly number[], where?: Sql, select = selectColumns(t)): Map<number, Row> {
  const out = new Map<number, Row>();
  const extra = where ? ` AND ${where.text}` : '';
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    const text = byIdsText(t, select, extra, part.length);
    for (const r of prepare(db, text).all(projectId, ...part, ...(where?.params ?? [])) as Row[]) out.set(r.id, r);
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

/**
 * Fills the side tables (metadata keys and values, array values) of the items with ids in [first, last]
 * from their stored JSON, with one set-based statement per table. Rows go in in index order, which keeps
 * the B-tree inserts local. Lower-casing uses `unicode_lower` (JavaScript's full Unicode case mapping,
 * registered on every connection), the same mapping filters apply to their values.
 */
function fillSideTables(db: Db, t: ItemTable, first: number, last: number): void {
  if (t.metadata) {
    const m = t.metadata.store;
    const source = columnOf(t, t.metadata.field);
    const short = `length(j.value) <= ${m.maxFilterableLength}`;
    prepare(
      db,
      `INSERT INTO ${m.table} (${m.itemColumn}, project_id, key, key_lc, value, value_lc)
       SELECT x.id, x.project_id, j.key, unicode_lower(j.key), CASE WHEN ${short} THEN j.value END, CASE WHEN ${short} THEN unicode_lower(j.value) END
       FROM ${t.table} x, json_each(x.${source}) j WHERE x.id BETWEEN ? AND ? AND x.${source} IS NOT NULL ORDER BY 4, 6`,
    ).run(first, last);
  }
  for (const { field, index } of t.arrays ?? []) {
    const source = columnOf(t, field);
    prepare(
      db,
      `INSERT OR IGNORE INTO ${index.table} (${index.itemColumn}, project_id, ${index.valueColumn})
       SELECT x.id, x.project_id, j.value FROM ${t.table} x, json_each(x.${source}) j WHERE x.id BETWEEN ? AND ? AND x.${source} IS NOT NULL ORDER BY 3`,
    ).run(first, last);
  }
}

function columnOf(t: ItemTable, field: string): string {
  const f = t.fields.find((x) => x.name === field);
  if (!f) throw new Error(`${t.table}: no field ${field}`);
  return f.column;
}

function clearSideTables(db: Db, t: ItemTable, id: number): void {
  if (t.metadata) prepare(db, `DELETE FROM ${t.metadata.store.table} WHERE ${t.metadata.store.itemColumn} = ?`).run(id);
  for (const { index } of t.arrays ?? []) prepare(db, `DELETE FROM ${index.table} WHERE ${index.itemColumn} = ?`).run(id);
}

/** Bound parameters per statement, under SQLite's limit of 32766. */
const MAX_PARAMS = 30_000;
const MAX_ROWS_PER_STATEMENT = 500;

/**
 * Inserts items, returning their ids in order. Ids are allocated consecutively after the highest ever
 * used (the table is AUTOINCREMENT, so ids are never reused); the surrounding write transaction holds the
 * database's write lock, so concurrent processes cannot allocate the same ones. Rows go in with multi-row
 * statements and the side tables are filled set-wise, because per-statement cost dominates bulk writes.
 */
export function insertItems(db: Db, t: ItemTable, projectId: number, values: readonly Values[], now: number): number[] {
  if (values.length === 0) return [];
  const { next } = prepare(
    db,
    `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '${t.table}'), 0), coalesce((SELECT max(id) FROM ${t.table}), 0)) + 1 AS next`,
  ).get() as { next: number };
  const ids = values.map((_, i) => next + i);
  const columns = ['id', 'project_id', ...dataColumns(t), 'created_time', 'last_updated_time'];
  const row = `(${columns.map(() => '?').join(', ')})`;
  const perStatement = Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMS / columns.length)));
  for (let start = 0; start < values.length; start += perStatement) {
    const chunk = values.slice(start, start + perStatement);
    const params: unknown[] = [];
    chunk.forEach((v, k) => {
      params.push(ids[start + k], projectId);
      for (const f of t.fields) params.push(...toColumns(f, v[f.name]));
      params.push(now, now);
    });
    prepare(db, `INSERT INTO ${t.table} (${columns.join(', ')}) VALUES ${Array(chunk.length).fill(row).join(', ')}`).run(params);
  }
  fillSideTables(db, t, ids[0], ids[ids.length - 1]);
  storeJson(db, t, ids[0], ids[ids.length - 1]);
  return ids;
}

/** Renders the stored JSON of rows [first, last] from their stored columns, when the table keeps it. */
function storeJson(db: Db, t: ItemTable, first: number, last: number): void {
  if (!t.storesJson) return;
  prepare(db, `UPDATE ${t.table} AS ${t.alias} SET ${ITEM_JSON_COLUMN} = ${renderItemJsonSql(t)} WHERE id BETWEEN ? AND ?`).run(first, last);
}

/** The API form of an item just written, from the values it was written with (no read back). */
export function itemFromValues(t: ItemTable, id: number, v: Values, createdTime: number, lastUpdatedTime: number): Item {
  const item: Record<string, unknown> = { id };
  for (const f of t.fields) {
    const value = v[f.name];
    if (!isAbsent(f, value)) item[f.name] = value;
  }
  item.createdTime = createdTime;
  item.lastUpdatedTime = lastUpdatedTime;
  return item as Item;
}

export function updateItem(db: Db, t: ItemTable, projectId: number, id: number, v: Values, now: number): void {
  const assignments = [...dataColumns(t).map((c) => `${c} = ?`), 'last_updated_time = ?'];
  prepare(db, `UPDATE ${t.table} SET ${assignments.join(', ')} WHERE id = ?`).run(...t.fields.flatMap((f) => toColumns(f, v[f.name])), now, id);
  clearSideTables(db, t, id);
  fillSideTables(db, t, id, id);
  storeJson(db, t, id, id);
}

/** A migration giving a table its stored JSON column, filled for the rows it has. */
export function storedJsonSql(t: ItemTable): string {
  return `
ALTER TABLE ${t.table} ADD COLUMN ${ITEM_JSON_COLUMN} TEXT;
UPDATE ${t.table} AS ${t.alias} SET ${ITEM_JSON_COLUMN} = ${renderItemJsonSql(t)};
`;
}

/** A migration storing the empty lists and maps that rows hold as absent (see isAbsent), and their JSON anew. */
export function emptyCollectionsAbsentSql(t: ItemTable): string {
  const columns = t.fields.filter((f) => f.type === 'json').map((f) => f.column);
  if (columns.length === 0) return '';
  const empty = (c: string) => `${c} IN ('[]', '{}')`;
  const cleared = columns.map((c) => `${c} = CASE WHEN ${empty(c)} THEN NULL ELSE ${c} END`);
  if (t.storesJson) cleared.push(`${ITEM_JSON_COLUMN} = NULL`);
  let out = `UPDATE ${t.table} SET ${cleared.join(', ')} WHERE ${columns.map(empty).join(' OR ')};\n`;
  if (t.storesJson) out += `UPDATE ${t.table} AS ${t.alias} SET ${ITEM_JSON_COLUMN} = ${renderItemJsonSql(t)} WHERE ${ITEM_JSON_COLUMN} IS NULL;\n`;
  return out;
}

export function deleteItem(db: Db, t: ItemTable, id: number): void {
  clearSideTables(db, t, id);
  prepare(db, `DELETE FROM ${t.table} WHERE id = ?`).run(id);
}

/** SQL for the side tables of a resource (metadata and array indexes), named after its declaration. */
export function sideTablesSql(t: ItemTable): string {
  let out = '';
  if (t.metadata) {
    const m = t.metadata.store;
    out += `
CREATE TABLE ${m.table} (
  ${m.itemColumn} INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  key_lc TEXT NOT NULL,
  value TEXT,
  value_lc TEXT,
  PRIMARY KEY (${m.itemColumn}, key)
) WITHOUT ROWID;
CREATE INDEX ${m.table}_value ON ${m.table} (project_id, key_lc, value_lc);
`;
  }
  for (const { index } of t.arrays ?? []) {
    out += `
CREATE TABLE ${index.table} (
  ${index.itemColumn} INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  ${index.valueColumn} INTEGER NOT NULL,
  PRIMARY KEY (${index.itemColumn}, ${index.valueColumn})
) WITHOUT ROWID;
CREATE INDEX ${index.table}_value ON ${index.table} (project_id, ${index.valueColumn});
`;
  }
  return out;
}

/** SQL for an FTS5 index over text columns, kept in step with the table by triggers (same transaction). */
export function ftsSql(table: string, ftsTable: string, columns: readonly string[]): string {
  const cols = columns.join(', ');
  const newVals = columns.map((c) => `new.${c}`).join(', ');
  const oldVals = columns.map((c) => `old.${c}`).join(', ');
  const anyNew = columns.map((c) => `new.${c} IS NOT NULL`).join(' OR ');
  const anyOld = columns.map((c) => `old.${c} IS NOT NULL`).join(' OR ');
  return `
CREATE VIRTUAL TABLE ${ftsTable} USING fts5 (${cols}, content = '${table}', content_rowid = 'id');
CREATE TRIGGER ${ftsTable}_insert AFTER INSERT ON ${table} WHEN ${anyNew} BEGIN
  INSERT INTO ${ftsTable} (rowid, ${cols}) VALUES (new.id, ${newVals});
END;
CREATE TRIGGER ${ftsTable}_delete AFTER DELETE ON ${table} WHEN ${anyOld} BEGIN
  INSERT INTO ${ftsTable} (${ftsTable}, rowid, ${cols}) VALUES ('delete', old.id, ${oldVals});
END;
CREATE TRIGGER ${ftsTable}_update AFTER UPDATE OF ${cols} ON ${table} BEGIN
  INSERT INTO ${ftsTable} (${ftsTable}, rowid, ${cols}) SELECT 'delete', old.id, ${oldVals} WHERE ${anyOld};
  INSERT INTO ${ftsTable} (rowid, ${cols}) SELECT new.id, ${newVals} WHERE ${anyNew};
END;
`;
}
