/**
 * Request and response shapes of the events resource.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  Cursor,
  ExternalId,
  IgnoreUnknownIds,
  InternalId,
  FilterId,
  FilterRef,
  ItemRefs,
  Limit,
  Metadata,
  Partition,
  Timestamp,
  TimestampRange,
  orNull,
  partialObject,
  AggregateFields,
  AggregateRequestFields,
  listBodySchema,
} from '../../http/common-schemas.js';
import { EVENT_LIMITS, eventModel } from './model.js';

export { EVENT_LIMITS };

/** Each field's schema, as the model declares it. */
const eventFields = eventModel.schemas;

export const EventCreate = partialObject(eventFields);
export type EventCreate = Static<typeof EventCreate>;

export const CreateEventsBody = Type.Object(
  { items: Type.Array(EventCreate, { minItems: 1, maxItems: EVENT_LIMITS.createItems }) },
  { additionalProperties: false },
);

export const EventFilter = partialObject(
  {
    startTime: TimestampRange,
    endTime: Type.Union([TimestampRange, Type.Object({ isNull: Type.Boolean() }, { additionalProperties: false })]),
    activeAtTime: TimestampRange,
    metadata: Metadata,
    assetIds: Type.Array(FilterId, { minItems: 1, maxItems: EVENT_LIMITS.filterAssetIds, uniqueItems: true }),
    assetExternalIds: Type.Array(ExternalId, { minItems: 1, maxItems: EVENT_LIMITS.filterAssetIds, uniqueItems: true }),
    assetSubtreeIds: Type.Array(FilterRef, { minItems: 1, maxItems: EVENT_LIMITS.filterAssetSubtrees }),
    source: Type.String({ maxLength: EVENT_LIMITS.source }),
    type: Type.String({ maxLength: EVENT_LIMITS.type }),
    subtype: Type.String({ maxLength: EVENT_LIMITS.subtype }),
    createdTime: TimestampRange,
    lastUpdatedTime: TimestampRange,
    externalIdPrefix: Type.String({ maxLength: EVENT_LIMITS.externalId }),
    dataSetIds: Type.Array(FilterRef, { maxItems: 100 }),
  },
);
export type EventFilter = Static<typeof EventFilter>;

export const ListEventsBody = listBodySchema(EventFilter);
export type ListEventsBody = Static<typeof ListEventsBody>;

export const SearchEventsBody = Type.Object(
  {
    filter: Type.Optional(EventFilter),
    search: Type.Optional(
      // The official Python SDK sends `"description": null` when searching by the filter alone: no text search.
      partialObject({ description: orNull(Type.String({ maxLength: EVENT_LIMITS.description })) }),
    ),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const AggregateEventsBody = Type.Object(
  { ...AggregateRequestFields, fields: AggregateFields, filter: Type.Optional(EventFilter) },
  { additionalProperties: false },
);

export const EventIdsBody = Type.Object({ items: ItemRefs(1000), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

export const UpdateEventsBody = eventModel.updateBody(1000);


export const EventIdParams = Type.Object({ project: Type.String(), id: InternalId });

export const ListEventsQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
    partition: Type.Optional(Partition),
    includeMetadata: Type.Optional(Type.Boolean()),
    minStartTime: Type.Optional(Timestamp),
    maxStartTime: Type.Optional(Timestamp),
    minEndTime: Type.Optional(Timestamp),
    maxEndTime: Type.Optional(Timestamp),
    minActiveAtTime: Type.Optional(Timestamp),
    maxActiveAtTime: Type.Optional(Timestamp),
    minCreatedTime: Type.Optional(Timestamp),
    maxCreatedTime: Type.Optional(Timestamp),
    minLastUpdatedTime: Type.Optional(Timestamp),
    maxLastUpdatedTime: Type.Optional(Timestamp),
    assetIds: Type.Optional(Type.String({ description: 'JSON array of asset ids, e.g. [1,2]' })),
    assetExternalIds: Type.Optional(Type.String({ description: 'JSON array of asset external ids, e.g. ["a","b"]' })),
    assetSubtreeIds: Type.Optional(Type.String({ description: 'JSON array of asset ids whose subtrees to include' })),
    assetSubtreeExternalIds: Type.Optional(Type.String({ description: 'JSON array of asset external ids whose subtrees to include' })),
    source: Type.Optional(eventFields.source),
    type: Type.Optional(eventFields.type),
    subtype: Type.Optional(eventFields.subtype),
    externalIdPrefix: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.externalId })),
    sort: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;
