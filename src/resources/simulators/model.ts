/**
 * Simulators, declared once (see resources/model.ts): the simulators connectors serve, the integrations
 * (connectors) that report for them, models and their revisions, routines and their revisions, simulation
 * runs and the logs of integrations, model revisions and runs. Each is named by its id (and external id
 * where it has one); what it hangs off is named by external id in its own fields, and goes with it
 * (service.ts). Everything but a simulator lives in a data set: that of its integration or model.
 * The limits are the reference's.
 */
import { Type } from '@sinclair/typebox';
import { InternalId, Timestamp } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';

export const SIMULATOR_LIMITS = {
  externalId: 255,
  simulatorExternalId: 50,
  name: 50,
  description: 255,
  /** Items per by-ids read of model revisions and logs; routine revisions take `routineRevisionByIds`. */
  byIds: 100,
  routineRevisionByIds: 20,
  /** Items of a list filter's lists of external ids. */
  filterIds: 100,
  /** Revisions a model keeps. */
  modelRevisions: 200,
  /** Bodies of model revision creation, routine revision creation and run requests. */
  requestBytes: 50 * 1024,
  /** Bodies of model revision data updates: the flowsheets and information a connector read from a model file. */
  revisionDataBytes: 1024 * 1024,
  /** What a connector reports of one run (status message, inputs and outputs), all its reports together. */
  reportBytes: 100 * 1024,
  logMessage: 4096,
  /** A connector whose last heartbeat is older than this is not active. */
  activeHeartbeatMs: 5 * 60 * 1000,
} as const;

export const ACL = 'simulatorsAcl';

export const ExternalId = Type.String({ minLength: 1, maxLength: SIMULATOR_LIMITS.externalId });
export const SimulatorExternalId = Type.String({ minLength: 1, maxLength: SIMULATOR_LIMITS.simulatorExternalId });
const Name = Type.String({ minLength: 1, maxLength: SIMULATOR_LIMITS.name });
const Description = Type.String({ minLength: 1, maxLength: SIMULATOR_LIMITS.description });
const Short = Type.String({ minLength: 1, maxLength: 50 });
const q = (maxValueLength: number) => ({ query: { maxValueLength, sortable: true } });
const fixed = { patch: false as const };

export const Severity = Type.Union(['Debug', 'Information', 'Warning', 'Error'].map((s) => Type.Literal(s)));
export const RunStatus = Type.Union(['queued', 'ready', 'running', 'success', 'failure'].map((s) => Type.Literal(s)));
export const RunType = Type.Union(['external', 'manual', 'scheduled'].map((s) => Type.Literal(s)));
export const ValueType = Type.Union(['STRING', 'DOUBLE', 'STRING_ARRAY', 'DOUBLE_ARRAY'].map((s) => Type.Literal(s)));
export const Value = Type.Union([
  Type.String({ maxLength: 1024 }),
  Type.Number(),
  Type.Array(Type.String({ maxLength: 1024 }), { minItems: 1, maxItems: 1000 }),
  Type.Array(Type.Number(), { minItems: 1, maxItems: 1000 }),
]);

const ModelType = Type.Object({ name: Short, key: Short }, { additionalProperties: false });
const Option = Type.Object({ label: Short, value: Short }, { additionalProperties: false });
const StepField = Type.Object(
  { name: Short, label: Short, info: Type.String({ maxLength: 200 }), options: Type.Optional(Type.Array(Option, { minItems: 1, maxItems: 100 })) },
  { additionalProperties: false },
);
const StepFields = Type.Object({ stepType: Short, fields: Type.Array(StepField, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false });
const Unit = Type.Object({ label: Type.String({ maxLength: 50 }), name: Type.String({ maxLength: 50 }) }, { additionalProperties: false });
const UnitQuantity = Type.Object({ name: Short, label: Short, units: Type.Array(Unit, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false });
const ModelDependency = Type.Object(
  { fileExtensionTypes: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 100 }), fields: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 100 })) },
  { additionalProperties: true },
);

const set = { ops: ['set'] as const };

export const simulatorModel = defineModel({
  noun: 'simulator',
  acl: ACL,
  table: 'simulators',
  alias: 'sim',
  fields: {
    externalId: field.string(SimulatorExternalId, { required: true, notNull: true, ...fixed, ...q(50) }),
    name: field.string(Name, { required: true, notNull: true, patch: 'required', ...q(50) }),
    fileExtensionTypes: field.jsonList(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { minItems: 1, maxItems: 100 }), 100, { required: true, ...set }),
    modelTypes: field.jsonList(Type.Array(ModelType, { maxItems: 100 }), 100, set),
    modelDependencies: field.jsonList(Type.Array(ModelDependency, { maxItems: 100 }), 100, set),
    stepFields: field.jsonList(Type.Array(StepFields, { maxItems: 100 }), 100, set),
    unitQuantities: field.jsonList(Type.Array(UnitQuantity, { maxItems: 1000 }), 1000, set),
  },
});

export const LicenseStatus = Type.Union(['AVAILABLE', 'NOT_AVAILABLE', 'DISABLED', 'UNKNOWN'].map((s) => Type.Literal(s)));
export const ConnectorStatus = Type.Union(['IDLE', 'RUNNING_SIMULATION'].map((s) => Type.Literal(s)));

export const integrationModel = defineModel({
  noun: 'simulator integration',
  acl: ACL,
  table: 'simulator_integrations',
  alias: 'sint',
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    simulatorExternalId: field.string(SimulatorExternalId, { required: true, notNull: true, ...fixed, ...q(50) }),
    heartbeat: field.integer(Timestamp, { required: true, notNull: true, patch: 'required', query: { sortable: true } }),
    dataSetId: field.integer(InternalId, { required: true, notNull: true, ...fixed, query: { sortable: true } }),
    connectorVersion: field.string(Short, { required: true, notNull: true, patch: 'required' }),
    simulatorVersion: field.string(Short, { patch: 'required' }),
    licenseStatus: field.string(LicenseStatus, { patch: 'required' }),
    licenseLastCheckedTime: field.integer(Timestamp, { patch: 'required' }),
    connectorStatus: field.string(ConnectorStatus, { patch: 'required' }),
    connectorStatusUpdatedTime: field.integer(Timestamp, { patch: 'required' }),
    logId: field.integer(InternalId, { notNull: true, ...fixed }),
  },
});

export const modelModel = defineModel({
  noun: 'simulator model',
  acl: ACL,
  table: 'simulator_models',
  alias: 'smod',
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    simulatorExternalId: field.string(SimulatorExternalId, { required: true, notNull: true, ...fixed, ...q(50) }),
    name: field.string(Name, { required: true, notNull: true, patch: 'required', ...q(50) }),
    description: field.string(Description, { patch: 'required' }),
    dataSetId: field.integer(InternalId, { required: true, notNull: true, ...fixed, query: { sortable: true } }),
    type: field.string(Short, { required: true, notNull: true, ...fixed, ...q(50) }),
  },
});

const ModelRevisionStatus = Type.Union(['unknown', 'success', 'failure'].map((s) => Type.Literal(s)));
const ExternalDependency = Type.Object(
  { file: Type.Object({ id: InternalId }, { additionalProperties: false }), arguments: Type.Record(Type.String({ maxLength: 255 }), Type.String({ maxLength: 255 })) },
  { additionalProperties: false },
);

export const modelRevisionModel = defineModel({
  noun: 'simulator model revision',
  acl: ACL,
  table: 'simulator_model_revisions',
  alias: 'smrev',
  dataSetField: 'dataSetId',
  indexes: [{ name: 'simulator_model_revisions_model', columns: ['project_id', 'model_external_id', 'version_number'] }],
  fields: {
    externalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    modelExternalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    simulatorExternalId: field.string(SimulatorExternalId, { notNull: true, ...fixed, ...q(50) }),
    dataSetId: field.integer(InternalId, { notNull: true, ...fixed, query: { sortable: true } }),
    description: field.string(Description, fixed),
    fileId: field.integer(InternalId, { required: true, notNull: true, ...fixed }),
    externalDependencies: field.jsonList(Type.Array(ExternalDependency, { maxItems: 100 }), 100, fixed),
    createdByUserId: field.string(Type.String(), { notNull: true, ...fixed }),
    status: field.string(ModelRevisionStatus, { notNull: true, patch: 'required', query: { maxValueLength: 10 } }),
    statusMessage: field.string(Type.String({ maxLength: 1000 }), { patch: 'required' }),
    versionNumber: field.integer(Type.Integer({ minimum: 1 }), { notNull: true, ...fixed, query: { sortable: true } }),
    logId: field.integer(InternalId, { notNull: true, ...fixed }),
  },
});

const Label = Type.String({ minLength: 1, maxLength: 255 });
const UnitReference = Type.Object({ name: Label, quantity: Type.Optional(Label), externalId: Type.Optional(ExternalId) }, { additionalProperties: false });
const FlowsheetProperty = Type.Object(
  {
    name: Label,
    referenceObject: Type.Record(Type.String({ maxLength: 255 }), Type.String({ maxLength: 1024 })),
    valueType: ValueType,
    value: Value,
    unit: Type.Optional(UnitReference),
    readOnly: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const GraphicalObject = Type.Object(
  {
    position: Type.Optional(Type.Object({ x: Type.Number(), y: Type.Number() }, { additionalProperties: false })),
    ...Object.fromEntries(['height', 'width', 'scaleX', 'scaleY', 'angle'].map((k) => [k, Type.Optional(Type.Number())])),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const Flowsheet = Type.Object(
  {
    simulatorObjectNodes: Type.Array(
      Type.Object(
        { id: Label, name: Type.Optional(Label), type: Label, graphicalObject: Type.Optional(GraphicalObject), properties: Type.Array(FlowsheetProperty, { maxItems: 10_000 }) },
        { additionalProperties: false },
      ),
      { maxItems: 10_000 },
    ),
    simulatorObjectEdges: Type.Array(
      Type.Object(
        { id: Label, name: Type.Optional(Label), sourceId: Label, targetId: Label, connectionType: Type.Union(['Material', 'Energy', 'Information'].map((s) => Type.Literal(s))) },
        { additionalProperties: false },
      ),
      { maxItems: 10_000 },
    ),
    thermodynamics: Type.Object({ propertyPackages: Type.Array(Label, { maxItems: 1000 }), components: Type.Array(Label, { maxItems: 1000 }) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

/**
 * What a connector read from a model revision's file (its flowsheets and other information), one per
 * revision, named by the revision's external id and in its data set. It is written by the connector only,
 * and is absent until it first does.
 */
export const modelRevisionDataModel = defineModel({
  noun: 'simulator model revision data',
  nouns: 'simulator model revision data',
  acl: ACL,
  table: 'simulator_model_revision_data',
  alias: 'smdata',
  dataSetField: 'dataSetId',
  key: ['modelRevisionExternalId'],
  fields: {
    modelRevisionExternalId: field.string(ExternalId, { required: true, notNull: true, ...fixed }),
    dataSetId: field.integer(InternalId, { notNull: true, ...fixed }),
    flowsheets: field.json(Type.Array(Flowsheet, { maxItems: 100 }), { patch: 'required' }),
    info: field.json(Type.Record(Label, Type.String({ maxLength: 1024 })), { patch: 'required' }),
  },
});

export const routineModel = defineModel({
  noun: 'simulator routine',
  acl: ACL,
  table: 'simulator_routines',
  alias: 'srout',
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    modelExternalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    simulatorIntegrationExternalId: field.string(ExternalId, { ...fixed, ...q(255) }),
    simulatorExternalId: field.string(SimulatorExternalId, { notNull: true, ...fixed, ...q(50) }),
    name: field.string(Name, { required: true, notNull: true, ...fixed }),
    description: field.string(Type.String({ maxLength: 10_000 }), fixed),
    dataSetId: field.integer(InternalId, { notNull: true, ...fixed, query: { sortable: true } }),
  },
});

export const routineRevisionModel = defineModel({
  noun: 'simulator routine revision',
  acl: ACL,
  table: 'simulator_routine_revisions',
  alias: 'srrev',
  dataSetField: 'dataSetId',
  indexes: [{ name: 'simulator_routine_revisions_routine', columns: ['project_id', 'routine_external_id', 'version_number'] }],
  fields: {
    externalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    routineExternalId: field.string(ExternalId, { required: true, notNull: true, ...fixed, ...q(255) }),
    simulatorExternalId: field.string(SimulatorExternalId, { notNull: true, ...fixed, ...q(50) }),
    simulatorIntegrationExternalId: field.string(ExternalId, { ...fixed, ...q(255) }),
    modelExternalId: field.string(ExternalId, { notNull: true, ...fixed, ...q(255) }),
    dataSetId: field.integer(InternalId, { notNull: true, ...fixed, query: { sortable: true } }),
    createdByUserId: field.string(Type.String(), { notNull: true, ...fixed }),
    versionNumber: field.integer(Type.Integer({ minimum: 1 }), { notNull: true, ...fixed, query: { sortable: true } }),
    // Checked by the request schema (schema.ts); kept whole.
    configuration: field.json(Type.Unknown(), { required: true, ...fixed }),
    script: field.json(Type.Unknown(), { required: true, ...fixed }),
  },
});

export const runModel = defineModel({
  noun: 'simulation run',
  acl: ACL,
  table: 'simulation_runs',
  alias: 'srun',
  dataSetField: 'dataSetId',
  indexes: [{ name: 'simulation_runs_status', columns: ['project_id', 'status', 'simulator_external_id'] }],
  fields: {
    simulatorExternalId: field.string(SimulatorExternalId, { notNull: true, ...fixed, ...q(50) }),
    simulatorIntegrationExternalId: field.string(ExternalId, { ...fixed, ...q(255) }),
    modelExternalId: field.string(ExternalId, { notNull: true, ...fixed, ...q(255) }),
    modelRevisionExternalId: field.string(ExternalId, { notNull: true, ...fixed, ...q(255) }),
    routineExternalId: field.string(ExternalId, { notNull: true, ...fixed, ...q(255) }),
    routineRevisionExternalId: field.string(ExternalId, { notNull: true, ...fixed, ...q(255) }),
    runTime: field.integer(Timestamp, fixed),
    simulationTime: field.integer(Timestamp, { ...fixed, query: { sortable: true } }),
    status: field.string(RunStatus, { notNull: true, ...fixed, query: { maxValueLength: 10 } }),
    statusMessage: field.string(Type.String(), fixed),
    runType: field.string(RunType, { notNull: true, ...fixed, query: { maxValueLength: 10 } }),
    userId: field.string(Type.String(), { notNull: true, ...fixed }),
    logId: field.integer(InternalId, { notNull: true, ...fixed }),
    dataSetId: field.integer(InternalId, { notNull: true, ...fixed, query: { sortable: true } }),
    // The run's data (POST /simulators/runs/data/list), kept by the run request and the connector's reports.
    inputs: field.json(Type.Unknown(), { hidden: true, ...fixed }),
    outputs: field.json(Type.Unknown(), { hidden: true, ...fixed }),
    // Bytes the connector has reported of this run, against SIMULATOR_LIMITS.reportBytes.
    reportedBytes: field.integer(Type.Integer(), { hidden: true, notNull: true, default: 0, ...fixed }),
  },
});

export const LogEntry = Type.Object(
  { timestamp: Timestamp, message: Type.String({ minLength: 1, maxLength: SIMULATOR_LIMITS.logMessage }), severity: Severity },
  { additionalProperties: false },
);

export const logModel = defineModel({
  noun: 'simulator log',
  acl: ACL,
  table: 'simulator_logs',
  alias: 'slog',
  dataSetField: 'dataSetId',
  fields: {
    dataSetId: field.integer(InternalId, { notNull: true, ...fixed }),
    data: field.jsonList(Type.Array(LogEntry), 100_000, { ops: ['add'] }),
    severity: field.string(Severity, fixed),
  },
});

export const SIMULATOR_MODELS = [
  simulatorModel,
  integrationModel,
  modelModel,
  modelRevisionModel,
  modelRevisionDataModel,
  routineModel, routineRevisionModel, runModel, logModel];
