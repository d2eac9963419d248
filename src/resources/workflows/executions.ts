/**
 * Executions of workflow versions as the API answers them: run (with the caller's session, bound from its
 * nonce and kept for the execution's tasks), list, read with the tasks run so far, cancel, retry, and the
 * completion of an asynchronous task by whoever it handed its task id to.
 */
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import type { SelfCaller, SessionGrant } from '../../http/self-calls.js';
import type { Services } from '../../http/services.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { reachedVersion, workflowFilterSql, type StoredDefinition } from './definitions.js';
import { underReachedWorkflow } from './scope.js';
import {
  completeTask,
  endExecution,
  executionLimitReached,
  failTask,
  loadExecution,
  loadTask,
  loadTasks,
  lockExecution,
  parse,
  recordOutput,
  retryExecution,
  startExecution,
  type EngineDeps,
  type ExecutionRow,
  type TaskRow,
} from './engine.js';
import { pageOf } from './paging.js';
import type { ListExecutionsBody, TaskDefinition } from './schema.js';

export function engineDeps(services: Services): EngineDeps {
  return { jobs: services.jobs!, now: services.now };
}

export function executionJson(r: ExecutionRow) {
  return {
    id: r.id,
    workflowExternalId: r.workflow_external_id,
    version: r.version,
    status: r.status,
    engineExecutionId: r.engine_execution_id,
    createdTime: Number(r.created_time),
    ...(r.start_time !== null ? { startTime: Number(r.start_time) } : {}),
    ...(r.end_time !== null ? { endTime: Number(r.end_time) } : {}),
    ...(r.reason !== null ? { reasonForIncompletion: r.reason } : {}),
    metadata: parse(r.metadata) ?? {},
  };
}

export function taskJson(t: TaskRow) {
  return {
    id: t.id,
    externalId: t.external_id,
    ...(t.parent ? { parentTaskExternalId: t.parent } : {}),
    status: t.status,
    taskType: t.task_type,
    ...(t.start_time !== null ? { startTime: Number(t.start_time) } : {}),
    ...(t.end_time !== null ? { endTime: Number(t.end_time) } : {}),
    input: parse(t.input) ?? {},
    output: parse(t.output) ?? {},
    ...(t.reason !== null ? { reasonForIncompletion: t.reason } : {}),
  };
}

/** The most an execution's input may hold, as JSON. */
export const MAX_INPUT_BYTES = 100 * 1024;

/** Refuses an input larger than an execution takes. */
export function requireInputSize(input: unknown, path: string): void {
  if (input !== undefined && Buffer.byteLength(JSON.stringify(input)) > MAX_INPUT_BYTES) throw badRequest(`${path}: the input is larger than ${MAX_INPUT_BYTES} bytes as JSON`);
}

/** Binds a nonce handed over in a request; one that is not a usable nonce is the caller's mistake. */
export async function bindNonce(api: SelfCaller, project: string, nonce: string, path: string): Promise<SessionGrant> {
  try {
    return await api.bind(project, nonce);
  } catch (error) {
    throw badRequest(`${path}: ${(error as Error).message}`);
  }
}

/** The definition of a version, or a 400 naming what does not exist. */
export async function versionDefinition(services: Services, projectId: number, workflowExternalId: string, version: string, where: string): Promise<StoredDefinition> {
  const row = await reachedVersion(services, services.db, projectId, workflowExternalId, version);
  if (!row) throw badRequest(`${where}: there is no version "${version}" of the workflow "${workflowExternalId}"`);
  return JSON.parse(row.definition) as StoredDefinition;
}

/** A 429 when the workflow has its most executions running. */
async function refuseAtLimit(tx: Queryable, projectId: number, workflowExternalId: string): Promise<void> {
  const reason = await executionLimitReached(tx, projectId, workflowExternalId);
  if (reason) throw new ApiError(429, reason, {}, { 'retry-after': '1' });
}

export async function runVersion(
  services: Services,
  project: { id: number; name: string },
  workflowExternalId: string,
  version: string,
  body: { authentication: { nonce: string }; input?: Record<string, unknown>; metadata?: Record<string, string> },
) {
  requireInputSize(body.input, 'input');
  const definition = await versionDefinition(services, project.id, workflowExternalId, version, 'path');
  const grant = await bindNonce(services.api!, project.name, body.authentication.nonce, 'authentication.nonce');
  const id = await services.db.transaction(async (tx) => {
    await refuseAtLimit(tx, project.id, workflowExternalId);
    return startExecution(tx, engineDeps(services), project.id, { workflowExternalId, version, definition, input: body.input, metadata: body.metadata, grant });
  });
  return executionJson((await loadExecution(services.db, project.id, id))!);
}

export async function listExecutions(services: Services, projectId: number, body: ListExecutionsBody) {
  const limit = body.limit ?? 100;
  const f = body.filter ?? {};
  const identity = { executions: f };
  const after = body.cursor ? (services.cursors.decode(body.cursor, identity) as [number, string]) : undefined;
  const rows = await services.db.all<ExecutionRow>(sql`SELECT * FROM workflow_executions WHERE project_id = ${projectId}
    AND ${underReachedWorkflow(services, projectId)} AND ${workflowFilterSql(f.workflowFilters, 'version')}
    AND ${f.createdTimeStart !== undefined ? sql`created_time >= ${f.createdTimeStart}` : Sql.raw('TRUE')}
    AND ${f.createdTimeEnd !== undefined ? sql`created_time <= ${f.createdTimeEnd}` : Sql.raw('TRUE')}
    AND ${f.status?.length ? sql`status IN (${f.status})` : Sql.raw('TRUE')}
    AND ${after ? sql`(created_time < ${after[0]} OR (created_time = ${after[0]} AND id > ${after[1]}))` : Sql.raw('TRUE')}
    ORDER BY created_time DESC, id LIMIT ${limit + 1}`);
  return pageOf(services, rows, limit, identity, (r) => [Number(r.created_time), r.id], executionJson);
}

/** The execution, if the request reaches its workflow; a 404 otherwise. */
async function existing(services: Services, db: Queryable, projectId: number, id: string): Promise<ExecutionRow> {
  const row = await db.get<ExecutionRow>(sql`SELECT * FROM workflow_executions WHERE project_id = ${projectId} AND id = ${id} AND ${underReachedWorkflow(services, projectId)}`);
  if (!row) throw notFound(`There is no workflow execution "${id}"`);
  return row;
}

export async function getExecution(services: Services, projectId: number, id: string) {
  return services.db.snapshot(async (db) => {
    const row = await existing(services, db, projectId, id);
    return {
      ...executionJson(row),
      workflowDefinition: JSON.parse(row.definition) as StoredDefinition,
      input: parse(row.input) ?? {},
      executedTasks: (await loadTasks(db, projectId, id)).map(taskJson),
    };
  });
}

export async function cancelExecution(services: Services, projectId: number, id: string, reason: string | undefined) {
  return services.db.transaction(async (tx) => {
    const row = await existing(services, tx, projectId, id);
    if (row.status !== 'RUNNING') throw badRequest(`The workflow execution "${id}" is ${row.status}: only a RUNNING execution can be cancelled`);
    await lockExecution(tx, projectId, id, services.now());
    await endExecution(tx, projectId, id, 'TERMINATED', reason ?? 'cancelled', services.now());
    return executionJson((await loadExecution(tx, projectId, id))!);
  });
}

export async function retry(services: Services, project: { id: number; name: string }, id: string, nonce: string) {
  const row = await existing(services, services.db, project.id, id);
  if (row.status === 'RUNNING' || row.status === 'COMPLETED') throw badRequest(`The workflow execution "${id}" is ${row.status}: only a FAILED, TIMED_OUT or TERMINATED execution can be retried`);
  const grant = await bindNonce(services.api!, project.name, nonce, 'authentication.nonce');
  return services.db.transaction(async (tx) => {
    const locked = (await lockExecution(tx, project.id, id, services.now()))!;
    if (locked.status === 'RUNNING' || locked.status === 'COMPLETED') throw badRequest(`The workflow execution "${id}" is ${locked.status}: it is no longer to be retried`);
    await refuseAtLimit(tx, project.id, locked.workflow_external_id);
    await retryExecution(tx, engineDeps(services), locked, grant);
    return executionJson((await loadExecution(tx, project.id, id))!);
  });
}

/** Completes or fails a running task that waits to be completed asynchronously (`isAsyncComplete`). */
export async function updateTask(services: Services, projectId: number, taskId: string, body: { status: 'COMPLETED' | 'FAILED' | 'FAILED_WITH_TERMINAL_ERROR'; output?: Record<string, unknown> }) {
  return services.db.transaction(async (tx) => {
    const found = await loadTask(tx, projectId, taskId);
    const reached = found && (await tx.get(sql`SELECT 1 AS x FROM workflow_executions WHERE project_id = ${projectId} AND id = ${found.execution_id} AND ${underReachedWorkflow(services, projectId)}`));
    if (!found || !reached) throw notFound(`There is no workflow task "${taskId}"`);
    await lockExecution(tx, projectId, found.execution_id, services.now());
    const task = (await loadTask(tx, projectId, taskId))!;
    const def = JSON.parse(task.definition) as TaskDefinition;
    if (def.parameters.isAsyncComplete !== true) throw badRequest(`The task "${task.external_id}" is not completed asynchronously: its parameters do not set isAsyncComplete`);
    if (task.status !== 'IN_PROGRESS') throw badRequest(`The task "${task.external_id}" is ${task.status}: only a task IN_PROGRESS can be updated`);
    const output = { ...(parse<Record<string, unknown>>(task.output) ?? {}), ...(body.output ?? {}) };
    const deps = engineDeps(services);
    if (body.status === 'COMPLETED') await completeTask(tx, deps, projectId, taskId, task.attempt, output);
    else {
      await recordOutput(tx, deps, projectId, taskId, task.attempt, output);
      await failTask(tx, deps, projectId, taskId, task.attempt, { reason: 'the task was reported failed', terminal: body.status === 'FAILED_WITH_TERMINAL_ERROR', output });
    }
    return taskJson((await loadTask(tx, projectId, taskId))!);
  });
}

