/**
 * The job handlers of workflows: a task's run (started again to follow a call), a task's timeout, and a
 * trigger's firing (triggers.ts). Registered once per app; any process runs them.
 */
import type { AreaRuntime } from '../../http/area.js';
import type { SessionGrant } from '../../http/self-calls.js';
import type { Job } from '../../storage/jobs/jobs.js';
import {
  beginTask,
  completeTask,
  expandTask,
  failTask,
  loadExecution,
  loadTask,
  loadTasks,
  parse,
  recordOutput,
  startTaskJob,
  TASK_JOB,
  TIMEOUT_JOB,
  type EngineDeps,
  type TaskJobPayload,
} from './engine.js';
import type { StoredDefinition } from './definitions.js';
import { projectName, runTask, type Outcome } from './tasks.js';
import type { TaskDefinition } from './schema.js';
import { registerTriggerJobs } from './triggers.js';

async function runTaskJob(runtime: AreaRuntime, deps: EngineDeps, job: Job): Promise<void> {
  const p = job.payload as TaskJobPayload;
  const { store } = runtime;
  if (!(await store.transaction((tx) => beginTask(tx, deps, job.projectId, p.taskId, p.attempt)))) return;
  const task = await loadTask(store, job.projectId, p.taskId);
  const execution = await loadExecution(store, job.projectId, p.executionId);
  if (!task || !execution || execution.status !== 'RUNNING') return;
  const definition = JSON.parse(task.definition) as TaskDefinition;
  let outcome: Outcome;
  try {
    outcome = await runTask({
      db: store,
      api: runtime.api,
      projectId: job.projectId,
      project: await projectName(store, job.projectId),
      grant: JSON.parse(execution.grant_json) as SessionGrant,
      taskId: task.id,
      definition,
      input: parse<Record<string, unknown>>(task.input) ?? {},
      output: parse<Record<string, unknown>>(task.output),
      usedIds: new Set([
        ...(JSON.parse(execution.definition) as StoredDefinition).tasks.map((t) => t.externalId),
        ...(await loadTasks(store, job.projectId, execution.id)).map((t) => t.external_id),
      ]),
    });
  } catch (error) {
    outcome = { kind: 'fail', reason: `the task could not run: ${(error as Error).message}` };
  }
  await store.transaction(async (tx) => {
    switch (outcome.kind) {
      case 'complete':
        return completeTask(tx, deps, job.projectId, task.id, p.attempt, outcome.output);
      case 'fail':
        return failTask(tx, deps, job.projectId, task.id, p.attempt, outcome);
      case 'hold':
        return recordOutput(tx, deps, job.projectId, task.id, p.attempt, outcome.output);
      case 'expand':
        return expandTask(tx, deps, job.projectId, task.id, p.attempt, outcome.children, outcome.output);
      case 'wait':
        if (await recordOutput(tx, deps, job.projectId, task.id, p.attempt, outcome.output))
          await startTaskJob(tx, deps, job.projectId, { ...p, poll: (p.poll ?? 0) + 1 }, deps.now() + outcome.afterMs);
        return true;
    }
  });
}

export function registerWorkflowJobs(runtime: AreaRuntime): void {
  const deps: EngineDeps = { jobs: runtime.jobs, now: runtime.now };
  // A short lease: a task whose process died is taken up again within seconds (its runner renews the lease while the task runs).
  runtime.jobs.register(TASK_JOB, (job) => runTaskJob(runtime, deps, job), { concurrency: 4, maxAttempts: 5, leaseMs: 10_000 });
  runtime.jobs.register(
    TIMEOUT_JOB,
    async (job) => {
      const { taskId, attempt } = job.payload as { taskId: string; attempt: number };
      const task = await loadTask(runtime.store, job.projectId, taskId);
      const timeout = task ? ((JSON.parse(task.definition) as TaskDefinition).timeout ?? 3600) : 0;
      await runtime.store.transaction((tx) => failTask(tx, deps, job.projectId, taskId, attempt, { reason: `the task did not finish within its timeout of ${timeout} seconds`, timedOut: true }));
    },
    { concurrency: 2 },
  );
  registerTriggerJobs(runtime, deps);
}
