/**
 * The files resource, declared once (see resources/model.ts): a file's metadata. Its content is a blob
 * (storage/blobs) named by the hidden column `blob_key`, set when an upload completes (content.ts); the
 * uploads under way are rows of `file_uploads`, their parts rows of `file_upload_parts`.
 */
import { Type } from '@sinclair/typebox';
import { ExternalId, InternalId, labelsSchema, Timestamp, type MetadataLimits } from '../../http/common-schemas.js';
import { GeoLocation } from '../../query/geo.js';
import type { TableDef } from '../../storage/schema.js';
import { InstanceId } from '../timeseries/model.js';
import { defineModel, field } from '../model.js';
import { inCategoriesOf } from '../securitycategories/visibility.js';

const FILE_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_240, keys: 256, totalBytes: 10_240 };

const MiB = 1024 * 1024;

export const FILE_LIMITS = {
  name: 256,
  directory: 512,
  source: 128,
  mimeType: 256,
  assetIds: 1000,
  securityCategories: 100,
  labels: 10,
  items: 1000,
  downloadItems: 100,
  filterIds: 100,
  /** The content one upload link takes (the reference: 5000 MB). */
  singleUploadBytes: 5_000_000_000,
  /** Parts of a multipart upload, and the size of each but the last. */
  maxParts: 250,
  minPartBytes: 5 * MiB,
  maxPartBytes: 4000 * MiB,
} as const;

/** Longest string value in a filter leaf (the spec: name lookups up to 256 characters). */
const MAX_LEAF = 256;

export const fileModel = defineModel({
  noun: 'file',
  acl: 'filesAcl',
  table: 'files',
  alias: 'f',
  dataSetField: 'dataSetId',
  categoryCondition: inCategoriesOf('security_categories'),
  maxPropertyElementLength: MAX_LEAF,
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: 255, sortable: true } }),
    // A file managed by data modeling (a CogniteFile node) carries the node's id (instances.ts).
    instanceId: field.instanceId(InstanceId, { query: { maxValueLength: MAX_LEAF, sortable: true } }),
    name: field.string(Type.String({ maxLength: FILE_LIMITS.name }), {
      notNull: true,
      required: true,
      // Changed by a create with `overwrite` only (service.ts refuses it in an update, as the reference does).
      patch: 'required',
      index: 'files_name',
      query: { maxValueLength: MAX_LEAF, search: { maxValueLength: MAX_LEAF }, sortable: true, aggregatable: true },
    }),
    directory: field.string(Type.String({ maxLength: FILE_LIMITS.directory }), { index: 'files_directory', query: { maxValueLength: FILE_LIMITS.directory, sortable: true, aggregatable: true } }),
    source: field.string(Type.String({ maxLength: FILE_LIMITS.source }), { index: 'files_source', query: { maxValueLength: MAX_LEAF, sortable: true, aggregatable: true } }),
    mimeType: field.string(Type.String({ maxLength: FILE_LIMITS.mimeType }), { index: 'files_mime_type', query: { maxValueLength: MAX_LEAF, sortable: true, aggregatable: true } }),
    metadata: field.metadata(FILE_METADATA_LIMITS, { table: 'file_metadata', itemColumn: 'file_id', maxValueLength: MAX_LEAF }),
    assetIds: field.list(
      Type.Array(InternalId, { minItems: 1, maxItems: FILE_LIMITS.assetIds, uniqueItems: true }),
      { kind: 'integerArray', table: 'file_assets', itemColumn: 'file_id', valueColumn: 'asset_id', aggregatable: true },
      FILE_LIMITS.assetIds,
      { column: 'asset_ids' },
    ),
    dataSetId: field.integer(InternalId, { index: 'files_data_set', query: { sortable: true, aggregatable: true } }),
    sourceCreatedTime: field.integer(Timestamp, { query: { sortable: true } }),
    sourceModifiedTime: field.integer(Timestamp, { query: { sortable: true } }),
    securityCategories: field.jsonList(Type.Array(InternalId, { maxItems: FILE_LIMITS.securityCategories, uniqueItems: true }), FILE_LIMITS.securityCategories),
    // Kept as `{externalId}` objects, as requests give them and responses show them; the side table holds the ids.
    labels: field.list(
      labelsSchema(FILE_LIMITS.labels),
      { kind: 'stringArray', table: 'file_labels', itemColumn: 'file_id', valueColumn: 'label', aggregatable: true, externalIdRefs: true },
      FILE_LIMITS.labels,
      { patch: { array: FILE_LIMITS.labels, byValue: true } },
    ),
    geoLocation: field.json(GeoLocation),
    uploaded: field.boolean(Type.Boolean(), { notNull: true, default: 0, patch: false, index: 'files_uploaded', query: { aggregatable: true } }),
    uploadedTime: field.integer(Timestamp, { patch: false, query: { sortable: true } }),
  },
  // Where the content is (storage/blobs), once an upload has completed.
  extraColumns: { blob_key: { type: 'text' } },
  search: { table: 'files_fts', columns: ['name'] },
});

export const fileCatalog = fileModel.catalog;
export const fileTable = fileModel.table;

/**
 * An upload under way: one per upload link (`parts` null) or multipart upload (`parts` the number of parts,
 * `upload_id` the id its client completes it with). `completed_time` is set once, by the request that
 * completes it: an upload link's PUT, or the completion of a multipart upload.
 */
const uploadsTable: TableDef = {
  name: 'file_uploads',
  columns: {
    id: { type: 'id' },
    project_id: { type: 'integer', notNull: true },
    file_id: { type: 'integer', notNull: true },
    upload_id: { type: 'text', notNull: true },
    parts: { type: 'integer' },
    created_time: { type: 'integer', notNull: true },
    expires_time: { type: 'integer', notNull: true },
    completed_time: { type: 'integer' },
  },
  indexes: [
    { name: 'file_uploads_file', columns: ['project_id', 'file_id'] },
    { name: 'file_uploads_upload_id', columns: ['project_id', 'upload_id'], unique: true },
  ],
};

/** The parts of a multipart upload received so far, each in a blob of its own. */
const partsTable: TableDef = {
  name: 'file_upload_parts',
  columns: {
    project_id: { type: 'integer', notNull: true },
    upload: { type: 'integer', notNull: true },
    part: { type: 'integer', notNull: true },
    blob_key: { type: 'text', notNull: true },
    size: { type: 'integer', notNull: true },
  },
  primaryKey: ['project_id', 'upload', 'part'],
  withoutRowid: true,
};

export const fileTables: readonly TableDef[] = [...fileModel.tables, uploadsTable, partsTable];
