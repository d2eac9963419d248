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
  nullablePatch,
  partialObject,
  requiredPatch,
  TimestampRange,
} from '../../http/common-schemas.js';
import { DATA_SET_LIMITS, DATA_SET_METADATA_LIMITS, dataSetModel } from './model.js';

export { DATA_SET_LIMITS, DATA_SET_METADATA_LIMITS };

const fields = dataSetModel.schemas;
const { name: Name, description: Description, metadata: DataSetMetadata } = fields;

export const DataSetCreate = partialObject(fields);
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
