/**
 * An index that a table gets after it holds rows (a container's index added later), built by
 * `Store.buildIndex` outside the transaction that declared it.
 */
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
