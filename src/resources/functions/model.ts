/**
 * Functions, declared once (see resources/model.ts): the functions themselves, named by id or external id;
 * their calls, which live under the function called and go when it goes; and the schedules that call a
 * function with the same data at each time a cron expression names. The limits are the reference's.
 */
import { Type } from '@sinclair/typebox';
import { ExternalId, InternalId, Timestamp, type MetadataLimits } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';

export const FUNCTION_LIMITS = {
  name: 140,
  owner: 128,
  description: 500,
  functionPath: 500,
  secrets: 30,
  secretKey: 15,
  /** Bytes of a secret's name and value together. */
  secretBytes: 25_000,
  envVars: 100,
  /** Functions per create request; per by-ids and delete request. */
  createItems: 1,
  refItems: 10,
  scheduleName: 140,
  cronExpression: 1024,
  scheduleDeleteItems: 10_000,
  /** Calls of one function running at once. */
  runningCalls: 100,
} as const;

export const FUNCTION_METADATA_LIMITS: MetadataLimits = { keyLength: 32, valueLength: 512, keys: 16, totalBytes: 4096 };

export const FunctionStatus = Type.Union([Type.Literal('Queued'), Type.Literal('Deploying'), Type.Literal('Ready'), Type.Literal('Failed')]);
export const CallStatus = Type.Union([Type.Literal('Running'), Type.Literal('Completed'), Type.Literal('Failed'), Type.Literal('Timeout')]);
export const Runtime = Type.Union([Type.Literal('py310'), Type.Literal('py311'), Type.Literal('py312'), Type.Literal('py313')]);
export const FunctionType = Type.Union([Type.Literal('classic'), Type.Literal('functionApp')]);
export const ErrorInfo = Type.Object({ message: Type.String(), trace: Type.Optional(Type.Union([Type.String(), Type.Null()])) });

const StringMap = (maxProperties: number, keyPattern: string) => Type.Record(Type.String({ pattern: keyPattern }), Type.String(), { maxProperties });

export const functionModel = defineModel({
  noun: 'function',
  acl: 'functionsAcl',
  table: 'functions',
  alias: 'fn',
  fields: {
    externalId: field.string(ExternalId, { patch: false, query: { maxValueLength: 255, sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: FUNCTION_LIMITS.name }), { notNull: true, required: true, patch: false, query: { maxValueLength: FUNCTION_LIMITS.name } }),
    fileId: field.integer(InternalId, { notNull: true, required: true, patch: false, query: {} }),
    owner: field.string(Type.String({ maxLength: FUNCTION_LIMITS.owner }), { patch: false, query: { maxValueLength: FUNCTION_LIMITS.owner } }),
    description: field.string(Type.String({ maxLength: FUNCTION_LIMITS.description }), { patch: false }),
    metadata: field.metadata(FUNCTION_METADATA_LIMITS, { table: 'function_metadata', itemColumn: 'function_id', maxValueLength: 512 }, { emptyAbsent: true, patch: false }),
    // Answered with every value scrambled; the values themselves are `secretValues`, which only the call reads.
    secrets: field.json(StringMap(FUNCTION_LIMITS.secrets, `^[a-z0-9-]{1,${FUNCTION_LIMITS.secretKey}}$`), { patch: false }),
    secretValues: field.json(Type.Record(Type.String(), Type.String()), { hidden: true }),
    functionPath: field.string(Type.String({ minLength: 1, maxLength: FUNCTION_LIMITS.functionPath }), { notNull: true, patch: false }),
    envVars: field.json(StringMap(FUNCTION_LIMITS.envVars, '^[A-Za-z0-9_]+$'), { patch: false }),
    cpu: field.json(Type.Number(), { patch: false }),
    memory: field.json(Type.Number(), { patch: false }),
    runtime: field.string(Runtime, { notNull: true, patch: false }),
    runtimeVersion: field.string(Type.String(), { patch: false }),
    indexUrl: field.string(Type.String({ maxLength: 2048 }), { patch: false }),
    extraIndexUrls: field.jsonList(Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 10 }), 10, { patch: false }),
    // Kept by the service: where the function's deployment has come, and when it was last called.
    status: field.string(FunctionStatus, { notNull: true, patch: false, query: { maxValueLength: 9 } }),
    error: field.json(ErrorInfo, { patch: false }),
    lastCalled: field.integer(Timestamp, { patch: false }),
    functionType: field.string(FunctionType, { notNull: true, patch: false }),
    // The blob of the function's code: a copy of the zip file it was created from, taken when it was created.
    codeKey: field.string(Type.String(), { hidden: true }),
  },
});

export const callModel = defineModel({
  noun: 'function call',
  acl: 'functionsAcl',
  table: 'function_calls',
  alias: 'fc',
  parent: { model: functionModel, column: 'function_row' },
  indexes: [{ name: 'function_calls_running', columns: ['project_id', 'function_row', 'status'] }],
  fields: {
    functionId: field.integer(InternalId, { notNull: true, patch: false }),
    status: field.string(CallStatus, { notNull: true, patch: false, query: { maxValueLength: 9 } }),
    startTime: field.integer(Timestamp, { notNull: true, patch: false, query: { sortable: true } }),
    endTime: field.integer(Timestamp, { patch: false, query: { sortable: true } }),
    error: field.json(ErrorInfo, { patch: false }),
    scheduleId: field.integer(InternalId, { patch: false, query: {} }),
    scheduledTime: field.integer(Timestamp, { patch: false }),
    // What the handler was given and returned, and the lines it wrote; read through their own operations.
    data: field.json(Type.Unknown(), { hidden: true }),
    response: field.json(Type.Unknown(), { hidden: true }),
    logs: field.json(Type.Unknown(), { hidden: true }),
    // The job that runs the call, so deleting the function stops it.
    jobId: field.integer(InternalId, { hidden: true }),
  },
});

export const scheduleModel = defineModel({
  noun: 'function schedule',
  acl: 'functionsAcl',
  table: 'function_schedules',
  alias: 'fsc',
  fields: {
    name: field.string(Type.String({ minLength: 1, maxLength: FUNCTION_LIMITS.scheduleName }), { notNull: true, required: true, patch: false, query: { maxValueLength: FUNCTION_LIMITS.scheduleName } }),
    description: field.string(Type.String({ maxLength: FUNCTION_LIMITS.description }), { patch: false }),
    cronExpression: field.string(Type.String({ minLength: 1, maxLength: FUNCTION_LIMITS.cronExpression }), { notNull: true, required: true, patch: false, query: { maxValueLength: FUNCTION_LIMITS.cronExpression } }),
    when: field.string(Type.String(), { column: 'when_text', patch: false }),
    functionId: field.integer(InternalId, { notNull: true, patch: false, index: 'function_schedules_function', query: {} }),
    functionExternalId: field.string(ExternalId, { patch: false, query: { maxValueLength: 255 } }),
    sessionId: field.string(Type.String(), { patch: false }),
    // The data of every call it makes (GET .../input_data), and the session those calls run with (a secret).
    data: field.json(Type.Unknown(), { hidden: true }),
    session: field.json(Type.Unknown(), { hidden: true }),
  },
});
