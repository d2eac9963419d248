/**
 * Functions: their own rules on top of the shared item operations. A function is created from a zip file
 * uploaded through the files area, whose entries are checked at once (code.ts) and whose bytes are copied
 * to a blob of the function's own; a job then deploys it (Queued, Deploying, then Ready or Failed). A call
 * binds the session of its nonce, is recorded `Running` and is run by a job (jobs.ts); one function has at
 * most FUNCTION_LIMITS.runningCalls calls running, and the next is a 429. A schedule binds its session
 * when it is created and makes a call at each time its cron expression names.
 */
import { randomUUID } from 'node:crypto';
import { accessFor } from '../../auth/access.js';
import { grantsFor, type Capability, type Principal } from '../../auth/principal.js';
import { Readable } from 'node:stream';
import type { Project } from '../../http/route.js';
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import type { SessionGrant } from '../../http/self-calls.js';
import type { Services } from '../../http/services.js';
import { and, equalsLeaf, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import type { FilterNode } from '../../query/filter.js';
import type { BlobStore } from '../../storage/blobs/blob-store.js';
import { allocateIds } from '../../storage/ids.js';
import type { Jobs } from '../../storage/jobs/jobs.js';
import { cronOf, InvalidSchedule } from '../../storage/jobs/schedules.js';
import { holdLock } from '../../storage/locks.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { createItems, fromModel, getItem, inWrite, retrieveItems, underParent, type Path, type ResourceSpec, type WriteContext } from '../crud.js';
import { openContent } from '../files/content.js';
import { checkCode, CodeError, CODE_LIMITS } from './code.js';
import { callModel, FUNCTION_LIMITS, functionModel, scheduleModel } from './model.js';
import { languageOf } from './sandbox.js';
import type { CallBody, CallFilter, FunctionCreate, FunctionFilter, ScheduleCreate, ScheduleFilter } from './schema.js';
import { functionsSettings } from './settings.js';

export const DEPLOY_JOB = 'functions.deploy';
export const CALL_JOB = 'functions.call';
export const SCHEDULE_JOB = 'functions.schedule';
/** Times a call is run before it ends `Failed` because its runner stopped each time. */
export const CALL_ATTEMPTS = 3;

/** What the limits operation answers; a function's cpu and memory are held to them. */
export const RESOURCE_LIMITS = {
  cpuCores: { min: 0.1, max: 1, default: 0.25 },
  memoryGb: { min: 0.1, max: 2.5, default: 1 },
  runtimes: ['py310', 'py311', 'py312', 'py313'],
  responseSizeMb: 1,
} as const;

const DEFAULT_PATH = 'handler.py';
const SCRAMBLED = '***';

const blobsOf = (services: Pick<Services, 'blobs'>): BlobStore => services.blobs!;
const jobsOf = (services: Pick<Services, 'jobs'>): Jobs => services.jobs!;

export const functionSpec: ResourceSpec<FunctionCreate> = {
  ...fromModel(functionModel),
  async beforeDelete(ids: number[], ctx: WriteContext) {
    const { db, projectId, services } = ctx;
    const jobs = jobsOf(services);
    const running = await db.all<{ jobId: number | null }>(
      sql`SELECT job_id AS "jobId" FROM function_calls WHERE project_id = ${projectId} AND function_row IN (${ids}) AND status = 'Running'`,
    );
    for (const r of running) if (r.jobId !== null) await jobs.cancel(db, projectId, Number(r.jobId));
    const schedules = await db.all<{ id: number }>(sql`SELECT id FROM function_schedules WHERE project_id = ${projectId} AND function_id IN (${ids})`);
    for (const s of schedules) await jobs.unschedule(db, projectId, scheduleName(Number(s.id)));
    await db.run(sql`DELETE FROM function_schedules WHERE project_id = ${projectId} AND function_id IN (${ids})`);
    const keys = await db.all<{ key: string | null }>(sql`SELECT code_key AS key FROM functions WHERE project_id = ${projectId} AND id IN (${ids})`);
    db.afterCommit(() => Promise.all(keys.flatMap((k) => (k.key ? [blobsOf(services).delete(projectId, k.key).catch(() => {})] : []))));
  },
};

export const callSpec: ResourceSpec<unknown> = fromModel(callModel);

export const scheduleSpec: ResourceSpec<unknown> = {
  ...fromModel(scheduleModel),
  async beforeDelete(ids: number[], ctx: WriteContext) {
    for (const id of ids) await jobsOf(ctx.services).unschedule(ctx.db, ctx.projectId, scheduleName(id));
  },
};

/** The name of a function schedule's job schedule (storage/jobs/schedules.ts). */
export const scheduleName = (id: number) => `function-schedule:${id}`;

function within(value: number | undefined, range: { min: number; max: number }, path: Path): void {
  if (value !== undefined && (value < range.min || value > range.max)) throw badRequest(`${formatPath(path)}: ${value} is outside ${range.min} to ${range.max} (GET /functions/limits)`);
}

function checkCreate(item: FunctionCreate, path: Path): string {
  within(item.cpu, RESOURCE_LIMITS.cpuCores, [...path, 'cpu']);
  within(item.memory, RESOURCE_LIMITS.memoryGb, [...path, 'memory']);
  for (const [key, value] of Object.entries(item.secrets ?? {})) {
    if (['token', 'indexurl', 'extraindexurls'].includes(key)) throw badRequest(`${formatPath([...path, 'secrets', key])}: "${key}" is reserved`);
    if (Buffer.byteLength(key) + Buffer.byteLength(value) > FUNCTION_LIMITS.secretBytes) {
      throw badRequest(`${formatPath([...path, 'secrets', key])}: a secret's name and value together take at most ${FUNCTION_LIMITS.secretBytes} bytes`);
    }
  }
  const functionPath = item.functionPath ?? DEFAULT_PATH;
  if (!languageOf(functionPath)) throw badRequest(`${formatPath([...path, 'functionPath'])}: "${functionPath}" is not a handler file: a .py file (Python), or .js, .mjs or .cjs (JavaScript)`);
  return functionPath;
}

async function readAll(stream: Readable, max: number, path: Path): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > max) {
      stream.destroy();
      throw badRequest(`${formatPath(path)}: the file is larger than the ${max} bytes a function's code may have`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const FILES_READ: Capability = { acl: 'filesAcl', action: 'READ' };

/**
 * Creates a function from its zip file, answered `Queued`; a job deploys it. The file must be one the
 * principal may read (`filesAcl:READ` in its scope): one it may not is refused as one that does not exist.
 */
export async function createFunction(services: Services, principal: Principal, project: Project, item: FunctionCreate) {
  const projectId = project.id;
  const path: Path = ['items', 0];
  const functionPath = checkCreate(item, path);
  const readable = { ...services, access: accessFor(FILES_READ, grantsFor(principal, FILES_READ, project.name)) };
  const content = await openContent(readable, projectId, { id: item.fileId! }, [...path, 'fileId']);
  if (content.size > CODE_LIMITS.zipBytes) throw badRequest(`${formatPath([...path, 'fileId'])}: the file has ${content.size} bytes, more than the ${CODE_LIMITS.zipBytes} a function's code may have`);
  const zip = await readAll(await content.open(), CODE_LIMITS.zipBytes, [...path, 'fileId']);
  try {
    checkCode(zip, functionPath);
  } catch (error) {
    if (error instanceof CodeError) throw badRequest(`${formatPath([...path, 'fileId'])}: ${error.message}`);
    throw error;
  }
  const blobs = blobsOf(services);
  const codeKey = `functions/${randomUUID()}.zip`;
  await blobs.put(projectId, codeKey, Readable.from([zip]));
  const secrets = item.secrets ? Object.fromEntries(Object.keys(item.secrets).map((k) => [k, SCRAMBLED])) : undefined;
  const spec: ResourceSpec<FunctionCreate> = {
    ...functionSpec,
    createValues: () => ({
      status: 'Queued',
      functionPath,
      runtime: item.runtime ?? 'py313',
      functionType: 'classic',
      secrets: secrets ?? null,
      secretValues: item.secrets ?? null,
      codeKey,
    }),
  };
  try {
    return await inWrite(services, async (services) => {
      const created = await createItems(spec, services, projectId, [item]);
      await jobsOf(services).start(services.db, { projectId, kind: DEPLOY_JOB, payload: { functionId: created[0].id } });
      return created;
    });
  } catch (error) {
    await blobs.delete(projectId, codeKey).catch(() => {});
    throw error;
  }
}

export function functionFilterNode(f: FunctionFilter | undefined): FilterNode | undefined {
  if (!f) return undefined;
  const c = functionModel.catalog;
  return and([
    equalsLeaf(c, 'name', f.name),
    equalsLeaf(c, 'owner', f.owner),
    equalsLeaf(c, 'fileId', f.fileId),
    equalsLeaf(c, 'status', f.status),
    prefixLeaf(c, 'externalId', f.externalIdPrefix),
    rangeLeaf(c, 'createdTime', f.createdTime),
    metadataNode(c, f.metadata),
  ]);
}

export function callFilterNode(f: CallFilter | undefined): FilterNode | undefined {
  if (!f) return undefined;
  const c = callModel.catalog;
  return and([equalsLeaf(c, 'scheduleId', f.scheduleId), equalsLeaf(c, 'status', f.status), rangeLeaf(c, 'startTime', f.startTime), rangeLeaf(c, 'endTime', f.endTime)]);
}

export function scheduleFilterNode(f: ScheduleFilter | undefined): FilterNode | undefined {
  if (!f) return undefined;
  const c = scheduleModel.catalog;
  const functionId = f.functionId ?? f.FunctionId;
  const functionExternalId = f.functionExternalId ?? f.FunctionExternalId;
  if (functionId !== undefined && functionExternalId !== undefined) throw badRequest('filter: give functionId or functionExternalId, not both');
  return and([
    equalsLeaf(c, 'name', f.name),
    equalsLeaf(c, 'functionId', functionId),
    equalsLeaf(c, 'functionExternalId', functionExternalId),
    rangeLeaf(c, 'createdTime', f.createdTime),
    equalsLeaf(c, 'cronExpression', f.cronExpression),
  ]);
}

/** The calls of the function `functionId` (a 400 naming it when there is no such function the request sees). */
export function callsOf(services: Services, projectId: number, functionId: number) {
  return underParent(callSpec, functionSpec as ResourceSpec<unknown>, services, projectId, { id: functionId });
}

export interface CallPayload {
  callId: number;
  functionId: number;
  grant: SessionGrant;
}

/** Whether the function has its most calls running. */
async function atMostCalls(db: Queryable, projectId: number, functionId: number): Promise<boolean> {
  const running = await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM function_calls WHERE project_id = ${projectId} AND function_row = ${functionId} AND status = 'Running'`);
  return Number(running!.n) >= FUNCTION_LIMITS.runningCalls;
}

const tooManyCalls = (functionId: number) =>
  new ApiError(
    429,
    `The function ${functionId} already has ${FUNCTION_LIMITS.runningCalls} calls running, the most one function may have at once; call it again once one has ended`,
    {},
    { 'retry-after': '1' },
  );

/**
 * Records a call of the function `functionId` as `Running` and starts the job that runs it, in the
 * transaction `tx`; undefined when the function already has its most calls running.
 */
export async function startCall(
  tx: Queryable,
  jobs: Jobs,
  projectId: number,
  functionId: number,
  grant: SessionGrant,
  data: unknown,
  now: number,
  schedule?: { scheduleId: number; scheduledTime?: number },
): Promise<number | undefined> {
  await holdLock(tx, 'functionCalls', functionId);
  if (await atMostCalls(tx, projectId, functionId)) return undefined;
  const [callId] = await allocateIds(tx, 'function_calls', 1);
  // One attempt more than the call's: a call whose last run's process died is ended `Failed` by that attempt (jobs.ts).
  const jobId = await jobs.start(tx, { projectId, kind: CALL_JOB, payload: { callId, functionId, grant } satisfies CallPayload, maxAttempts: CALL_ATTEMPTS + 1 });
  await tx.run(sql`INSERT INTO function_calls (id, project_id, function_row, function_id, status, start_time, data, schedule_id, scheduled_time, job_id, created_time, last_updated_time)
    VALUES (${callId}, ${projectId}, ${functionId}, ${functionId}, 'Running', ${now}, ${JSON.stringify(data ?? {})}, ${schedule?.scheduleId ?? null}, ${schedule?.scheduledTime ?? null}, ${jobId}, ${now}, ${now})`);
  await tx.run(sql`UPDATE functions SET last_called = ${now} WHERE project_id = ${projectId} AND id = ${functionId}`);
  return callId;
}

/** Calls a function: the call, `Running`, answered at once. */
export async function callFunction(services: Services, project: Project, functionId: number, body: CallBody) {
  if (!functionsSettings(services).execution) {
    throw new ApiError(501, 'Function calls are turned off on this server (STRATA_FUNCTIONS_EXECUTION=off): it runs no function code');
  }
  const fn = await getItem(functionSpec as ResourceSpec<unknown>, services, project.id, functionId);
  if (body.nonce === undefined) throw badRequest('nonce: a call needs the nonce of a session (POST /sessions) for its code to run with');
  if (fn.status !== 'Ready') throw badRequest(`The function ${functionId} cannot be called while its status is ${fn.status as string}; call it once it is Ready`);
  // Refused before its nonce is used, so the caller can call again with it; the count is checked again
  // under the lock when the call is recorded.
  if (await atMostCalls(services.db, project.id, functionId)) throw tooManyCalls(functionId);
  const grant = await services.api!.bind(project.name, body.nonce);
  const callId = await inWrite(services, async (services) => {
    const id = await startCall(services.db, jobsOf(services), project.id, functionId, grant, body.data, services.now());
    if (id === undefined) throw tooManyCalls(functionId);
    return id;
  });
  return getItem(await callsOf(services, project.id, functionId), services, project.id, callId);
}

/** A hidden JSON column of a call the request sees (its response or logs); a 400 naming the call when there is none. */
export async function callColumn(services: Services, projectId: number, functionId: number, callId: number, column: 'response' | 'logs'): Promise<unknown> {
  await getItem(await callsOf(services, projectId, functionId), services, projectId, callId);
  const row = await services.db.get<{ v: string | null }>(sql`SELECT ${Sql.raw(column)} AS v FROM function_calls WHERE project_id = ${projectId} AND id = ${callId}`);
  return row?.v ? JSON.parse(row.v) : null;
}

/** Creates a schedule of a function: its session is bound now, and a job schedule makes its calls. */
export async function createSchedule(services: Services, project: Project, item: ScheduleCreate) {
  const path: Path = ['items', 0];
  if ((item.functionId === undefined) === (item.functionExternalId === undefined)) {
    throw badRequest(`${formatPath(path)}: give functionId or functionExternalId (one of them)`);
  }
  const ref = item.functionId !== undefined ? { id: item.functionId } : { externalId: item.functionExternalId! };
  const [fn] = await retrieveFunction(services, project.id, ref, [...path, item.functionId !== undefined ? 'functionId' : 'functionExternalId']);
  try {
    cronOf(item.cronExpression!, 'UTC');
  } catch (error) {
    if (error instanceof InvalidSchedule) throw badRequest(`${formatPath([...path, 'cronExpression'])}: "${item.cronExpression}" is not a cron expression (five fields: minute hour day-of-month month day-of-week)`);
    throw error;
  }
  if (item.nonce === undefined) throw badRequest(`${formatPath([...path, 'nonce'])}: a schedule needs the nonce of a session (POST /sessions) for its calls to run with`);
  const grant = await services.api!.bind(project.name, item.nonce);
  const spec: ResourceSpec<unknown> = {
    ...scheduleSpec,
    createValues: () => ({
      functionId: fn.id,
      functionExternalId: (fn.externalId as string | undefined) ?? null,
      when: `At the times of the cron expression ${item.cronExpression} (UTC)`,
      sessionId: String(grant.sessionId),
      data: item.data ?? {},
      session: grant,
    }),
  };
  const { nonce: _nonce, data: _data, ...fields } = item;
  return inWrite(services, async (services) => {
    const created = await createItems(spec, services, project.id, [fields]);
    await jobsOf(services).schedule(services.db, { projectId: project.id, name: scheduleName(created[0].id), kind: SCHEDULE_JOB, cron: item.cronExpression!, payload: { scheduleId: created[0].id } });
    return created;
  });
}

async function retrieveFunction(services: Services, projectId: number, ref: { id: number } | { externalId: string }, path: Path) {
  const found = await retrieveItems(functionSpec as ResourceSpec<unknown>, services, projectId, [ref], true);
  if (found.length === 0) throw badRequest(`${formatPath(path)}: the function ${JSON.stringify(ref)} does not exist`);
  return found;
}

export async function scheduleInput(services: Services, projectId: number, scheduleId: number) {
  await getItem(scheduleSpec, services, projectId, scheduleId);
  const row = await services.db.get<{ data: string | null }>(sql`SELECT data FROM function_schedules WHERE project_id = ${projectId} AND id = ${scheduleId}`);
  return { id: scheduleId, data: row?.data ? JSON.parse(row.data) : {} };
}
