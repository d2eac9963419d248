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
  orNull,
  partialObject,
  Partition,
  TimestampRange,
  listBodySchema,
} from '../../http/common-schemas.js';
import { InstanceId, TIME_SERIES_LIMITS, TIME_SERIES_METADATA_LIMITS, timeSeriesModel } from './model.js';

export { InstanceId, TIME_SERIES_LIMITS, TIME_SERIES_METADATA_LIMITS };

const model = timeSeriesModel.schemas;
const Metadata = model.metadata;

/** The fields a create or an update gives, as the model declares them. */
const fields = {
  externalId: model.externalId,
  name: model.name,
  metadata: model.metadata,
  unit: model.unit,
  unitExternalId: model.unitExternalId,
  assetId: model.assetId,
  isStep: model.isStep,
  description: model.description,
  securityCategories: model.securityCategories,
  dataSetId: model.dataSetId,
};

export const TimeSeriesCreate = partialObject({
  ...fields,
  isString: Type.Boolean(),
  // Deprecated by the reference and ignored; accepted so that older clients keep working.
  legacyName: Type.String({ maxLength: 255 }),
  // A series managed by data modeling carries its instance id; Strata lets a create set it to stand in for one.
  instanceId: model.instanceId,
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

export const UpdateTimeSeriesBody = timeSeriesModel.updateBody(TIME_SERIES_LIMITS.items);
