/**
 * Data sets in SQL. Data sets group items of other resources (`dataSetId`); they cannot be deleted.
 */
import type { ResourceCatalog } from '../../query/catalog.js';
import { all, type Db } from '../../storage/db.js';
import { FILTERABLE_METADATA_LENGTH, sideTablesSql, type ItemTable } from '../../storage/items.js';
import { sql } from '../../storage/sql.js';

export const dataSetCatalog: ResourceCatalog = {
  noun: 'data set',
  acl: 'datasetsAcl',
  table: 'data_sets',
  alias: 'd',
  dataSetColumn: 'id',
  properties: {
    id: { kind: 'integer', column: 'id', nullable: false },
    externalId: { kind: 'string', column: 'external_id', nullable: true, maxValueLength: 255, sortable: true },
    name: { kind: 'string', column: 'name', nullable: true, maxValueLength: 50, sortable: true },
    description: { kind: 'string', column: 'description', nullable: true, maxValueLength: 500 },
    writeProtected: { kind: 'boolean', column: 'write_protected', nullable: false },
    createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
    lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
  },
  metadata: { table: 'data_set_metadata', itemColumn: 'data_set_id', maxFilterableLength: FILTERABLE_METADATA_LENGTH, maxValueLength: 128 },
};

export const dataSetTable: ItemTable = {
  table: 'data_sets',
  alias: 'd',
  fields: [
    { name: 'externalId', column: 'external_id', type: 'string' },
    { name: 'name', column: 'name', type: 'string' },
    { name: 'description', column: 'description', type: 'string' },
    { name: 'metadata', column: 'metadata', type: 'json' },
    { name: 'writeProtected', column: 'write_protected', type: 'boolean' },
  ],
  metadata: { field: 'metadata', store: dataSetCatalog.metadata! },
};

/** The write-protected data sets among `ids`. */
export function writeProtectedDataSets(db: Db, projectId: number, ids: readonly number[]): Set<number> {
  if (ids.length === 0) return new Set();
  const rows = all<{ id: number }>(db, sql`SELECT id FROM data_sets WHERE project_id = ${projectId} AND write_protected = 1 AND id IN (${ids})`);
  return new Set(rows.map((r) => r.id));
}

export const dataSetsSchemaSql = `
CREATE TABLE data_sets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  external_id TEXT,
  name TEXT,
  description TEXT,
  metadata TEXT,
  write_protected INTEGER NOT NULL DEFAULT 0,
  created_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL
);
CREATE UNIQUE INDEX data_sets_external_id ON data_sets (project_id, external_id);
CREATE INDEX data_sets_created_time ON data_sets (project_id, created_time);
${sideTablesSql(dataSetTable)}
`;
