/**
 * The time series (metadata) resource, declared once (see resources/model.ts).
 */
import { Type } from '@sinclair/typebox';
import { ExternalId, InternalId, type MetadataLimits } from '../../http/common-schemas.js';
import type { ArrayProperty } from '../../query/catalog.js';
import { inCategoriesOf } from '../securitycategories/visibility.js';
import { unitCatalog } from '../units/catalog.js';
import { defineModel, field, nameAndDescriptionQuery } from '../model.js';

export const TIME_SERIES_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_000, keys: 256, totalBytes: 10_000 };
export const TIME_SERIES_LIMITS = {
  items: 1000,
  name: 255,
  unit: 32,
  unitExternalId: 64,
  unitQuantity: 256,
  description: 1000,
  securityCategories: 100,
  filterIds: 100,
} as const;

export const InstanceId = Type.Object(
  { space: Type.String({ minLength: 1, maxLength: 43 }), externalId: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

/** Longest string value in a filter leaf and longest property path element (reference: 256 for time series). */
const MAX_LEAF = 256;
const SEARCH = { maxValueLength: 128 };

const SECURITY_CATEGORIES: ArrayProperty = { kind: 'integerArray', table: 'timeseries_security_categories', itemColumn: 'timeseries_id', valueColumn: 'category' };

export const timeSeriesModel = defineModel({
  noun: 'time series',
  nouns: 'time series',
  acl: 'timeSeriesAcl',
  table: 'timeseries',
  alias: 't',
  dataSetField: 'dataSetId',
  categoryCondition: inCategoriesOf(SECURITY_CATEGORIES),
  maxPropertyElementLength: 256,
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: MAX_LEAF, sortable: true } }),
    // A series managed by data modeling carries its instance id; Strata lets a create set it to stand in for one.
    instanceId: field.instanceId(InstanceId, { query: { maxValueLength: MAX_LEAF, sortable: true } }),
    name: field.string(Type.String({ maxLength: TIME_SERIES_LIMITS.name }), {
      index: 'timeseries_name',
      query: { maxValueLength: MAX_LEAF, search: SEARCH, sortable: true, aggregatable: true },
    }),
    isString: field.boolean(Type.Boolean(), { notNull: true, patch: false, query: { aggregatable: true } }),
    type: field.string(Type.String(), { notNull: true, patch: false, query: { maxValueLength: MAX_LEAF, aggregatable: true } }),
    metadata: field.metadata(TIME_SERIES_METADATA_LIMITS, { table: 'timeseries_metadata', itemColumn: 'timeseries_id', maxValueLength: MAX_LEAF }),
    unit: field.string(Type.String({ maxLength: TIME_SERIES_LIMITS.unit }), { query: { maxValueLength: MAX_LEAF, aggregatable: true } }),
    unitExternalId: field.string(Type.String({ maxLength: TIME_SERIES_LIMITS.unitExternalId }), { query: { maxValueLength: MAX_LEAF, aggregatable: true } }),
    assetId: field.integer(InternalId, { index: 'timeseries_asset', query: { sortable: true, aggregatable: true } }),
    isStep: field.boolean(Type.Boolean(), { notNull: true, patch: 'required', query: { aggregatable: true } }),
    description: field.string(Type.String({ maxLength: TIME_SERIES_LIMITS.description }), { query: { maxValueLength: MAX_LEAF, search: SEARCH, sortable: true } }),
    securityCategories: field.list(
      Type.Array(InternalId, { maxItems: TIME_SERIES_LIMITS.securityCategories, uniqueItems: true }),
      SECURITY_CATEGORIES,
      TIME_SERIES_LIMITS.securityCategories,
    ),
    dataSetId: field.integer(InternalId, { index: 'timeseries_data_set', query: { sortable: true, aggregatable: true } }),
  },
  extraProperties: {
    query: nameAndDescriptionQuery(SEARCH),
    // The quantity of the series' unit in the units catalog (`Temperature`); none for a unit outside it.
    unitQuantity: { kind: 'string', column: 'unit_external_id', nullable: true, maxValueLength: MAX_LEAF, derived: unitCatalog.quantityByUnit },
  },
  search: { table: 'timeseries_fts', columns: ['name', 'description'] },
});

export const timeSeriesCatalog = timeSeriesModel.catalog;
export const timeSeriesTable = timeSeriesModel.table;
