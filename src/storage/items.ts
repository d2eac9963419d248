/**
 * Generic storage of a resource's items: one row per item in the resource table (API fields in columns,
 * maps and lists as JSON), plus the side tables the query layer filters on (metadata keys/values, array
 * values). A resource declares its table once; inserting, updating, deleting and reading rows is shared.
 */
import type { ArrayProperty, MetadataStore } from '../query/catalog.js';
import { all, prepare, type Db } from './db.js';
import { Sql, sql } from './sql.js';

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
}

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

export function selectColumns(t: ItemTable): string {
  return ['id', ...dataColumns(t), 'created_time', 'last_updated_time'].map((c) => `${t.alias}.${c}`).join(', ');
}

function toColumns(f: FieldDef, v: unknown): unknown[] {
  if (f.type === 'instanceId') {
    const n = v as { space: string; externalId: string } | null | undefined;
    return n ? [n.space, n.externalId] : [null, null];
  }
  if (v === null || v === undefined) return [null];
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

/** The stored values of a row, by API field name (null when absent). */
export function toValues(t: ItemTable, row: Row): Values {
  const values: Values = {};
  for (const f of t.fields) values[f.name] = fromColumns(f, row);
  return values;
}

export function rowsByIds(db: Db, t: ItemTable, projectId: number, ids: readonly number[]): Map<number, Row> {
  const out = new Map<number, Row>();
  const columns = Sql.raw(selectColumns(t));
  const from = Sql.raw(`${t.table} ${t.alias}`);
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    for (const r of all<Row>(db, sql`SELECT ${columns} FROM ${from} WHERE ${Sql.raw(t.alias)}.project_id = ${projectId} AND ${Sql.raw(t.alias)}.id IN (${part})`)) {
      out.set(r.id, r);
    }
  }
  return out;
}

function writeSideTables(db: Db, t: ItemTable, projectId: number, id: number, v: Values): void {
  if (t.metadata) {
    const map = v[t.metadata.field] as Record<string, string> | null;
    if (map) {
      const m = t.metadata.store;
      const insert = prepare(db, `INSERT INTO ${m.table} (${m.itemColumn}, project_id, key, key_lc, value, value_lc) VALUES (?, ?, ?, ?, ?, ?)`);
      for (const [key, value] of Object.entries(map)) {
        const filterable = value.length <= m.maxFilterableLength;
        insert.run(id, projectId, key, key.toLowerCase(), filterable ? value : null, filterable ? value.toLowerCase() : null);
      }
    }
  }
  for (const { field, index } of t.arrays ?? []) {
    const list = v[field] as unknown[] | null;
    if (!list) continue;
    const insert = prepare(db, `INSERT OR IGNORE INTO ${index.table} (${index.itemColumn}, project_id, ${index.valueColumn}) VALUES (?, ?, ?)`);
    for (const value of list) insert.run(id, projectId, value);
  }
}

function clearSideTables(db: Db, t: ItemTable, id: number): void {
  if (t.metadata) prepare(db, `DELETE FROM ${t.metadata.store.table} WHERE ${t.metadata.store.itemColumn} = ?`).run(id);
  for (const { index } of t.arrays ?? []) prepare(db, `DELETE FROM ${index.table} WHERE ${index.itemColumn} = ?`).run(id);
}

export function insertItem(db: Db, t: ItemTable, projectId: number, v: Values, now: number): number {
  const columns = ['project_id', ...dataColumns(t), 'created_time', 'last_updated_time'];
  const result = prepare(db, `INSERT INTO ${t.table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).run(
    projectId,
    ...t.fields.flatMap((f) => toColumns(f, v[f.name])),
    now,
    now,
  );
  const id = Number(result.lastInsertRowid);
  writeSideTables(db, t, projectId, id, v);
  return id;
}

export function updateItem(db: Db, t: ItemTable, projectId: number, id: number, v: Values, now: number): void {
  const assignments = [...dataColumns(t).map((c) => `${c} = ?`), 'last_updated_time = ?'];
  prepare(db, `UPDATE ${t.table} SET ${assignments.join(', ')} WHERE id = ?`).run(...t.fields.flatMap((f) => toColumns(f, v[f.name])), now, id);
  clearSideTables(db, t, id);
  writeSideTables(db, t, projectId, id, v);
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
