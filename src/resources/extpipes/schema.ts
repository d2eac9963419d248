/**
 * Request shapes of extraction pipelines, their configuration revisions and their runs, from their
 * declarations.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, FilterRef, IgnoreUnknownIds, InternalId, ItemRefs, Limit, ListCursor, metadataSchema, orNull, partialObject, Timestamp, TimestampRange } from '../../http/common-schemas.js';
import { FILTER_LIMITS } from '../../query/filter.js';
import { Contact, EXTPIPE_LIMITS, EXTPIPE_METADATA_LIMITS, PipelineExternalId, pipelineModel, RawTable, RunStatus } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Array(item, { minItems: 1, maxItems: EXTPIPE_LIMITS.items });

// What the runs reported keep is the service's to set.
export const PipelineCreate = Type.Omit(pipelineModel.createSchema, ['lastSuccess', 'lastFailure', 'lastSeen', 'lastMessage'], { additionalProperties: false });
export type PipelineCreate = Static<typeof PipelineCreate>;
export const CreatePipelinesBody = Type.Object({ items: items(PipelineCreate) }, { additionalProperties: false });
export const UpdatePipelinesBody = pipelineModel.updateBody<{ dataSetId?: { set: number } }>(EXTPIPE_LIMITS.items);
export const PipelineIdsBody = Type.Object({ items: ItemRefs(EXTPIPE_LIMITS.items), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
export const PipelineIdParams = Type.Object({ project: Type.String(), id: InternalId });

export const PipelineFilter = partialObject({
  externalIdPrefix: Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.externalId }),
  name: Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.name }),
  description: Type.String({ maxLength: EXTPIPE_LIMITS.description }),
  dataSetIds: Type.Array(FilterRef, { minItems: 1, maxItems: EXTPIPE_LIMITS.filterDataSets }),
  // "Null" asks for pipelines without a schedule.
  schedule: Type.String({ minLength: 1, maxLength: 255 }),
  metadata: metadataSchema(EXTPIPE_METADATA_LIMITS),
  source: Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.source }),
  documentation: Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.documentation }),
  createdBy: Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.createdBy }),
  // Pipelines having each contact and raw table given, a contact matching on the fields given.
  contacts: Type.Array(Contact, { maxItems: FILTER_LIMITS.maxValues }),
  rawTables: Type.Array(RawTable, { maxItems: FILTER_LIMITS.maxValues }),
  createdTime: TimestampRange,
  lastUpdatedTime: TimestampRange,
});
export type PipelineFilter = Static<typeof PipelineFilter>;
export const ListPipelinesBody = Type.Object(
  { filter: Type.Optional(PipelineFilter), limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) },
  { additionalProperties: false },
);
export const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });

const Revision = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });
export const CreateConfigBody = Type.Object(
  { externalId: PipelineExternalId, config: Type.Optional(Type.String()), description: Type.Optional(orNull(Type.String({ maxLength: EXTPIPE_LIMITS.description }))) },
  { additionalProperties: false },
);
export type CreateConfigBody = Static<typeof CreateConfigBody>;
export const GetConfigQuery = Type.Object(
  { externalId: PipelineExternalId, revision: Type.Optional(Revision), activeAtTime: Type.Optional(Timestamp) },
  { additionalProperties: false },
);
export const RevisionsQuery = Type.Object({ externalId: PipelineExternalId, limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
export const RevertConfigBody = Type.Object({ externalId: PipelineExternalId, revision: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }, { additionalProperties: false });

export const RunCreate = Type.Object(
  {
    externalId: PipelineExternalId,
    status: RunStatus,
    message: Type.Optional(orNull(Type.String({ maxLength: EXTPIPE_LIMITS.runMessage }))),
    createdTime: Type.Optional(orNull(Timestamp)),
  },
  { additionalProperties: false },
);
export type RunCreate = Static<typeof RunCreate>;
export const CreateRunsBody = Type.Object({ items: items(RunCreate) }, { additionalProperties: false });
export const ListRunsQuery = Type.Object({ externalId: PipelineExternalId, limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
export const RunFilter = Type.Object(
  {
    externalId: PipelineExternalId,
    statuses: Type.Optional(Type.Array(RunStatus, { maxItems: 3 })),
    createdTime: Type.Optional(TimestampRange),
    message: Type.Optional(Type.Object({ substring: Type.Optional(orNull(Type.String({ maxLength: EXTPIPE_LIMITS.runMessage }))) }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type RunFilter = Static<typeof RunFilter>;
export const ListRunsBody = Type.Object({ filter: RunFilter, limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) }, { additionalProperties: false });
