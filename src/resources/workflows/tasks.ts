/**
 * What each type of task does when its job runs, through the API on the execution's session (`api.call`):
 * a `cdf` task makes its request; a `function` task calls the function with a session of its own and
 * follows the call until it ends; a `transformation` task runs the transformation and follows its job;
 * a dynamic task or subworkflow produces the tasks it runs. Following is never a wait in the runner: the
 * task's job is started again a little later (`wait`).
 */
import type { SelfCaller, SessionGrant, SelfRequest } from '../../http/self-calls.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { findVersion, type StoredDefinition } from './definitions.js';
import { taskListProblem } from './graph.js';
import type { TaskDefinition } from './schema.js';

export type Outcome =
  | { kind: 'complete'; output: unknown }
  | { kind: 'fail'; reason: string; terminal?: boolean; output?: unknown }
  | { kind: 'wait'; output: unknown; afterMs: number }
  | { kind: 'hold'; output: unknown }
  | { kind: 'expand'; children: TaskDefinition[]; output: unknown };

export interface TaskRun {
  db: Queryable;
  api: SelfCaller;
  projectId: number;
  project: string;
  grant: SessionGrant;
  taskId: string;
  definition: TaskDefinition;
  input: Record<string, unknown>;
  /** What an earlier job of this attempt learned (a call's id). */
  output: Record<string, unknown> | undefined;
  /** External ids already used in the execution: tasks a dynamic task adds must not reuse them. */
  usedIds: ReadonlySet<string>;
}

/** How long a followed call or job is left before it is looked at again. */
export const POLL_MS = 2000;

type Call = Omit<SelfRequest, 'project' | 'credential'>;

async function call(run: TaskRun, request: Call) {
  return run.api.call({ project: run.project, credential: run.grant, ...request });
}

/** The message of an API answer that is not a success. */
function refusal(what: string, res: { status: number; body: unknown }): string {
  const message = (res.body as { error?: { message?: string } } | undefined)?.error?.message;
  return `${what} answered ${res.status}${message ? `: ${message}` : ''}`;
}

const ok = (status: number) => status >= 200 && status < 300;

/** The path under the project of a `resourcePath`: relative (`/timeseries/list`) or a full address of this project. */
function pathUnderProject(resourcePath: string, project: string): string | undefined {
  const marker = `/api/v1/projects/${project}`;
  const at = resourcePath.indexOf(marker);
  if (at >= 0) return resourcePath.slice(at + marker.length) || '/';
  if (/^[a-z]+:\/\//i.test(resourcePath) || resourcePath.includes('/api/v1/projects/')) return undefined;
  const path = resourcePath.startsWith('/') ? resourcePath : `/${resourcePath}`;
  // Dot segments would lead out of the project's address.
  return path.split(/[/?#]/).some((segment) => segment === '..' || segment === '.') ? undefined : path;
}

/** How long a `cdf` task waits for its request unless it says (`requestTimeoutInMillis`), as the reference has it. */
const CDF_REQUEST_TIMEOUT_MS = 10_000;

/** The answer, or undefined when it took longer than `ms` (real time: the request runs on this process's event loop). */
async function within<T>(ms: number, work: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function cdf(run: TaskRun): Promise<Outcome> {
  const r = run.input.cdfRequest as {
    resourcePath: string;
    method: string;
    queryParameters?: Record<string, unknown>;
    body?: unknown;
    cdfVersionHeader?: string;
    requestTimeoutInMillis?: number;
  };
  const path = typeof r.resourcePath === 'string' ? pathUnderProject(r.resourcePath, run.project) : undefined;
  if (!path) return { kind: 'fail', terminal: true, reason: `resourcePath ${JSON.stringify(r.resourcePath)} is not a path of the project "${run.project}"` };
  const method = String(r.method).toUpperCase();
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) return { kind: 'fail', terminal: true, reason: `method ${JSON.stringify(r.method)} is not an HTTP method` };
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(r.queryParameters ?? {})) query.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  const timeout = typeof r.requestTimeoutInMillis === 'number' ? r.requestTimeoutInMillis : CDF_REQUEST_TIMEOUT_MS;
  const res = await within(
    timeout,
    call(run, {
      method: method as Call['method'],
      path: query.size ? `${path}${path.includes('?') ? '&' : '?'}${query}` : path,
      ...(r.body !== undefined && method !== 'GET' ? { body: r.body } : {}),
      ...(r.cdfVersionHeader ? { headers: { 'cdf-version': r.cdfVersionHeader } } : {}),
    }),
  );
  if (!res) return { kind: 'fail', reason: `${method} ${path} did not answer within requestTimeoutInMillis (${timeout} ms)` };
  const output = { statusCode: res.status, response: res.body };
  return ok(res.status) ? { kind: 'complete', output } : { kind: 'fail', reason: refusal(`${method} ${path}`, res), output };
}

/** A nonce of a new session, made with the execution's session, for work that takes a nonce of its own. */
async function newNonce(run: TaskRun): Promise<{ id: number; nonce: string } | string> {
  const res = await call(run, { method: 'POST', path: '/sessions', body: { items: [{ tokenExchange: true }] } });
  if (!ok(res.status)) return refusal('POST /sessions', res);
  return (res.body as { items: Array<{ id: number; nonce: string }> }).items[0];
}

async function fn(run: TaskRun): Promise<Outcome> {
  const params = run.input as { function: { externalId: string; data?: unknown }; isAsyncComplete?: boolean };
  const known = run.output as { functionId?: number; callId?: number } | undefined;
  if (known?.callId === undefined) {
    const given = params.function.data;
    // A reference may resolve to any JSON; a call's data is an object, which the task id is added to.
    if (given !== undefined && given !== null && (typeof given !== 'object' || Array.isArray(given))) {
      return { kind: 'fail', terminal: true, reason: `parameters.function.data is ${JSON.stringify(given)}, not an object: a function is called with an object` };
    }
    const found = await call(run, { method: 'POST', path: '/functions/byids', body: { items: [{ externalId: params.function.externalId }] } });
    if (!ok(found.status)) return { kind: 'fail', reason: refusal('POST /functions/byids', found) };
    const functionId = (found.body as { items: Array<{ id: number }> }).items[0].id;
    const session = await newNonce(run);
    if (typeof session === 'string') return { kind: 'fail', reason: session };
    const data = { ...((given as Record<string, unknown> | null | undefined) ?? {}), ...(params.isAsyncComplete ? { cogniteOrchestrationTaskId: run.taskId } : {}) };
    const started = await call(run, { method: 'POST', path: `/functions/${functionId}/call`, body: { data, nonce: session.nonce } });
    if (!ok(started.status)) return { kind: 'fail', reason: refusal(`POST /functions/${functionId}/call`, started) };
    return { kind: 'wait', output: { functionId, callId: (started.body as { id: number }).id }, afterMs: POLL_MS };
  }
  const { functionId, callId } = known as { functionId: number; callId: number };
  const status = await call(run, { method: 'GET', path: `/functions/${functionId}/calls/${callId}` });
  if (!ok(status.status)) return { kind: 'fail', reason: refusal(`GET /functions/${functionId}/calls/${callId}`, status) };
  const state = status.body as { status: string; error?: { message?: string } };
  if (state.status === 'Running') return { kind: 'wait', output: known, afterMs: POLL_MS };
  if (state.status !== 'Completed') return { kind: 'fail', reason: `the function call ended ${state.status}${state.error?.message ? `: ${state.error.message}` : ''}`, output: known };
  const answer = await call(run, { method: 'GET', path: `/functions/${functionId}/calls/${callId}/response` });
  const output = { functionId, callId, response: ok(answer.status) ? ((answer.body as { response?: unknown }).response ?? null) : null };
  return params.isAsyncComplete ? { kind: 'hold', output } : { kind: 'complete', output };
}

async function transformation(run: TaskRun): Promise<Outcome> {
  const params = run.input as { transformation: { externalId: string; concurrencyPolicy?: string; useTransformationCredentials?: boolean } };
  const known = run.output as { jobId?: number } | undefined;
  if (known?.jobId === undefined) {
    const { externalId } = params.transformation;
    const found = await call(run, { method: 'POST', path: '/transformations/byids', body: { items: [{ externalId }], withJobDetails: true } });
    if (!ok(found.status)) return { kind: 'fail', reason: refusal('POST /transformations/byids', found) };
    const current = (found.body as { items: Array<{ runningJob?: { id: number } }> }).items[0].runningJob;
    if (current) {
      const policy = params.transformation.concurrencyPolicy ?? 'fail';
      if (policy === 'fail') return { kind: 'fail', reason: `the transformation "${externalId}" is already running (job ${current.id}), and the task's concurrencyPolicy is fail` };
      if (policy === 'waitForCurrent') return { kind: 'wait', output: { jobId: current.id }, afterMs: POLL_MS };
      // restartAfterCurrent: looked at again until the job under way has ended, then run.
      return { kind: 'wait', output: {}, afterMs: POLL_MS };
    }
    const body: Record<string, unknown> = { externalId };
    // Without a nonce the run uses the sessions kept on the transformation.
    if (params.transformation.useTransformationCredentials !== true) {
      const session = await newNonce(run);
      if (typeof session === 'string') return { kind: 'fail', reason: session };
      body.nonce = { sessionId: session.id, nonce: session.nonce, cdfProjectName: run.project };
    }
    const started = await call(run, { method: 'POST', path: '/transformations/run', body });
    if (!ok(started.status)) return { kind: 'fail', reason: refusal('POST /transformations/run', started) };
    return { kind: 'wait', output: { jobId: (started.body as { id: number }).id }, afterMs: POLL_MS };
  }
  const res = await call(run, { method: 'POST', path: '/transformations/jobs/byids', body: { items: [{ id: known.jobId }] } });
  if (!ok(res.status)) return { kind: 'fail', reason: refusal('POST /transformations/jobs/byids', res), output: known };
  const job = (res.body as { items: Array<{ status: string; error?: string }> }).items[0];
  if (job.status === 'Completed') return { kind: 'complete', output: known };
  if (job.status === 'Failed') return { kind: 'fail', reason: `the transformation job failed${job.error ? `: ${job.error}` : ''}`, output: known };
  return { kind: 'wait', output: known, afterMs: POLL_MS };
}

/**
 * Runs the routine (queued until a connector takes it, whatever its connector's heartbeat) and follows the
 * run until it ends: `success` completes the task, `failure` fails it with the run's message.
 */
async function simulation(run: TaskRun): Promise<Outcome> {
  const params = run.input.simulation as { routineExternalId: string; runTime?: number | null; inputs?: unknown[] };
  const known = run.output as { runId?: number; logId?: number } | undefined;
  if (known?.runId === undefined) {
    const item = {
      routineExternalId: params.routineExternalId,
      ...(typeof params.runTime === 'number' ? { runTime: params.runTime } : {}),
      ...(params.inputs?.length ? { inputs: params.inputs } : {}),
      queue: true,
    };
    const started = await call(run, { method: 'POST', path: '/simulators/run', body: { items: [item] } });
    if (!ok(started.status)) return { kind: 'fail', reason: refusal('POST /simulators/run', started) };
    const created = (started.body as { items: Array<{ id: number; logId?: number }> }).items[0];
    return { kind: 'wait', output: { runId: created.id, ...(created.logId !== undefined ? { logId: created.logId } : {}) }, afterMs: POLL_MS };
  }
  const res = await call(run, { method: 'POST', path: '/simulators/runs/byids', body: { items: [{ id: known.runId }] } });
  if (!ok(res.status)) return { kind: 'fail', reason: refusal('POST /simulators/runs/byids', res), output: known };
  const state = (res.body as { items: Array<{ status: string; statusMessage?: string }> }).items[0];
  const output = { ...known, ...(state.statusMessage !== undefined ? { statusMessage: state.statusMessage } : {}) };
  if (state.status === 'success') return { kind: 'complete', output };
  if (state.status === 'failure') return { kind: 'fail', reason: `the simulation run ${known.runId} failed${state.statusMessage ? `: ${state.statusMessage}` : ''}`, output };
  return { kind: 'wait', output: known, afterMs: POLL_MS };
}

function expand(run: TaskRun, tasks: unknown, output: unknown): Outcome {
  const problem = taskListProblem(tasks);
  if (problem) return { kind: 'fail', terminal: true, reason: problem };
  const clash = (tasks as TaskDefinition[]).find((t) => run.usedIds.has(t.externalId));
  if (clash) return { kind: 'fail', terminal: true, reason: `the task external id "${clash.externalId}" is already used in this execution` };
  return { kind: 'expand', children: tasks as TaskDefinition[], output };
}

async function subworkflow(run: TaskRun): Promise<Outcome> {
  const s = run.input.subworkflow as { tasks?: unknown; workflowExternalId?: string; version?: string };
  if (s.tasks !== undefined) return expand(run, s.tasks, {});
  const version = await findVersion(run.db, run.projectId, String(s.workflowExternalId), String(s.version));
  if (!version) return { kind: 'fail', terminal: true, reason: `there is no version "${s.version}" of the workflow "${s.workflowExternalId}"` };
  return expand(run, (JSON.parse(version.definition) as StoredDefinition).tasks, {});
}

export async function runTask(run: TaskRun): Promise<Outcome> {
  switch (run.definition.type) {
    case 'cdf':
      return cdf(run);
    case 'function':
      return fn(run);
    case 'transformation':
      return transformation(run);
    case 'dynamic': {
      const tasks = (run.input.dynamic as { tasks: unknown }).tasks;
      return expand(run, tasks, { dynamicTasks: tasks });
    }
    case 'subworkflow':
      return subworkflow(run);
    case 'simulation':
      return simulation(run);
  }
}

export async function projectName(db: Queryable, projectId: number): Promise<string> {
  return (await db.get<{ name: string }>(sql`SELECT name FROM projects WHERE id = ${projectId}`))!.name;
}
