/**
 * Triggers start executions of a workflow version with the session handed over when the trigger was made.
 * A schedule trigger is a schedule of the job runner (`jobs.schedule`, a cron expression in its time zone);
 * a data modeling trigger is looked at every few seconds by a schedule of its own, which follows its query
 * through `POST /models/instances/sync` (the trigger keeps the cursors) and passes the instances that
 * changed on in batches: a full batch at once, a partial one when the oldest instance in it has waited
 * `batchTimeout` seconds. Each firing is kept in the trigger's history with the execution it started, or why
 * it started none. Pausing a trigger removes its schedule; resuming sets it again.
 */
import { randomUUID } from 'node:crypto';
import type { AreaRuntime } from '../../http/area.js';
import { badRequest, forbidden, notFound } from '../../http/errors.js';
import type { SessionGrant } from '../../http/self-calls.js';
import type { Services } from '../../http/services.js';
import { cronOf, InvalidSchedule } from '../../storage/jobs/schedules.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { findVersion, type StoredDefinition } from './definitions.js';
import { executionLimitReached, parse, startExecution, type EngineDeps } from './engine.js';
import { bindNonce, requireInputSize, versionDefinition } from './executions.js';
import { pageOf } from './paging.js';
import { underReachedWorkflow } from './scope.js';
import type { TriggerRule, TriggerUpsert } from './schema.js';
import { projectName } from './tasks.js';

export const TRIGGER_JOB = 'workflows.trigger';
/** How often a data modeling trigger looks for changes (six fields: seconds first). */
const DATA_MODELING_POLL = '*/10 * * * * *';
/** Pages of changes one look reads at most; the rest wait for the next look. */
const SYNC_PAGES = 20;

interface TriggerRow {
  project_id: number;
  external_id: string;
  trigger_rule: string;
  workflow_external_id: string;
  workflow_version: string;
  input: string | null;
  metadata: string | null;
  grant_json: string;
  is_paused: number;
  state: string | null;
  created_time: number;
  last_updated_time: number;
}

interface RunRow {
  fire_time: number;
  trigger_external_id: string;
  workflow_external_id: string;
  workflow_version: string;
  execution_id: string | null;
  status: string;
  reason: string | null;
  id: string;
}

/** What a data modeling trigger keeps between looks: its sync cursors and the instances not yet passed on. */
interface SyncState {
  cursors?: Record<string, string>;
  pending: unknown[];
  /** When the oldest pending instance was seen. */
  since?: number;
}

function triggerJson(r: TriggerRow) {
  return {
    externalId: r.external_id,
    triggerRule: JSON.parse(r.trigger_rule) as TriggerRule,
    workflowExternalId: r.workflow_external_id,
    workflowVersion: r.workflow_version,
    ...(r.input !== null ? { input: JSON.parse(r.input) } : {}),
    ...(r.metadata !== null ? { metadata: JSON.parse(r.metadata) } : {}),
    isPaused: Boolean(Number(r.is_paused)),
    createdTime: Number(r.created_time),
    lastUpdatedTime: Number(r.last_updated_time),
  };
}

const scheduleName = (externalId: string) => `workflow-trigger:${externalId}`;

async function findTrigger(db: Queryable, projectId: number, externalId: string): Promise<TriggerRow | undefined> {
  return db.get<TriggerRow>(sql`SELECT * FROM workflow_triggers WHERE project_id = ${projectId} AND external_id = ${externalId}`);
}

function reachedTrigger(services: Services, db: Queryable, projectId: number, externalId: string): Promise<TriggerRow | undefined> {
  return db.get<TriggerRow>(sql`SELECT * FROM workflow_triggers WHERE project_id = ${projectId} AND external_id = ${externalId}
    AND ${underReachedWorkflow(services, projectId)}`);
}

/** The trigger, if the request reaches its workflow; a 404 otherwise. */
async function existingTrigger(services: Services, db: Queryable, projectId: number, externalId: string): Promise<TriggerRow> {
  const row = await reachedTrigger(services, db, projectId, externalId);
  if (!row) throw notFound(`There is no workflow trigger "${externalId}"`);
  return row;
}

/** Refuses a rule that cannot be used, naming the field. */
function checkRule(rule: TriggerRule, path: string): void {
  if (rule.triggerType === 'schedule') {
    try {
      cronOf(rule.cronExpression, rule.timezone ?? 'UTC');
    } catch (error) {
      if (!(error instanceof InvalidSchedule)) throw error;
      const field = error.message.startsWith('timeZone') ? 'timezone' : 'cronExpression';
      throw badRequest(`${path}.${field}: ${error.message.replace(/^(cron|timeZone): /, '')}`);
    }
    return;
  }
  const q = rule.dataModelingQuery;
  for (const name of Object.keys(q.select)) {
    const expression = q.with[name] as { limit?: unknown } | undefined;
    if (!expression) throw badRequest(`${path}.dataModelingQuery.select.${name}: there is no result set "${name}" in with`);
    if (expression.limit !== rule.batchSize)
      throw badRequest(`${path}.dataModelingQuery.with.${name}.limit: must be the trigger's batchSize (${rule.batchSize}), and is ${JSON.stringify(expression.limit ?? null)}`);
  }
}

async function schedule(tx: Queryable, services: { jobs: NonNullable<Services['jobs']> }, projectId: number, row: { external_id: string; trigger_rule: string }): Promise<void> {
  const rule = JSON.parse(row.trigger_rule) as TriggerRule;
  await services.jobs.schedule(tx, {
    projectId,
    name: scheduleName(row.external_id),
    kind: TRIGGER_JOB,
    cron: rule.triggerType === 'schedule' ? rule.cronExpression : DATA_MODELING_POLL,
    timeZone: rule.triggerType === 'schedule' ? (rule.timezone ?? 'UTC') : 'UTC',
    payload: { trigger: row.external_id },
  });
}

export async function upsertTriggers(services: Services, project: { id: number; name: string }, items: readonly TriggerUpsert[]) {
  for (const [i, item] of items.entries()) {
    checkRule(item.triggerRule, `items[${i}].triggerRule`);
    requireInputSize(item.input, `items[${i}].input`);
    await versionDefinition(services, project.id, item.workflowExternalId, item.workflowVersion, `items[${i}]`);
  }
  const grants: SessionGrant[] = [];
  for (const [i, item] of items.entries()) grants.push(await bindNonce(services.api!, project.name, item.authentication.nonce, `items[${i}].authentication.nonce`));
  return services.db.transaction(async (tx) => {
    const now = services.now();
    const out = [];
    for (const [i, item] of items.entries()) {
      const before = await findTrigger(tx, project.id, item.externalId);
      if (before && !(await reachedTrigger(services, tx, project.id, item.externalId)))
        throw forbidden(`items[${i}].externalId: the trigger is of a workflow outside the data sets this request is scoped to`);
      const rule = JSON.stringify(item.triggerRule);
      const state = before && before.trigger_rule === rule ? before.state : null;
      await tx.run(sql`INSERT INTO workflow_triggers (project_id, external_id, trigger_rule, workflow_external_id, workflow_version, input, metadata, grant_json, is_paused,
          state, created_time, last_updated_time)
        VALUES (${project.id}, ${item.externalId}, ${rule}, ${item.workflowExternalId}, ${item.workflowVersion}, ${item.input ? JSON.stringify(item.input) : null},
          ${item.metadata ? JSON.stringify(item.metadata) : null}, ${JSON.stringify(grants[i])}, 0, ${state}, ${now}, ${now})
        ON CONFLICT (project_id, external_id) DO UPDATE SET trigger_rule = excluded.trigger_rule, workflow_external_id = excluded.workflow_external_id,
          workflow_version = excluded.workflow_version, input = excluded.input, metadata = excluded.metadata, grant_json = excluded.grant_json,
          state = excluded.state, last_updated_time = excluded.last_updated_time`);
      const row = (await findTrigger(tx, project.id, item.externalId))!;
      if (!Number(row.is_paused)) await schedule(tx, { jobs: services.jobs! }, project.id, row);
      out.push(triggerJson(row));
    }
    return { items: out };
  });
}

export async function listTriggers(services: Services, projectId: number, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 100;
  const after = query.cursor ? (services.cursors.decode(query.cursor, 'triggers') as string) : undefined;
  const rows = await services.db.all<TriggerRow>(sql`SELECT * FROM workflow_triggers WHERE project_id = ${projectId}
    AND ${underReachedWorkflow(services, projectId)} AND ${after === undefined ? sql`TRUE` : sql`external_id > ${after}`} ORDER BY external_id LIMIT ${limit + 1}`);
  return pageOf(services, rows, limit, 'triggers', (r) => r.external_id, triggerJson);
}

export async function deleteTriggers(services: Services, projectId: number, refs: ReadonlyArray<{ externalId: string }>) {
  await services.db.transaction(async (tx) => {
    for (const ref of refs) {
      await existingTrigger(services, tx, projectId, ref.externalId);
      await services.jobs!.unschedule(tx, projectId, scheduleName(ref.externalId));
      await tx.run(sql`DELETE FROM workflow_trigger_runs WHERE project_id = ${projectId} AND trigger_external_id = ${ref.externalId}`);
      await tx.run(sql`DELETE FROM workflow_triggers WHERE project_id = ${projectId} AND external_id = ${ref.externalId}`);
    }
  });
  return {};
}

export async function setPaused(services: Services, projectId: number, externalId: string, paused: boolean) {
  await services.db.transaction(async (tx) => {
    const row = await existingTrigger(services, tx, projectId, externalId);
    await tx.run(sql`UPDATE workflow_triggers SET is_paused = ${paused ? 1 : 0}, last_updated_time = ${services.now()} WHERE project_id = ${projectId} AND external_id = ${externalId}`);
    if (paused) await services.jobs!.unschedule(tx, projectId, scheduleName(externalId));
    else if (Number(row.is_paused)) await schedule(tx, { jobs: services.jobs! }, projectId, row);
  });
  return {};
}

export async function triggerHistory(services: Services, projectId: number, externalId: string, query: { limit?: number; cursor?: string }) {
  await existingTrigger(services, services.db, projectId, externalId);
  const limit = query.limit ?? 100;
  const identity = { history: externalId };
  const after = query.cursor ? (services.cursors.decode(query.cursor, identity) as [number, string]) : undefined;
  const rows = await services.db.all<RunRow>(sql`SELECT * FROM workflow_trigger_runs WHERE project_id = ${projectId} AND trigger_external_id = ${externalId}
    AND ${after ? sql`(fire_time < ${after[0]} OR (fire_time = ${after[0]} AND id > ${after[1]}))` : sql`TRUE`}
    ORDER BY fire_time DESC, id LIMIT ${limit + 1}`);
  return pageOf(services, rows, limit, identity, (r) => [Number(r.fire_time), r.id], (r) => ({
    fireTime: Number(r.fire_time),
    externalId: r.trigger_external_id,
    workflowExternalId: r.workflow_external_id,
    workflowVersion: r.workflow_version,
    workflowExecutionId: r.execution_id,
    status: r.status,
    reasonForFailure: r.reason,
  }));
}

/**
 * Starts an execution for a trigger and keeps the firing in its history, started or not. Its input is the
 * trigger's, with what the firing adds (a data modeling trigger's `items`) and the workflow version, as
 * `${workflow.input.version}`.
 */
async function fire(tx: Queryable, deps: EngineDeps, trigger: TriggerRow, added: Record<string, unknown>, fireTime: number): Promise<void> {
  const input = { ...(parse<Record<string, unknown>>(trigger.input) ?? {}), ...added, version: trigger.workflow_version };
  const projectId = trigger.project_id;
  const version = await findVersion(tx, projectId, trigger.workflow_external_id, trigger.workflow_version);
  const reason = version
    ? ((await executionLimitReached(tx, projectId, trigger.workflow_external_id)) ?? null)
    : `there is no version "${trigger.workflow_version}" of the workflow "${trigger.workflow_external_id}"`;
  const executionId =
    version && reason === null
      ? await startExecution(tx, deps, projectId, {
          workflowExternalId: trigger.workflow_external_id,
          version: trigger.workflow_version,
          definition: JSON.parse(version.definition) as StoredDefinition,
          input,
          metadata: parse(trigger.metadata),
          grant: JSON.parse(trigger.grant_json) as SessionGrant,
        })
      : null;
  await tx.run(sql`INSERT INTO workflow_trigger_runs (project_id, id, trigger_external_id, fire_time, workflow_external_id, workflow_version, execution_id, status, reason)
    VALUES (${projectId}, ${randomUUID()}, ${trigger.external_id}, ${fireTime}, ${trigger.workflow_external_id}, ${trigger.workflow_version}, ${executionId},
      ${executionId ? 'success' : 'failed'}, ${reason})`);
}

/** Reads what changed since the trigger's cursors and starts an execution per batch that is due. */
async function followDataModeling(runtime: AreaRuntime, deps: EngineDeps, trigger: TriggerRow): Promise<void> {
  const rule = JSON.parse(trigger.trigger_rule) as Extract<TriggerRule, { triggerType: 'dataModeling' }>;
  const state = parse<SyncState>(trigger.state) ?? { pending: [] };
  const project = await projectName(runtime.store, trigger.project_id);
  const now = runtime.now();
  let failure: string | undefined;
  // A page holds at most batchSize instances per set (the query's limit): read on while pages come full.
  for (let page = 0; page < SYNC_PAGES; page++) {
    const res = await runtime.api.call({
      project,
      credential: JSON.parse(trigger.grant_json) as SessionGrant,
      method: 'POST',
      path: '/models/instances/sync',
      body: { ...rule.dataModelingQuery, ...(state.cursors ? { cursors: state.cursors } : {}) },
    });
    if (res.status !== 200) {
      failure = `POST /models/instances/sync answered ${res.status}: ${(res.body as { error?: { message?: string } })?.error?.message ?? ''}`;
      break;
    }
    const body = res.body as { items: Record<string, unknown[]>; nextCursor: Record<string, string> };
    const pages = Object.keys(rule.dataModelingQuery.select).map((name) => body.items[name] ?? []);
    const changed = pages.flat();
    if (changed.length && !state.pending.length) state.since = now;
    state.pending.push(...changed);
    state.cursors = body.nextCursor;
    if (!pages.some((p) => p.length >= rule.batchSize)) break;
  }
  await runtime.store.transaction(async (tx) => {
    const current = await findTrigger(tx, trigger.project_id, trigger.external_id);
    if (!current || current.trigger_rule !== trigger.trigger_rule || current.state !== trigger.state) return;
    if (failure) {
      await tx.run(sql`INSERT INTO workflow_trigger_runs (project_id, id, trigger_external_id, fire_time, workflow_external_id, workflow_version, status, reason)
        VALUES (${trigger.project_id}, ${randomUUID()}, ${trigger.external_id}, ${now}, ${trigger.workflow_external_id}, ${trigger.workflow_version}, 'failed', ${failure})`);
      return;
    }
    while (state.pending.length >= rule.batchSize || (state.pending.length && now - (state.since ?? now) >= rule.batchTimeout * 1000)) {
      await fire(tx, deps, trigger, { items: state.pending.splice(0, rule.batchSize) }, now);
      state.since = now;
    }
    await tx.run(sql`UPDATE workflow_triggers SET state = ${JSON.stringify(state)} WHERE project_id = ${trigger.project_id} AND external_id = ${trigger.external_id}`);
  });
}

export function registerTriggerJobs(runtime: AreaRuntime, deps: EngineDeps): void {
  runtime.jobs.register(
    TRIGGER_JOB,
    async (job) => {
      const { trigger: externalId } = job.payload as { trigger: string };
      const trigger = await findTrigger(runtime.store, job.projectId, externalId);
      if (!trigger || Number(trigger.is_paused)) return;
      if ((JSON.parse(trigger.trigger_rule) as TriggerRule).triggerType === 'dataModeling') return followDataModeling(runtime, deps, trigger);
      await runtime.store.transaction((tx) => fire(tx, deps, trigger, {}, job.scheduledTime ?? runtime.now()));
    },
    { concurrency: 2, maxAttempts: 3 },
  );
}

