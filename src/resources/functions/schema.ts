/** Request shapes of functions, their calls and their schedules, from their declarations. */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, ExternalId, IgnoreUnknownIds, InternalId, ItemRefs, Limit, ListCursor, metadataSchema, partialObject, TimestampRange } from '../../http/common-schemas.js';
import { CallStatus, FUNCTION_LIMITS, FUNCTION_METADATA_LIMITS, functionModel, FunctionStatus, scheduleModel } from './model.js';

// Status, error, last call time, runtime version and type are the service's to set.
export const FunctionCreate = Type.Omit(functionModel.createSchema, ['status', 'error', 'lastCalled', 'runtimeVersion', 'functionType'], { additionalProperties: false });
export type FunctionCreate = Static<typeof FunctionCreate>;
export const CreateFunctionsBody = Type.Object({ items: Type.Array(FunctionCreate, { minItems: 1, maxItems: FUNCTION_LIMITS.createItems }) }, { additionalProperties: false });
export const FunctionIdsBody = Type.Object({ items: ItemRefs(FUNCTION_LIMITS.refItems), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
export const FunctionParams = Type.Object({ project: Type.String(), functionId: InternalId });
export const CallParams = Type.Object({ project: Type.String(), functionId: InternalId, callId: InternalId });
export const ScheduleParams = Type.Object({ project: Type.String(), scheduleId: InternalId });
export const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });

export const FunctionFilter = partialObject({
  name: Type.String({ maxLength: FUNCTION_LIMITS.name }),
  owner: Type.String({ maxLength: FUNCTION_LIMITS.owner }),
  fileId: InternalId,
  status: FunctionStatus,
  externalIdPrefix: Type.String({ maxLength: 255 }),
  createdTime: TimestampRange,
  metadata: metadataSchema(FUNCTION_METADATA_LIMITS),
});
export type FunctionFilter = Static<typeof FunctionFilter>;
export const ListFunctionsBody = Type.Object(
  { filter: Type.Optional(FunctionFilter), limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) },
  { additionalProperties: false },
);

/** The input of a call: `data` is handed to the handler. */
const CallData = Type.Record(Type.String(), Type.Unknown());
export const CallBody = Type.Object({ data: Type.Optional(CallData), nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })) }, { additionalProperties: false });
export type CallBody = Static<typeof CallBody>;
export const CallFilter = partialObject({
  scheduleId: InternalId,
  status: CallStatus,
  startTime: TimestampRange,
  endTime: TimestampRange,
});
export type CallFilter = Static<typeof CallFilter>;
export const ListCallsBody = Type.Object({ filter: Type.Optional(CallFilter), limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) }, { additionalProperties: false });
export const CallIdsBody = Type.Object({ items: Type.Array(Type.Object({ id: InternalId }, { additionalProperties: false }), { minItems: 1, maxItems: 10_000 }), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

export const ScheduleCreate = Type.Object(
  {
    ...Type.Pick(scheduleModel.createSchema, ['name', 'description', 'cronExpression', 'functionId', 'functionExternalId']).properties,
    data: Type.Optional(CallData),
    nonce: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })),
  },
  { additionalProperties: false },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;
export const CreateSchedulesBody = Type.Object({ items: Type.Array(ScheduleCreate, { minItems: 1, maxItems: FUNCTION_LIMITS.createItems }) }, { additionalProperties: false });
export const ScheduleFilter = partialObject({
  name: Type.String({ maxLength: FUNCTION_LIMITS.scheduleName }),
  functionId: InternalId,
  functionExternalId: ExternalId,
  // As the reference's document spells them.
  FunctionId: InternalId,
  FunctionExternalId: ExternalId,
  createdTime: TimestampRange,
  cronExpression: Type.String({ maxLength: FUNCTION_LIMITS.cronExpression }),
});
export type ScheduleFilter = Static<typeof ScheduleFilter>;
export const ListSchedulesBody = Type.Object({ filter: Type.Optional(ScheduleFilter), limit: Type.Optional(Limit), cursor: Type.Optional(ListCursor) }, { additionalProperties: false });
export const ScheduleIdsBody = Type.Object(
  { items: Type.Array(Type.Object({ id: InternalId }, { additionalProperties: false }), { minItems: 1, maxItems: FUNCTION_LIMITS.scheduleDeleteItems }), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);
