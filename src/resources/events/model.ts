/**
 * The events resource, declared once: its fields, how they are stored, and what filters, sorting and
 * aggregation may do with them (see resources/model.ts).
 */
import { Type } from '@sinclair/typebox';
import { ExternalId, InternalId, METADATA_LIMITS, Timestamp } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';

export const EVENT_LIMITS = {
  externalId: 255,
  type: 64,
  subtype: 64,
  source: 128,
  description: 500,
  assetIds: 10_000,
  createItems: 1000,
  filterAssetIds: 5000,
  filterAssetSubtrees: 100,
} as const;

export const eventModel = defineModel({
  noun: 'event',
  acl: 'eventsAcl',
  table: 'events',
  alias: 'e',
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: 255, sortable: true } }),
    dataSetId: field.integer(InternalId, { index: 'events_data_set', query: { sortable: true, aggregatable: true } }),
    startTime: field.integer(Timestamp, { index: 'events_start_time', query: { sortable: true } }),
    endTime: field.integer(Timestamp, { index: 'events_end_time', query: { sortable: true } }),
    type: field.string(Type.String({ maxLength: EVENT_LIMITS.type }), { query: { maxValueLength: 64, sortable: true, aggregatable: true } }),
    subtype: field.string(Type.String({ maxLength: EVENT_LIMITS.subtype }), { index: 'events_subtype', query: { maxValueLength: 64, sortable: true, aggregatable: true } }),
    description: field.string(Type.String({ maxLength: EVENT_LIMITS.description }), {
      query: { maxValueLength: 255, search: { maxValueLength: 128 }, sortable: true, aggregatable: true },
    }),
    metadata: field.metadata(METADATA_LIMITS, { table: 'event_metadata', itemColumn: 'event_id', maxValueLength: 128 }),
    assetIds: field.list(
      Type.Array(InternalId, { maxItems: EVENT_LIMITS.assetIds, uniqueItems: true }),
      { kind: 'integerArray', table: 'event_assets', itemColumn: 'event_id', valueColumn: 'asset_id', aggregatable: true },
      EVENT_LIMITS.assetIds,
      { column: 'asset_ids' },
    ),
    source: field.string(Type.String({ maxLength: EVENT_LIMITS.source }), { index: 'events_source', query: { maxValueLength: 128, sortable: true, aggregatable: true } }),
  },
  indexes: [
    { name: 'events_type_start_time', columns: ['project_id', 'type', 'start_time'] },
    // A prefix filter on externalId sorted by startTime (site/unit naming schemes, newest first) reads the
    // sort key from this index instead of looking up every matching row.
    { name: 'events_external_id_start_time', columns: ['project_id', 'external_id', 'start_time'] },
  ],
  search: { table: 'events_fts', columns: ['description'] },
  // Events keep their rendered JSON (ItemTable.storesJson): a page of 1000 reads half the SQL.
  storesJson: true,
});

export const eventCatalog = eventModel.catalog;
export const eventTable = eventModel.table;
