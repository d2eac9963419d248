/**
 * Request shapes of workflows, their versions, executions and triggers, as the reference has them. A task's
 * `parameters` are checked by its type (definitions.ts), so that a refusal names the task and the field.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, InternalId, Limit } from '../../http/common-schemas.js';

/** No leading or trailing whitespace, no null characters. */
const Identifier = Type.String({ minLength: 1, maxLength: 255, pattern: '^(?!\\s)[^\\u0000]*(?<!\\s)$' });
const items = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) => Type.Array(item, { minItems: 1, maxItems });

export const ExecutionMetadata = Type.Record(Type.String({ maxLength: 32 }), Type.String({ maxLength: 255 }), { maxProperties: 10 });
const Input = Type.Record(Type.String(), Type.Unknown());
const Nonce = Type.Object({ nonce: Type.String({ minLength: 1 }) }, { additionalProperties: false });

export const TASK_TYPES = ['function', 'transformation', 'cdf', 'dynamic', 'subworkflow', 'simulation'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TaskDefinition = Type.Object(
  {
    externalId: Identifier,
    type: Type.Union(TASK_TYPES.map((t) => Type.Literal(t))),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    parameters: Type.Record(Type.String(), Type.Unknown()),
    retries: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 10 }), Type.Null()])),
    timeout: Type.Optional(Type.Union([Type.Integer({ minimum: 100, maximum: 43200 }), Type.Null()])),
    onFailure: Type.Optional(Type.Union([Type.Literal('abortWorkflow'), Type.Literal('skipTask')])),
    dependsOn: Type.Optional(Type.Array(Type.Object({ externalId: Identifier }, { additionalProperties: false }), { maxItems: 100 })),
  },
  { additionalProperties: false },
);
export type TaskDefinition = Static<typeof TaskDefinition>;

export const WorkflowUpsert = Type.Object(
  {
    externalId: Identifier,
    description: Type.Optional(Type.String({ maxLength: 500 })),
    dataSetId: Type.Optional(Type.Union([InternalId, Type.Null()])),
    maxConcurrentExecutions: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10000 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type WorkflowUpsert = Static<typeof WorkflowUpsert>;
export const UpsertWorkflowsBody = Type.Object({ items: items(WorkflowUpsert, 1) }, { additionalProperties: false });
export const DeleteWorkflowsBody = Type.Object({ items: items(Type.Object({ externalId: Identifier }, { additionalProperties: false }), 100) }, { additionalProperties: false });
export const IgnoreUnknownQuery = Type.Object({ ignoreUnknownIds: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
export const WorkflowParams = Type.Object({ project: Type.String(), workflowExternalId: Identifier });
export const VersionParams = Type.Object({ project: Type.String(), workflowExternalId: Identifier, version: Identifier });

export const WorkflowDefinition = Type.Object(
  { description: Type.Optional(Type.String({ maxLength: 500 })), tasks: Type.Array(TaskDefinition, { maxItems: 100 }) },
  { additionalProperties: false },
);
export const VersionUpsert = Type.Object({ workflowExternalId: Identifier, version: Identifier, workflowDefinition: WorkflowDefinition }, { additionalProperties: false });
export type VersionUpsert = Static<typeof VersionUpsert>;
export const UpsertVersionsBody = Type.Object({ items: items(VersionUpsert, 1) }, { additionalProperties: false });
const VersionRef = Type.Object({ workflowExternalId: Identifier, version: Identifier }, { additionalProperties: false });
export const DeleteVersionsBody = Type.Object({ items: items(VersionRef, 100) }, { additionalProperties: false });
const WorkflowFilter = Type.Object({ externalId: Identifier, version: Type.Optional(Identifier) }, { additionalProperties: false });
export type WorkflowFilter = Static<typeof WorkflowFilter>;
export const ListVersionsBody = Type.Object(
  {
    filter: Type.Optional(Type.Object({ workflowFilters: Type.Optional(Type.Array(WorkflowFilter, { maxItems: 100 })) }, { additionalProperties: false })),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

export const RunBody = Type.Object(
  { authentication: Nonce, input: Type.Optional(Input), metadata: Type.Optional(ExecutionMetadata) },
  { additionalProperties: false },
);
export const EXECUTION_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED', 'TIMED_OUT', 'TERMINATED'] as const;
export const ListExecutionsBody = Type.Object(
  {
    filter: Type.Optional(
      Type.Object(
        {
          workflowFilters: Type.Optional(Type.Array(WorkflowFilter, { minItems: 1, maxItems: 100 })),
          createdTimeStart: Type.Optional(Type.Integer({ minimum: 0 })),
          createdTimeEnd: Type.Optional(Type.Integer({ minimum: 0 })),
          status: Type.Optional(Type.Array(Type.Union(EXECUTION_STATUSES.map((s) => Type.Literal(s))), { maxItems: 5 })),
        },
        { additionalProperties: false },
      ),
    ),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ListExecutionsBody = Static<typeof ListExecutionsBody>;
const Uuid = Type.String({ minLength: 36, maxLength: 36, pattern: '^[0-9a-fA-F-]{36}$' });
export const ExecutionParams = Type.Object({ project: Type.String(), executionId: Uuid });
export const CancelBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false });
export const RetryBody = Type.Object({ authentication: Nonce }, { additionalProperties: false });
export const TaskParams = Type.Object({ project: Type.String(), taskId: Uuid });
export const TaskUpdateBody = Type.Object(
  {
    status: Type.Union([Type.Literal('COMPLETED'), Type.Literal('FAILED'), Type.Literal('FAILED_WITH_TERMINAL_ERROR')]),
    output: Type.Optional(Input),
  },
  { additionalProperties: false },
);

const ScheduleRule = Type.Object(
  { triggerType: Type.Literal('schedule'), cronExpression: Type.String({ minLength: 1, maxLength: 1024 }), timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
);
const DataModelingRule = Type.Object(
  {
    triggerType: Type.Literal('dataModeling'),
    dataModelingQuery: Type.Object({ with: Type.Record(Type.String(), Type.Unknown()), select: Type.Record(Type.String(), Type.Unknown()) }),
    batchSize: Type.Integer({ minimum: 1, maximum: 1000 }),
    batchTimeout: Type.Integer({ minimum: 10, maximum: 86400 }),
  },
  { additionalProperties: false },
);
export const TriggerRule = Type.Union([ScheduleRule, DataModelingRule]);
export type TriggerRule = Static<typeof TriggerRule>;
export const TriggerUpsert = Type.Object(
  {
    externalId: Identifier,
    triggerRule: TriggerRule,
    workflowExternalId: Identifier,
    workflowVersion: Identifier,
    input: Type.Optional(Input),
    metadata: Type.Optional(ExecutionMetadata),
    authentication: Nonce,
  },
  { additionalProperties: false },
);
export type TriggerUpsert = Static<typeof TriggerUpsert>;
export const UpsertTriggersBody = Type.Object({ items: items(TriggerUpsert, 1) }, { additionalProperties: false });
export const DeleteTriggersBody = Type.Object({ items: items(Type.Object({ externalId: Identifier }, { additionalProperties: false }), 1) }, { additionalProperties: false });
export const TriggerParams = Type.Object({ project: Type.String(), triggerExternalId: Identifier });
