/**
 * The functions' work beside requests, as durable jobs: deploying a function (its zip unpacked whole, as a
 * check), running a call in a child process (sandbox.ts) and recording how it ended, and a schedule's
 * firing, which starts a call with the schedule's session and data.
 */
import type { AreaRuntime } from '../../http/area.js';
import type { SessionGrant } from '../../http/self-calls.js';
import type { Job } from '../../storage/jobs/jobs.js';
import { sql } from '../../storage/sql.js';
import { checkUnpacks, CodeError } from './code.js';
import { runHandler, type RunOutcome } from './sandbox.js';
import { CALL_ATTEMPTS, CALL_JOB, DEPLOY_JOB, RESOURCE_LIMITS, SCHEDULE_JOB, startCall, type CallPayload } from './service.js';
import { FUNCTIONS_SETTINGS } from './settings.js';

interface FunctionRow {
  status: string;
  codeKey: string;
  functionPath: string;
  envVars: string | null;
  secretValues: string | null;
  memory: string | null;
}

async function readBlob(runtime: AreaRuntime, projectId: number, key: string): Promise<Buffer | undefined> {
  const stream = await runtime.blobs.get(projectId, key);
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function functionRow(runtime: AreaRuntime, projectId: number, id: number) {
  return runtime.store.get<FunctionRow>(sql`SELECT status, code_key AS "codeKey", function_path AS "functionPath", env_vars AS "envVars",
      secret_values AS "secretValues", memory FROM functions WHERE project_id = ${projectId} AND id = ${id}`);
}

async function setStatus(runtime: AreaRuntime, projectId: number, id: number, status: string, error?: string) {
  const now = runtime.now();
  await runtime.store.transaction((tx) =>
    tx.run(sql`UPDATE functions SET status = ${status}, error = ${error === undefined ? null : JSON.stringify({ message: error, trace: null })}, last_updated_time = ${now}
      WHERE project_id = ${projectId} AND id = ${id}`),
  );
}

async function deploy(runtime: AreaRuntime, job: Job) {
  const { functionId } = job.payload as { functionId: number };
  const fn = await functionRow(runtime, job.projectId, functionId);
  if (!fn) return { deleted: true };
  await setStatus(runtime, job.projectId, functionId, 'Deploying');
  const zip = await readBlob(runtime, job.projectId, fn.codeKey);
  try {
    if (!zip) throw new CodeError("the function's code is gone from the blob store");
    await checkUnpacks(zip, fn.functionPath);
  } catch (error) {
    if (!(error instanceof CodeError)) throw error;
    await setStatus(runtime, job.projectId, functionId, 'Failed', error.message);
    return { status: 'Failed' };
  }
  await setStatus(runtime, job.projectId, functionId, 'Ready');
  return { status: 'Ready' };
}

async function finishCall(runtime: AreaRuntime, projectId: number, callId: number, outcome: RunOutcome) {
  const now = runtime.now();
  const error = outcome.status === 'Completed' ? null : JSON.stringify(outcome.error);
  const response = outcome.status === 'Completed' ? JSON.stringify(outcome.response) : null;
  await runtime.store.transaction((tx) =>
    tx.run(sql`UPDATE function_calls SET status = ${outcome.status}, end_time = ${now}, error = ${error}, response = ${response}, logs = ${JSON.stringify(outcome.logs)},
        last_updated_time = ${now} WHERE project_id = ${projectId} AND id = ${callId} AND status = 'Running'`),
  );
  return { status: outcome.status };
}

async function runCall(runtime: AreaRuntime, job: Job, signal: AbortSignal) {
  const { callId, functionId, grant } = job.payload as CallPayload;
  const call = await runtime.store.get<{ status: string; data: string | null; scheduleId: number | null; scheduledTime: number | null }>(
    sql`SELECT status, data, schedule_id AS "scheduleId", scheduled_time AS "scheduledTime" FROM function_calls WHERE project_id = ${job.projectId} AND id = ${callId}`,
  );
  const fn = await functionRow(runtime, job.projectId, functionId);
  if (!call || call.status !== 'Running' || !fn) return { deleted: true };
  const failed = (message: string): RunOutcome => ({ status: 'Failed', error: { message }, logs: [] });
  if (job.attempts > CALL_ATTEMPTS) {
    return finishCall(runtime, job.projectId, callId, failed(`The call's runner stopped before the call ended, on each of its ${CALL_ATTEMPTS} attempts (its process died or ended)`));
  }
  const settings = runtime.settings.of(FUNCTIONS_SETTINGS);
  if (!settings.execution) return finishCall(runtime, job.projectId, callId, failed('Function calls are turned off on this server (STRATA_FUNCTIONS_EXECUTION=off): it runs no function code'));
  const project = await runtime.store.get<{ name: string }>(sql`SELECT name FROM projects WHERE id = ${job.projectId}`);
  const zip = await readBlob(runtime, job.projectId, fn.codeKey);
  if (!project || !zip) return finishCall(runtime, job.projectId, callId, failed("The function's code is gone from the blob store"));
  let token: string;
  try {
    token = await runtime.api.token(project.name, grant);
  } catch (error) {
    return finishCall(runtime, job.projectId, callId, failed(`The call's session gives no token: ${(error as Error).message}`));
  }
  const info: Record<string, unknown> = { function_id: functionId, call_id: callId };
  if (call.scheduleId !== null) Object.assign(info, { schedule_id: Number(call.scheduleId), scheduled_time: Number(call.scheduledTime) });
  const outcome = await runHandler({
    zip,
    handler: fn.functionPath,
    call: { data: call.data ? JSON.parse(call.data) : {}, secrets: fn.secretValues ? JSON.parse(fn.secretValues) : {}, info, project: project.name, baseUrl: runtime.publicUrl, token },
    envVars: fn.envVars ? JSON.parse(fn.envVars) : {},
    memoryBytes: Math.round((fn.memory ? Number(JSON.parse(fn.memory)) : RESOURCE_LIMITS.memoryGb.default) * 1024 ** 3),
    settings,
    signal,
    now: runtime.now,
  });
  // Stopped with its process (the job goes back to the queue, to be run again) or deleted with its function.
  if (signal.aborted) return { stopped: true };
  return finishCall(runtime, job.projectId, callId, outcome);
}

async function fireSchedule(runtime: AreaRuntime, job: Job) {
  const { scheduleId } = job.payload as { scheduleId: number };
  const schedule = await runtime.store.get<{ functionId: number; data: string | null; session: string }>(
    sql`SELECT function_id AS "functionId", data, session FROM function_schedules WHERE project_id = ${job.projectId} AND id = ${scheduleId}`,
  );
  if (!schedule) return { deleted: true };
  const functionId = Number(schedule.functionId);
  const fn = await functionRow(runtime, job.projectId, functionId);
  if (!fn || fn.status !== 'Ready') return { skipped: `the function is ${fn ? fn.status : 'gone'}` };
  const grant = JSON.parse(schedule.session) as SessionGrant;
  const data = schedule.data ? JSON.parse(schedule.data) : {};
  const callId = await runtime.store.transaction((tx) =>
    startCall(tx, runtime.jobs, job.projectId, functionId, grant, data, runtime.now(), { scheduleId, scheduledTime: job.scheduledTime }),
  );
  return callId === undefined ? { skipped: 'the function has its most calls running' } : { callId };
}

export function registerFunctionJobs(runtime: AreaRuntime): void {
  const settings = runtime.settings.of(FUNCTIONS_SETTINGS);
  runtime.jobs.register(DEPLOY_JOB, (job) => deploy(runtime, job), { concurrency: 1 });
  runtime.jobs.register(CALL_JOB, (job, { signal }) => runCall(runtime, job, signal), { concurrency: settings.concurrency, leaseMs: 60_000 });
  runtime.jobs.register(SCHEDULE_JOB, (job) => fireSchedule(runtime, job), { concurrency: 1 });
}
