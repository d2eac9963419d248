/**
 * Tables declared as data, and their DDL on each engine. A resource declares its tables once (through its
 * model, see resources/model.ts); the schema is brought up to the declarations at start (`ensureTables`):
 * missing tables, columns, indexes and full-text indexes are created, nothing is dropped. Changes that are
 * more than additions are explicit steps in migrations.ts.
 *
 * Every table that holds a project's data has `project_id` in its keys, so a project never reaches another's
 * rows and the schema can be distributed by project (see docs/deployment.md).
 */
import { tsDocument, type Dialect } from './dialect.js';
import { Sql, sql } from './sql.js';
import type { Queryable } from './store.js';

/** `id`: a service-generated 53-bit id, the row's key (with the project, on PostgreSQL). */
export type ColumnType = 'id' | 'integer' | 'real' | 'text' | 'blob' | 'document';

export interface ColumnDef {
  type: ColumnType;
  /** Columns are nullable unless stated. */
  notNull?: boolean;
  /** A literal default (a number, or SQL text such as `''`). */
  default?: number | string;
  /** A table this column's value is the id of (`projects`). */
  references?: string;
}

export interface IndexDef {
  name: string;
  columns: readonly string[];
  unique?: boolean;
  /** A partial index: only the rows meeting this condition (SQL over the table's columns). */
  where?: string;
}

export interface TableDef {
  name: string;
  columns: Readonly<Record<string, ColumnDef>>;
  /** The key, when the table has no `id` column. */
  primaryKey?: readonly string[];
  /** On SQLite, a table stored as its primary key's B-tree (no rowid). */
  withoutRowid?: boolean;
  indexes?: readonly IndexDef[];
  /** Full-text search over text columns: an FTS5 table on SQLite, GIN indexes on PostgreSQL. */
  search?: { table: string; columns: readonly string[] };
  /**
   * On PostgreSQL, a table partitioned by the values of this column (`PARTITION BY LIST`), whose partitions
   * the area that owns it creates and drops. The table itself then has no primary key and no unique index:
   * each partition carries its own, so that a partition may be partitioned again by another column.
   */
  partitionedBy?: string;
}

function columnSql(name: string, c: ColumnDef, d: Dialect, table: TableDef): string {
  if (c.type === 'id') {
    // SQLite: the rowid, never reused (AUTOINCREMENT). PostgreSQL: a plain column keyed with the project.
    return d.kind === 'sqlite' ? `${name} ${d.types.id}` : `${name} ${d.types.integer} NOT NULL`;
  }
  let out = `${name} ${d.types[c.type]}`;
  if (c.notNull) out += ' NOT NULL';
  if (c.default !== undefined) out += ` DEFAULT ${c.default}`;
  if (c.references && !(d.kind === 'postgres' && table.name === c.references)) out += ` REFERENCES ${c.references} (id)`;
  return out;
}

/** The primary key clause, when the table declares one or (PostgreSQL) has an id to key with its project. */
function primaryKey(t: TableDef, d: Dialect): string[] {
  // On PostgreSQL every key of a project's table starts with the project: the distribution column of a
  // distributed PostgreSQL (Citus) must be part of each unique constraint.
  const withProject = (columns: readonly string[]) =>
    d.kind === 'postgres' && t.columns.project_id && !columns.includes('project_id') ? ['project_id', ...columns] : columns;
  if (d.kind === 'postgres' && t.partitionedBy) return [];
  if (t.primaryKey) return [`PRIMARY KEY (${withProject(t.primaryKey).join(', ')})`];
  const id = Object.entries(t.columns).find(([, c]) => c.type === 'id')?.[0];
  if (!id || d.kind === 'sqlite') return [];
  return [`PRIMARY KEY (${withProject([id]).join(', ')})`];
}

export function createTableSql(t: TableDef, d: Dialect): string {
  const parts = [...Object.entries(t.columns).map(([name, c]) => columnSql(name, c, d, t)), ...primaryKey(t, d)];
  const partitioned = d.kind === 'postgres' && t.partitionedBy ? ` PARTITION BY LIST (${t.partitionedBy})` : '';
  return `CREATE TABLE IF NOT EXISTS ${t.name} (\n  ${parts.join(',\n  ')}\n)${t.withoutRowid ? d.withoutRowid : ''}${partitioned}`;
}

/**
 * The columns of an index in the database. On SQLite every index ends with the rowid, the item's id, so an
 * index on a sort key also serves the order (key, id) in which keyset paging reads (query/paging.ts). On
 * PostgreSQL the id is added to each non-unique index of a table with ids, so that the same holds there:
 * without it a page of items sharing the key (a batch created in one request has one createdTime) is sorted
 * again after the index scan.
 */
function indexColumns(t: TableDef, i: IndexDef, d: Dialect): readonly string[] {
  const id = Object.entries(t.columns).find(([, c]) => c.type === 'id')?.[0];
  if (d.kind !== 'postgres' || i.unique || !id || i.columns.includes(id)) return i.columns;
  return [...i.columns, id];
}

export function indexSql(t: TableDef, i: IndexDef, d: Dialect): string {
  return `CREATE ${i.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${i.name} ON ${t.name} (${indexColumns(t, i, d).join(', ')})${i.where ? ` WHERE ${i.where}` : ''}`;
}

/** Rebuilds the indexes whose database columns differ from their declaration (see indexColumns), for databases written before the id was added. */
export async function rebuildIdSuffixedIndexes(db: Queryable, tables: readonly TableDef[]): Promise<void> {
  for (const t of tables) {
    for (const i of t.indexes ?? []) {
      if (indexColumns(t, i, db.dialect) === i.columns) continue;
      await db.run(Sql.raw(`DROP INDEX IF EXISTS ${i.name}`));
      await db.run(Sql.raw(indexSql(t, i, db.dialect)));
    }
  }
}

/** The id sequence of a table on PostgreSQL (ids are allocated from it, see ids.ts). */
export function idSequence(table: string): string {
  return `${table}_id_seq`;
}

/** Statements that make the full-text index of `t` and keep it in step with the table (same transaction). */
export function searchSql(t: TableDef, d: Dialect): string[] {
  if (!t.search) return [];
  const { table: fts, columns } = t.search;
  if (d.kind === 'postgres') {
    // `_words`: the index of the text as tsDocument reads it; an index of the text as the parser alone read it
    // (named without the suffix) serves no search and is dropped.
    return columns.flatMap((c) => [
      `DROP INDEX IF EXISTS ${fts}_${c}`,
      `CREATE INDEX IF NOT EXISTS ${fts}_${c}_words ON ${t.name} USING GIN (${tsDocument(`coalesce(${c}, '')`)})`,
    ]);
  }
  const cols = columns.join(', ');
  const values = (row: string) => columns.map((c) => `${row}.${c}`).join(', ');
  const any = (row: string) => columns.map((c) => `${row}.${c} IS NOT NULL`).join(' OR ');
  return [
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5 (${cols}, content = '${t.name}', content_rowid = 'id')`,
    `CREATE TRIGGER IF NOT EXISTS ${fts}_insert AFTER INSERT ON ${t.name} WHEN ${any('new')} BEGIN
  INSERT INTO ${fts} (rowid, ${cols}) VALUES (new.id, ${values('new')});
END`,
    `CREATE TRIGGER IF NOT EXISTS ${fts}_delete AFTER DELETE ON ${t.name} WHEN ${any('old')} BEGIN
  INSERT INTO ${fts} (${fts}, rowid, ${cols}) VALUES ('delete', old.id, ${values('old')});
END`,
    `CREATE TRIGGER IF NOT EXISTS ${fts}_update AFTER UPDATE OF ${cols} ON ${t.name} BEGIN
  INSERT INTO ${fts} (${fts}, rowid, ${cols}) SELECT 'delete', old.id, ${values('old')} WHERE ${any('old')};
  INSERT INTO ${fts} (rowid, ${cols}) SELECT new.id, ${values('new')} WHERE ${any('new')};
END`,
  ];
}

/** The columns a table has in the database now (none when it does not exist). */
async function existingColumns(db: Queryable, table: string): Promise<Set<string>> {
  const rows =
    db.dialect.kind === 'sqlite'
      ? await db.all<{ name: string }>(sql`SELECT name FROM pragma_table_info(${table})`)
      : await db.all<{ name: string }>(sql`SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table}`);
  return new Set(rows.map((r) => r.name));
}

/**
 * Brings the database up to the declared tables, in the caller's transaction: creates what is missing
 * (tables, columns, indexes, full-text indexes, id sequences), changes nothing that exists.
 */
export async function ensureTables(db: Queryable, tables: readonly TableDef[]): Promise<void> {
  const d = db.dialect;
  for (const t of tables) {
    const existing = await existingColumns(db, t.name);
    if (existing.size === 0) {
      await db.run(Sql.raw(createTableSql(t, d)));
    } else {
      for (const [name, c] of Object.entries(t.columns)) {
        if (existing.has(name)) continue;
        if (c.notNull && c.default === undefined) throw new Error(`${t.name}.${name}: a column added to an existing table needs a default`);
        await db.run(Sql.raw(`ALTER TABLE ${t.name} ADD COLUMN ${columnSql(name, c, d, t)}`));
      }
    }
    if (d.kind === 'postgres' && Object.values(t.columns).some((c) => c.type === 'id')) {
      await db.run(Sql.raw(`CREATE SEQUENCE IF NOT EXISTS ${idSequence(t.name)}`));
    }
    for (const i of t.indexes ?? []) {
      if (!(i.unique && d.kind === 'postgres' && t.partitionedBy)) await db.run(Sql.raw(indexSql(t, i, d)));
    }
    for (const statement of searchSql(t, d)) await db.run(Sql.raw(statement));
  }
}

