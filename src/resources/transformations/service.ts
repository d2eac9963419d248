/**
 * Transformations: their own rules on top of the shared item operations. A transformation's query parses
 * (engine.ts) and its destination is one Strata writes to; the sessions handed over as nonces are bound once
 * (`api.bind`) and kept hidden. A run is a durable job (storage/jobs) with a record of what it ran; its
 * state, times, error and metrics are the durable job's.
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { ApiError, badRequest, formatPath, missingItems } from '../../http/errors.js';
import type { Credential, SelfCaller, SessionGrant } from '../../http/self-calls.js';
import type { Services } from '../../http/services.js';
import { and, equalsLeaf, inLeaf, rangeLeaf } from '../../query/basic.js';
import type { ResourceCatalog } from '../../query/catalog.js';
import type { FilterNode } from '../../query/filter.js';
import { resolveReferences } from '../../query/references.js';
import { visibleIn } from '../../query/visibility.js';
import type { Job } from '../../storage/jobs/jobs.js';
import { insertItems, type Item, type Values } from '../../storage/items.js';
import type { Queryable } from '../../storage/store.js';
import { Sql, sql } from '../../storage/sql.js';
import { createItems, fromModel, getItem, inWrite, listItems, retrieveItems, updateItems, type Path, type ResourceSpec, type UpdateItem } from '../crud.js';
import { dataSetCatalog } from '../datasets/model.js';
import { isSourceTable, parseQuery, QueryFailed, runQuery, SOURCE_TABLES, sourceTable, type Column, type ColumnType, type TableRef } from './engine.js';
import { RESOURCE_DESTINATIONS, transformationJobModel, transformationModel, type Destination, type Nonce } from './model.js';
import { linearRegex } from './regex.js';
import { PREVIEW_LIMITS, type PreviewBody, type TransformationCreate, type TransformationFilter, type TransformationPatch } from './schema.js';

export const RUN_KIND = 'transformations.run';
/** Rows a run reads from one `_cdf` table, and rows of its result: beyond them the job fails. */
export const RUN_LIMITS = { sourceRows: 100_000, resultRows: 100_000, timeoutMs: 60 * 60_000 } as const;

const WRITTEN = new Set<string>([...RESOURCE_DESTINATIONS, 'nodes', 'edges']);

function checkDestination(destination: Destination, path: Path): void {
  if (WRITTEN.has(destination.type)) return;
  const why = destination.type === 'raw' ? 'Strata has no raw tables' : `transformations write to ${[...WRITTEN].join(', ')}`;
  throw badRequest(`${formatPath([...path, 'type'])}: the destination "${destination.type}" is not available: ${why}`);
}

function refuseOidc(item: Record<string, unknown>, path: Path): void {
  for (const name of ['sourceOidcCredentials', 'destinationOidcCredentials']) {
    if (item[name] !== undefined) {
      throw badRequest(`${formatPath([...path, name])}: Strata takes a transformation's credentials as sessions: create one with POST /sessions and give its nonce as ${name.replace('OidcCredentials', 'Nonce')}`);
    }
  }
}

export const transformationSpec: ResourceSpec<TransformationCreate> = {
  ...fromModel(transformationModel),
  references: [{ field: 'dataSetId', catalog: dataSetCatalog }],
  // The reference's defaults for what a create item leaves out.
  createValues: (item) => ({
    query: item.query ?? '',
    destination: item.destination ?? { type: 'assets' },
    destinationType: item.destination?.type ?? 'assets',
    conflictMode: item.conflictMode ?? 'upsert',
    isPublic: item.isPublic ?? true,
  }),
  // Its schedule and notifications go with it; the records of its jobs stay, as a history of what ran.
  async beforeDelete(ids, { db, projectId, services }) {
    for (const id of ids) await dropSchedule(services, projectId, id);
    await db.run(sql`DELETE FROM transformation_notifications WHERE project_id = ${projectId} AND transformation_id IN (${ids})`);
  },
  applyPatch(field, v, patch, path) {
    const destination = (patch as { set: Destination }).set;
    checkDestination(destination, [...path, 'set']);
    v[field] = destination;
    v.destinationType = destination.type;
  },
};
const spec = transformationSpec as ResourceSpec<unknown>;

/** The job runner's name of a transformation's schedule (schedules.ts). */
export const scheduleName = (transformationId: number) => `transformation:${transformationId}`;

/** Removes a transformation's schedule, if it has one (on request, or with the transformation). */
export async function dropSchedule(services: Services, projectId: number, transformationId: number): Promise<void> {
  await services.db.run(sql`DELETE FROM transformation_schedules WHERE project_id = ${projectId} AND transformation_id = ${transformationId}`);
  await services.jobs!.unschedule(services.db, projectId, scheduleName(transformationId));
}

interface Bound {
  grant: SessionGrant;
  session: { sessionId: number; projectName: string; clientId?: string };
}

/**
 * Binds the nonces of one request. A nonce is used up when bound, and the clients give one nonce for both
 * sides, and for several transformations of a request, when their credentials are the same: each nonce is
 * bound once and its session shared.
 */
function nonceBinder(api: SelfCaller, project: string) {
  const bound = new Map<string, Promise<SessionGrant>>();
  return async (nonce: Nonce, path: Path): Promise<Bound> => {
    if (nonce.cdfProjectName !== project) throw badRequest(`${formatPath([...path, 'cdfProjectName'])}: the session must be of this project, "${project}"`);
    if (!bound.has(nonce.nonce)) bound.set(nonce.nonce, api.bind(project, nonce.nonce));
    let grant: SessionGrant;
    try {
      grant = await bound.get(nonce.nonce)!;
    } catch (error) {
      // The caller's own token is good: a nonce that does not bind is a fault of the body, not of the authentication.
      if (error instanceof ApiError && error.status === 401) throw badRequest(`${formatPath([...path, 'nonce'])}: ${error.message.replace(/^nonce: /, '')}`);
      throw error;
    }
    if (grant.sessionId !== nonce.sessionId) throw badRequest(`${formatPath([...path, 'sessionId'])}: the nonce is of session ${grant.sessionId}, not ${nonce.sessionId}`);
    return { grant, session: { sessionId: grant.sessionId, projectName: project, ...(nonce.clientId ? { clientId: nonce.clientId } : {}) } };
  };
}

/** A transformation as the API gives it. */
function present(item: Item, principal: Principal): Record<string, unknown> {
  return {
    ...item,
    ownerIsCurrentUser: item.owner === principal.subject,
    hasSourceOidcCredentials: false,
    hasDestinationOidcCredentials: false,
  };
}

const api = (services: Services) => services.api!;

export async function createTransformations(services: Services, principal: Principal, project: { id: number; name: string }, items: readonly TransformationCreate[]) {
  for (const [i, item] of items.entries()) {
    refuseOidc(item, ['items', i]);
    if (item.destination) checkDestination(item.destination, ['items', i, 'destination']);
    if (item.query) await parseQuery(item.query, formatPath(['items', i, 'query']));
  }
  const bind = nonceBinder(api(services), project.name);
  const bound: Array<{ source?: Bound; destination?: Bound }> = [];
  for (const [i, item] of items.entries()) {
    const source = item.sourceNonce && (await bind(item.sourceNonce, ['items', i, 'sourceNonce']));
    const destination = item.destinationNonce && (await bind(item.destinationNonce, ['items', i, 'destinationNonce']));
    bound.push({ source, destination });
  }
  const values = items.map(({ sourceNonce: _s, destinationNonce: _d, sourceOidcCredentials: _so, destinationOidcCredentials: _do, ...item }, i) => ({
    ...item,
    owner: principal.subject,
    sourceSession: bound[i].source?.session,
    sourceGrant: bound[i].source?.grant,
    destinationSession: bound[i].destination?.session,
    destinationGrant: bound[i].destination?.grant,
  }));
  const created = await createItems(transformationSpec, services, project.id, values as TransformationCreate[]);
  return created.map((item) => present(item, principal));
}

export async function updateTransformations(services: Services, principal: Principal, project: { id: number; name: string }, items: ReadonlyArray<UpdateItem & { update: TransformationPatch }>) {
  const sessions: Array<{ source?: Bound | null; destination?: Bound | null }> = [];
  for (const [i, item] of items.entries()) {
    const path = ['items', i, 'update'];
    refuseOidc(item.update as Record<string, unknown>, path);
    const query = (item.update as { query?: { set: string } }).query;
    if (query?.set) await parseQuery(query.set, formatPath([...path, 'query', 'set']));
  }
  const bind = nonceBinder(api(services), project.name);
  for (const [i, item] of items.entries()) {
    const side = async (patch: TransformationPatch['sourceNonce'], name: string) =>
      patch === undefined ? undefined : 'set' in patch ? await bind(patch.set, ['items', i, 'update', name, 'set']) : null;
    sessions.push({ source: await side(item.update.sourceNonce, 'sourceNonce'), destination: await side(item.update.destinationNonce, 'destinationNonce') });
  }
  const stripped = items.map(({ update: { sourceNonce: _s, destinationNonce: _d, ...update }, ...ref }) => ({ ...ref, update }));
  return inWrite(services, async (services) => {
    const updated = await updateItems(spec, services, project.id, stripped);
    for (const [i, item] of updated.entries()) {
      for (const side of ['source', 'destination'] as const) {
        const change = sessions[i][side];
        if (change === undefined) continue;
        const session = change ? JSON.stringify(change.session) : null;
        const grant = change ? JSON.stringify(change.grant) : null;
        await services.db.run(
          side === 'source'
            ? sql`UPDATE transformations SET source_session = ${session}, source_grant = ${grant} WHERE project_id = ${project.id} AND id = ${item.id}`
            : sql`UPDATE transformations SET destination_session = ${session}, destination_grant = ${grant} WHERE project_id = ${project.id} AND id = ${item.id}`,
        );
        item[`${side}Session`] = change?.session;
        if (!change) delete item[`${side}Session`];
      }
    }
    return updated.map((item) => present(item, principal));
  });
}

/** The transformations a principal sees: the public ones and its own (`isPublic: false` keeps one to its owner). */
function seenBy(principal: Principal): FilterNode {
  const catalog = transformationModel.catalog;
  return { op: 'or', args: [equalsLeaf(catalog, 'isPublic', 1)!, equalsLeaf(catalog, 'owner', principal.subject)!] };
}

type TransformationRef = { id?: number; externalId?: string };

/**
 * The references of a request less those to another principal's private transformations, which answer as
 * unknown ones: dropped with `ignoreUnknownIds`, else a 400 with `missing`.
 */
export async function withoutOthersPrivate<R extends TransformationRef>(services: Services, principal: Principal, projectId: number, refs: readonly R[], ignoreUnknownIds = false): Promise<R[]> {
  const ids = refs.flatMap((r) => (r.id !== undefined ? [r.id] : []));
  const externalIds = refs.flatMap((r) => (r.externalId !== undefined ? [r.externalId] : []));
  const scope = visibleIn(services, transformationModel.catalog).where;
  const rows = await services.db.all<{ id: number; external_id: string; hidden: number }>(
    sql`SELECT id, external_id, CASE WHEN is_public = ${0} AND (owner IS NULL OR owner <> ${principal.subject}) THEN 1 ELSE 0 END AS hidden
      FROM transformations WHERE project_id = ${projectId} AND (id IN (${ids}) OR external_id IN (${externalIds}))${scope ? sql` AND ${scope}` : sql``}`,
  );
  if (!rows.some((r) => Number(r.hidden) === 1)) return [...refs];
  const seen = rows.filter((r) => Number(r.hidden) === 0);
  const seenIds = new Set(seen.map((r) => Number(r.id)));
  const seenExternalIds = new Set(seen.map((r) => r.external_id));
  const known = (r: R) => (r.id !== undefined ? seenIds.has(r.id) : seenExternalIds.has(r.externalId!));
  // Listed with the unknown ones of the request, so that the answer is the one it would be if they did not exist.
  if (!ignoreUnknownIds) throw missingItems(refs.filter((r) => !known(r)).map((r) => (r.id !== undefined ? { id: r.id } : { externalId: r.externalId! })));
  return refs.filter(known);
}

/**
 * The ids of the project's transformations that `nameRegex`, `queryRegex` (a match anywhere in the text)
 * and `tags` (any of them) let through, matched here since neither database runs these expressions the
 * same way; undefined when the filter has none of them.
 */
async function matchedIds(f: TransformationFilter, services: Services, projectId: number): Promise<number[] | undefined> {
  if (f.nameRegex === undefined && f.queryRegex === undefined && f.tags === undefined) return undefined;
  const name = f.nameRegex === undefined ? undefined : linearRegex(f.nameRegex, 'filter.nameRegex');
  const query = f.queryRegex === undefined ? undefined : linearRegex(f.queryRegex, 'filter.queryRegex');
  const tags = f.tags && new Set(f.tags.containsAny);
  const rows = await services.db.all<{ id: number; name: string; query: string | null; tags: string | null }>(
    query ? sql`SELECT id, name, query, tags FROM transformations WHERE project_id = ${projectId}` : sql`SELECT id, name, NULL AS query, tags FROM transformations WHERE project_id = ${projectId}`,
  );
  return rows
    .filter((r) => (!name || name.test(r.name)) && (!query || query.test(r.query ?? '')) && (!tags || (JSON.parse(r.tags ?? '[]') as string[]).some((t) => tags.has(t))))
    .map((r) => Number(r.id));
}

/** Ids of the project's transformations private to principals other than this one: to it they do not exist. */
export async function othersPrivate(services: Services, principal: Principal, projectId: number): Promise<number[]> {
  const rows = await services.db.all<{ id: number }>(
    sql`SELECT id FROM transformations WHERE project_id = ${projectId} AND is_public = ${0} AND (owner IS NULL OR owner <> ${principal.subject})`,
  );
  return rows.map((r) => Number(r.id));
}

/** A filter of the items of `catalog` (jobs, notifications) that keeps out those of transformations hidden from the principal. */
export async function ofSeenTransformations(services: Services, principal: Principal, projectId: number, catalog: ResourceCatalog): Promise<FilterNode | undefined> {
  const hidden = await othersPrivate(services, principal, projectId);
  return hidden.length === 0 ? undefined : { op: 'not', arg: inLeaf(catalog, 'transformationId', hidden)! };
}

/**
 * The ids of a request naming items of `table` (jobs, notifications) less those of transformations hidden
 * from the principal, which answer as unknown ones: dropped with `ignoreUnknownIds`, else a 400 with `missing`.
 */
export async function withoutHiddenItems(
  services: Services,
  principal: Principal,
  projectId: number,
  table: 'transformation_jobs' | 'transformation_notifications',
  refs: ReadonlyArray<{ id: number }>,
  ignoreUnknownIds = false,
): Promise<Array<{ id: number }>> {
  const hidden = await othersPrivate(services, principal, projectId);
  if (hidden.length === 0) return [...refs];
  const rows = await services.db.all<{ id: number }>(
    sql`SELECT id FROM ${Sql.raw(table)} WHERE project_id = ${projectId} AND id IN (${refs.map((r) => r.id)}) AND transformation_id IN (${hidden})`,
  );
  const gone = new Set(rows.map((r) => Number(r.id)));
  if (gone.size > 0 && !ignoreUnknownIds) throw missingItems(refs.filter((r) => gone.has(r.id)).map((r) => ({ id: r.id })));
  return refs.filter((r) => !gone.has(r.id));
}

export async function transformationFilterNode(f: TransformationFilter, services: Services, projectId: number, principal: Principal): Promise<FilterNode | undefined> {
  const catalog = transformationModel.catalog;
  const dataSetIds = f.dataSetIds && (await resolveReferences(services.db, visibleIn(services, dataSetCatalog), projectId, f.dataSetIds, ['filter', 'dataSetIds']));
  return and([
    seenBy(principal),
    inLeaf(catalog, 'id', await matchedIds(f, services, projectId)),
    // `isPublic` says whether public transformations are included (the clients send `true` by default).
    f.isPublic === false ? equalsLeaf(catalog, 'isPublic', 0) : undefined,
    equalsLeaf(catalog, 'destinationType', f.destinationType),
    equalsLeaf(catalog, 'conflictMode', f.conflictMode),
    dataSetIds && inLeaf(catalog, 'dataSetId', dataSetIds),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
  ]);
}

/** Jobs of each transformation looked at for its running and last finished job. */
const RECENT_JOBS = 5;

/** `runningJob` and `lastFinishedJob` of each transformation, among its newest jobs. */
async function withJobDetails(services: Services, projectId: number, items: Array<Record<string, unknown>>): Promise<void> {
  const ids = items.map((t) => t.id as number);
  if (ids.length === 0) return;
  const rows = await services.db.all<{ id: number }>(sql`SELECT id FROM (
      SELECT id, ROW_NUMBER() OVER (PARTITION BY transformation_id ORDER BY created_time DESC, id DESC) AS n
      FROM transformation_jobs WHERE project_id = ${projectId} AND transformation_id IN (${ids})) recent
    WHERE n <= ${RECENT_JOBS}`);
  const records = await retrieveItems(jobSpec, services, projectId, rows.map((r) => ({ id: Number(r.id) })), true);
  const jobs = (await presentJobs(services, projectId, records)).sort((a, b) => (b.createdTime as number) - (a.createdTime as number));
  for (const item of items) {
    const own = jobs.filter((j) => j.transformationId === item.id);
    const running = own.find((j) => j.status === 'Created' || j.status === 'Running');
    const finished = own.find((j) => j.status === 'Completed' || j.status === 'Failed');
    if (running) item.runningJob = running;
    if (finished) item.lastFinishedJob = finished;
  }
}

export async function listTransformations(
  services: Services,
  principal: Principal,
  project: { id: number; name: string },
  input: { filter?: TransformationFilter; limit?: number; cursor?: string | null; withJobDetails?: boolean },
) {
  const f = input.filter ?? {};
  // Nothing blocks a transformation in Strata, and it reads and writes its own project only.
  if (f.hasBlockedError === true || (f.cdfProjectName !== undefined && f.cdfProjectName !== project.name)) return { items: [] };
  const { withJobDetails: details, ...list } = input;
  const page = await listItems(spec, services, project.id, list, await transformationFilterNode(f, services, project.id, principal));
  const items = page.items.map((item) => present(item, principal));
  if (details) await withJobDetails(services, project.id, items);
  return { ...page, items };
}

export async function transformationsByIds(
  services: Services,
  principal: Principal,
  projectId: number,
  body: { items: ReadonlyArray<{ id?: number; externalId?: string }>; ignoreUnknownIds?: boolean; withJobDetails?: boolean },
) {
  const refs = await withoutOthersPrivate(services, principal, projectId, body.items, body.ignoreUnknownIds);
  const items = (await retrieveItems(spec, services, projectId, refs, body.ignoreUnknownIds ?? false)).map((item) => present(item, principal));
  if (body.withJobDetails) await withJobDetails(services, projectId, items);
  return { items };
}

// Jobs.

const jobSpec = fromModel(transformationJobModel) as ResourceSpec<unknown>;

/**
 * Records a run of the transformation `tf` (its values as stored) by the durable job `runner`: what it runs
 * is what the transformation said when the run began.
 */
export async function recordRun(db: Queryable, project: { id: number; name: string }, tf: Values, runner: number, grant: SessionGrant | undefined, now: number): Promise<Item> {
  const values: Values = {
    uuid: randomUUID(),
    transformationId: tf.id as number,
    transformationExternalId: tf.externalId,
    sourceProject: project.name,
    destinationProject: project.name,
    destination: tf.destination,
    conflictMode: tf.conflictMode,
    query: tf.query,
    ignoreNullFields: tf.ignoreNullFields,
    runner,
    runGrant: grant ?? null,
  };
  const [id] = await insertItems(db, transformationJobModel.table, project.id, [values], now);
  const { runner: _r, runGrant: _g, ...shown } = values;
  return { ...shown, id, createdTime: now, lastUpdatedTime: now } as Item;
}

const STATUS: Record<Job['state'], string> = { queued: 'Created', running: 'Running', succeeded: 'Completed', failed: 'Failed', cancelled: 'Failed', timedOut: 'Failed' };

async function runnerIds(db: Queryable, projectId: number, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db.all<{ id: number; runner: number }>(sql`SELECT id, runner FROM transformation_jobs WHERE project_id = ${projectId} AND id IN (${ids})`);
  return new Map(rows.map((r) => [Number(r.id), Number(r.runner)]));
}

/** Job records as the API gives them, with their durable jobs' state, times and error. */
async function presentJobs(services: Services, projectId: number, items: readonly Item[]): Promise<Array<Record<string, unknown>>> {
  const runners = await runnerIds(services.db, projectId, items.map((i) => i.id));
  const out = [];
  for (const item of items) {
    const job = await services.jobs!.get(services.db, projectId, runners.get(item.id)!);
    const { lastUpdatedTime: _, ...record } = item;
    out.push({
      ...record,
      status: job ? STATUS[job.state] : 'Failed',
      ...(job?.startedTime !== undefined ? { startedTime: job.startedTime } : {}),
      ...(job?.finishedTime !== undefined ? { finishedTime: job.finishedTime } : {}),
      ...(job ? { lastSeenTime: job.lastUpdatedTime } : {}),
      ...(job?.state === 'cancelled' ? { error: 'The job was cancelled' } : job?.error !== undefined && job.state !== 'succeeded' ? { error: job.error } : {}),
    });
  }
  return out;
}

export async function runTransformation(services: Services, project: { id: number; name: string }, body: { id?: number; externalId?: string; nonce?: Nonce }) {
  const ref = body.id !== undefined ? { id: body.id } : { externalId: body.externalId };
  const tf = await getItem(spec, services, project.id, ref as { id: number });
  const own = await services.db.get<{ s: string | null; d: string | null }>(
    sql`SELECT source_grant AS s, destination_grant AS d FROM transformations WHERE project_id = ${project.id} AND id = ${tf.id}`,
  );
  const bound = body.nonce && (await nonceBinder(api(services), project.name)(body.nonce, ['nonce']));
  if (!bound && (!own?.s || !own?.d)) {
    throw badRequest(`The transformation ${JSON.stringify(ref)} has no ${own?.s ? 'destination' : 'source'} credentials: set sourceNonce and destinationNonce, or give a nonce to run it with`);
  }
  return inWrite(services, async (services) => {
    const runner = await services.jobs!.start(services.db, { projectId: project.id, kind: RUN_KIND, payload: {} });
    const record = await recordRun(services.db, project, tf, runner, bound?.grant, services.now());
    return (await presentJobs(services, project.id, [record]))[0];
  });
}

export async function listJobs(services: Services, principal: Principal, projectId: number, q: { transformationId?: number; transformationExternalId?: string; limit?: number; cursor?: string }) {
  const catalog = transformationJobModel.catalog;
  const node = and([
    equalsLeaf(catalog, 'transformationId', q.transformationId),
    equalsLeaf(catalog, 'transformationExternalId', q.transformationExternalId),
    await ofSeenTransformations(services, principal, projectId, catalog),
  ]);
  const page = await listItems(jobSpec, services, projectId, { filter: q, sort: [{ property: ['createdTime'], order: 'desc' }], limit: q.limit, cursor: q.cursor }, node);
  return { ...page, items: await presentJobs(services, projectId, page.items) };
}

export async function jobsByIds(services: Services, principal: Principal, projectId: number, items: ReadonlyArray<{ id: number }>, ignoreUnknownIds = false) {
  const refs = await withoutHiddenItems(services, principal, projectId, 'transformation_jobs', items, ignoreUnknownIds);
  return { items: await presentJobs(services, projectId, await retrieveItems(jobSpec, services, projectId, refs, ignoreUnknownIds)) };
}

export async function jobMetrics(services: Services, principal: Principal, projectId: number, id: number) {
  await withoutHiddenItems(services, principal, projectId, 'transformation_jobs', [{ id }]);
  const record = await getItem(jobSpec, services, projectId, id);
  const runner = (await runnerIds(services.db, projectId, [record.id])).get(record.id)!;
  const job = await services.jobs!.get(services.db, projectId, runner);
  const counts = ((job?.result ?? job?.progress) as Record<string, number> | undefined) ?? {};
  const timestamp = job?.lastUpdatedTime ?? record.createdTime;
  return { items: Object.entries(counts).map(([name, count]) => ({ timestamp, name, count })) };
}

/** Cancels the running (or waiting) jobs of a transformation. */
export async function cancelTransformation(services: Services, projectId: number, ref: { id?: number; externalId?: string }) {
  const tf = await getItem(spec, services, projectId, (ref.id !== undefined ? { id: ref.id } : { externalId: ref.externalId }) as { id: number });
  return inWrite(services, async (services) => {
    const rows = await services.db.all<{ runner: number }>(sql`SELECT runner FROM transformation_jobs WHERE project_id = ${projectId} AND transformation_id = ${tf.id}`);
    for (const r of rows) await services.jobs!.cancel(services.db, projectId, Number(r.runner));
    return {};
  });
}

// Reading sources.

type Call = (path: string, body: unknown) => Promise<any>;

/** Lists the items of an operation page by page, `want` at most. */
async function pages(call: Call, path: string, body: Record<string, unknown>, want: number): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = (await call(path, { ...body, limit: Math.min(1000, want - items.length), ...(cursor ? { cursor } : {}) })) as { items: unknown[]; nextCursor?: string };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && items.length < want);
  return items;
}

/** The engine's column type of a view property (see the docs' table); connections have none and are left out. */
function propertyColumn(type: { type?: string; list?: boolean } | undefined): ColumnType | undefined {
  if (!type?.type) return undefined;
  if (type.list || type.type === 'json') return 'JSON';
  if (type.type === 'direct') return 'REFERENCE';
  if (type.type === 'int32' || type.type === 'int64') return 'BIGINT';
  if (type.type === 'float32' || type.type === 'float64') return 'DOUBLE';
  if (type.type === 'boolean') return 'BOOLEAN';
  return 'VARCHAR';
}

type ViewRef = { space: string; externalId: string; version: string };

/** The columns of a view's properties that have values (connections left out). */
async function viewColumns(call: Call, ref: ViewRef, at: string): Promise<Column[]> {
  const found = (await call('/models/views/byids', { items: [ref] })) as { items: Array<{ properties: Record<string, { type?: { type?: string; list?: boolean } }> }> };
  if (found.items.length === 0) throw badRequest(`${at}: there is no view ${JSON.stringify(ref)}`);
  return Object.entries(found.items[0].properties).flatMap(([name, p]) => {
    const type = propertyColumn(p.type);
    return type ? [[name, type] as const] : [];
  });
}

async function loadNodes(call: Call, view: Extract<TableRef, { kind: 'nodes' }>, want: number) {
  const ref = { space: view.space, externalId: view.externalId, version: view.version };
  const properties = await viewColumns(call, ref, 'cdf_nodes');
  const source = { type: 'view', ...ref };
  const nodes = await pages(call, '/models/instances/list', { instanceType: 'node', sources: [{ source }], filter: { hasData: [source] } }, want);
  const key = `${view.externalId}/${view.version}`;
  const items = (nodes as Array<Record<string, any>>).map((n) => ({
    space: n.space,
    externalId: n.externalId,
    createdTime: n.createdTime,
    lastUpdatedTime: n.lastUpdatedTime,
    ...(n.properties?.[view.space]?.[key] ?? {}),
  }));
  const columns: Column[] = [
    ['space', 'VARCHAR'],
    ['externalId', 'VARCHAR'],
    ['createdTime', 'TIMESTAMP'],
    ['lastUpdatedTime', 'TIMESTAMP'],
    ...properties.filter(([name]) => !['space', 'externalId', 'createdTime', 'lastUpdatedTime'].includes(name)),
  ];
  return { columns, items };
}

/** Calls operations with the credential; a refusal of the API becomes an error of the same status, saying what was being read. */
function reader(api: SelfCaller, project: string, credential: Credential, what: string, signal?: AbortSignal): Call {
  return async (path, body) => {
    signal?.throwIfAborted();
    const res = await api.call({ project, credential, method: 'POST', path, body });
    if (res.status !== 200) {
      const message = (res.body as { error?: { message?: string } })?.error?.message ?? `status ${res.status}`;
      throw new ApiError(res.status, `Reading ${what}: ${message}`);
    }
    return res.body;
  };
}

/** Reads a table's rows with the credential, page by page. */
export function sourceLoader(api: SelfCaller, project: string, credential: Credential, maxRows: number, signal?: AbortSignal) {
  return async (table: TableRef, limit: number | undefined): Promise<{ columns: readonly Column[]; items: unknown[] }> => {
    const call = reader(api, project, credential, table.kind === 'nodes' ? 'cdf_nodes' : `_cdf.${table.name}`, signal);
    const want = limit ?? maxRows + 1;
    const read = table.kind === 'nodes' ? await loadNodes(call, table, want) : { columns: sourceTable(table.name).columns, items: await pages(call, sourceTable(table.name).path, {}, want) };
    if (limit === undefined && read.items.length > maxRows) throw badRequest(`${table.name} has more than ${maxRows} rows, more than a run reads`);
    return read;
  };
}

function bearerOf(authorization: string | undefined): string {
  return (authorization ?? '').replace(/^Bearer\s+/i, '');
}

/** Runs a query on the caller's behalf and answers its first rows with their schema. */
export async function previewQuery(services: Services, project: { name: string }, authorization: string | undefined, body: PreviewBody, signal?: AbortSignal) {
  const parsed = await parseQuery(body.query, 'query');
  const load = sourceLoader(api(services), project.name, { token: bearerOf(authorization) }, RUN_LIMITS.sourceRows, signal);
  let result;
  try {
    const sourceLimit = body.sourceLimit === null ? undefined : (body.sourceLimit ?? PREVIEW_LIMITS.sourceLimit);
    result = await runQuery(parsed, { load, sourceLimit, limit: body.limit ?? PREVIEW_LIMITS.limit, signal, timeoutMs: (body.timeout ?? PREVIEW_LIMITS.timeoutSeconds) * 1000 });
  } catch (error) {
    if (error instanceof QueryFailed) throw badRequest(`The query failed: ${error.message}`);
    throw error;
  }
  const rows = result.rows.slice(0, body.limit ?? PREVIEW_LIMITS.limit);
  const items = body.convertToString ? rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === null ? null : typeof v === 'object' ? JSON.stringify(v) : String(v)]))) : rows;
  return { schema: { items: result.columns }, results: { items } };
}

const SQL_TYPES: Record<ColumnType, [string, string | { type: string }]> = {
  BIGINT: ['bigint', 'long'],
  VARCHAR: ['string', 'string'],
  BOOLEAN: ['boolean', 'boolean'],
  DOUBLE: ['double', 'double'],
  TIMESTAMP: ['timestamp', 'timestamp'],
  MAP: ['map<string,string>', { type: 'map' }],
  'BIGINT[]': ['array<bigint>', { type: 'array' }],
  'VARCHAR[]': ['array<string>', { type: 'array' }],
  JSON: ['string', 'string'],
  REFERENCE: ['struct<space:string,externalId:string>', { type: 'struct' }],
};

const schemaItems = (columns: readonly Column[], required: readonly string[]) =>
  columns.map(([name, type]) => ({ name, sqlType: SQL_TYPES[type][0], type: SQL_TYPES[type][1], nullable: !required.includes(name) }));

const DATAPOINT_COLUMNS: readonly Column[] = [
  ['externalId', 'VARCHAR'],
  ['id', 'BIGINT'],
  ['timestamp', 'TIMESTAMP'],
  ['value', 'DOUBLE'],
];

/** The columns a classic resource destination takes, for the schema endpoints. */
export function destinationSchema(schemaType: string) {
  if (schemaType === 'datapoints') return { items: schemaItems(DATAPOINT_COLUMNS, ['timestamp']) };
  if (!isSourceTable(schemaType)) throw badRequest(`There is no schema of "${schemaType}"; there are ${[...Object.keys(SOURCE_TABLES), 'datapoints'].join(', ')}, instances and sequence_rows`);
  const kept = ['createdTime', 'lastUpdatedTime', 'rootId'];
  return { items: schemaItems(SOURCE_TABLES[schemaType].columns.filter(([name]) => !kept.includes(name)), ['externalId']) };
}

/** The columns written to the nodes or edges of a view, read as the caller. */
export async function instanceSchema(
  services: Services,
  project: { name: string },
  authorization: string | undefined,
  q: { viewSpace?: string; viewExternalId?: string; viewVersion?: string; instanceType?: 'nodes' | 'edges'; withInstanceSpace?: boolean },
) {
  const base: Column[] = [['externalId', 'VARCHAR'], ...(q.withInstanceSpace ? [['space', 'VARCHAR'] as const] : [])];
  const edge: Column[] = q.instanceType === 'edges' ? [['startNode', 'REFERENCE'], ['endNode', 'REFERENCE']] : [];
  if (!q.viewSpace || !q.viewExternalId || !q.viewVersion) {
    if (q.viewSpace || q.viewExternalId || q.viewVersion) throw badRequest('viewSpace, viewExternalId and viewVersion name a view together');
    return { items: schemaItems([...base, ...edge], ['externalId', 'startNode', 'endNode']) };
  }
  const call = reader(api(services), project.name, { token: bearerOf(authorization) }, 'the view');
  const properties = await viewColumns(call, { space: q.viewSpace, externalId: q.viewExternalId, version: q.viewVersion }, 'viewExternalId');
  return { items: schemaItems([...base, ...edge, ...properties], ['externalId', 'startNode', 'endNode']) };
}

const SEQUENCE_TYPES: Record<string, ColumnType> = { STRING: 'VARCHAR', DOUBLE: 'DOUBLE', LONG: 'BIGINT' };

/** The columns written to the rows of a sequence, read as the caller. */
export async function sequenceRowSchema(services: Services, project: { name: string }, authorization: string | undefined, externalId: string) {
  const call = reader(api(services), project.name, { token: bearerOf(authorization) }, 'the sequence');
  const found = (await call('/sequences/byids', { items: [{ externalId }] })) as { items: Array<{ columns: Array<{ externalId: string; valueType: string }> }> };
  const columns: Column[] = found.items[0].columns.map((c) => [c.externalId, SEQUENCE_TYPES[c.valueType] ?? 'VARCHAR']);
  return { items: schemaItems([['externalId', 'VARCHAR'], ['rowNumber', 'BIGINT'], ...columns], ['externalId', 'rowNumber']) };
}
