/**
 * An index that a table gets after it holds rows (a container's index added later), built by
 * `Store.buildIndex` outside the transaction that declared it.
 */
import { sql, type Sql } from './sql.js';

export interface TableIndex {
  table: string;
  name: string;
  columns: readonly string[];
  unique: boolean;
}

/** What a build came to: `duplicates` when a unique index was not built because rows of the table share its values. */
export type IndexBuild = 'built' | 'duplicates';

/** The statement creating the index unless it exists; `CONCURRENTLY` is PostgreSQL's build that lets writes go on. */
export function createIndexSql(index: TableIndex, concurrently = false): string {
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS ${index.name} ON ${index.table} (${index.columns.join(', ')})`;
}

/** SQLite: whether an index of the name is there, and unique (one row, `uniq` 0 or 1; none when absent). */
export const sqliteIndexKind = (index: TableIndex): Sql => sql`SELECT "unique" AS uniq FROM pragma_index_list(${index.table}) WHERE name = ${index.name}`;

/**
 * SQLite: the statements that leave the index built, given what `sqliteIndexKind` found: an index of the
 * name of the other kind (unique or not) is replaced, in the same transaction.
 */
export function sqliteIndexBuild(index: TableIndex, found: { uniq: number } | undefined): string[] {
  const replace = found !== undefined && Boolean(found.uniq) !== index.unique;
  return [...(replace ? [`DROP INDEX ${index.name}`] : []), createIndexSql(index)];
}
