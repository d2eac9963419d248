/**
 * How Strata speaks to an SAP gateway: OData version 2 over the outbound client (its deadline, size limit
 * and address policy hold for every call). An endpoint's type names the gateway's standard service it
 * writes to: maintenance notifications, or attachments of documents. A write first fetches a CSRF token
 * (a GET of the service's root with `x-csrf-token: Fetch`, which also proves the credentials), then sends
 * each record with that token and the session cookies the gateway set; the key of a created record is read
 * from the `Location` header of its 201 answer, or from its body.
 */
import { OutboundError, type OutboundClient, type OutboundResponse } from '../../http/outbound.js';
import { WRITEBACK_LIMITS } from './model.js';

export type EndpointType = 'notification' | 'attachment';

/** The standard OData service of each endpoint type, and the entity set a record is created in. */
export const SERVICES: Readonly<Record<EndpointType, { path: string; entitySet: string; key: string }>> = {
  notification: { path: '/sap/opu/odata/sap/API_MAINTNOTIFICATION', entitySet: 'MaintenanceNotification', key: 'MaintenanceNotification' },
  attachment: { path: '/sap/opu/odata/sap/API_CV_ATTACHMENT_SRV', entitySet: 'AttachmentContentSet', key: 'DocumentInfoRecordDocNumber' },
};

export interface Gateway {
  gatewayUrl: string;
  client: number;
  username: string | null;
  password: string | null;
}

/** A call that did not do what was asked, worded for whoever configured the instance. */
export class SapFailure extends Error {
  constructor(
    message: string,
    /** The outbound address policy refused the gateway's address: the configuration, not the gateway, is at fault. */
    readonly refusedAddress = false,
  ) {
    super(message);
  }
}

/** What a write needs besides the record: the token and cookies of the gateway's session. */
export interface SapSession {
  gateway: Gateway;
  type: EndpointType;
  token: string;
  cookie: string;
}

/** A record to create: JSON, or a document's bytes (attachments) with headers that describe it. */
export type SapRecord = { json: Record<string, unknown> } | { bytes: Buffer; contentType: string; headers: Record<string, string> };

function serviceUrl(gateway: Gateway, type: EndpointType, entitySet = ''): string {
  const base = gateway.gatewayUrl.replace(/\/+$/, '');
  return `${base}${SERVICES[type].path}/${entitySet}?sap-client=${String(gateway.client).padStart(3, '0')}`;
}

function authorization(gateway: Gateway): Record<string, string> {
  if (gateway.username === null) return {};
  return { authorization: `Basic ${Buffer.from(`${gateway.username}:${gateway.password ?? ''}`).toString('base64')}` };
}

async function call(outbound: OutboundClient, url: string, what: string, init: Parameters<OutboundClient['request']>[2]): Promise<OutboundResponse> {
  try {
    return await outbound.request(url, what, init);
  } catch (err) {
    if (err instanceof OutboundError) throw new SapFailure(err.message, err.failure === 'address');
    throw err;
  }
}

/** The status and the message of an OData error answer (`{error: {message: {value}}}`), cut to the length a request keeps. */
function sapMessage(res: OutboundResponse): string {
  let text = '';
  try {
    const body = JSON.parse(res.body.toString('utf8')) as { error?: { message?: { value?: unknown } | string } };
    const m = body.error?.message;
    text = typeof m === 'string' ? m : typeof m?.value === 'string' ? m.value : '';
  } catch {
    // Not an OData error document: the status alone says what happened.
  }
  return clip(`HTTP ${res.status}${text ? `: ${text}` : ''}`);
}

/** A message cut to the length a request's error message keeps. */
export function clip(message: string): string {
  return message.length > WRITEBACK_LIMITS.errorMessage ? `${message.slice(0, WRITEBACK_LIMITS.errorMessage - 1)}…` : message;
}

function cookiesOf(res: OutboundResponse): string {
  const set = res.headers['set-cookie'];
  const list = set === undefined ? [] : Array.isArray(set) ? set : [set];
  return list.map((c) => c.split(';')[0].trim()).filter(Boolean).join('; ');
}

/** Opens a session with the gateway's service of `type`: fetches a CSRF token. Throws SapFailure. */
export async function openSession(outbound: OutboundClient, gateway: Gateway, type: EndpointType): Promise<SapSession> {
  const what = 'the SAP gateway';
  const res = await call(outbound, serviceUrl(gateway, type), what, { headers: { ...authorization(gateway), accept: 'application/json', 'x-csrf-token': 'Fetch' } });
  if (res.status === 401 || res.status === 403) throw new SapFailure(`${what} refused the instance's credentials (HTTP ${res.status})`);
  if (res.status < 200 || res.status >= 300) throw new SapFailure(`${what} answered the service ${SERVICES[type].path} with ${sapMessage(res)}`);
  const token = res.headers['x-csrf-token'];
  if (typeof token !== 'string' || token === '' || token.toLowerCase() === 'required') {
    throw new SapFailure(`${what} answered the service ${SERVICES[type].path} without a CSRF token (x-csrf-token), which a write needs`);
  }
  return { gateway, type, token, cookie: cookiesOf(res) };
}

/** Creates one record; the key SAP gave it. Throws SapFailure. */
export async function createRecord(outbound: OutboundClient, session: SapSession, record: SapRecord): Promise<string | undefined> {
  const { gateway, type } = session;
  const headers: Record<string, string> = { ...authorization(gateway), accept: 'application/json', 'x-csrf-token': session.token };
  if (session.cookie) headers.cookie = session.cookie;
  const init =
    'json' in record
      ? { method: 'POST' as const, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(record.json) }
      : { method: 'POST' as const, headers: { ...record.headers, ...headers, 'content-type': record.contentType }, body: record.bytes };
  const res = await call(outbound, serviceUrl(gateway, type, SERVICES[type].entitySet), 'the SAP gateway', init);
  if (res.status < 200 || res.status >= 300) throw new SapFailure(`the SAP gateway refused the record: ${sapMessage(res)}`);
  return createdKey(res, type);
}

/** `.../MaintenanceNotification('10000123')` -> 10000123; else the key property of the answer's `d`. */
function createdKey(res: OutboundResponse, type: EndpointType): string | undefined {
  const location = res.headers.location;
  const m = typeof location === 'string' ? /\(\s*(?:\w+=)?'?([^'()]*)'?\s*\)\s*$/.exec(location) : null;
  if (m && m[1]) return decodeURIComponent(m[1]);
  try {
    const body = JSON.parse(res.body.toString('utf8')) as { d?: Record<string, unknown> };
    const key = body.d?.[SERVICES[type].key];
    return typeof key === 'string' || typeof key === 'number' ? String(key) : undefined;
  } catch {
    return undefined;
  }
}
