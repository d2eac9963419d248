/**
 * The table of each container: its name, a typed column per property, and its indexes, created and changed
 * as the container is applied and dropped when it is deleted (in the apply's transaction). Property values
 * move between the form the service keeps (values.ts) and the column's form here.
 *
 * Columns: text-like values (text, enum, date, time series / file / sequence references) as text that
 * compares by code point; integers, timestamps (milliseconds) and booleans (0, 1) as integers; floats as
 * doubles; json as its JSON text; direct relations as one node-reference text (store-schema.ts); lists as
 * the JSON text of the list (direct relations as node-reference texts inside it).
 *
 * A btree index is `(project_id[, space], its properties..., instance_id)`, so it serves equality, ranges
 * and, when the sort matches it, the keyset order of a page; a uniqueness constraint is a unique index on
 * `(project_id[, space], its properties...)`. Database names are numbered per container and never reused.
 * A new container's indexes are created with its table; those added to a container later are only named
 * here, and built by its checks (container-checks.ts).
 */
import { Sql, sql, type SqlValue } from '../../storage/sql.js';
import type { Dialect } from '../../storage/dialect.js';
import type { Queryable } from '../../storage/store.js';
import { createIndexSql, type TableIndex } from '../../storage/table-index.js';
import type { ContainerDefinition } from './containers.js';
import { isList, type PropertyType } from './property-types.js';
import { decodeRef, encodeRef } from './store-schema.js';
import type { StoredScalar, StoredValue } from './values.js';
import type { DirectRelationReference } from './identifiers.js';

export interface ContainerLayout {
  table: string;
  /** Property -> column. */
  columns: Record<string, string>;
  /** Index or constraint identifier -> database index name. */
  indexes: Record<string, string>;
  constraints: Record<string, string>;
  /** The next number for a column or index name. */
  next: number;
}

export const tableName = (containerId: number): string => `dmc_${containerId}`;

export function newLayout(containerId: number): ContainerLayout {
  return { table: tableName(containerId), columns: {}, indexes: {}, constraints: {}, next: 1 };
}

/** The kind of values of a property (of its elements, for a list): how SQL compares them. */
export function valueKind(t: PropertyType): 'text' | 'number' | 'boolean' | 'json' {
  switch (t.type) {
    case 'int32':
    case 'int64':
    case 'float32':
    case 'float64':
    case 'timestamp':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'json':
      return 'json';
    default:
      return 'text';
  }
}

function columnType(t: PropertyType, dialect: Dialect): string {
  const types = dialect.types;
  if (isList(t)) return types.text;
  switch (t.type) {
    case 'int32':
    case 'int64':
    case 'timestamp':
    case 'boolean':
      return types.integer;
    case 'float32':
    case 'float64':
      return types.real;
    case 'json':
      return types.text;
    default:
      return dialect.binaryText;
  }
}

const scalarToColumn = (v: StoredScalar, t: PropertyType): SqlValue => {
  if (t.type === 'direct') return encodeRef(v as DirectRelationReference);
  if (t.type === 'boolean') return v ? 1 : 0;
  if (t.type === 'json') return JSON.stringify(v);
  return v as SqlValue;
};

/** A value in its column's form. */
export function toColumn(v: StoredValue | null | undefined, t: PropertyType): SqlValue {
  if (v === null || v === undefined) return null;
  if (isList(t)) return JSON.stringify(t.type === 'direct' ? (v as DirectRelationReference[]).map(encodeRef) : v);
  return scalarToColumn(v as StoredScalar, t);
}

/** A value for a comparison with a column (or an element of a list column, `element`). */
export function toOperand(v: StoredValue, t: PropertyType, element = false): SqlValue {
  if (isList(t) && !element) return toColumn(v, t);
  if (valueKind(t) === 'boolean') return v ? 1 : 0;
  return scalarToColumn(v as StoredScalar, t);
}

/** A column's value back in the form the service keeps. */
export function fromColumn(v: unknown, t: PropertyType): StoredValue | null {
  if (v === null || v === undefined) return null;
  if (isList(t)) {
    const list = JSON.parse(v as string) as unknown[];
    return (t.type === 'direct' ? (list as string[]).map(decodeRef) : list) as StoredValue;
  }
  switch (t.type) {
    case 'direct':
      return decodeRef(v as string);
    case 'boolean':
      return v === 1 || v === true || v === '1';
    case 'json':
      return JSON.parse(v as string) as Record<string, unknown>;
    case 'int32':
    case 'int64':
    case 'timestamp':
    case 'float32':
    case 'float64':
      return Number(v);
    default:
      return v as string;
  }
}

const ident = (name: string) => Sql.raw(name);

/**
 * Creates the table of a new container (empty), its columns and indexes in it: one CREATE TABLE with every
 * column (SQLite reads its whole schema again after each ALTER TABLE, so a column at a time costs what the
 * project's schema holds, for every property). Fills in `layout`.
 */
export async function createContainerTable(db: Queryable, def: ContainerDefinition, layout: ContainerLayout): Promise<void> {
  const columns = addColumns(def, layout, Object.keys(def.properties), db.dialect);
  const indexes = nameIndexes(def, layout, Object.keys(def.indexes), Object.keys(def.constraints));
  await runAll(db, [...containerTableDdl(db.dialect, layout.table, columns), ...indexes.map((i) => createIndexSql(i))]);
}

/**
 * A container table: the project, space and instance, then `columns` (name and type). Its key is
 * `(project_id, space, instance_id)`; where the dialect can key a table by its integer column (SQLite's
 * rowid), the instance id is the storage key and the triple a unique index, so lookups and joins by
 * instance are integer seeks. Instance ids are unique across projects, so both keys say the same.
 */
function containerTableDdl(dialect: Dialect, table: string, columns: ReadonlyArray<{ name: string; type: string }>): string[] {
  const t = dialect.types;
  const rest = columns.map((c) => `, ${c.name} ${c.type}`).join('');
  return dialect.integerRowKey
    ? [
        `CREATE TABLE ${table} (project_id ${t.integer} NOT NULL, space ${t.text} NOT NULL, instance_id INTEGER PRIMARY KEY${rest})`,
        `CREATE UNIQUE INDEX ${table}_key ON ${table} (project_id, space, instance_id)`,
      ]
    : [
        `CREATE TABLE ${table} (project_id ${t.integer} NOT NULL, space ${t.text} NOT NULL, instance_id ${t.integer} NOT NULL${rest}, PRIMARY KEY (project_id, space, instance_id))${dialect.withoutRowid}`,
        `CREATE INDEX ${table}_instance ON ${table} (project_id, instance_id)`,
      ];
}

/**
 * The conflict target of an upsert into a container table: its storage key. (SQLite does not match a
 * unique index that holds the rowid column against an ON CONFLICT target naming it.)
 */
export const containerRowKey = (dialect: Dialect): string => (dialect.integerRowKey ? '(instance_id)' : '(project_id, space, instance_id)');

/**
 * Rebuilds the container tables created before SQLite keyed them by instance id (see containerTableDdl):
 * same columns, rows and indexes, the index on `(project_id, instance_id)` that the key now serves replaced
 * by the unique index on the triple.
 */
export async function rekeyContainerTables(db: Queryable): Promise<void> {
  if (!db.dialect.integerRowKey) return;
  const tables = await db.all<{ name: string }>(
    Sql.raw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'dmc\\_%' ESCAPE '\\' AND sql LIKE '%WITHOUT ROWID%' ORDER BY name`),
  );
  for (const { name } of tables) {
    const columns = (await db.all<{ name: string; type: string }>(Sql.raw(`SELECT name, type FROM pragma_table_info('${name}') ORDER BY cid`))).filter(
      (c) => !['project_id', 'space', 'instance_id'].includes(c.name),
    );
    const indexes = await db.all<{ name: string; sql: string }>(
      Sql.raw(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = '${name}' AND sql IS NOT NULL AND name NOT IN ('${name}_instance', '${name}_key')`),
    );
    const names = ['project_id', 'space', 'instance_id', ...columns.map((c) => c.name)].join(', ');
    await db.run(Sql.raw(`ALTER TABLE ${name} RENAME TO ${name}_old`));
    const [create, key] = containerTableDdl(db.dialect, name, columns);
    await db.run(Sql.raw(create));
    await db.run(Sql.raw(`INSERT INTO ${name} (${names}) SELECT ${names} FROM ${name}_old`));
    await db.run(Sql.raw(`DROP TABLE ${name}_old`));
    await db.run(Sql.raw(key));
    for (const index of indexes) await db.run(Sql.raw(index.sql));
  }
}

/**
 * Adds the columns of new properties, and names the database indexes of new indexes and uniqueness
 * constraints (built later, by the container's checks, since the table may hold many rows).
 */
export async function alterContainerTable(
  db: Queryable,
  def: ContainerDefinition,
  layout: ContainerLayout,
  properties: readonly string[],
  indexes: readonly string[],
  constraints: readonly string[],
): Promise<void> {
  const columns = addColumns(def, layout, properties, db.dialect);
  nameIndexes(def, layout, indexes, constraints);
  await runAll(db, db.dialect.addColumns(layout.table, columns));
}

/** Names the columns of `properties` in `layout`; their names and types. */
function addColumns(def: ContainerDefinition, layout: ContainerLayout, properties: readonly string[], dialect: Dialect): Array<{ name: string; type: string }> {
  return properties.map((p) => {
    const name = `p${layout.next++}`;
    layout.columns[p] = name;
    return { name, type: columnType(def.properties[p].type, dialect) };
  });
}

/** Names the database indexes of these btree indexes and uniqueness constraints in `layout` (the others have none); those indexes. */
function nameIndexes(def: ContainerDefinition, layout: ContainerLayout, indexes: readonly string[], constraints: readonly string[]): TableIndex[] {
  const out: TableIndex[] = [];
  for (const id of indexes) {
    // An inverted index is served by the list operators over the column; it has no database index here.
    if (def.indexes[id].indexType !== 'btree') continue;
    layout.indexes[id] = `${layout.table}_i${layout.next++}`;
    out.push(tableIndexOf(def, layout, 'indexes', id)!);
  }
  for (const id of constraints) {
    if (def.constraints[id].constraintType !== 'uniqueness') continue;
    layout.constraints[id] = `${layout.table}_u${layout.next++}`;
    out.push(tableIndexOf(def, layout, 'constraints', id)!);
  }
  return out;
}

/** The database index of a btree index or a uniqueness constraint, named in `layout`; undefined for the others. */
export function tableIndexOf(def: ContainerDefinition, layout: ContainerLayout, kind: 'indexes' | 'constraints', id: string): TableIndex | undefined {
  const name = (kind === 'indexes' ? layout.indexes : layout.constraints)[id];
  const index = def.indexes[id];
  const constraint = def.constraints[id];
  const x = kind === 'indexes' ? (index?.indexType === 'btree' ? index : undefined) : constraint?.constraintType === 'uniqueness' ? constraint : undefined;
  if (name === undefined || x === undefined) return undefined;
  const columns = ['project_id', ...(x.bySpace ? ['space'] : []), ...x.properties.map((p) => layout.columns[p])];
  return kind === 'indexes' ? { table: layout.table, name, columns: [...columns, 'instance_id'], unique: false } : { table: layout.table, name, columns, unique: true };
}

async function runAll(db: Queryable, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await db.run(Sql.raw(statement));
}

export async function dropIndex(db: Queryable, name: string): Promise<void> {
  await db.run(sql`DROP INDEX IF EXISTS ${ident(name)}`);
}

export async function dropContainerTable(db: Queryable, layout: ContainerLayout): Promise<void> {
  await db.run(sql`DROP TABLE IF EXISTS ${ident(layout.table)}${Sql.raw(db.dialect.dropDependents)}`);
}
