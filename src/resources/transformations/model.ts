/**
 * Transformations, declared once (see resources/model.ts): a SQL query over the project's resources and the
 * destination its rows are written to, named by id or external id and kept in data sets; the jobs that ran
 * them, each a record of what ran beside the durable job that ran it; and the notification addresses of
 * each. The sessions a transformation reads and writes with are kept as hidden fields: no answer carries
 * them.
 */
import { Type, type Static } from '@sinclair/typebox';
import { InternalId, nullablePatch, orNull } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';

export const TRANSFORMATION_LIMITS = {
  externalId: 255,
  name: 128,
  /** Items per create, update, delete and by-ids request. */
  items: 1000,
  tags: 5,
  tag: 35,
  query: 1_000_000,
} as const;

const Identifier = Type.String({ minLength: 1, maxLength: 255 });
const ViewRef = Type.Object({ space: Identifier, externalId: Identifier, version: Type.String({ minLength: 1, maxLength: 43 }) }, { additionalProperties: false });
const AutoCreate = Type.Object(
  { startNodes: Type.Optional(Type.Boolean()), endNodes: Type.Optional(Type.Boolean()), directRelations: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** The classic resources a transformation writes to. */
export const RESOURCE_DESTINATIONS = ['assets', 'events', 'timeseries', 'datapoints'] as const;

/**
 * Where the rows go: a classic resource, data modeling nodes or edges (of a view, or without one), or the
 * reference's other destinations, which are refused with a message when a transformation names them.
 */
export const Destination = Type.Union([
  Type.Object({ type: Type.Union(RESOURCE_DESTINATIONS.map((t) => Type.Literal(t))) }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Union([Type.Literal('nodes'), Type.Literal('edges')]),
      // Null as absent: the Python SDK sends the fields it has no value for as null.
      view: Type.Optional(orNull(ViewRef)),
      edgeType: Type.Optional(orNull(Type.Object({ space: Identifier, externalId: Identifier }, { additionalProperties: false }))),
      instanceSpace: Type.Optional(orNull(Identifier)),
      autoCreate: Type.Optional(orNull(AutoCreate)),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Union(
        ['asset_hierarchy', 'string_datapoints', 'sequences', 'files', 'labels', 'relationships', 'data_sets', 'instances', 'raw', 'sequence_rows'].map((t) =>
          Type.Literal(t),
        ),
      ),
    },
    { additionalProperties: true },
  ),
]);
export type Destination = Static<typeof Destination>;

export const ConflictMode = Type.Union([Type.Literal('abort'), Type.Literal('upsert'), Type.Literal('update'), Type.Literal('delete')]);
export type ConflictMode = Static<typeof ConflictMode>;

/** A session handed over as its nonce (`POST /sessions`), for the reads or the writes of a transformation. */
export const Nonce = Type.Object(
  { sessionId: InternalId, nonce: Type.String({ minLength: 1, maxLength: 10_000 }), cdfProjectName: Type.String({ minLength: 1, maxLength: 255 }), clientId: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export type Nonce = Static<typeof Nonce>;

const Session = Type.Object({ sessionId: Type.Integer(), projectName: Type.String(), clientId: Type.Optional(Type.String()) });
const Grant = Type.Object({ sessionId: Type.Integer(), sessionKey: Type.String() });
export const Tags = Type.Array(Type.String({ minLength: 1, maxLength: TRANSFORMATION_LIMITS.tag }), { maxItems: TRANSFORMATION_LIMITS.tags });

export const transformationModel = defineModel({
  noun: 'transformation',
  acl: 'transformationsAcl',
  table: 'transformations',
  alias: 'tf',
  dataSetField: 'dataSetId',
  // Sessions are bound by the service (service.ts); OIDC credentials are refused there by name.
  updateExtras: {
    sourceNonce: Type.Optional(nullablePatch(Nonce)),
    destinationNonce: Type.Optional(nullablePatch(Nonce)),
    sourceOidcCredentials: Type.Optional(Type.Unknown()),
    destinationOidcCredentials: Type.Optional(Type.Unknown()),
  },
  extraProperties: { destinationType: { kind: 'string', column: 'destination_type', nullable: false, maxValueLength: 32 } },
  fields: {
    externalId: field.string(Type.String({ minLength: 1, maxLength: TRANSFORMATION_LIMITS.externalId }), {
      required: true,
      patch: 'required',
      query: { maxValueLength: TRANSFORMATION_LIMITS.externalId, sortable: true, notNull: true },
    }),
    name: field.string(Type.String({ minLength: 1, maxLength: TRANSFORMATION_LIMITS.name }), { notNull: true, required: true, patch: 'required', query: { maxValueLength: TRANSFORMATION_LIMITS.name } }),
    query: field.string(Type.String({ maxLength: TRANSFORMATION_LIMITS.query }), { notNull: true, patch: 'required' }),
    // Changed with its type (service.ts), which the list filter reads.
    destination: field.json(Destination, { patch: { custom: Type.Object({ set: Destination }, { additionalProperties: false }) } }),
    // The destination's type again, for the list filter (`extraProperties`).
    destinationType: field.string(Type.String(), { hidden: true }),
    conflictMode: field.string(ConflictMode, { notNull: true, patch: 'required', query: { maxValueLength: 8 } }),
    isPublic: field.boolean(Type.Boolean(), { notNull: true, patch: 'required', query: {} }),
    ignoreNullFields: field.boolean(Type.Boolean(), { notNull: true, required: true, patch: 'required' }),
    dataSetId: field.integer(InternalId, { index: 'transformations_data_set', query: { sortable: true } }),
    tags: field.jsonList(Tags, TRANSFORMATION_LIMITS.tags, { ops: ['set', 'add', 'remove'] }),
    owner: field.string(Type.String(), { patch: false, query: { maxValueLength: 255 } }),
    sourceSession: field.json(Session, { patch: false }),
    destinationSession: field.json(Session, { patch: false }),
    sourceGrant: field.json(Grant, { hidden: true }),
    destinationGrant: field.json(Grant, { hidden: true }),
  },
});

export const JobStatus = Type.Union([Type.Literal('Created'), Type.Literal('Running'), Type.Literal('Completed'), Type.Literal('Failed')]);

export const transformationJobModel = defineModel({
  noun: 'transformation job',
  acl: 'transformationsAcl',
  table: 'transformation_jobs',
  alias: 'tj',
  indexes: [
    { name: 'transformation_jobs_by_transformation', columns: ['project_id', 'transformation_id', 'id'] },
    { name: 'transformation_jobs_by_runner', columns: ['project_id', 'runner'] },
  ],
  fields: {
    uuid: field.string(Type.String(), { notNull: true, patch: false }),
    transformationId: field.integer(InternalId, { notNull: true, patch: false, query: {} }),
    transformationExternalId: field.string(Type.String(), { notNull: true, patch: false, query: { maxValueLength: 255 } }),
    sourceProject: field.string(Type.String(), { notNull: true, patch: false }),
    destinationProject: field.string(Type.String(), { notNull: true, patch: false }),
    destination: field.json(Destination, { patch: false }),
    conflictMode: field.string(ConflictMode, { notNull: true, patch: false }),
    query: field.string(Type.String(), { notNull: true, patch: false }),
    ignoreNullFields: field.boolean(Type.Boolean(), { notNull: true, patch: false }),
    // The durable job (storage/jobs) that runs it, whose state, times, error and metrics the answers show.
    runner: field.integer(InternalId, { hidden: true }),
    // The session handed to `run` for this job alone, when one was.
    runGrant: field.json(Grant, { hidden: true }),
  },
});

/** A transformation's schedule: one per transformation, answered under the transformation's id and external id. */
export const scheduleModel = defineModel({
  noun: 'transformation schedule',
  acl: 'transformationsAcl',
  table: 'transformation_schedules',
  alias: 'ts',
  indexes: [{ name: 'transformation_schedules_of', columns: ['project_id', 'transformation_id'], unique: true }],
  fields: {
    transformationId: field.integer(InternalId, { notNull: true, patch: false, query: {} }),
    interval: field.string(Type.String({ minLength: 1, maxLength: 255 }), { column: 'cron_interval', notNull: true, patch: 'required' }),
    isPaused: field.boolean(Type.Boolean(), { notNull: true, patch: 'required' }),
  },
});

const Id = Type.String({ minLength: 1, maxLength: 255 });
/** A Fabric OneLake location and the Azure application that reads it; its secret is taken on create and never kept. */
export const OneLakeSettings = Type.Object(
  {
    credentials: Type.Object({ clientId: Id, tenantId: Id }, { additionalProperties: false }),
    locationDescription: Type.Object({ workspaceId: Id, containerId: Id }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

/** External data sources a transformation could read: create-only, keyed by external id. */
export const dataSourceModel = defineModel({
  noun: 'external data source',
  acl: 'transformationsAcl',
  table: 'transformation_data_sources',
  alias: 'xd',
  key: ['externalId'],
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(Type.String({ minLength: 1, maxLength: 255 }), { notNull: true, patch: false, query: { maxValueLength: 255, sortable: true } }),
    format: field.string(Type.Literal('one_lake'), { notNull: true, required: true, patch: false }),
    name: field.string(Type.String({ minLength: 1, maxLength: 255 }), { patch: false }),
    dataSetId: field.integer(InternalId, { patch: false, query: {} }),
    settings: field.json(OneLakeSettings, { patch: false }),
  },
});

export const notificationModel = defineModel({
  noun: 'transformation notification',
  acl: 'transformationsAcl',
  table: 'transformation_notifications',
  alias: 'tn',
  fields: {
    transformationId: field.integer(InternalId, { notNull: true, patch: false, query: {} }),
    destination: field.string(Type.String({ minLength: 1, maxLength: 255 }), { notNull: true, patch: false, query: { maxValueLength: 255 } }),
  },
});
