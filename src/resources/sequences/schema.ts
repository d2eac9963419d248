/**
 * Request shapes of sequences and of their rows.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  AggregateRequestFields,
  Cursor,
  ExternalId,
  FilterId,
  FilterRef,
  IgnoreUnknownIds,
  InternalId,
  ItemRefs,
  Limit,
  listBodySchema,
  MAX_SAFE_ID,
  orNull,
  partialObject,
  Partition,
  searchBodySchema,
  TimestampRange,
} from '../../http/common-schemas.js';
import { SEQUENCE_LIMITS, sequenceModel } from './model.js';

const L = SEQUENCE_LIMITS;

export const SequenceCreate = sequenceModel.createSchema;
export type SequenceCreate = Static<typeof SequenceCreate>;

export const CreateSequencesBody = Type.Object({ items: Type.Array(SequenceCreate, { minItems: 1, maxItems: L.items }) }, { additionalProperties: false });

const IdList = Type.Array(FilterId, { minItems: 1, maxItems: L.filterIds, uniqueItems: true });

export const SequenceFilter = partialObject({
  name: Type.String({ maxLength: L.name }),
  externalIdPrefix: Type.String({ maxLength: 255 }),
  metadata: sequenceModel.schemas.metadata,
  assetIds: IdList,
  rootAssetIds: IdList,
  assetSubtreeIds: Type.Array(FilterRef, { minItems: 1, maxItems: L.filterIds }),
  dataSetIds: Type.Array(FilterRef, { maxItems: L.filterIds }),
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
});
export type SequenceFilter = Static<typeof SequenceFilter>;

export const ListSequencesBody = listBodySchema(SequenceFilter);

export const ListSequencesQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor), partition: Type.Optional(Partition) },
  { additionalProperties: false },
);

export const SearchSequencesBody = searchBodySchema(SequenceFilter, {
  name: Type.String({ maxLength: L.name }),
  description: Type.String({ maxLength: L.description }),
  query: Type.String({ maxLength: L.description }),
});

export const AggregateSequencesBody = Type.Object({ ...AggregateRequestFields, filter: Type.Optional(SequenceFilter) }, { additionalProperties: false });

export const SequenceIdsBody = Type.Object({ items: ItemRefs(L.items), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

export const UpdateSequencesBody = sequenceModel.updateBody(L.items);

/**
 * A row number: the reference's are 64-bit, Strata's stop at 2^53 − 1, the largest integer every client
 * reads exactly from JSON.
 */
const RowNumber = Type.Integer({ minimum: 0, maximum: MAX_SAFE_ID });
/** A row position in a range: any integer, those below 0 before every row. */
const RowPosition = Type.Integer({ minimum: -MAX_SAFE_ID, maximum: MAX_SAFE_ID });
const ColumnNames = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: L.columns });
const SequenceRef = { id: Type.Optional(InternalId), externalId: Type.Optional(ExternalId) };

export const InsertRowsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          ...SequenceRef,
          columns: ColumnNames,
          rows: Type.Array(
            Type.Object(
              // Values are checked against their columns' types (rows.ts); 64-bit integers arrive exactly (`exactIntegers`).
              { rowNumber: RowNumber, values: Type.Array(Type.Unknown(), { minItems: 1, maxItems: L.columns }) },
              { additionalProperties: false },
            ),
            { minItems: 1, maxItems: L.insertRows },
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: L.items },
    ),
  },
  { additionalProperties: false },
);
export type InsertRowsBody = Static<typeof InsertRowsBody>;

/** The official Python SDK sends `end`, `cursor` and (for the latest row) `before` and `columns` as null when not given. */
export const ListRowsBody = Type.Object(
  {
    ...SequenceRef,
    start: Type.Optional(orNull(RowPosition)),
    end: Type.Optional(orNull(RowPosition)),
    limit: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: L.pageRows }))),
    cursor: Type.Optional(orNull(Cursor)),
    columns: Type.Optional(orNull(ColumnNames)),
  },
  { additionalProperties: false },
);
export type ListRowsBody = Static<typeof ListRowsBody>;

export const LatestRowBody = Type.Object(
  { ...SequenceRef, columns: Type.Optional(orNull(ColumnNames)), before: Type.Optional(orNull(Type.Integer({ minimum: 1, maximum: MAX_SAFE_ID }))) },
  { additionalProperties: false },
);
export type LatestRowBody = Static<typeof LatestRowBody>;

export const DeleteRowsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object({ ...SequenceRef, rows: Type.Array(RowNumber, { minItems: 1, maxItems: L.deleteRows }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: L.items },
    ),
  },
  { additionalProperties: false },
);
export type DeleteRowsBody = Static<typeof DeleteRowsBody>;
