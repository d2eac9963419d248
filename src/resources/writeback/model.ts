/**
 * SAP writeback, declared once (see resources/model.ts): SAP instances (a gateway and the credentials to
 * reach it), endpoints (an OData service of an instance that requests are sent to), mappings (a transform
 * an endpoint applies to a request's payloads) and writeback requests (what was sent and how it went).
 * Every one is keyed by its external id alone, a request by the id the service gives it.
 */
import { Type } from '@sinclair/typebox';
import { defineModel, field } from '../model.js';

export const WRITEBACK_LIMITS = {
  externalId: 255,
  /** Items per create, by-ids and delete request. */
  items: 100,
  listLimit: 100,
  /** Requests of a project pending or in progress at once; the next is a 429. */
  concurrentRequests: 50,
  /** Items in one writeback request. */
  requestItems: 100,
  expression: 2000,
  credential: 1024,
  gatewayUrl: 2048,
  /** Bytes of a file an attachment sends (read whole before it is sent). */
  attachmentBytes: 25 * 1024 * 1024,
  /** Characters of an endpoint's answer kept in a request's error message. */
  errorMessage: 1000,
} as const;

export const WritebackId = Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.externalId });
export const EndpointType = Type.Union([Type.Literal('notification'), Type.Literal('attachment')]);
export const RequestStatus = Type.Union([Type.Literal('pending'), Type.Literal('in_progress'), Type.Literal('done'), Type.Literal('failed')]);
const ACL = 'sapWritebackAcl';
const key = { notNull: true, query: { maxValueLength: WRITEBACK_LIMITS.externalId, sortable: true } } as const;

export const instanceModel = defineModel({
  noun: 'SAP instance',
  acl: ACL,
  table: 'sap_writeback_instances',
  alias: 'swi',
  key: ['externalId'],
  fields: {
    externalId: field.string(WritebackId, key),
    gatewayUrl: field.string(Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.gatewayUrl }), { notNull: true, required: true, patch: false }),
    client: field.integer(Type.Integer({ minimum: 0, maximum: 999 }), { notNull: true, required: true, patch: false }),
    username: field.string(Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.credential }), { required: true, patch: false }),
    // A secret: sent to the gateway only, never part of an answer.
    password: field.string(Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.credential }), { hidden: true }),
  },
});

export const mappingModel = defineModel({
  noun: 'SAP writeback mapping',
  acl: ACL,
  table: 'sap_writeback_mappings',
  alias: 'swm',
  key: ['externalId'],
  fields: {
    externalId: field.string(WritebackId, key),
    expression: field.string(Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.expression }), { notNull: true, required: true, patch: false }),
  },
});

export const endpointModel = defineModel({
  noun: 'SAP endpoint',
  acl: ACL,
  table: 'sap_writeback_endpoints',
  alias: 'swe',
  key: ['externalId'],
  fields: {
    externalId: field.string(WritebackId, key),
    endpointType: field.string(EndpointType, { notNull: true, required: true, patch: false }),
    instanceId: field.string(WritebackId, { notNull: true, required: true, patch: false, index: 'sap_writeback_endpoints_instance' }),
    mappingId: field.string(WritebackId, { patch: false, index: 'sap_writeback_endpoints_mapping' }),
  },
});

/** One item of a writeback request as kept: what was given, and the key SAP gave the record it created. */
export interface RequestItem {
  key?: string;
  fileId?: string;
  payload: Record<string, unknown>;
  sapObjectId?: string;
  /** The record was created (a gateway need not name it): a job run again does not send it twice. */
  sent?: boolean;
  /** The file an attachment sends, found when the request was made (never answered). */
  file?: { name: string; mimeType: string; blobKey: string };
}

export const requestModel = defineModel({
  noun: 'SAP writeback request',
  acl: 'sapWritebackRequestsAcl',
  table: 'sap_writeback_requests',
  alias: 'swr',
  key: ['requestId'],
  indexes: [{ name: 'sap_writeback_requests_open', columns: ['project_id', 'status'] }],
  fields: {
    requestId: field.string(WritebackId, key),
    endpointId: field.string(WritebackId, { notNull: true, patch: false }),
    request: field.json(Type.Array(Type.Unknown()), { patch: false }),
    status: field.string(RequestStatus, { notNull: true, patch: false }),
    errorMessage: field.string(Type.String(), { patch: false }),
  },
});
