/**
 * Data point subscriptions, declared once (see resources/model.ts), and the tables of their members. A
 * subscription is keyed by its external id; it lists its time series either by reference (`timeSeriesIds`
 * by external id, `instanceIds`), kept as given in `subscription_members`, or by a filter over time series.
 * Either way the series it holds now are in `subscription_series`, each in the partition its id gives it;
 * membership.ts keeps that table in step with the definitions and with the series themselves.
 *
 * The limits are the reference's.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { ExternalId, InternalId } from '../../http/common-schemas.js';
import type { TableDef } from '../../storage/schema.js';
import { defineModel, field } from '../model.js';
import { InstanceId } from '../timeseries/model.js';

export const SUBSCRIPTION_LIMITS = {
  externalId: 255,
  name: 255,
  description: 1000,
  partitions: 100,
  /** Items per create, by-ids, update and delete request. */
  items: 1,
  /** Time series a create, or one `add`, `remove` or `set` of an update, may name (per kind of reference). */
  membersPerRequest: 100,
  /** Time series references a subscription may hold. */
  members: 10_000,
  /** Subscriptions per project, and filter subscriptions among them. */
  perProject: 1000,
  filtersPerProject: 100,
  /** Results (points, deleted ranges, series added or removed) a data listing aims at, by default and at most. */
  defaultDataLimit: 100,
  maxDataLimit: 100_000,
  /** Longest long poll, in seconds, and the default. */
  maxPollSeconds: 5,
  /** Members per page of the members listing. */
  defaultMembersLimit: 100,
  maxMembersLimit: 100,
} as const;

/** The external ids of time series a request names (one list of a create, or one `add`, `remove` or `set`). */
export const TimeSeriesExternalIds = Type.Array(ExternalId, { minItems: 1, maxItems: SUBSCRIPTION_LIMITS.membersPerRequest });
export const InstanceIds = Type.Array(InstanceId, { minItems: 1, maxItems: SUBSCRIPTION_LIMITS.membersPerRequest });

const listPatch = <T extends TSchema>(list: T) =>
  Type.Optional(Type.Object({ add: Type.Optional(list), remove: Type.Optional(list), set: Type.Optional(list) }, { additionalProperties: false }));

export const subscriptionModel = defineModel({
  noun: 'subscription',
  acl: 'timeSeriesSubscriptionsAcl',
  table: 'subscriptions',
  alias: 'sub',
  key: ['externalId'],
  dataSetField: 'dataSetId',
  fields: {
    externalId: field.string(Type.String({ minLength: 1, maxLength: SUBSCRIPTION_LIMITS.externalId }), { notNull: true, query: { maxValueLength: 255, sortable: true } }),
    name: field.string(Type.String({ maxLength: SUBSCRIPTION_LIMITS.name })),
    description: field.string(Type.String({ maxLength: SUBSCRIPTION_LIMITS.description })),
    dataSetId: field.integer(InternalId),
    partitionCount: field.integer(Type.Integer({ minimum: 1, maximum: SUBSCRIPTION_LIMITS.partitions }), { notNull: true, required: true, patch: false }),
    // The filter of a filter subscription, as given (checked by membership.ts against the time series' filter language).
    filter: field.json(Type.Unknown(), { patch: 'required' }),
  },
  // The references of a subscription listed by reference: `add`/`remove`, or `set` (service.ts).
  updateExtras: { timeSeriesIds: listPatch(TimeSeriesExternalIds), instanceIds: listPatch(InstanceIds) },
});

/** The member references of subscriptions listed by reference, in the order they were added (`seq`). */
export const subscriptionMembersTable: TableDef = {
  name: 'subscription_members',
  columns: {
    project_id: { type: 'integer', notNull: true },
    subscription_id: { type: 'integer', notNull: true },
    seq: { type: 'integer', notNull: true },
    external_id: { type: 'text' },
    instance_space: { type: 'text' },
    instance_external_id: { type: 'text' },
  },
  primaryKey: ['project_id', 'subscription_id', 'seq'],
  withoutRowid: true,
  indexes: [
    { name: 'subscription_members_external_id', columns: ['project_id', 'external_id'] },
    { name: 'subscription_members_instance_id', columns: ['project_id', 'instance_space', 'instance_external_id'] },
  ],
};

/** The time series each subscription holds now, and the partition each is in. */
export const subscriptionSeriesTable: TableDef = {
  name: 'subscription_series',
  columns: {
    project_id: { type: 'integer', notNull: true },
    subscription_id: { type: 'integer', notNull: true },
    series_id: { type: 'integer', notNull: true },
    part: { type: 'integer', notNull: true },
  },
  primaryKey: ['project_id', 'subscription_id', 'series_id'],
  withoutRowid: true,
  indexes: [{ name: 'subscription_series_series', columns: ['project_id', 'series_id'] }],
};

/** The partition a series is in, of a subscription with `partitionCount` partitions. */
export const partitionOf = (seriesId: number, partitionCount: number): number => seriesId % partitionCount;
