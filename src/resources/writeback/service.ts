/**
 * SAP writeback: its own rules on top of the shared item operations.
 * - An instance's gateway is an http or https URL; one whose host is an address the outbound policy refuses
 *   is refused when it is created. Its password is kept for the gateway and never answered.
 * - An endpoint names an instance, and optionally a mapping, that exist. An instance an endpoint uses is
 *   deleted only with `force`, which deletes those endpoints too; a mapping an endpoint uses is not deleted.
 * - Verifying an endpoint opens a session with its gateway's service (odata.ts) and says how that went.
 * - A request is recorded `pending` and sent by a durable job (jobs.ts). A project has at most
 *   WRITEBACK_LIMITS.concurrentRequests requests pending or in progress; the next is a 429 that records
 *   nothing.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { addressAllowed } from '../../http/address-policy.js';
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import { httpUrl } from '../../http/outbound.js';
import type { Services } from '../../http/services.js';
import { visibleIn } from '../../query/visibility.js';
import type { Item, Values } from '../../storage/items.js';
import { holdLock } from '../../storage/locks.js';
import { Sql, sql, TRUE } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { createItems, deleteItems, fromModel, inWrite, listItems, retrieveItems, type Path, type ResourceSpec, type WriteContext } from '../crud.js';
import { fileCatalog } from '../files/model.js';
import { compileMapping, MappingError } from './mapping-language.js';
import { endpointModel, instanceModel, mappingModel, requestModel, WRITEBACK_LIMITS, type RequestItem } from './model.js';
import { openSession, SapFailure, type EndpointType, type Gateway } from './odata.js';
import type { EndpointCreate, InstanceCreate, RequestCreate } from './schema.js';

export const SEND_JOB = 'writeback.send';

type Refs = ReadonlyArray<{ externalId: string }>;

/** The external ids of the rows `ids` of `table`. */
async function externalIdsOf(db: Queryable, table: string, projectId: number, ids: readonly number[]): Promise<string[]> {
  const rows = await db.all<{ externalId: string }>(sql`SELECT external_id AS "externalId" FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND id IN (${ids})`);
  return rows.map((r) => r.externalId);
}

/** The endpoints that use any of the instances or mappings `externalIds` (by `column`). */
async function endpointsUsing(db: Queryable, projectId: number, column: 'instance_id' | 'mapping_id', externalIds: readonly string[]) {
  if (externalIds.length === 0) return [];
  return db.all<{ id: number; externalId: string; used: string }>(
    sql`SELECT id, external_id AS "externalId", ${Sql.raw(column)} AS used FROM sap_writeback_endpoints WHERE project_id = ${projectId} AND ${Sql.raw(column)} IN (${externalIds}) ORDER BY external_id`,
  );
}

/** Refuses a gateway URL that is not http(s), or whose host is an address the outbound policy refuses. */
function checkGatewayUrl(services: Services, value: string, path: Path): void {
  const url = httpUrl(value);
  if (!url) throw badRequest(`${formatPath(path)}: expected an http or https URL, got ${JSON.stringify(value)}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const allow = services.outbound?.config.allow ?? [];
  if (isIP(host) && !addressAllowed(host, allow)) {
    throw badRequest(`${formatPath(path)}: the address ${host} is not one this server may call (outbound address policy)`);
  }
}

const instanceSpec = (force = false): ResourceSpec<InstanceCreate> => ({
  ...fromModel(instanceModel),
  createValues: (item) => ({ password: item.password }),
  check(values: Values, path: Path, ctx: WriteContext) {
    checkGatewayUrl(ctx.services, values.gatewayUrl as string, [...path, 'gatewayUrl']);
  },
  async beforeDelete(ids: number[], { db, projectId }: WriteContext) {
    const users = await endpointsUsing(db, projectId, 'instance_id', await externalIdsOf(db, 'sap_writeback_instances', projectId, ids));
    if (users.length === 0) return;
    if (!force) {
      const named = users.map((u) => `the endpoint ${JSON.stringify(u.externalId)} uses the instance ${JSON.stringify(u.used)}`).join('; ');
      throw badRequest(`SAP instances in use: ${named}. Delete those endpoints first, or delete with force: true, which deletes them too`);
    }
    await db.run(sql`DELETE FROM sap_writeback_endpoints WHERE project_id = ${projectId} AND id IN (${users.map((u) => u.id)})`);
  },
});

const mappingSpec: ResourceSpec<unknown> = {
  ...fromModel(mappingModel),
  check(values: Values, path: Path) {
    try {
      compileMapping(values.expression as string);
    } catch (err) {
      if (err instanceof MappingError) throw badRequest(`${formatPath([...path, 'expression'])}: ${err.message}`);
      throw err;
    }
  },
  async beforeDelete(ids: number[], { db, projectId }: WriteContext) {
    const users = await endpointsUsing(db, projectId, 'mapping_id', await externalIdsOf(db, 'sap_writeback_mappings', projectId, ids));
    if (users.length === 0) return;
    const named = users.map((u) => `the endpoint ${JSON.stringify(u.externalId)} uses the mapping ${JSON.stringify(u.used)}`).join('; ');
    throw badRequest(`Mappings in use: ${named}. Delete those endpoints first`);
  },
};

export const specs = {
  instances: instanceSpec() as ResourceSpec<unknown>,
  endpoints: fromModel(endpointModel) as ResourceSpec<unknown>,
  mappings: mappingSpec,
  requests: fromModel(requestModel) as ResourceSpec<unknown>,
};

export function createInstances(services: Services, projectId: number, items: readonly InstanceCreate[]) {
  return createItems(instanceSpec(), services, projectId, items);
}

export function deleteInstances(services: Services, projectId: number, items: Refs, ignoreUnknownIds = false, force = false) {
  return deleteItems(instanceSpec(force) as ResourceSpec<unknown>, services, projectId, items, ignoreUnknownIds);
}

/** The external ids among `externalIds` that have no row in `table`. */
async function absent(db: Queryable, table: string, projectId: number, externalIds: readonly string[]): Promise<Set<string>> {
  const found = await db.all<{ externalId: string }>(sql`SELECT external_id AS "externalId" FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND external_id IN (${[...new Set(externalIds)]})`);
  const present = new Set(found.map((r) => r.externalId));
  return new Set(externalIds.filter((id) => !present.has(id)));
}

export function createEndpoints(services: Services, projectId: number, items: readonly EndpointCreate[]) {
  return inWrite(services, async (services) => {
    const { db } = services;
    const noInstance = await absent(db, 'sap_writeback_instances', projectId, items.map((i) => i.instanceId!));
    const mappingIds = items.flatMap((i) => (i.mappingId === undefined ? [] : [i.mappingId]));
    const noMapping = mappingIds.length ? await absent(db, 'sap_writeback_mappings', projectId, mappingIds) : new Set<string>();
    for (const [i, item] of items.entries()) {
      if (noInstance.has(item.instanceId!)) throw badRequest(`${formatPath(['items', i, 'instanceId'])}: the SAP instance ${JSON.stringify(item.instanceId)} does not exist`);
      if (item.mappingId !== undefined && noMapping.has(item.mappingId)) {
        throw badRequest(`${formatPath(['items', i, 'mappingId'])}: the mapping ${JSON.stringify(item.mappingId)} does not exist`);
      }
    }
    return createItems(specs.endpoints, services, projectId, items);
  });
}

interface EndpointRow {
  id: number;
  externalId: string;
  endpointType: EndpointType;
  instanceId: string;
  mappingId: string | null;
}

export async function endpointRow(db: Queryable, projectId: number, externalId: string): Promise<EndpointRow | undefined> {
  return db.get<EndpointRow>(sql`SELECT id, external_id AS "externalId", endpoint_type AS "endpointType", instance_id AS "instanceId", mapping_id AS "mappingId"
    FROM sap_writeback_endpoints WHERE project_id = ${projectId} AND external_id = ${externalId}`);
}

/** The gateway of an instance, with its credentials. */
export async function gatewayOf(db: Queryable, projectId: number, externalId: string): Promise<Gateway | undefined> {
  const row = await db.get<Gateway>(sql`SELECT gateway_url AS "gatewayUrl", client, username, password FROM sap_writeback_instances
    WHERE project_id = ${projectId} AND external_id = ${externalId}`);
  return row && { ...row, client: Number(row.client) };
}

/**
 * Connects to the endpoint's gateway as a request would, and says how it went: `success`, or `failure` with
 * what failed, under `error` as the reference answers (its clients read it there, success included). An
 * endpoint whose gateway's address the outbound policy refuses is a 400.
 */
export async function verifyEndpoint(services: Services, projectId: number, externalId: string): Promise<{ error: { status: 'success' | 'failure'; detail: string } }> {
  await retrieveItems(specs.endpoints, services, projectId, [{ externalId }]);
  const endpoint = (await endpointRow(services.db, projectId, externalId))!;
  const gateway = await gatewayOf(services.db, projectId, endpoint.instanceId);
  if (!gateway) throw badRequest(`externalId: the SAP instance ${JSON.stringify(endpoint.instanceId)} of the endpoint ${JSON.stringify(externalId)} does not exist`);
  try {
    await openSession(services.outbound!, gateway, endpoint.endpointType);
    return { error: { status: 'success', detail: `Connected to the SAP gateway of the instance ${JSON.stringify(endpoint.instanceId)} and opened its ${endpoint.endpointType} service` } };
  } catch (err) {
    if (!(err instanceof SapFailure)) throw err;
    if (err.refusedAddress) throw badRequest(`externalId: the endpoint ${JSON.stringify(externalId)} cannot be verified: ${err.message}`);
    return { error: { status: 'failure', detail: err.message } };
  }
}

const tooManyRequests = () =>
  new ApiError(
    429,
    `The project already has ${WRITEBACK_LIMITS.concurrentRequests} writeback requests pending or in progress, the most it may have at once; send this one again once one has ended`,
    {},
    { 'retry-after': '1' },
  );

async function openRequests(db: Queryable, projectId: number): Promise<number> {
  const row = await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM sap_writeback_requests WHERE project_id = ${projectId} AND status IN ('pending', 'in_progress')`);
  return Number(row!.n);
}

/** What an attachment item sends: the content of a file the request sees. */
async function attachmentFile(services: Services, projectId: number, fileId: string, path: Path): Promise<NonNullable<RequestItem['file']>> {
  const visible = visibleIn(services, fileCatalog);
  const row = await services.db.get<{ name: string; mimeType: string | null; blobKey: string | null; uploaded: number | boolean }>(
    sql`SELECT name, mime_type AS "mimeType", blob_key AS "blobKey", uploaded FROM files WHERE project_id = ${projectId} AND external_id = ${fileId}
      AND ${visible.where ?? TRUE}`,
  );
  if (!row) throw badRequest(`${formatPath(path)}: the file ${JSON.stringify(fileId)} does not exist`);
  const size = row.uploaded && row.blobKey ? (await services.blobs!.head(projectId, row.blobKey))?.size : undefined;
  if (size === undefined) throw badRequest(`${formatPath(path)}: the file ${JSON.stringify(fileId)} has no content yet; upload it first`);
  if (size > WRITEBACK_LIMITS.attachmentBytes) {
    throw badRequest(`${formatPath(path)}: the file ${JSON.stringify(fileId)} has ${size} bytes, more than the ${WRITEBACK_LIMITS.attachmentBytes} an attachment may have`);
  }
  return { name: row.name, mimeType: row.mimeType ?? 'application/octet-stream', blobKey: row.blobKey! };
}

/** An HTTP header name (RFC 9110 token), and a value of printable ASCII. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const HEADER_VALUE = /^[\x20-\x7e]{0,1024}$/;

/**
 * An attachment's payload describes the document in headers: names that are header names, text values. The
 * first field that cannot be a header, and why; checked on a payload as given, or as its mapping made it.
 */
export function headerProblem(payload: Record<string, unknown>): { field: string; message: string } | undefined {
  for (const [field, value] of Object.entries(payload)) {
    if (!HEADER_NAME.test(field)) return { field, message: `an attachment's payload fields are sent as headers, and this name is not one (letters, digits and ${"!#$%&'*+.^_`|~-"})` };
    if (typeof value !== 'string' || !HEADER_VALUE.test(value)) {
      return { field, message: `an attachment's payload fields are sent as headers: expected text of printable ASCII, at most 1024 characters` };
    }
  }
  return undefined;
}

/** Checks a request's items against its endpoint's type; what is kept of each. */
async function requestItems(services: Services, projectId: number, item: RequestCreate, endpoint: EndpointRow): Promise<RequestItem[]> {
  const kept: RequestItem[] = [];
  for (const [i, given] of item.request.entries()) {
    const path: Path = ['items', 0, 'request', i, 'fileId'];
    if (endpoint.endpointType === 'notification' && given.fileId !== undefined) {
      throw badRequest(`${formatPath(path)}: only requests to attachment endpoints send files; ${JSON.stringify(endpoint.externalId)} is a notification endpoint`);
    }
    if (endpoint.endpointType === 'attachment' && given.fileId === undefined) {
      throw badRequest(`${formatPath(path)}: a request to the attachment endpoint ${JSON.stringify(endpoint.externalId)} names the file it sends`);
    }
    const file = given.fileId === undefined ? undefined : await attachmentFile(services, projectId, given.fileId, path);
    // A payload its endpoint's mapping transforms is checked as the mapping made it, when it is sent.
    const problem = file && endpoint.mappingId === null ? headerProblem(given.payload) : undefined;
    if (problem) throw badRequest(`${formatPath(['items', 0, 'request', i, 'payload', problem.field])}: ${problem.message}`);
    kept.push({ ...given, ...(file ? { file } : {}) });
  }
  return kept;
}

/** Records a writeback request and starts the job that sends it; the request as answered. */
export async function createRequest(services: Services, projectId: number, item: RequestCreate) {
  const endpoint = await endpointRow(services.db, projectId, item.endpointId);
  if (!endpoint) throw badRequest(`items[0].endpointId: the SAP endpoint ${JSON.stringify(item.endpointId)} does not exist`);
  const request = await requestItems(services, projectId, item, endpoint);
  // Refused before anything is written, and counted again under the lock as the request is recorded.
  if ((await openRequests(services.db, projectId)) >= WRITEBACK_LIMITS.concurrentRequests) throw tooManyRequests();
  const spec: ResourceSpec<{ requestId: string }> = {
    ...(specs.requests as ResourceSpec<{ requestId: string }>),
    createValues: () => ({ endpointId: endpoint.externalId, request, status: 'pending' }),
  };
  const [created] = await inWrite(services, async (services) => {
    await holdLock(services.db, 'sapWritebackRequests', projectId);
    if ((await openRequests(services.db, projectId)) >= WRITEBACK_LIMITS.concurrentRequests) throw tooManyRequests();
    const items = await createItems(spec, services, projectId, [{ requestId: randomUUID() }]);
    await services.jobs!.start(services.db, { projectId, kind: SEND_JOB, payload: { requestId: items[0].requestId }, key: items[0].requestId as string });
    return items;
  });
  return requestAnswer(created, 'created');
}

/**
 * A request as answered: on create each item's key and payload; in a list each item's key and the key of
 * the record SAP made of it; by ids all of them.
 */
export function requestAnswer(item: Item, form: 'created' | 'list' | 'full'): Record<string, unknown> {
  const request = ((item.request as RequestItem[] | undefined) ?? []).map((r) => {
    const out: Record<string, unknown> = {};
    if (r.key !== undefined) out.key = r.key;
    if (form !== 'list') out.payload = r.payload;
    if (form !== 'created' && r.sapObjectId !== undefined) out.sapObjectId = r.sapObjectId;
    return out;
  });
  return { ...item, request };
}

export async function listRequests(services: Services, projectId: number, query: { limit?: number; cursor?: string }) {
  const page = await listItems(specs.requests, services, projectId, query, undefined);
  return { ...page, items: page.items.map((i) => requestAnswer(i, 'list')) };
}

export async function retrieveRequests(services: Services, projectId: number, items: ReadonlyArray<{ requestId: string }>, ignoreUnknownIds = false) {
  return { items: (await retrieveItems(specs.requests, services, projectId, items as never, ignoreUnknownIds)).map((i) => requestAnswer(i, 'full')) };
}
