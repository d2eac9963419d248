/**
 * Request shapes of the simulators operations: those of the reference, and those of the connectors'
 * own operations (simulators, integrations, run reports, log entries), as the official clients send them.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Cursor, InternalId, Timestamp } from '../../http/common-schemas.js';
import {
  ConnectorStatus,
  ExternalId,
  integrationModel,
  LicenseStatus,
  logModel,
  modelModel,
  modelRevisionDataModel,
  modelRevisionModel,
  RunStatus,
  RunType,
  Severity,
  SIMULATOR_LIMITS,
  SimulatorExternalId,
  simulatorModel,
  Value,
  ValueType,
} from './model.js';

const obj = <P extends Record<string, TSchema>>(properties: P) => Type.Object(properties, { additionalProperties: false });
const items = <T extends TSchema>(item: T, maxItems = 1000) => obj({ items: Type.Array(item, { minItems: 1, maxItems }) });
const idList = <T extends TSchema>(item: T) => Type.Optional(Type.Array(item, { minItems: 1, maxItems: SIMULATOR_LIMITS.filterIds }));
const ids = (item?: typeof SimulatorExternalId) => idList(item ?? ExternalId);
const Limit = (max = 1000) => Type.Optional(Type.Integer({ minimum: 1, maximum: max }));
const Range = Type.Optional(obj({ min: Type.Optional(Timestamp), max: Type.Optional(Timestamp) }));
const Sort = (...properties: string[]) =>
  Type.Optional(
    Type.Array(obj({ property: Type.Union(properties.map((p) => Type.Literal(p))), order: Type.Union([Type.Literal('asc'), Type.Literal('desc')]) }), { maxItems: 1 }),
  );
const Ref = Type.Union([obj({ id: InternalId }), obj({ externalId: ExternalId })]);

export const RefsBody = items(Ref);
export const ByIdsBody = (max: number) => items(Ref, max);
export const IdsBody = (max: number) => items(obj({ id: InternalId }), max);

// Simulators.
export const SimulatorCreate = simulatorModel.createSchema;
export const CreateSimulatorsBody = items(SimulatorCreate);
export const UpdateSimulatorsBody = simulatorModel.updateBody(1000);
export const ListSimulatorsBody = obj({ filter: Type.Optional(obj({})), limit: Limit() });

// Integrations.
export const IntegrationCreate = obj({
  externalId: ExternalId,
  simulatorExternalId: SimulatorExternalId,
  heartbeat: Timestamp,
  dataSetId: InternalId,
  connectorVersion: Type.String({ minLength: 1, maxLength: 50 }),
  simulatorVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  licenseStatus: Type.Optional(LicenseStatus),
  licenseLastCheckedTime: Type.Optional(Timestamp),
  connectorStatus: Type.Optional(ConnectorStatus),
  connectorStatusUpdatedTime: Type.Optional(Timestamp),
});
export type IntegrationCreate = Static<typeof IntegrationCreate>;
export const CreateIntegrationsBody = items(IntegrationCreate);
export const UpdateIntegrationsBody = integrationModel.updateBody(1000);
export const ListIntegrationsBody = obj({ filter: Type.Optional(obj({ simulatorExternalIds: ids(SimulatorExternalId), active: Type.Optional(Type.Boolean()) })), limit: Limit() });
export type IntegrationFilter = NonNullable<Static<typeof ListIntegrationsBody>['filter']>;

// Models.
export const ModelCreate = modelModel.createSchema;
export type ModelCreate = Static<typeof ModelCreate>;
export const CreateModelsBody = items(ModelCreate);
export const UpdateModelsBody = modelModel.updateBody(1000);
const ModelFilter = obj({ simulatorExternalIds: ids(SimulatorExternalId), externalIdPrefix: Type.Optional(ExternalId), dataSetIds: idList(InternalId) });
export type ModelFilter = Static<typeof ModelFilter>;
export const ListModelsBody = obj({ filter: Type.Optional(ModelFilter), limit: Limit(), cursor: Type.Optional(Cursor), sort: Sort('createdTime') });
export const AggregateModelsBody = obj({ filter: Type.Optional(ModelFilter), aggregate: Type.Literal('count') });

// Model revisions.
export const ModelRevisionCreate = obj({
  externalId: ExternalId,
  modelExternalId: ExternalId,
  description: Type.Optional(modelRevisionModel.schemas.description),
  fileId: InternalId,
  externalDependencies: Type.Optional(modelRevisionModel.schemas.externalDependencies),
});
export type ModelRevisionCreate = Static<typeof ModelRevisionCreate>;
export const CreateModelRevisionsBody = obj({
  items: Type.Array(ModelRevisionCreate, { minItems: 1, maxItems: 1000 }),
  // The official Python SDK sends it with every create, false unless asked.
  deleteOldest: Type.Optional(Type.Boolean()),
});
export const UpdateModelRevisionsBody = modelRevisionModel.updateBody(1000);
const ModelRevisionFilter = obj({
  modelExternalIds: ids(),
  simulatorExternalIds: ids(SimulatorExternalId),
  allVersions: Type.Optional(Type.Boolean()),
  createdTime: Range,
  lastUpdatedTime: Range,
});
export type ModelRevisionFilter = Static<typeof ModelRevisionFilter>;
export const ListModelRevisionsBody = obj({ filter: Type.Optional(ModelRevisionFilter), limit: Limit(), cursor: Type.Optional(Cursor), sort: Sort('createdTime') });
export const ListModelRevisionDataBody = items(obj({ modelRevisionExternalId: ExternalId }), SIMULATOR_LIMITS.byIds);
export const UpdateModelRevisionDataBody = modelRevisionDataModel.updateBody(SIMULATOR_LIMITS.byIds);

// Routines.
export const RoutineCreate = obj({
  externalId: ExternalId,
  modelExternalId: ExternalId,
  simulatorIntegrationExternalId: Type.Optional(ExternalId),
  name: Type.String({ minLength: 1, maxLength: SIMULATOR_LIMITS.name }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
});
export type RoutineCreate = Static<typeof RoutineCreate>;
export const CreateRoutinesBody = items(RoutineCreate);
const RoutineFilter = obj({ modelExternalIds: ids(), simulatorIntegrationExternalIds: ids(), simulatorExternalIds: ids(SimulatorExternalId) });
export type RoutineFilter = Static<typeof RoutineFilter>;
export const ListRoutinesBody = obj({ filter: Type.Optional(RoutineFilter), limit: Limit(), cursor: Type.Optional(Cursor), sort: Sort('createdTime') });
export const AggregateRoutinesBody = obj({ filter: Type.Optional(RoutineFilter), aggregate: Type.Literal('count') });

// Routine revisions.
const Ref50 = Type.String({ minLength: 1, maxLength: 50 });
const Aggregate = Type.Union(['average', 'interpolation', 'stepInterpolation'].map((s) => Type.Literal(s)));
const UnitWithQuantity = obj({ name: Ref50, quantity: Ref50 });
// `@yearly` and the like, `@every 15m`, or 5 to 7 fields of numbers, lists, ranges, steps and `*`.
const CRON = '^(@(annually|yearly|monthly|weekly|daily|hourly|reboot)|@every (\\d+(ns|us|µs|ms|s|m|h))+|(((\\d+,)+\\d+|\\d+[/-]\\d+|\\d+|\\*(/\\d+)?) ?){5,7})$';
// An enabled schedule needs its cron expression, and enabled sampling its windows (service.ts).
export const RoutineConfiguration = obj({
  schedule: obj({ enabled: Type.Boolean(), cronExpression: Type.Optional(Type.String({ pattern: CRON })) }),
  dataSampling: obj({
    enabled: Type.Boolean(),
    validationWindow: Type.Optional(Type.Integer({ minimum: 0 })),
    samplingWindow: Type.Optional(Type.Integer({ minimum: 0 })),
    granularity: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  logicalCheck: Type.Array(
    obj({ enabled: Type.Literal(true), timeseriesExternalId: ExternalId, aggregate: Aggregate, operator: Type.Union(['eq', 'ne', 'gt', 'ge', 'lt', 'le'].map((s) => Type.Literal(s))), value: Type.Number() }),
    { maxItems: 1 },
  ),
  steadyStateDetection: Type.Array(
    obj({
      enabled: Type.Literal(true),
      timeseriesExternalId: Type.Optional(ExternalId),
      aggregate: Aggregate,
      minSectionSize: Type.Integer(),
      varThreshold: Type.Number(),
      slopeThreshold: Type.Number(),
    }),
    { maxItems: 1 },
  ),
  inputs: Type.Optional(
    Type.Array(
      Type.Union([
        obj({ name: Ref50, referenceId: Ref50, value: Value, valueType: Type.Optional(ValueType), unit: Type.Optional(UnitWithQuantity), saveTimeseriesExternalId: Type.Optional(ExternalId) }),
        obj({ name: Ref50, referenceId: Ref50, sourceExternalId: ExternalId, aggregate: Type.Optional(Aggregate), saveTimeseriesExternalId: Type.Optional(ExternalId), unit: Type.Optional(UnitWithQuantity) }),
      ]),
      { maxItems: 10_000 },
    ),
  ),
  outputs: Type.Optional(
    Type.Array(obj({ name: Ref50, referenceId: Ref50, unit: Type.Optional(UnitWithQuantity), valueType: Type.Optional(ValueType), saveTimeseriesExternalId: Type.Optional(ExternalId) }), {
      maxItems: 10_000,
    }),
  ),
});
export type RoutineConfiguration = Static<typeof RoutineConfiguration>;
const Order = (max: number) => Type.Integer({ minimum: 1, maximum: max });
const StepDescription = Type.Optional(Type.String({ minLength: 1, maxLength: 255 }));
const Step = Type.Union([
  obj({ order: Order(10_000), description: StepDescription, stepType: Type.Literal('Get'), arguments: Type.Object({ referenceId: Ref50 }) }),
  obj({ order: Order(10_000), description: StepDescription, stepType: Type.Literal('Set'), arguments: Type.Object({ referenceId: Ref50 }) }),
  obj({ order: Order(10_000), description: StepDescription, stepType: Type.Literal('Command'), arguments: Type.Object({}) }),
]);
export const RoutineRevisionCreate = obj({
  externalId: ExternalId,
  routineExternalId: ExternalId,
  configuration: RoutineConfiguration,
  script: Type.Array(obj({ order: Order(10), description: StepDescription, steps: Type.Array(Step, { maxItems: 10_000 }) }), { maxItems: 10 }),
});
export type RoutineRevisionCreate = Static<typeof RoutineRevisionCreate>;
export const CreateRoutineRevisionsBody = items(RoutineRevisionCreate);
const RoutineRevisionFilter = obj({
  routineExternalIds: ids(),
  allVersions: Type.Optional(Type.Boolean()),
  modelExternalIds: ids(),
  simulatorIntegrationExternalIds: ids(),
  simulatorExternalIds: ids(SimulatorExternalId),
  createdTime: Range,
});
export type RoutineRevisionFilter = Static<typeof RoutineRevisionFilter>;
export const ListRoutineRevisionsBody = obj({
  filter: Type.Optional(RoutineRevisionFilter),
  limit: Limit(20),
  cursor: Type.Optional(Cursor),
  sort: Sort('createdTime'),
  includeAllFields: Type.Optional(Type.Boolean()),
});

// Runs.
const InputOverride = obj({ referenceId: Ref50, value: Value, unit: Type.Optional(obj({ name: Ref50 })) });
const RunCommon = {
  runTime: Type.Optional(Timestamp),
  queue: Type.Optional(Type.Boolean()),
  logSeverity: Type.Optional(Severity),
  inputs: Type.Optional(Type.Array(InputOverride, { minItems: 1, maxItems: 10_000 })),
  // Not in the reference's shape; the official clients send it.
  runType: Type.Optional(RunType),
};
export const RunCreate = Type.Union([
  obj({ ...RunCommon, routineExternalId: ExternalId }),
  obj({ ...RunCommon, routineRevisionExternalId: ExternalId, modelRevisionExternalId: ExternalId }),
]);
export type RunCreate = Static<typeof RunCreate>;
export const RunBody = items(RunCreate, 1);
export const ListRunsBody = obj({
  filter: Type.Optional(
    obj({
      status: Type.Optional(RunStatus),
      runType: Type.Optional(RunType),
      simulatorIntegrationExternalIds: ids(),
      simulatorExternalIds: ids(SimulatorExternalId),
      modelExternalIds: ids(),
      routineExternalIds: ids(),
      routineRevisionExternalIds: ids(),
      modelRevisionExternalIds: ids(),
      createdTime: Range,
      simulationTime: Range,
    }),
  ),
  limit: Limit(),
  cursor: Type.Optional(Cursor),
  sort: Sort('createdTime', 'simulationTime'),
});
export type RunFilter = NonNullable<Static<typeof ListRunsBody>['filter']>;
export const RunDataBody = items(obj({ runId: InternalId }), 1000);
export const ClaimRunsBody = obj({ simulatorIntegrationExternalId: ExternalId, limit: Limit(100) });

const ReportedValue = obj({
  referenceId: Ref50,
  value: Value,
  valueType: ValueType,
  unit: Type.Optional(obj({ name: Ref50, externalId: Type.Optional(ExternalId) })),
  simulatorObjectReference: Type.Optional(Type.Record(Type.String({ maxLength: 255 }), Type.String({ maxLength: 1024 }))),
  timeseriesExternalId: Type.Optional(ExternalId),
  overridden: Type.Optional(Type.Boolean()),
});
export const RunReport = obj({
  id: InternalId,
  status: Type.Union(['ready', 'running', 'success', 'failure'].map((s) => Type.Literal(s))),
  statusMessage: Type.Optional(Type.String({ maxLength: 1000 })),
  simulationTime: Type.Optional(Timestamp),
  inputs: Type.Optional(Type.Array(ReportedValue, { maxItems: 10_000 })),
  outputs: Type.Optional(Type.Array(ReportedValue, { maxItems: 10_000 })),
});
export type RunReport = Static<typeof RunReport>;
export const RunCallbackBody = items(RunReport, 1);

// Logs.
export const UpdateLogsBody = logModel.updateBody(1000);
