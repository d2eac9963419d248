/**
 * Events in SQL: the table, its indexes, and how the query layer sees it.
 */
import type { ResourceCatalog } from '../../query/catalog.js';
import { FILTERABLE_METADATA_LENGTH, ftsSql, sideTablesSql, storedJsonSql, type ItemTable } from '../../storage/items.js';

export const eventCatalog: ResourceCatalog = {
  noun: 'event',
  acl: 'eventsAcl',
  table: 'events',
  alias: 'e',
  dataSetColumn: 'data_set_id',
  properties: {
    id: { kind: 'integer', column: 'id', nullable: false },
    externalId: { kind: 'string', column: 'external_id', nullable: true, maxValueLength: 255, sortable: true },
    dataSetId: { kind: 'integer', column: 'data_set_id', nullable: true, sortable: true, aggregatable: true },
    startTime: { kind: 'integer', column: 'start_time', nullable: true, sortable: true },
    endTime: { kind: 'integer', column: 'end_time', nullable: true, sortable: true },
    createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
    lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
    type: { kind: 'string', column: 'type', nullable: true, maxValueLength: 64, sortable: true, aggregatable: true },
    subtype: { kind: 'string', column: 'subtype', nullable: true, maxValueLength: 64, sortable: true, aggregatable: true },
    source: { kind: 'string', column: 'source', nullable: true, maxValueLength: 128, sortable: true, aggregatable: true },
    description: {
      kind: 'string',
      column: 'description',
      nullable: true,
      maxValueLength: 255,
      search: { maxValueLength: 128 },
      sortable: true,
      aggregatable: true,
    },
    assetIds: { kind: 'integerArray', table: 'event_assets', itemColumn: 'event_id', valueColumn: 'asset_id', aggregatable: true },
  },
  metadata: { table: 'event_metadata', itemColumn: 'event_id', maxFilterableLength: FILTERABLE_METADATA_LENGTH, maxValueLength: 128 },
  fts: { table: 'events_fts' },
};

export const eventTable: ItemTable = {
  table: 'events',
  alias: 'e',
  fields: [
    { name: 'externalId', column: 'external_id', type: 'string' },
    { name: 'dataSetId', column: 'data_set_id', type: 'integer' },
    { name: 'startTime', column: 'start_time', type: 'integer' },
    { name: 'endTime', column: 'end_time', type: 'integer' },
    { name: 'type', column: 'type', type: 'string' },
    { name: 'subtype', column: 'subtype', type: 'string' },
    { name: 'description', column: 'description', type: 'string' },
    { name: 'metadata', column: 'metadata', type: 'json' },
    { name: 'assetIds', column: 'asset_ids', type: 'json' },
    { name: 'source', column: 'source', type: 'string' },
  ],
  metadata: { field: 'metadata', store: eventCatalog.metadata! },
  arrays: [{ field: 'assetIds', index: eventCatalog.properties.assetIds as never }],
  storesJson: true,
};

export const eventsSchemaSql = `
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id INTEGER NOT NULL REFERENCES projects (id),
  external_id TEXT,
  data_set_id INTEGER,
  start_time INTEGER,
  end_time INTEGER,
  type TEXT,
  subtype TEXT,
  description TEXT,
  source TEXT,
  metadata TEXT,
  asset_ids TEXT,
  created_time INTEGER NOT NULL,
  last_updated_time INTEGER NOT NULL
);
CREATE UNIQUE INDEX events_external_id ON events (project_id, external_id);
CREATE INDEX events_created_time ON events (project_id, created_time);
CREATE INDEX events_last_updated_time ON events (project_id, last_updated_time);
CREATE INDEX events_start_time ON events (project_id, start_time);
CREATE INDEX events_end_time ON events (project_id, end_time);
CREATE INDEX events_type_start_time ON events (project_id, type, start_time);
CREATE INDEX events_subtype ON events (project_id, subtype);
CREATE INDEX events_source ON events (project_id, source);
CREATE INDEX events_data_set ON events (project_id, data_set_id);
${sideTablesSql(eventTable)}
${ftsSql('events', 'events_fts', ['description'])}
`;

/**
 * A prefix filter on externalId sorted by startTime (site/unit naming schemes, newest first) reads the sort
 * key from this index instead of looking up every matching row; the unique index cannot carry the column.
 */
export const eventsExternalIdStartTimeSql = `
CREATE INDEX events_external_id_start_time ON events (project_id, external_id, start_time);
`;

/** Events keep their rendered JSON (ItemTable.storesJson); existing rows are rendered once here. */
export const eventsStoredJsonSql = storedJsonSql(eventTable);
