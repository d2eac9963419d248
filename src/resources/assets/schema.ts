/**
 * Request shapes of the assets resource.
 */
import { Type, type Static } from '@sinclair/typebox';
import { GEO_RELATIONS, type GeoRelation } from './geometry.js';
import {
  AggregateRequestFields,
  Cursor,
  ExternalId,
  IgnoreUnknownIds,
  InternalId,
  FilterId,
  FilterRef,
  ItemRefs,
  Limit,
  Partition,
  Timestamp,
  TimestampRange,
  orNull,
  partialObject,
  listBodySchema,
  MetadataAggregateFields,
} from '../../http/common-schemas.js';
import { ASSET_LIMITS, ASSET_METADATA_LIMITS, assetModel, GeoLocation, Label, Labels, type GeometryType } from './model.js';

export { ASSET_LIMITS, ASSET_METADATA_LIMITS, GeoLocation, Label };
export type { GeometryType };

const fields = assetModel.schemas;
const { name: Name, description: Description, source: Source, metadata: AssetMetadata } = fields;

/** The `geoLocation` filter: a relation to a shape (a geometry, MultiPoint aside); geo.ts checks the nesting. */
export const GeoFilter = Type.Object(
  {
    relation: Type.Unsafe<GeoRelation>(Type.String({ enum: [...GEO_RELATIONS] })),
    shape: Type.Object(
      {
        type: Type.Unsafe<Exclude<GeometryType, 'MultiPoint'>>(Type.String({ enum: ['Point', 'LineString', 'Polygon', 'MultiLineString', 'MultiPolygon'] })),
        coordinates: Type.Array(Type.Unknown()),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type GeoFilter = Static<typeof GeoFilter>;


export const AssetCreate = Type.Object(
  {
    externalId: Type.Optional(ExternalId),
    name: Name,
    parentId: Type.Optional(InternalId),
    parentExternalId: Type.Optional(ExternalId),
    description: Type.Optional(Description),
    dataSetId: Type.Optional(InternalId),
    metadata: Type.Optional(AssetMetadata),
    source: Type.Optional(Source),
    labels: Type.Optional(Labels),
    geoLocation: Type.Optional(GeoLocation),
  },
  { additionalProperties: false },
);
export type AssetCreate = Static<typeof AssetCreate>;

export const CreateAssetsBody = Type.Object(
  { items: Type.Array(AssetCreate, { minItems: 1, maxItems: ASSET_LIMITS.items }) },
  { additionalProperties: false },
);

const LabelList = Type.Array(Label, { minItems: 1, maxItems: ASSET_LIMITS.labels });

export const AssetFilter = partialObject({
  name: Name,
  parentIds: Type.Array(FilterId, { minItems: 1, maxItems: ASSET_LIMITS.filterIds }),
  parentExternalIds: Type.Array(ExternalId, { minItems: 1, maxItems: ASSET_LIMITS.filterIds }),
  rootIds: Type.Array(FilterRef, { minItems: 1, maxItems: ASSET_LIMITS.filterIds }),
  assetSubtreeIds: Type.Array(FilterRef, { minItems: 1, maxItems: ASSET_LIMITS.filterIds }),
  dataSetIds: Type.Array(FilterRef, { maxItems: ASSET_LIMITS.filterDataSetIds }),
  metadata: AssetMetadata,
  source: Source,
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
  root: Type.Boolean(),
  externalIdPrefix: Type.String({ maxLength: 255 }),
  /** Exactly one of the two; checked by the service so the message can say so. */
  labels: partialObject({ containsAny: LabelList, containsAll: LabelList }),
  geoLocation: GeoFilter,
});
export type AssetFilter = Static<typeof AssetFilter>;

export const AGGREGATED_PROPERTIES = ['childCount', 'path', 'depth'] as const;
export type AggregatedProperty = (typeof AGGREGATED_PROPERTIES)[number];
const AggregatedProperties = Type.Array(Type.Unsafe<AggregatedProperty>(Type.String({ enum: [...AGGREGATED_PROPERTIES] })), {
  maxItems: AGGREGATED_PROPERTIES.length,
  uniqueItems: true,
});

export const ListAssetsBody = listBodySchema(AssetFilter, { aggregatedProperties: Type.Optional(AggregatedProperties) });
export type ListAssetsBody = Static<typeof ListAssetsBody>;

export const SearchAssetsBody = Type.Object(
  {
    filter: Type.Optional(AssetFilter),
    search: Type.Optional(
      // The official Python SDK sends all three, null for those not given.
      partialObject({
        name: orNull(Name),
        description: orNull(Description),
        query: orNull(Type.String({ minLength: 1, maxLength: ASSET_LIMITS.name })),
      }),
    ),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
export type SearchAssetsBody = Static<typeof SearchAssetsBody>;

export const AggregateAssetsBody = Type.Object(
  { ...AggregateRequestFields, ...MetadataAggregateFields, filter: Type.Optional(AssetFilter) },
  { additionalProperties: false },
);
export type AggregateAssetsBody = Static<typeof AggregateAssetsBody>;

export const AssetIdsBody = Type.Object(
  { items: ItemRefs(ASSET_LIMITS.items), ignoreUnknownIds: IgnoreUnknownIds, aggregatedProperties: Type.Optional(AggregatedProperties) },
  { additionalProperties: false },
);

export const DeleteAssetsBody = Type.Object(
  { items: ItemRefs(ASSET_LIMITS.items), recursive: Type.Optional(Type.Boolean()), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

/** What the assets' own rules read of an update (moves, labels); the derived schema checks all of it. */
export type AssetPatch = Record<string, unknown> & {
  parentId?: { set: number };
  parentExternalId?: { set: string };
  labels?: { set?: Label[]; add?: Label[]; remove?: Label[] };
};

export const UpdateAssetsBody = assetModel.updateBody<AssetPatch>(ASSET_LIMITS.items);
export type AssetUpdateItem = Static<typeof UpdateAssetsBody>['items'][number];

export const AssetIdParams = Type.Object({ project: Type.String(), id: InternalId });

export const ListAssetsQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
    partition: Type.Optional(Partition),
    includeMetadata: Type.Optional(Type.Boolean()),
    name: Type.Optional(Name),
    parentIds: Type.Optional(Type.String({ description: 'JSON array of asset ids, e.g. [1,2]' })),
    parentExternalIds: Type.Optional(Type.String({ description: 'JSON array of asset external ids, e.g. ["a","b"]' })),
    rootIds: Type.Optional(Type.String({ description: 'JSON array of root asset ids' })),
    assetSubtreeIds: Type.Optional(Type.String({ description: 'JSON array of asset ids' })),
    assetSubtreeExternalIds: Type.Optional(Type.String({ description: 'JSON array of asset external ids' })),
    source: Type.Optional(Source),
    root: Type.Optional(Type.Boolean()),
    minCreatedTime: Type.Optional(Timestamp),
    maxCreatedTime: Type.Optional(Timestamp),
    minLastUpdatedTime: Type.Optional(Timestamp),
    maxLastUpdatedTime: Type.Optional(Timestamp),
    externalIdPrefix: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);
export type ListAssetsQuery = Static<typeof ListAssetsQuery>;
