/**
 * 3D, declared once (see resources/model.ts): models, kept in data sets; revisions under a model, each made
 * from an uploaded file and processed into a tree of nodes; the nodes under their revision; the asset
 * mappings of a revision, keyed by node and asset. The tables that are not items (node properties for the
 * properties filters, revision logs, the 3D files processing and thumbnails produce) are declared here too.
 * The limits are the reference's.
 */
import { Type } from '@sinclair/typebox';
import { InternalId } from '../../http/common-schemas.js';
import type { TableDef } from '../../storage/schema.js';
import { defineModel, field } from '../model.js';

export const THREED_LIMITS = {
  name: 255,
  /** Items per create, update, delete and by-ids request. */
  items: 1000,
  /** Values a node properties filter may list in all, and the longest property category, key or value. */
  propertyValues: 1000,
  propertyText: 512,
  /** The most content a revision's file may have to be processed, and the most nodes it may give. */
  sourceBytes: 256 * 1024 * 1024,
  nodes: 1_000_000,
  /** The largest file a thumbnail is made of. */
  thumbnailBytes: 10 * 1024 * 1024,
} as const;

/** Revision metadata: at most 16 pairs, keys of 32 bytes, values of 512. */
export const REVISION_METADATA_LIMITS = { keyLength: 32, valueLength: 512, keys: 16, totalBytes: 16 * (32 + 512) };
const MODEL_METADATA_LIMITS = { keyLength: 128, valueLength: 10_240, keys: 256, totalBytes: 10_240 };

const ACL = 'threedAcl';

export const Vector3 = Type.Array(Type.Number(), { minItems: 3, maxItems: 3 });
export const Camera = Type.Object({ target: Vector3, position: Vector3 }, { additionalProperties: false });
export const RevisionStatus = Type.Union([Type.Literal('Queued'), Type.Literal('Processing'), Type.Literal('Done'), Type.Literal('Failed')]);
export type RevisionStatus = 'Queued' | 'Processing' | 'Done' | 'Failed';
export const BoundingBox = Type.Object({ min: Vector3, max: Vector3 }, { additionalProperties: false });
export type BoundingBox = { min: number[]; max: number[] };

export const threedModel = defineModel({
  noun: '3D model',
  acl: ACL,
  table: 'threed_models',
  alias: 'tm',
  dataSetField: 'dataSetId',
  fields: {
    name: field.string(Type.String({ minLength: 1, maxLength: THREED_LIMITS.name }), { notNull: true, required: true, patch: 'required', query: { maxValueLength: THREED_LIMITS.name } }),
    dataSetId: field.integer(InternalId, { query: {} }),
    metadata: field.metadata(MODEL_METADATA_LIMITS, { table: 'threed_model_metadata', itemColumn: 'model_id', maxValueLength: 128 }, { emptyAbsent: true }),
  },
});

export const revisionModel = defineModel({
  noun: '3D revision',
  acl: ACL,
  table: 'threed_revisions',
  alias: 'tr',
  parent: { model: threedModel, column: 'model_id' },
  fields: {
    fileId: field.integer(InternalId, { notNull: true, required: true, patch: false }),
    published: field.boolean(Type.Boolean(), { notNull: true, default: 0, patch: 'required', query: {} }),
    rotation: field.json(Vector3),
    scale: field.json(Vector3),
    translation: field.json(Vector3),
    camera: field.json(Camera),
    // Set by processing (service.ts, processing.ts), never by a request.
    status: field.string(RevisionStatus, { notNull: true, patch: false, query: { maxValueLength: 10 } }),
    metadata: field.metadata(REVISION_METADATA_LIMITS, { table: 'threed_revision_metadata', itemColumn: 'revision_id', maxValueLength: 512 }, { emptyAbsent: true }),
    thumbnailThreedFileId: field.integer(InternalId, { patch: false }),
    thumbnailURL: field.string(Type.String(), { column: 'thumbnail_url', patch: false }),
    assetMappingCount: field.integer(Type.Integer(), { notNull: true, default: 0, patch: false }),
  },
});

export const nodeModel = defineModel({
  noun: '3D node',
  acl: ACL,
  table: 'threed_nodes',
  alias: 'tn',
  parent: { model: revisionModel, column: 'revision_id' },
  indexes: [{ name: 'threed_nodes_tree', columns: ['project_id', 'revision_id', 'tree_index'] }],
  fields: {
    treeIndex: field.integer(Type.Integer({ minimum: 0 }), { notNull: true, patch: false, query: { sortable: true } }),
    parentId: field.integer(InternalId, { patch: false, query: {} }),
    depth: field.integer(Type.Integer({ minimum: 0 }), { notNull: true, patch: false, query: {} }),
    name: field.string(Type.String(), { notNull: true, patch: false, query: { maxValueLength: THREED_LIMITS.propertyText } }),
    subtreeSize: field.integer(Type.Integer({ minimum: 1 }), { notNull: true, patch: false }),
    properties: field.json(Type.Record(Type.String(), Type.Record(Type.String(), Type.String())), { patch: false }),
    boundingBox: field.json(BoundingBox, { patch: false }),
  },
});

export const mappingModel = defineModel({
  noun: '3D asset mapping',
  acl: ACL,
  table: 'threed_asset_mappings',
  alias: 'tam',
  key: ['nodeId', 'assetId'],
  parent: { model: revisionModel, column: 'revision_id' },
  indexes: [{ name: 'threed_asset_mappings_asset', columns: ['project_id', 'asset_id'] }],
  fields: {
    nodeId: field.integer(InternalId, { notNull: true, query: {} }),
    assetId: field.integer(InternalId, { notNull: true, query: {} }),
    // Copied from the node when the mapping is made: a revision's tree never changes once processed.
    treeIndex: field.integer(Type.Integer({ minimum: 0 }), { notNull: true, patch: false, query: {} }),
    subtreeSize: field.integer(Type.Integer({ minimum: 1 }), { notNull: true, patch: false }),
  },
});

/** One row per property of a node, for the properties filters of node lists. */
const nodePropertiesTable: TableDef = {
  name: 'threed_node_properties',
  columns: {
    project_id: { type: 'integer', notNull: true, references: 'projects' },
    revision_id: { type: 'integer', notNull: true },
    node_id: { type: 'integer', notNull: true },
    category: { type: 'text', notNull: true },
    key: { type: 'text', notNull: true },
    value: { type: 'text', notNull: true },
  },
  primaryKey: ['project_id', 'node_id', 'category', 'key'],
  indexes: [{ name: 'threed_node_properties_value', columns: ['project_id', 'revision_id', 'category', 'key', 'value'] }],
};

/** What processing a revision said, for `GET .../logs`. */
const logsTable: TableDef = {
  name: 'threed_revision_logs',
  columns: {
    id: { type: 'id' },
    project_id: { type: 'integer', notNull: true, references: 'projects' },
    revision_id: { type: 'integer', notNull: true },
    timestamp: { type: 'integer', notNull: true },
    severity: { type: 'integer', notNull: true },
    type: { type: 'text', notNull: true },
    info: { type: 'text' },
  },
  indexes: [{ name: 'threed_revision_logs_revision', columns: ['project_id', 'revision_id'] }],
};

/**
 * The 3D files a revision holds (its outputs, its thumbnail), served under `/3d/files/{id}`: a file has a
 * blob; a directory has none, and the files in it name it as their `directory` and have a `name` in it.
 */
const filesTable: TableDef = {
  name: 'threed_files',
  columns: {
    id: { type: 'id' },
    project_id: { type: 'integer', notNull: true, references: 'projects' },
    revision_id: { type: 'integer', notNull: true },
    directory: { type: 'integer' },
    name: { type: 'text' },
    format: { type: 'text' },
    mime_type: { type: 'text' },
    blob_key: { type: 'text' },
  },
  indexes: [
    { name: 'threed_files_revision', columns: ['project_id', 'revision_id'] },
    { name: 'threed_files_directory', columns: ['project_id', 'directory', 'name'] },
  ],
};

export const threedTables: readonly TableDef[] = [
  ...threedModel.tables,
  ...revisionModel.tables,
  ...nodeModel.tables,
  ...mappingModel.tables,
  nodePropertiesTable,
  logsTable,
  filesTable,
];
