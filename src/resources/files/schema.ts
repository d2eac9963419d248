/**
 * Request shapes of the files resource.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  Cursor,
  ExternalId,
  FilterId,
  FilterRef,
  IgnoreUnknownIds,
  InternalId,
  Limit,
  listBodySchema,
  labelFilterSchema,
  orNull,
  Partition,
  partialObject,
  Timestamp,
  TimestampRange,
} from '../../http/common-schemas.js';
import { GeoFilter } from '../../query/geo.js';
import { InstanceId } from '../timeseries/model.js';
import { FILE_LIMITS, fileModel } from './model.js';

export { FILE_LIMITS };

const fields = fileModel.schemas;

/** What a create (and an overwrite) may give: the metadata, not what the service keeps (instanceId, uploaded). */
export const FileCreate = Type.Object(
  {
    externalId: Type.Optional(fields.externalId),
    name: fields.name,
    directory: Type.Optional(fields.directory),
    source: Type.Optional(fields.source),
    mimeType: Type.Optional(fields.mimeType),
    metadata: Type.Optional(fields.metadata),
    assetIds: Type.Optional(fields.assetIds),
    dataSetId: Type.Optional(fields.dataSetId),
    sourceCreatedTime: Type.Optional(fields.sourceCreatedTime),
    sourceModifiedTime: Type.Optional(fields.sourceModifiedTime),
    securityCategories: Type.Optional(fields.securityCategories),
    labels: Type.Optional(fields.labels),
    geoLocation: Type.Optional(fields.geoLocation),
  },
  { additionalProperties: false },
);
export type FileCreate = Static<typeof FileCreate>;

export const CreateFileQuery = Type.Object({ overwrite: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const InitMultipartQuery = Type.Object(
  { overwrite: Type.Optional(Type.Boolean()), parts: Type.Integer({ minimum: 1, maximum: FILE_LIMITS.maxParts }) },
  { additionalProperties: false },
);

export const PartsQuery = Type.Object({ parts: Type.Integer({ minimum: 1, maximum: FILE_LIMITS.maxParts }) }, { additionalProperties: false });

/** `{id}`, `{externalId}` or `{instanceId}`; exactly one is checked when the reference is resolved. */
export const FileRef = fileModel.refSchema;

/** The one file an upload link is asked for. */
export const UploadLinkBody = Type.Object({ items: Type.Array(FileRef, { minItems: 1, maxItems: 1 }) }, { additionalProperties: false });

export const CompleteMultipartBody = Type.Object(
  {
    id: Type.Optional(InternalId),
    externalId: Type.Optional(ExternalId),
    instanceId: Type.Optional(InstanceId),
    uploadId: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);

export const DownloadLinkBody = Type.Object({ items: Type.Array(FileRef, { minItems: 1, maxItems: FILE_LIMITS.downloadItems }) }, { additionalProperties: false });
export const DownloadLinkQuery = Type.Object({ extendedExpiration: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

const AssetIdList = Type.Array(FilterId, { minItems: 1, maxItems: FILE_LIMITS.filterIds, uniqueItems: true });
const RefList = Type.Array(FilterRef, { minItems: 1, maxItems: FILE_LIMITS.filterIds });

export const FileFilter = partialObject({
  name: fields.name,
  directoryPrefix: Type.String({ maxLength: FILE_LIMITS.directory }),
  mimeType: fields.mimeType,
  metadata: fields.metadata,
  assetIds: AssetIdList,
  assetExternalIds: Type.Array(ExternalId, { minItems: 1, maxItems: FILE_LIMITS.filterIds, uniqueItems: true }),
  rootAssetIds: RefList,
  assetSubtreeIds: RefList,
  dataSetIds: Type.Array(FilterRef, { maxItems: FILE_LIMITS.filterIds }),
  source: fields.source,
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
  uploadedTime: TimestampRange,
  sourceCreatedTime: TimestampRange,
  sourceModifiedTime: TimestampRange,
  externalIdPrefix: Type.String({ maxLength: 255 }),
  uploaded: Type.Boolean(),
  labels: labelFilterSchema(FILE_LIMITS.labels),
  geoLocation: GeoFilter,
});
export type FileFilter = Static<typeof FileFilter>;

export const ListFilesBody = listBodySchema(FileFilter);
export type ListFilesBody = Static<typeof ListFilesBody>;

export const SearchFilesBody = Type.Object(
  {
    filter: Type.Optional(FileFilter),
    // The official Python SDK sends `"name": null` when searching by the filter alone.
    search: Type.Optional(partialObject({ name: orNull(fields.name) })),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
export type SearchFilesBody = Static<typeof SearchFilesBody>;

/** Files are counted only (the reference's only aggregate of files). */
export const AggregateFilesBody = Type.Object({ filter: Type.Optional(FileFilter) }, { additionalProperties: false });

export const FileIdsBody = Type.Object(
  { items: Type.Array(FileRef, { minItems: 1, maxItems: FILE_LIMITS.items }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

export const DeleteFilesBody = Type.Object(
  { items: Type.Array(Type.Object({ id: Type.Optional(InternalId), externalId: Type.Optional(ExternalId) }, { additionalProperties: false }), { minItems: 1, maxItems: FILE_LIMITS.items }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

export const UpdateFilesBody = fileModel.updateBody(FILE_LIMITS.items);

export const FileIdParams = Type.Object({ project: Type.String(), id: InternalId });

export const IconQuery = Type.Object(
  {
    id: Type.Optional(InternalId),
    externalId: Type.Optional(ExternalId),
    space: Type.Optional(InstanceId.properties.space),
    instanceExternalId: Type.Optional(InstanceId.properties.externalId),
  },
  { additionalProperties: false },
);
export type IconQuery = Static<typeof IconQuery>;

export const ListFilesQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
    partition: Type.Optional(Partition),
    name: Type.Optional(fields.name),
    mimeType: Type.Optional(fields.mimeType),
    source: Type.Optional(fields.source),
    assetIds: Type.Optional(Type.String({ description: 'JSON array of asset ids, e.g. [1,2]' })),
    assetExternalIds: Type.Optional(Type.String({ description: 'JSON array of asset external ids, e.g. ["a","b"]' })),
    rootAssetIds: Type.Optional(Type.String({ description: 'JSON array of root asset ids' })),
    assetSubtreeIds: Type.Optional(Type.String({ description: 'JSON array of asset ids whose subtrees to include' })),
    assetSubtreeExternalIds: Type.Optional(Type.String({ description: 'JSON array of asset external ids whose subtrees to include' })),
    dataSetIds: Type.Optional(Type.String({ description: 'JSON array of data set ids, e.g. [1,2]' })),
    minCreatedTime: Type.Optional(Timestamp),
    maxCreatedTime: Type.Optional(Timestamp),
    minLastUpdatedTime: Type.Optional(Timestamp),
    maxLastUpdatedTime: Type.Optional(Timestamp),
    minUploadedTime: Type.Optional(Timestamp),
    maxUploadedTime: Type.Optional(Timestamp),
    minSourceCreatedTime: Type.Optional(Timestamp),
    maxSourceCreatedTime: Type.Optional(Timestamp),
    minSourceModifiedTime: Type.Optional(Timestamp),
    maxSourceModifiedTime: Type.Optional(Timestamp),
    externalIdPrefix: Type.Optional(Type.String({ maxLength: 255 })),
    uploaded: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ListFilesQuery = Static<typeof ListFilesQuery>;
