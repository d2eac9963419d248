/**
 * Extraction pipelines, declared once (see resources/model.ts): the pipelines themselves, named by id or
 * external id and kept in data sets; the revisions of each pipeline's configuration, numbered from 1 under
 * it; and the runs its extractor reports. Revisions and runs live under their pipeline and go when it goes.
 * The limits are the reference's.
 */
import { Type } from '@sinclair/typebox';
import { InternalId, Timestamp, type MetadataLimits } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';

export const EXTPIPE_LIMITS = {
  externalId: 255,
  name: 140,
  description: 500,
  source: 255,
  documentation: 10_000,
  createdBy: 255,
  email: 254,
  /** Raw tables and contacts of one pipeline. */
  listItems: 1000,
  /** Items per create, update, delete and by-ids request, and runs per report. */
  items: 1000,
  runMessage: 1000,
  /** Pipelines a list filter may name by data set. */
  filterDataSets: 100,
} as const;

export const EXTPIPE_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_240, keys: 256, totalBytes: 10_240 };

export const PipelineExternalId = Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.externalId });

export const RawTable = Type.Object(
  { dbName: Type.String({ minLength: 1, maxLength: 255 }), tableName: Type.String({ minLength: 1, maxLength: 255 }) },
  { additionalProperties: false },
);

const nullableString = (maxLength?: number) => Type.Union([Type.String(maxLength === undefined ? {} : { maxLength }), Type.Null()]);

export const Contact = Type.Object(
  {
    name: Type.Optional(nullableString(255)),
    email: Type.Optional(Type.Union([Type.String({ minLength: 3, maxLength: EXTPIPE_LIMITS.email, pattern: '^[^@\\s]+@[^@\\s]+$' }), Type.Null()])),
    role: Type.Optional(nullableString(255)),
    sendNotification: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { additionalProperties: false },
);

export const NotificationConfig = Type.Object(
  { allowedNotSeenRangeInMinutes: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()])) },
  { additionalProperties: false },
);

/** "On trigger", "Continuous", or when to run (a cron expression, `@hourly`, `@every 15m`); checked further in service.ts. */
export const Schedule = Type.String({ minLength: 1, maxLength: 255 });

export const RunStatus = Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('seen')]);

export const pipelineModel = defineModel({
  noun: 'extraction pipeline',
  acl: 'extractionpipelinesAcl',
  table: 'extpipes',
  alias: 'xp',
  dataSetField: 'dataSetId',
  fields: {
    // Not NOT NULL: an update that changes external ids clears them first (crud.ts), though none stays empty.
    externalId: field.string(PipelineExternalId, { required: true, patch: 'required', query: { maxValueLength: EXTPIPE_LIMITS.externalId, sortable: true, notNull: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: EXTPIPE_LIMITS.name }), { notNull: true, required: true, patch: 'required', query: { maxValueLength: EXTPIPE_LIMITS.name, sortable: true } }),
    description: field.string(Type.String({ maxLength: EXTPIPE_LIMITS.description }), { query: { maxValueLength: EXTPIPE_LIMITS.description } }),
    dataSetId: field.integer(InternalId, { notNull: true, required: true, patch: 'required', index: 'extpipes_data_set', query: { sortable: true } }),
    rawTables: field.jsonList(Type.Array(RawTable, { maxItems: EXTPIPE_LIMITS.listItems }), EXTPIPE_LIMITS.listItems, { byValue: true }),
    schedule: field.string(Schedule, { query: { maxValueLength: 255 } }),
    contacts: field.jsonList(Type.Array(Contact, { maxItems: EXTPIPE_LIMITS.listItems }), EXTPIPE_LIMITS.listItems, { byValue: true }),
    metadata: field.metadata(EXTPIPE_METADATA_LIMITS, { table: 'extpipe_metadata', itemColumn: 'extpipe_id', maxValueLength: 256 }, { emptyAbsent: true }),
    source: field.string(Type.String({ maxLength: EXTPIPE_LIMITS.source }), { query: { maxValueLength: EXTPIPE_LIMITS.source } }),
    documentation: field.string(Type.String({ maxLength: EXTPIPE_LIMITS.documentation }), { query: { maxValueLength: EXTPIPE_LIMITS.documentation } }),
    notificationConfig: field.json(NotificationConfig),
    createdBy: field.string(Type.String({ maxLength: EXTPIPE_LIMITS.createdBy }), { patch: false, query: { maxValueLength: EXTPIPE_LIMITS.createdBy } }),
    // Kept by the runs reported (service.ts), never by a request; 0 until a run says otherwise.
    lastSuccess: field.integer(Timestamp, { notNull: true, default: 0, patch: false }),
    lastFailure: field.integer(Timestamp, { notNull: true, default: 0, patch: false }),
    lastSeen: field.integer(Timestamp, { notNull: true, default: 0, patch: false }),
    lastMessage: field.string(Type.String(), { patch: false }),
  },
});

export const configRevisionModel = defineModel({
  noun: 'configuration revision',
  acl: 'extractionconfigsAcl',
  table: 'extpipe_configs',
  alias: 'xc',
  key: ['revision'],
  parent: { model: pipelineModel, column: 'extpipe_id' },
  fields: {
    revision: field.integer(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), { notNull: true, patch: false, query: { sortable: true } }),
    config: field.string(Type.String(), { patch: false }),
    description: field.string(Type.String(), { patch: false }),
  },
});

export const runModel = defineModel({
  noun: 'extraction pipeline run',
  acl: 'extractionrunsAcl',
  table: 'extpipe_runs',
  alias: 'xr',
  parent: { model: pipelineModel, column: 'extpipe_id' },
  indexes: [{ name: 'extpipe_runs_created', columns: ['project_id', 'extpipe_id', 'created_time'] }],
  fields: {
    status: field.string(RunStatus, { notNull: true, patch: false, query: { maxValueLength: 7 } }),
    message: field.string(Type.String({ maxLength: EXTPIPE_LIMITS.runMessage }), { patch: false }),
    // The message lower-cased with JavaScript's full case mapping, which the message filter compares against.
    messageLc: field.string(Type.String(), { hidden: true }),
  },
});
