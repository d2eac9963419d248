/**
 * Request shapes of the data sets resource.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  ListCursor,
  IgnoreUnknownIds,
  ItemRefs,
  Limit,
  partialObject,
  TimestampRange,
} from '../../http/common-schemas.js';
import { DATA_SET_LIMITS, DATA_SET_METADATA_LIMITS, dataSetModel } from './model.js';

export { DATA_SET_LIMITS, DATA_SET_METADATA_LIMITS };

const fields = dataSetModel.schemas;
const { metadata: DataSetMetadata } = fields;

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

export const UpdateDataSetsBody = dataSetModel.updateBody(1000);
