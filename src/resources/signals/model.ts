/**
 * Signals: sinks (where signals go), subscriptions (which signals of a topic go to a sink) and the signals
 * pushed to each sink. Sinks are named by their type and external id together; subscriptions by external id.
 */
import { Type } from '@sinclair/typebox';
import { ExternalId } from '../../http/common-schemas.js';
import type { TableDef } from '../../storage/schema.js';
import { defineModel, field } from '../model.js';

export const SIGNAL_LIMITS = {
  /** Sinks per create, by-ids, update and delete request; subscriptions per delete request. */
  sinkItems: 100,
  /** Subscriptions per create and update request. */
  subscriptionItems: 10,
  /** Signals and subscriptions per list page. */
  page: 100,
} as const;

export const TOPICS = ['cognite_workflows', 'cognite_integrations', 'cognite_hosted_extractors'] as const;
export type Topic = (typeof TOPICS)[number];
export const SEVERITIES = ['info', 'warning', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];

const SinkType = Type.Union([Type.Literal('email'), Type.Literal('user')]);
export const EmailAddress = Type.String({ minLength: 3, maxLength: 255 });
export const SinkRef = Type.Object({ type: SinkType, externalId: ExternalId }, { additionalProperties: false });

export const sinkModel = defineModel({
  noun: 'sink',
  acl: 'subscribeSignalsAcl',
  table: 'signal_sinks',
  alias: 'ssk',
  key: ['type', 'externalId'],
  fields: {
    type: field.string(SinkType, { notNull: true, query: { maxValueLength: 5 } }),
    externalId: field.string(ExternalId, { notNull: true, query: { maxValueLength: 255 } }),
    emailAddress: field.string(EmailAddress, { patch: 'required' }),
  },
});

const Filter = Type.Record(Type.String(), Type.Unknown());

export const subscriptionModel = defineModel({
  noun: 'subscription',
  acl: 'subscribeSignalsAcl',
  table: 'signal_subscriptions',
  alias: 'ssu',
  key: ['externalId'],
  fields: {
    externalId: field.string(ExternalId, { notNull: true, query: { maxValueLength: 255 } }),
    sink: field.json(SinkRef, { notNull: true, patch: false }),
    filter: field.json(Filter, { notNull: true, patch: { custom: Type.Object({ set: Filter }, { additionalProperties: false }) } }),
  },
});

/**
 * The signals pushed to sinks, one row per sink and signal, in the order pushed; `delivery` is `pending` until
 * the e-mail relay took it (`sent`), or `none` when there is nothing to send it to.
 */
export const signalTables: readonly TableDef[] = [
  {
    name: 'signals',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      sink_type: { type: 'text', notNull: true },
      sink_external_id: { type: 'text', notNull: true },
      external_id: { type: 'text', notNull: true },
      topic: { type: 'text', notNull: true },
      severity: { type: 'text', notNull: true },
      resource_id: { type: 'text', notNull: true },
      category: { type: 'text', notNull: true },
      metadata: { type: 'text', notNull: true },
      message: { type: 'text', notNull: true },
      details: { type: 'text' },
      delivery: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
    },
    indexes: [
      { name: 'signals_sink', columns: ['project_id', 'sink_type', 'sink_external_id', 'id'] },
      { name: 'signals_delivery', columns: ['project_id', 'delivery'] },
    ],
  },
  {
    // How far each project's workflow executions have been read for signals: the last end time and id.
    name: 'signal_positions',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      source: { type: 'text', notNull: true },
      end_time: { type: 'integer', notNull: true },
      last_id: { type: 'text', notNull: true },
    },
    primaryKey: ['project_id', 'source'],
  },
];
