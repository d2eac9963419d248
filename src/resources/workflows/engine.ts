/**
 * The execution of a workflow version, kept in `workflow_executions` and `workflow_tasks` and driven by
 * durable jobs (storage/jobs): each start (and each retry) of a task is a job, keyed by the task and its
 * attempt, and each task's timeout is a job that fires at its end. Whoever changes an execution's tasks
 * (a task job, the timeout, a cancel, a retry, an asynchronous completion) does it in one transaction that
 * first takes the execution's row, and then schedules what has become ready (`advance`): tasks whose
 * dependencies completed, with their references resolved. So a restart finds every execution where it was:
 * its jobs are in the store, and run again where their process died.
 */
import { randomUUID } from 'node:crypto';
import type { Jobs } from '../../storage/jobs/jobs.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import type { SessionGrant } from '../../http/self-calls.js';
import { withDefaults, type StoredDefinition } from './definitions.js';
import { resolveReferences, UnresolvedReference } from './references.js';
import type { TaskDefinition } from './schema.js';

export const TASK_JOB = 'workflows.task';
export const TIMEOUT_JOB = 'workflows.timeout';

export type TaskStatus = 'IN_PROGRESS' | 'CANCELED' | 'FAILED' | 'FAILED_WITH_TERMINAL_ERROR' | 'COMPLETED' | 'COMPLETED_WITH_ERRORS' | 'SCHEDULED' | 'TIMED_OUT' | 'SKIPPED';
const DONE: readonly TaskStatus[] = ['COMPLETED', 'COMPLETED_WITH_ERRORS'];
const OPEN: readonly TaskStatus[] = ['SCHEDULED', 'IN_PROGRESS'];
/** The statuses a retry of the execution starts again. */
export const RETRIED: readonly TaskStatus[] = ['CANCELED', 'FAILED', 'FAILED_WITH_TERMINAL_ERROR', 'TIMED_OUT'];

export interface EngineDeps {
  jobs: Jobs;
  now(): number;
}

export interface ExecutionRow {
  project_id: number;
  id: string;
  workflow_external_id: string;
  version: string;
  status: string;
  engine_execution_id: string;
  definition: string;
  input: string | null;
  metadata: string | null;
  grant_json: string;
  reason: string | null;
  created_time: number;
  start_time: number | null;
  end_time: number | null;
}

export interface TaskRow {
  id: string;
  execution_id: string;
  external_id: string;
  parent: string;
  task_type: string;
  status: TaskStatus;
  definition: string;
  input: string | null;
  output: string | null;
  children: string | null;
  reason: string | null;
  retries_left: number;
  attempt: number;
  seq: number;
  start_time: number | null;
  end_time: number | null;
}

export interface TaskJobPayload {
  executionId: string;
  taskId: string;
  attempt: number;
  /** How many times the task's outcome has been looked at again (a function call followed until it ends). */
  poll?: number;
}

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
export const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));

export async function loadExecution(db: Queryable, projectId: number, id: string): Promise<ExecutionRow | undefined> {
  return db.get<ExecutionRow>(sql`SELECT * FROM workflow_executions WHERE project_id = ${projectId} AND id = ${id}`);
}

export async function loadTasks(db: Queryable, projectId: number, executionId: string): Promise<TaskRow[]> {
  return db.all<TaskRow>(sql`SELECT * FROM workflow_tasks WHERE project_id = ${projectId} AND execution_id = ${executionId} ORDER BY seq`);
}

export async function loadTask(db: Queryable, projectId: number, taskId: string): Promise<TaskRow | undefined> {
  return db.get<TaskRow>(sql`SELECT * FROM workflow_tasks WHERE project_id = ${projectId} AND id = ${taskId}`);
}

/** Takes the execution's row for the rest of the transaction, so that changes of its tasks go one at a time. */
export async function lockExecution(tx: Queryable, projectId: number, id: string, now: number): Promise<ExecutionRow | undefined> {
  await tx.run(sql`UPDATE workflow_executions SET last_updated_time = ${now} WHERE project_id = ${projectId} AND id = ${id}`);
  return loadExecution(tx, projectId, id);
}

/**
 * Why the workflow can have no more executions running, when it has as many as its `maxConcurrentExecutions`.
 * Its row is held until the transaction ends, so two starts cannot both take its last place.
 */
export async function executionLimitReached(tx: Queryable, projectId: number, workflowExternalId: string): Promise<string | undefined> {
  const where = sql`project_id = ${projectId} AND external_id = ${workflowExternalId}`;
  await tx.run(sql`UPDATE workflows SET max_concurrent_executions = max_concurrent_executions WHERE ${where}`);
  const row = await tx.get<{ max: number | null; running: number }>(sql`SELECT max_concurrent_executions AS max,
      (SELECT count(*) FROM workflow_executions WHERE project_id = ${projectId} AND workflow_external_id = ${workflowExternalId} AND status = 'RUNNING') AS running
    FROM workflows WHERE ${where}`);
  if (!row || row.max === null || Number(row.running) < Number(row.max)) return undefined;
  return `The workflow "${workflowExternalId}" already has ${Number(row.max)} executions running, its maxConcurrentExecutions; run it again once one has ended`;
}

export interface NewExecution {
  workflowExternalId: string;
  version: string;
  definition: StoredDefinition;
  input?: unknown;
  metadata?: Record<string, string>;
  grant: SessionGrant;
}

/** Creates an execution and schedules its first tasks, in the caller's transaction; its id. */
export async function startExecution(tx: Queryable, deps: EngineDeps, projectId: number, spec: NewExecution): Promise<string> {
  const id = randomUUID();
  const now = deps.now();
  await tx.run(sql`INSERT INTO workflow_executions (project_id, id, workflow_external_id, version, status, engine_execution_id, definition, input, metadata,
      grant_json, created_time, start_time, last_updated_time)
    VALUES (${projectId}, ${id}, ${spec.workflowExternalId}, ${spec.version}, 'RUNNING', ${randomUUID()}, ${JSON.stringify(spec.definition)}, ${json(spec.input)},
      ${JSON.stringify(spec.metadata ?? {})}, ${JSON.stringify(spec.grant)}, ${now}, ${now}, ${now})`);
  await advance(tx, deps, projectId, id);
  return id;
}

export async function startTaskJob(tx: Queryable, deps: EngineDeps, projectId: number, payload: TaskJobPayload, runAfter?: number): Promise<void> {
  const key = `${payload.taskId}:${payload.attempt}:${payload.poll ?? 0}`;
  await deps.jobs.start(tx, { projectId, kind: TASK_JOB, payload, key, ...(runAfter !== undefined ? { runAfter } : {}), maxAttempts: 5 });
}

/** The parameters a task runs with: its definition's, references resolved (a subworkflow's own tasks resolve theirs when they run). */
function resolveInput(def: TaskDefinition, execution: ExecutionRow, tasks: readonly TaskRow[]): unknown {
  const ctx = {
    workflowInput: parse(execution.input) ?? {},
    task(externalId: string) {
      const row = tasks.find((t) => t.external_id === externalId && DONE.includes(t.status));
      return row ? { input: parse(row.input), output: parse(row.output) } : undefined;
    },
  };
  const params = def.parameters;
  if (def.type === 'subworkflow' && typeof params.subworkflow === 'object' && params.subworkflow !== null && 'tasks' in params.subworkflow) return params;
  return resolveReferences(params, ctx);
}

/**
 * Schedules every task whose dependencies are done, and ends what has no work left: a dynamic task or
 * subworkflow whose tasks are all done completes, and so, at the top, does the execution.
 */
export async function advance(tx: Queryable, deps: EngineDeps, projectId: number, executionId: string): Promise<void> {
  const execution = await lockExecution(tx, projectId, executionId, deps.now());
  if (!execution || execution.status !== 'RUNNING') return;
  const definition = JSON.parse(execution.definition) as StoredDefinition;
  for (let changed = true; changed; ) {
    changed = false;
    if ((await loadExecution(tx, projectId, executionId))?.status !== 'RUNNING') return;
    const tasks = await loadTasks(tx, projectId, executionId);
    const scopes: Array<{ parent: TaskRow | undefined; defs: TaskDefinition[] }> = [{ parent: undefined, defs: definition.tasks }];
    for (const t of tasks) if (t.children !== null && t.status === 'IN_PROGRESS') scopes.push({ parent: t, defs: JSON.parse(t.children) as TaskDefinition[] });
    for (const { parent, defs } of scopes) {
      const scopeName = parent?.external_id ?? '';
      const rows = new Map(tasks.filter((t) => t.parent === scopeName).map((t) => [t.external_id, t]));
      for (const def of defs) {
        if (rows.has(def.externalId)) continue;
        if (!(def.dependsOn ?? []).every((d) => DONE.includes(rows.get(d.externalId)?.status as TaskStatus))) continue;
        await scheduleTask(tx, deps, execution, tasks, def, scopeName, tasks.length + 1);
        changed = true;
        break;
      }
      if (changed) break;
      const allDone = defs.every((d) => DONE.includes(rows.get(d.externalId)?.status as TaskStatus));
      if (!allDone) continue;
      if (parent) {
        await tx.run(sql`UPDATE workflow_tasks SET status = 'COMPLETED', end_time = ${deps.now()} WHERE project_id = ${projectId} AND id = ${parent.id}`);
        changed = true;
        break;
      }
      await tx.run(sql`UPDATE workflow_executions SET status = 'COMPLETED', end_time = ${deps.now()} WHERE project_id = ${projectId} AND id = ${executionId}`);
      return;
    }
  }
}

async function scheduleTask(tx: Queryable, deps: EngineDeps, execution: ExecutionRow, tasks: readonly TaskRow[], def: TaskDefinition, parent: string, seq: number): Promise<void> {
  const id = randomUUID();
  const full = withDefaults(def);
  await tx.run(sql`INSERT INTO workflow_tasks (project_id, id, execution_id, external_id, parent, task_type, status, definition, retries_left, attempt, seq)
    VALUES (${execution.project_id}, ${id}, ${execution.id}, ${def.externalId}, ${parent}, ${def.type}, 'SCHEDULED', ${JSON.stringify(full)}, ${full.retries ?? 3}, 1, ${seq})`);
  await startAttempt(tx, deps, execution, tasks, id, full, 1);
}

/**
 * Schedules an attempt of a task with its references resolved now; a reference that names nothing fails the
 * task at once, without retries.
 */
async function startAttempt(tx: Queryable, deps: EngineDeps, execution: ExecutionRow, tasks: readonly TaskRow[], taskId: string, def: TaskDefinition, attempt: number): Promise<void> {
  const projectId = execution.project_id;
  let input: unknown = def.parameters;
  let problem: string | undefined;
  try {
    input = resolveInput(def, execution, tasks);
  } catch (error) {
    if (!(error instanceof UnresolvedReference)) throw error;
    problem = error.message;
  }
  const where = sql`project_id = ${projectId} AND id = ${taskId}`;
  await tx.run(sql`UPDATE workflow_tasks SET status = 'SCHEDULED', attempt = ${attempt}, input = ${json(input)}, output = NULL, reason = NULL, end_time = NULL WHERE ${where}`);
  if (problem) {
    await tx.run(sql`UPDATE workflow_tasks SET status = 'IN_PROGRESS', start_time = ${deps.now()} WHERE ${where}`);
    await failTask(tx, deps, projectId, taskId, attempt, { reason: problem, terminal: true });
    return;
  }
  await startTaskJob(tx, deps, projectId, { executionId: execution.id, taskId, attempt });
}

/** Moves a scheduled task to running and starts the job that ends it at its timeout; false when it is no longer this attempt's. */
export async function beginTask(tx: Queryable, deps: EngineDeps, projectId: number, taskId: string, attempt: number): Promise<boolean> {
  const now = deps.now();
  const task = await loadTask(tx, projectId, taskId);
  if (!task || task.attempt !== attempt || !OPEN.includes(task.status)) return false;
  if (task.status === 'SCHEDULED') {
    await tx.run(sql`UPDATE workflow_tasks SET status = 'IN_PROGRESS', start_time = ${now} WHERE project_id = ${projectId} AND id = ${taskId}`);
    const timeout = (JSON.parse(task.definition) as TaskDefinition).timeout ?? 3600;
    await deps.jobs.start(tx, { projectId, kind: TIMEOUT_JOB, payload: { taskId, attempt }, key: `${taskId}:${attempt}`, runAfter: now + timeout * 1000 });
  }
  return true;
}

/** The task, if it is still running this attempt in a running execution (taking the execution's row). */
async function runningTask(tx: Queryable, deps: EngineDeps, projectId: number, taskId: string, attempt: number): Promise<TaskRow | undefined> {
  const task = await loadTask(tx, projectId, taskId);
  if (!task) return undefined;
  const execution = await lockExecution(tx, projectId, task.execution_id, deps.now());
  if (!execution || execution.status !== 'RUNNING') return undefined;
  const current = await loadTask(tx, projectId, taskId);
  return current && current.attempt === attempt && current.status === 'IN_PROGRESS' ? current : undefined;
}

/** Completes a running task with its output, and schedules what waited for it. */
export async function completeTask(tx: Queryable, deps: EngineDeps, projectId: number, taskId: string, attempt: number, output: unknown): Promise<boolean> {
  const task = await runningTask(tx, deps, projectId, taskId, attempt);
  if (!task) return false;
  await tx.run(sql`UPDATE workflow_tasks SET status = 'COMPLETED', output = ${json(output)}, reason = NULL, end_time = ${deps.now()} WHERE project_id = ${projectId} AND id = ${taskId}`);
  await advance(tx, deps, projectId, task.execution_id);
  return true;
}

/** Keeps a running task running, with what is known of its outcome so far (a function call under way). */
export async function recordOutput(tx: Queryable, deps: EngineDeps, projectId: number, taskId: string, attempt: number, output: unknown): Promise<boolean> {
  const task = await runningTask(tx, deps, projectId, taskId, attempt);
  if (!task) return false;
  await tx.run(sql`UPDATE workflow_tasks SET output = ${json(output)} WHERE project_id = ${projectId} AND id = ${taskId}`);
  return true;
}

/** Sets the tasks a dynamic task or subworkflow runs; they are scheduled as their dependencies complete. */
export async function expandTask(tx: Queryable, deps: EngineDeps, projectId: number, taskId: string, attempt: number, children: TaskDefinition[], output: unknown): Promise<boolean> {
  const task = await runningTask(tx, deps, projectId, taskId, attempt);
  if (!task) return false;
  await tx.run(sql`UPDATE workflow_tasks SET children = ${JSON.stringify(children.map(withDefaults))}, output = ${json(output)} WHERE project_id = ${projectId} AND id = ${taskId}`);
  await advance(tx, deps, projectId, task.execution_id);
  return true;
}

/** The wait before a task's next attempt: a second, doubled at each attempt, at most a minute. */
export function retryDelay(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 1), 60_000);
}

export interface Failure {
  reason: string;
  /** Not retried (`FAILED_WITH_TERMINAL_ERROR`). */
  terminal?: boolean;
  timedOut?: boolean;
  output?: unknown;
}

/**
 * A task's attempt failed or timed out. It is started again while it has retries left (a timeout under
 * `abortWorkflow` is not retried); then under `skipTask` it ends as COMPLETED_WITH_ERRORS and the tasks after
 * it run, and under `abortWorkflow` it ends as FAILED or TIMED_OUT and so does the execution, as FAILED.
 */
export async function failTask(tx: Queryable, deps: EngineDeps, projectId: number, taskId: string, attempt: number, failure: Failure): Promise<boolean> {
  const task = await runningTask(tx, deps, projectId, taskId, attempt);
  if (!task) return false;
  const def = JSON.parse(task.definition) as TaskDefinition;
  const skip = def.onFailure === 'skipTask';
  const now = deps.now();
  const output = failure.output === undefined ? task.output : json(failure.output);
  const where = sql`project_id = ${projectId} AND id = ${taskId}`;
  if (!failure.terminal && task.retries_left > 0 && (skip || !failure.timedOut)) {
    // A new attempt starts afresh: a function task calls its function again rather than following the failed call.
    await tx.run(sql`UPDATE workflow_tasks SET status = 'SCHEDULED', attempt = ${attempt + 1}, retries_left = ${task.retries_left - 1}, reason = ${failure.reason},
      output = NULL WHERE ${where}`);
    await startTaskJob(tx, deps, projectId, { executionId: task.execution_id, taskId, attempt: attempt + 1 }, now + retryDelay(attempt));
    return true;
  }
  if (skip) {
    await tx.run(sql`UPDATE workflow_tasks SET status = 'COMPLETED_WITH_ERRORS', reason = ${failure.reason}, output = ${output}, end_time = ${now} WHERE ${where}`);
    await advance(tx, deps, projectId, task.execution_id);
    return true;
  }
  const status: TaskStatus = failure.timedOut ? 'TIMED_OUT' : failure.terminal ? 'FAILED_WITH_TERMINAL_ERROR' : 'FAILED';
  await tx.run(sql`UPDATE workflow_tasks SET status = ${status}, reason = ${failure.reason}, output = ${output}, end_time = ${now} WHERE ${where}`);
  const tasks = await loadTasks(tx, projectId, task.execution_id);
  const ancestors: string[] = [];
  for (let parent = task.parent; parent; parent = tasks.find((t) => t.external_id === parent)?.parent ?? '') ancestors.push(parent);
  if (ancestors.length)
    await tx.run(sql`UPDATE workflow_tasks SET status = 'FAILED', end_time = ${now}, reason = ${`the task "${task.external_id}" failed`}
      WHERE project_id = ${projectId} AND execution_id = ${task.execution_id} AND external_id IN (${ancestors}) AND status IN (${OPEN})`);
  await endExecution(tx, projectId, task.execution_id, 'FAILED', `Task "${task.external_id}" ${failure.timedOut ? 'timed out' : 'failed'}: ${failure.reason}`, now);
  return true;
}

/** Ends an execution and cancels the tasks still scheduled or running in it. */
export async function endExecution(tx: Queryable, projectId: number, executionId: string, status: 'FAILED' | 'TERMINATED', reason: string, now: number): Promise<void> {
  await tx.run(sql`UPDATE workflow_executions SET status = ${status}, reason = ${reason}, end_time = ${now} WHERE project_id = ${projectId} AND id = ${executionId}`);
  await tx.run(sql`UPDATE workflow_tasks SET status = 'CANCELED', end_time = ${now}
    WHERE project_id = ${projectId} AND execution_id = ${executionId} AND status IN (${OPEN})`);
}

/**
 * Starts again the tasks of an ended execution that did not complete, with one more try each; a dynamic task
 * or subworkflow whose tasks are known is not run again, its failed tasks are. The execution runs again.
 */
export async function retryExecution(tx: Queryable, deps: EngineDeps, execution: ExecutionRow, grant: SessionGrant): Promise<void> {
  const projectId = execution.project_id;
  const tasks = await loadTasks(tx, projectId, execution.id);
  await tx.run(sql`UPDATE workflow_executions SET status = 'RUNNING', reason = NULL, end_time = NULL, grant_json = ${JSON.stringify(grant)}
    WHERE project_id = ${projectId} AND id = ${execution.id}`);
  for (const t of tasks) {
    if (!RETRIED.includes(t.status)) continue;
    if ((await loadExecution(tx, projectId, execution.id))?.status !== 'RUNNING') return;
    if (t.children !== null) {
      await tx.run(sql`UPDATE workflow_tasks SET status = 'IN_PROGRESS', reason = NULL, end_time = NULL WHERE project_id = ${projectId} AND id = ${t.id}`);
      continue;
    }
    await startAttempt(tx, deps, execution, tasks, t.id, JSON.parse(t.definition) as TaskDefinition, t.attempt + 1);
  }
  await advance(tx, deps, projectId, execution.id);
}
