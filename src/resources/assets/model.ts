/**
 * The assets resource, declared once (see resources/model.ts).
 *
 * The hierarchy is kept in three columns next to `parent_id`: `root_id`, `depth` (0 for a root) and `path`
 * (ids from the root down to the asset, `/1/5/9/`; see query/assets-scope.ts). They are written by the
 * hierarchy module in the transaction that creates or moves assets, so a subtree is one index range.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ExternalId, InternalId, requiredPatch, type MetadataLimits } from '../../http/common-schemas.js';
import { PARENT_INDEX, visibleHierarchyValues } from '../../query/assets-scope.js';
import { defineModel, field } from '../model.js';

export const ASSET_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_240, keys: 256, totalBytes: 10_240 };

export const ASSET_LIMITS = {
  name: 140,
  description: 500,
  source: 128,
  labels: 10,
  items: 1000,
  filterIds: 100,
  filterDataSetIds: 1000,
} as const;

export const Label = Type.Object({ externalId: ExternalId }, { additionalProperties: false });
export type Label = Static<typeof Label>;
export const Labels = Type.Array(Label, { maxItems: ASSET_LIMITS.labels, uniqueItems: true });

export type GeometryType = 'Point' | 'LineString' | 'Polygon' | 'MultiPoint' | 'MultiLineString' | 'MultiPolygon';
export const GeometryTypeSchema = Type.Unsafe<GeometryType>(
  Type.String({ enum: ['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon'] }),
);

/** A GeoJSON feature; the nesting of `coordinates`, which depends on the type, is checked by geo.ts. */
export const GeoLocation = Type.Object(
  {
    type: Type.Literal('Feature'),
    geometry: Type.Object({ type: GeometryTypeSchema, coordinates: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
    properties: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type GeoLocation = Static<typeof GeoLocation>;

const SEARCHABLE = { maxValueLength: 255, search: { maxValueLength: 128 }, sortable: true, aggregatable: true };

export const assetModel = defineModel({
  noun: 'asset',
  acl: 'assetsAcl',
  table: 'assets',
  alias: 'a',
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: 255, sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: ASSET_LIMITS.name }), { notNull: true, patch: 'required', index: 'assets_name', query: SEARCHABLE }),
    parentId: field.integer(InternalId, { patch: 'required', index: PARENT_INDEX, query: { aggregatable: true } }),
    description: field.string(Type.String({ maxLength: ASSET_LIMITS.description }), { query: SEARCHABLE }),
    dataSetId: field.integer(InternalId, { index: 'assets_data_set', query: { sortable: true, aggregatable: true } }),
    metadata: field.metadata(ASSET_METADATA_LIMITS, { table: 'asset_metadata', itemColumn: 'asset_id', maxValueLength: 128 }),
    source: field.string(Type.String({ maxLength: ASSET_LIMITS.source }), { index: 'assets_source', query: { maxValueLength: 128, sortable: true, aggregatable: true } }),
    // Stored as the labels' external ids, one row per (asset, label) in the side table.
    labels: field.list(
      Labels,
      { kind: 'stringArray', table: 'asset_labels', itemColumn: 'asset_id', valueColumn: 'label', aggregatable: true, externalIdRefs: true },
      ASSET_LIMITS.labels,
    ),
    geoLocation: field.json(GeoLocation),
    rootId: field.integer(InternalId, { patch: false, index: 'assets_root', query: { notNull: true, aggregatable: true } }),
  },
  extraColumns: {
    depth: { type: 'integer', notNull: true, default: 0 },
    path: { type: 'text', notNull: true, default: "''" },
  },
  indexes: [{ name: 'assets_path', columns: ['project_id', 'path'] }],
  search: { table: 'assets_fts', columns: ['name', 'description'] },
  // A move may name the new parent by external id; the assets' rules turn it into `parentId`.
  updateExtras: { parentExternalId: requiredPatch(ExternalId) },
  visibleValues: visibleHierarchyValues,
});

export const assetCatalog = assetModel.catalog;
export const assetTable = assetModel.table;
