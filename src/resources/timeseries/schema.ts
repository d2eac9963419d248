/**
 * Request shapes of the time series (metadata) resource.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  AggregateRequestFields,
  Cursor,
  ExternalId,
  IgnoreUnknownIds,
  InternalId,
  FilterId,
  FilterRef,
  ItemRef,
  Limit,
  metadataPatchSchema,
  metadataSchema,
  nullablePatch,
  orNull,
  partialObject,
  Partition,
  requiredPatch,
  TimestampRange,
  type MetadataLimits,
  listBodySchema,
} from '../../http/common-schemas.js';

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

const Metadata = metadataSchema(TIME_SERIES_METADATA_LIMITS);
const SecurityCategories = Type.Array(InternalId, { maxItems: TIME_SERIES_LIMITS.securityCategories, uniqueItems: true });

const fields = {
  externalId: ExternalId,
  name: Type.String({ maxLength: TIME_SERIES_LIMITS.name }),
  metadata: Metadata,
  unit: Type.String({ maxLength: TIME_SERIES_LIMITS.unit }),
  unitExternalId: Type.String({ maxLength: TIME_SERIES_LIMITS.unitExternalId }),
  assetId: InternalId,
  isStep: Type.Boolean(),
  description: Type.String({ maxLength: TIME_SERIES_LIMITS.description }),
  securityCategories: SecurityCategories,
  dataSetId: InternalId,
};

export const TimeSeriesCreate = partialObject({
  ...fields,
  isString: Type.Boolean(),
  // Deprecated by the reference and ignored; accepted so that older clients keep working.
  legacyName: Type.String({ maxLength: 255 }),
  // A series managed by data modeling carries its instance id; Strata lets a create set it to stand in for one.
  instanceId: InstanceId,
});
export type TimeSeriesCreate = Static<typeof TimeSeriesCreate>;

export const CreateTimeSeriesBody = Type.Object(
  { items: Type.Array(TimeSeriesCreate, { minItems: 1, maxItems: TIME_SERIES_LIMITS.items }) },
  { additionalProperties: false },
);

const IdList = Type.Array(FilterId, { minItems: 1, maxItems: TIME_SERIES_LIMITS.filterIds, uniqueItems: true });

export const TimeSeriesFilter = partialObject({
  name: Type.String({ maxLength: TIME_SERIES_LIMITS.name }),
  unit: Type.String({ maxLength: TIME_SERIES_LIMITS.unit }),
  unitExternalId: Type.String({ maxLength: TIME_SERIES_LIMITS.unitExternalId }),
  unitQuantity: Type.String({ maxLength: TIME_SERIES_LIMITS.unitQuantity }),
  isString: Type.Boolean(),
  isStep: Type.Boolean(),
  metadata: Metadata,
  assetIds: IdList,
  assetExternalIds: Type.Array(ExternalId, { minItems: 1, maxItems: TIME_SERIES_LIMITS.filterIds, uniqueItems: true }),
  rootAssetIds: IdList,
  assetSubtreeIds: Type.Array(FilterRef, { minItems: 1, maxItems: TIME_SERIES_LIMITS.filterIds }),
  dataSetIds: Type.Array(FilterRef, { minItems: 1, maxItems: TIME_SERIES_LIMITS.filterIds }),
  externalIdPrefix: Type.String({ maxLength: 255 }),
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
});
export type TimeSeriesFilter = Static<typeof TimeSeriesFilter>;

export const ListTimeSeriesBody = listBodySchema(TimeSeriesFilter);

export const ListTimeSeriesQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
    partition: Type.Optional(Partition),
    includeMetadata: Type.Optional(Type.Boolean()),
    assetIds: Type.Optional(Type.String()),
    rootAssetIds: Type.Optional(Type.String()),
    externalIdPrefix: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

export const SearchTimeSeriesBody = Type.Object(
  {
    filter: Type.Optional(TimeSeriesFilter),
    search: Type.Optional(
      // The official Python SDK sends all three, null for those not given.
      partialObject({
        name: orNull(Type.String({ maxLength: TIME_SERIES_LIMITS.name })),
        description: orNull(Type.String({ maxLength: TIME_SERIES_LIMITS.description })),
        query: orNull(Type.String({ maxLength: TIME_SERIES_LIMITS.description })),
      }),
    ),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const AggregateTimeSeriesBody = Type.Object(
  { ...AggregateRequestFields, filter: Type.Optional(TimeSeriesFilter) },
  { additionalProperties: false },
);

const RefWithInstance = Type.Object(
  { id: Type.Optional(InternalId), externalId: Type.Optional(ExternalId), instanceId: Type.Optional(InstanceId) },
  { additionalProperties: false },
);

export const TimeSeriesLookupBody = Type.Object(
  { items: Type.Array(RefWithInstance, { minItems: 1, maxItems: TIME_SERIES_LIMITS.items }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

export const TimeSeriesDeleteBody = Type.Object(
  { items: Type.Array(ItemRef, { minItems: 1, maxItems: TIME_SERIES_LIMITS.items }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

export const UpdateTimeSeriesBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          id: Type.Optional(InternalId),
          externalId: Type.Optional(ExternalId),
          instanceId: Type.Optional(InstanceId),
          update: partialObject({
            externalId: nullablePatch(fields.externalId),
            name: nullablePatch(fields.name),
            metadata: metadataPatchSchema(TIME_SERIES_METADATA_LIMITS),
            unit: nullablePatch(fields.unit),
            unitExternalId: nullablePatch(fields.unitExternalId),
            assetId: nullablePatch(fields.assetId),
            isStep: requiredPatch(fields.isStep),
            description: nullablePatch(fields.description),
            securityCategories: Type.Object(
              {
                set: Type.Optional(SecurityCategories),
                add: Type.Optional(SecurityCategories),
                remove: Type.Optional(SecurityCategories),
              },
              { additionalProperties: false },
            ),
            dataSetId: nullablePatch(fields.dataSetId),
            // Named so that a change is refused with a clear reason rather than as an unknown property.
            isString: Type.Unknown(),
          }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: TIME_SERIES_LIMITS.items },
    ),
  },
  { additionalProperties: false },
);
