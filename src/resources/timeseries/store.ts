/**
 * Time series metadata in SQL: the table, its indexes, and how the query layer sees it.
 */
import type { ResourceCatalog } from '../../query/catalog.js';
import { FILTERABLE_METADATA_LENGTH, ftsSql, sideTablesSql, type ItemTable } from '../../storage/items.js';
import { unitCatalog } from '../units/catalog.js';

/** Longest string value in a filter leaf and longest property path element (reference: 256 for time series). */
const MAX_LEAF = 256;
const SEARCH = { maxValueLength: 128 };

export const timeSeriesCatalog: ResourceCatalog = {
  noun: 'time series',
  acl: 'timeSeriesAcl',
  nouns: 'time series',
  table: 'timeseries',
  alias: 't',
  dataSetColumn: 'data_set_id',
  maxPropertyElementLength: 256,
  properties: {
    id: { kind: 'integer', column: 'id', nullable: false },
    externalId: { kind: 'string', column: 'external_id', nullable: true, maxValueLength: MAX_LEAF, sortable: true },
    name: { kind: 'string', column: 'name', nullable: true, maxValueLength: MAX_LEAF, search: SEARCH, sortable: true, aggregatable: true },
    description: { kind: 'string', column: 'description', nullable: true, maxValueLength: MAX_LEAF, search: SEARCH, sortable: true },
    query: { kind: 'string', column: 'name', nullable: true, searchOnly: true, search: { ...SEARCH, columns: ['name', 'description'] } },
    unit: { kind: 'string', column: 'unit', nullable: true, maxValueLength: MAX_LEAF, aggregatable: true },
    unitExternalId: { kind: 'string', column: 'unit_external_id', nullable: true, maxValueLength: MAX_LEAF, aggregatable: true },
    // The quantity of the series' unit in the units catalog (`Temperature`); none for a unit outside it.
    unitQuantity: { kind: 'string', column: 'unit_external_id', nullable: true, maxValueLength: MAX_LEAF, derived: unitCatalog.quantityByUnit },
    type: { kind: 'string', column: 'type', nullable: false, maxValueLength: MAX_LEAF, aggregatable: true },
    isStep: { kind: 'boolean', column: 'is_step', nullable: false, aggregatable: true },
    isString: { kind: 'boolean', column: 'is_string', nullable: false, aggregatable: true },
    assetId: { kind: 'integer', column: 'asset_id', nullable: true, sortable: true, aggregatable: true },
    dataSetId: { kind: 'integer', column: 'data_set_id', nullable: true, sortable: true, aggregatable: true },
    createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
    lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
    'instanceId.space': { kind: 'string', column: 'instance_space', nullable: true, maxValueLength: MAX_LEAF, sortable: true },
    'instanceId.externalId': { kind: 'string', column: 'instance_external_id', nullable: true, maxValueLength: MAX_LEAF, sortable: true },
    securityCategories: {
      kind: 'integerArray',
      table: 'timeseries_security_categories',
      itemColumn: 'timeseries_id',
      valueColumn: 'category',
    },
  },
  metadata: { table: 'timeseries_metadata', itemColumn: 'timeseries_id', maxFilterableLength: FILTERABLE_METADATA_LENGTH, maxValueLength: MAX_LEAF },
  fts: { table: 'timeseries_fts', columns: ['name', 'description'] },
};

export const timeSeriesTable: ItemTable = {
  table: 'timeseries',
  alias: 't',
  fields: [
    { name: 'externalId', column: 'external_id', type: 'string' },
    { name: 'instanceId', column: 'instance', type: 'instanceId' },
    { name: 'name', column: 'name', type: 'string' },
    { name: 'isString', column: 'is_string', type: 'boolean' },
    { name: 'type', column: 'type', type: 'string' },
    { name: 'metadata', column: 'metadata', type: 'json' },
    { name: 'unit', column: 'unit', type: 'string' },
    { name: 'unitExternalId', column: 'unit_external_id', type: 'string' },
    { name: 'assetId', column: 'asset_id', type: 'integer' },
    { name: 'isStep', column: 'is_step', type: 'boolean' },
    { name: 'description', column: 'description', type: 'string' },
    { name: 'securityCategories', column: 'security_categories', type: 'json' },
    { name: 'dataSetId', column: 'data_set_id', type: 'integer' },
  ],
  metadata: { field: 'metadata', store: timeSeriesCatalog.metadata! },
  arrays: [{ field: 'securityCategories', index: timeSeriesCatalog.properties.securityCategories as never }],
};

export const timeSeriesSchemaSql = `
CREATE TABLE timeseries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  external_id TEXT,
  instance_space TEXT,
  instance_external_id TEXT,
  name TEXT,
  is_string INTEGER NOT NULL,
  type TEXT NOT NULL,
  metadata TEXT,
  unit TEXT,
  unit_external_id TEXT,
  asset_id INTEGER,
  is_step INTEGER NOT NULL,
  description TEXT,
  security_categories TEXT,
  data_set_id INTEGER,
  created_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL
);
CREATE UNIQUE INDEX timeseries_external_id ON timeseries (project_id, external_id);
CREATE UNIQUE INDEX timeseries_instance_id ON timeseries (project_id, instance_space, instance_external_id);
CREATE INDEX timeseries_created_time ON timeseries (project_id, created_time);
CREATE INDEX timeseries_last_updated_time ON timeseries (project_id, last_updated_time);
CREATE INDEX timeseries_name ON timeseries (project_id, name);
CREATE INDEX timeseries_asset ON timeseries (project_id, asset_id);
CREATE INDEX timeseries_data_set ON timeseries (project_id, data_set_id);
${sideTablesSql(timeSeriesTable)}
${ftsSql('timeseries', 'timeseries_fts', ['name', 'description'])}
`;
