/**
 * Assets in SQL: the table, its indexes, and how the query layer sees it.
 *
 * The hierarchy is kept in three columns next to `parent_id`: `root_id`, `depth` (0 for a root) and `path`
 * (ids from the root down to the asset, `/1/5/9/`; see query/assets-scope.ts). They are written by the
 * hierarchy module in the transaction that creates or moves assets, so a subtree is one index range.
 */
import { PARENT_INDEX, visibleHierarchyValues } from '../../query/assets-scope.js';
import type { ArrayProperty, ResourceCatalog } from '../../query/catalog.js';
import { FILTERABLE_METADATA_LENGTH, ftsSql, sideTablesSql, type ItemTable } from '../../storage/items.js';

/** Label external ids, one row per (asset, label), kept by the generic array-index machinery. */
const assetLabelIndex: ArrayProperty = {
  kind: 'stringArray',
  table: 'asset_labels',
  itemColumn: 'asset_id',
  valueColumn: 'label',
  aggregatable: true,
  externalIdRefs: true,
};

export const assetCatalog: ResourceCatalog = {
  noun: 'asset',
  acl: 'assetsAcl',
  table: 'assets',
  alias: 'a',
  dataSetColumn: 'data_set_id',
  properties: {
    id: { kind: 'integer', column: 'id', nullable: false },
    externalId: { kind: 'string', column: 'external_id', nullable: true, maxValueLength: 255, sortable: true },
    name: {
      kind: 'string',
      column: 'name',
      nullable: false,
      maxValueLength: 255,
      search: { maxValueLength: 128 },
      sortable: true,
      aggregatable: true,
    },
    description: {
      kind: 'string',
      column: 'description',
      nullable: true,
      maxValueLength: 255,
      search: { maxValueLength: 128 },
      sortable: true,
      aggregatable: true,
    },
    source: { kind: 'string', column: 'source', nullable: true, maxValueLength: 128, sortable: true, aggregatable: true },
    dataSetId: { kind: 'integer', column: 'data_set_id', nullable: true, sortable: true, aggregatable: true },
    parentId: { kind: 'integer', column: 'parent_id', nullable: true, aggregatable: true },
    rootId: { kind: 'integer', column: 'root_id', nullable: false, aggregatable: true },
    createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
    lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
    labels: assetLabelIndex,
  },
  metadata: { table: 'asset_metadata', itemColumn: 'asset_id', maxFilterableLength: FILTERABLE_METADATA_LENGTH, maxValueLength: 128 },
  fts: { table: 'assets_fts', columns: ['name', 'description'] },
  visibleValues: visibleHierarchyValues,
};

export const assetTable: ItemTable = {
  table: 'assets',
  alias: 'a',
  fields: [
    { name: 'externalId', column: 'external_id', type: 'string' },
    { name: 'name', column: 'name', type: 'string' },
    { name: 'parentId', column: 'parent_id', type: 'integer' },
    { name: 'description', column: 'description', type: 'string' },
    { name: 'dataSetId', column: 'data_set_id', type: 'integer' },
    { name: 'metadata', column: 'metadata', type: 'json' },
    { name: 'source', column: 'source', type: 'string' },
    { name: 'labels', column: 'labels', type: 'json' },
    { name: 'geoLocation', column: 'geo_location', type: 'json' },
    { name: 'rootId', column: 'root_id', type: 'integer' },
  ],
  metadata: { field: 'metadata', store: assetCatalog.metadata! },
  arrays: [{ field: 'labels', index: assetLabelIndex }],
};

export const assetsSchemaSql = `
CREATE TABLE assets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  external_id TEXT,
  name TEXT NOT NULL,
  parent_id INTEGER,
  root_id INTEGER,
  depth INTEGER NOT NULL DEFAULT 0,
  path TEXT NOT NULL DEFAULT '',
  description TEXT,
  data_set_id INTEGER,
  metadata TEXT,
  source TEXT,
  labels TEXT,
  geo_location TEXT,
  created_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL
);
CREATE UNIQUE INDEX assets_external_id ON assets (project_id, external_id);
CREATE INDEX assets_created_time ON assets (project_id, created_time);
CREATE INDEX assets_last_updated_time ON assets (project_id, last_updated_time);
CREATE INDEX assets_path ON assets (project_id, path);
CREATE INDEX ${PARENT_INDEX} ON assets (project_id, parent_id);
CREATE INDEX assets_root ON assets (project_id, root_id);
CREATE INDEX assets_data_set ON assets (project_id, data_set_id);
CREATE INDEX assets_name ON assets (project_id, name);
CREATE INDEX assets_source ON assets (project_id, source);
${sideTablesSql({ ...assetTable, arrays: [] })}
CREATE TABLE asset_labels (
  asset_id INTEGER NOT NULL,
  project_id INTEGER NOT NULL,
  label TEXT NOT NULL,
  PRIMARY KEY (asset_id, label)
) WITHOUT ROWID;
CREATE INDEX asset_labels_value ON asset_labels (project_id, label);
${ftsSql('assets', 'assets_fts', ['name', 'description'])}
`;
