/**
 * Request shapes of the data sets resource.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  ListCursor,
  ExternalId,
  IgnoreUnknownIds,
  ItemRefs,
  Limit,
  metadataPatchSchema,
  metadataSchema,
  nullablePatch,
  partialObject,
  requiredPatch,
  TimestampRange,
  type MetadataLimits,
} from '../../http/common-schemas.js';

export const DATA_SET_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_240, keys: 256, totalBytes: 10_240 };
export const DATA_SET_LIMITS = { createItems: 10, name: 50, description: 500 } as const;

const Name = Type.String({ minLength: 1, maxLength: DATA_SET_LIMITS.name });
const Description = Type.String({ minLength: 1, maxLength: DATA_SET_LIMITS.description });
const DataSetMetadata = metadataSchema(DATA_SET_METADATA_LIMITS);

export const DataSetCreate = partialObject({
  externalId: ExternalId,
  name: Name,
  description: Description,
  metadata: DataSetMetadata,
  writeProtected: Type.Boolean(),
});
export type DataSetCreate = Static<typeof DataSetCreate>;

export const CreateDataSetsBody = Type.Object(
  { items: Type.Array(DataSetCreate, { minItems: 1, maxItems: DATA_SET_LIMITS.createItems }) },
  { additionalProperties: false },
);

export const DataSetFilter = partialObject({
  metadata: DataSetMetadata,
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
  externalIdPrefix: Type.String({ maxLength: 255 }),
  writeProtected: Type.Boolean(),
});
export type DataSetFilter = Static<typeof DataSetFilter>;

export const ListDataSetsBody = Type.Object(
  { filter: Type.Optional(DataSetFilter), limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) },
  { additionalProperties: false },
);

export const AggregateDataSetsBody = Type.Object({ filter: Type.Optional(DataSetFilter) }, { additionalProperties: false });

export const DataSetIdsBody = Type.Object({ items: ItemRefs(1000), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

export const UpdateDataSetsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
          externalId: Type.Optional(ExternalId),
          update: partialObject({
            externalId: nullablePatch(ExternalId),
            name: nullablePatch(Name),
            description: nullablePatch(Description),
            metadata: metadataPatchSchema(DATA_SET_METADATA_LIMITS),
            writeProtected: requiredPatch(Type.Boolean()),
          }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);
