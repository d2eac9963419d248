/**
 * Signals: sinks, subscriptions, and the signals pushed to sinks.
 *
 * A signal says that something happened in a process of the project. Strata emits one for each workflow
 * execution that ends (topic `cognite_workflows`, the workflow's external id as the resource): category
 * `execution_completed` (severity `info`), `execution_terminated` (`warning`), `execution_failed` or
 * `execution_timed_out` (`error`). A durable job, scheduled every 5 seconds for a project once it has a
 * subscription, reads the executions ended since it last looked, evaluates every subscription of the topic
 * and pushes a copy of each signal that matches to the subscription's sink. A sink's signals are listed with
 * `POST /processes/signals/list`; a sink with an e-mail address also gets them by e-mail, through the relay
 * the settings name (STRATA_SIGNALS_EMAIL_URL), called with the outbound client's policy.
 */
import { randomUUID } from 'node:crypto';
import type { AreaRuntime } from '../../http/area.js';
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import type { Principal } from '../../auth/principal.js';
import type { Job, JobContext } from '../../storage/jobs/jobs.js';
import { allocateIds } from '../../storage/ids.js';
import { insertRows, type Item } from '../../storage/items.js';
import type { Queryable } from '../../storage/store.js';
import { Sql, sql } from '../../storage/sql.js';
import { createItems, deleteItems, fromModel, inWrite, retrieveItems, updateItems, type Path, type ResourceSpec } from '../crud.js';
import { SEVERITIES, SIGNAL_LIMITS, sinkModel, subscriptionModel, type Severity, type Topic } from './model.js';
import { SIGNAL_SETTINGS } from './settings.js';
import type { AnySinkRef, ListSignalsBody, ListSubscriptionsBody, SubscriptionCreate, SubscriptionFilter, UpdateSinksBody, UpdateSubscriptionsBody } from './schema.js';

type SinkKey = { type: 'email' | 'user'; externalId: string };

export const sinkSpec: ResourceSpec<unknown> = {
  ...fromModel(sinkModel),
  // A sink's subscriptions and signals go with it.
  async beforeDelete(ids, { db, projectId }) {
    const rows = await db.all<SinkKey>(sql`SELECT type, external_id AS "externalId" FROM signal_sinks WHERE project_id = ${projectId} AND id IN (${ids})`);
    const subscriptions = await listAllSubscriptions(db, projectId);
    for (const r of rows) {
      await db.run(sql`DELETE FROM signals WHERE project_id = ${projectId} AND sink_type = ${r.type} AND sink_external_id = ${r.externalId}`);
      const subs = subscriptions.filter((s) => sameSink(s.sink, r)).map((s) => s.externalId);
      if (subs.length) await db.run(sql`DELETE FROM signal_subscriptions WHERE project_id = ${projectId} AND external_id IN (${subs})`);
    }
  },
};

export const subscriptionSpec: ResourceSpec<unknown> = {
  ...fromModel(subscriptionModel),
  applyPatch(field, v, patch, path) {
    const next = (patch as { set: SubscriptionFilter }).set;
    const topic = (v.filter as SubscriptionFilter).topic;
    if (next.topic !== topic) throw badRequest(`${formatPath([...path, 'set', 'topic'])}: the subscription's topic is ${topic}; a filter cannot change it`);
    v[field] = next;
  },
};

const sameSink = (a: SinkKey, b: SinkKey) => a.type === b.type && a.externalId === b.externalId;

/** The sink a request names: `current_user` is the caller's own user sink, named by the caller's subject. */
function sinkKey(ref: AnySinkRef, principal: Principal): SinkKey {
  return ref.type === 'current_user' ? { type: 'user', externalId: principal.subject } : ref;
}

/** Refuses a sink that does not exist, naming where the request names it. */
async function requireSink(services: Services, projectId: number, sink: SinkKey, path: Path): Promise<void> {
  const found = await retrieveItems(sinkSpec, services, projectId, [sink], true);
  if (!found.length) throw badRequest(`${formatPath(path)}: there is no ${sink.type} sink with externalId ${JSON.stringify(sink.externalId)}`);
}

export function retrieveSinks(services: Services, projectId: number, refs: readonly AnySinkRef[], principal: Principal, ignoreUnknownIds = false): Promise<Item[]> {
  return retrieveItems(sinkSpec, services, projectId, refs.map((r) => sinkKey(r, principal)), ignoreUnknownIds);
}

export function updateSinks(services: Services, projectId: number, body: UpdateSinksBody, principal: Principal): Promise<Item[]> {
  return updateItems(
    sinkSpec,
    services,
    projectId,
    body.items.map((i) => ({ ...sinkKey(i, principal), update: i.update })),
  );
}

export function createSubscriptions(services: Services, projectId: number, items: readonly SubscriptionCreate[], principal: Principal): Promise<Item[]> {
  const { jobs } = services;
  return inWrite(services, async (services) => {
    const values = items.map((i) => ({ ...i, sink: sinkKey(i.sink, principal) }));
    for (const [i, v] of values.entries()) await requireSink(services, projectId, v.sink, ['items', i, 'sink']);
    const created = await createItems(subscriptionSpec, services, projectId, values);
    // Signals are of what ends from the project's first subscription on.
    await services.db.run(sql`INSERT INTO signal_positions (project_id, source, end_time, last_id) VALUES (${projectId}, ${WORKFLOWS}, ${services.now()}, '')
      ON CONFLICT DO NOTHING`);
    await jobs!.schedule(services.db, { projectId, name: SCAN_SCHEDULE, kind: SCAN_JOB, cron: '*/5 * * * * *', timeZone: 'UTC', payload: {} });
    return created;
  });
}

export function updateSubscriptions(services: Services, projectId: number, body: UpdateSubscriptionsBody): Promise<Item[]> {
  return updateItems(subscriptionSpec, services, projectId, body.items);
}

export function deleteSubscriptions(services: Services, projectId: number, refs: Array<{ externalId: string }>, ignoreUnknownIds?: boolean): Promise<void> {
  return inWrite(services, async (services) => {
    await deleteItems(subscriptionSpec, services, projectId, refs, ignoreUnknownIds);
    await unscheduleUnused(services, projectId);
  });
}

/**
 * Without subscriptions the project's scan has nothing to push: it stops, and the next subscription starts
 * from its own time, not from what ended meanwhile.
 */
async function unscheduleUnused(services: Services, projectId: number): Promise<void> {
  const left = await services.db.get(sql`SELECT 1 AS one FROM signal_subscriptions WHERE project_id = ${projectId} LIMIT 1`);
  if (left) return;
  await services.jobs!.unschedule(services.db, projectId, SCAN_SCHEDULE);
  await services.db.run(sql`DELETE FROM signal_positions WHERE project_id = ${projectId}`);
}

export function deleteSinks(services: Services, projectId: number, refs: SinkKey[], ignoreUnknownIds?: boolean): Promise<void> {
  return inWrite(services, async (services) => {
    await deleteItems(sinkSpec, services, projectId, refs, ignoreUnknownIds);
    await unscheduleUnused(services, projectId);
  });
}

interface Subscription {
  externalId: string;
  sink: SinkKey;
  filter: SubscriptionFilter & Record<string, unknown>;
  createdTime: number;
  lastUpdatedTime: number;
}

async function listAllSubscriptions(db: Queryable, projectId: number): Promise<Subscription[]> {
  const rows = await db.all<{ externalId: string; sink: string; filter: string; createdTime: number; lastUpdatedTime: number }>(sql`SELECT external_id AS "externalId",
      sink, filter, created_time AS "createdTime", last_updated_time AS "lastUpdatedTime"
    FROM signal_subscriptions WHERE project_id = ${projectId} ORDER BY created_time, id`);
  return rows.map((r) => ({ ...r, createdTime: Number(r.createdTime), lastUpdatedTime: Number(r.lastUpdatedTime), sink: JSON.parse(r.sink), filter: JSON.parse(r.filter) }));
}

type OrNull<T> = T | { isNull: boolean } | undefined;

/** A subscription's field against a list filter's: the value it has, or (isNull) whether it has none. */
function fits<T>(wanted: OrNull<T>, has: (value: T) => boolean, absent: boolean): boolean {
  if (wanted === undefined) return true;
  if (typeof wanted === 'object' && wanted !== null && 'isNull' in wanted) return wanted.isNull === absent;
  // A subscription without the field receives signals of any value, so it matches too.
  return absent || has(wanted as T);
}

/** Where a page starts: the position a cursor of the same list holds (the API's cursors, bound to the list's query). */
function positionOf(services: Services, cursor: string | undefined, query: unknown): number {
  return cursor === undefined ? 0 : (services.cursors.decode(cursor, query) as number);
}

/** Subscriptions that would receive what the filter describes, in creation order, a page at a time. */
export async function listSubscriptions(services: Services, projectId: number, body: ListSubscriptionsBody, principal: Principal) {
  const f = body.filter;
  const sink = f?.sink && sinkKey(f.sink, principal);
  const matching = (await listAllSubscriptions(services.db, projectId)).filter((s) => {
    if (!f) return true;
    const flt = s.filter;
    return (
      flt.topic === f.topic &&
      (!sink || sameSink(s.sink, sink)) &&
      fits(f.resource, (r) => flt.resource === r, flt.resource === undefined) &&
      fits(f.category, (c) => (flt.category ?? []).includes(c), flt.category === undefined) &&
      fits(f.severity, (v) => SEVERITIES.indexOf(v) >= SEVERITIES.indexOf(flt.severity as Severity), flt.severity === undefined) &&
      Object.entries(f.metadata ?? {}).every(([k, v]) => fits(v, (x) => flt[k] === x, flt[k] === undefined))
    );
  });
  const query = { list: 'signal-subscriptions', filter: body.filter ?? null };
  const start = positionOf(services, body.cursor, query);
  const limit = body.limit ?? SIGNAL_LIMITS.page;
  const items = matching.slice(start, start + limit);
  return { items, ...(start + limit < matching.length ? { nextCursor: services.cursors.encode(start + limit, query) } : {}) };
}

interface SignalRow {
  id: number;
  sink_type: string;
  sink_external_id: string;
  external_id: string;
  topic: string;
  severity: string;
  resource_id: string;
  category: string;
  metadata: string;
  message: string;
  details: string | null;
  created_time: number;
}

function signalJson(r: SignalRow): Record<string, unknown> {
  return {
    topic: r.topic,
    sink: { type: r.sink_type, externalId: r.sink_external_id },
    externalId: r.external_id,
    severity: r.severity,
    resourceId: r.resource_id,
    category: r.category,
    metadata: JSON.parse(r.metadata),
    message: r.message,
    ...(r.details !== null ? { details: r.details } : {}),
    createdTime: Number(r.created_time),
  };
}

/** The signals pushed to a sink, oldest first, a page at a time. */
export async function listSignals(services: Services, projectId: number, body: ListSignalsBody, principal: Principal) {
  const sink = sinkKey(body.sink, principal);
  await requireSink(services, projectId, sink, ['sink']);
  const query = { list: 'signals', sink, topic: body.topic ?? null };
  const after = positionOf(services, body.cursor, query);
  const limit = body.limit ?? SIGNAL_LIMITS.page;
  const rows = await services.db.all<SignalRow>(sql`SELECT * FROM signals WHERE project_id = ${projectId} AND sink_type = ${sink.type}
      AND sink_external_id = ${sink.externalId} AND id > ${after} ${body.topic ? sql`AND topic = ${body.topic}` : sql``}
    ORDER BY id LIMIT ${limit + 1}`);
  const page = rows.slice(0, limit);
  return { items: page.map(signalJson), ...(rows.length > limit ? { nextCursor: services.cursors.encode(Number(page[page.length - 1].id), query) } : {}) };
}

const SCAN_JOB = 'signals.scan';
const SCAN_SCHEDULE = 'signals';
const WORKFLOWS = 'workflow_executions';
/** Executions read per firing; the rest at the next. */
const BATCH = 500;

const ENDINGS: Record<string, { category: string; severity: Severity; verb: string }> = {
  COMPLETED: { category: 'execution_completed', severity: 'info', verb: 'completed' },
  FAILED: { category: 'execution_failed', severity: 'error', verb: 'failed' },
  TIMED_OUT: { category: 'execution_timed_out', severity: 'error', verb: 'timed out' },
  TERMINATED: { category: 'execution_terminated', severity: 'warning', verb: 'was terminated' },
};

interface Signal {
  topic: Topic;
  severity: Severity;
  resourceId: string;
  category: string;
  metadata: Record<string, string>;
  message: string;
  details?: string;
}

/** Whether a subscription's filter takes the signal. */
export function receives(filter: SubscriptionFilter & Record<string, unknown>, s: Signal): boolean {
  if (filter.topic !== s.topic) return false;
  if (filter.resource !== undefined && filter.resource !== s.resourceId) return false;
  if (filter.category !== undefined && !filter.category.includes(s.category)) return false;
  if (filter.severity !== undefined && SEVERITIES.indexOf(s.severity) < SEVERITIES.indexOf(filter.severity)) return false;
  return Object.entries(s.metadata).every(([k, v]) => filter[k] === undefined || filter[k] === v);
}

interface Ended {
  id: string;
  workflowExternalId: string;
  version: string;
  status: string;
  reason: string | null;
  endTime: number;
}

/** Pushes the signals of the executions ended since the last look, in one write with the new position. */
async function scan(runtime: AreaRuntime, projectId: number): Promise<void> {
  const { deliver } = runtime.settings.of(SIGNAL_SETTINGS);
  await runtime.store.transaction(async (tx) => {
    // The position row, held until commit: two scans of one project (two processes) take turns.
    await tx.run(sql`INSERT INTO signal_positions (project_id, source, end_time, last_id) VALUES (${projectId}, ${WORKFLOWS}, 0, '') ON CONFLICT DO NOTHING`);
    const at = (await tx.get<{ endTime: number; lastId: string }>(sql`SELECT end_time AS "endTime", last_id AS "lastId" FROM signal_positions
      WHERE project_id = ${projectId} AND source = ${WORKFLOWS}${Sql.raw(tx.dialect.forUpdate)}`))!;
    const [endTime, lastId] = [Number(at.endTime), at.lastId];
    const ended = await tx.all<Ended>(sql`SELECT id, workflow_external_id AS "workflowExternalId", version, status, reason, end_time AS "endTime"
      FROM workflow_executions WHERE project_id = ${projectId} AND end_time IS NOT NULL AND status IN (${Object.keys(ENDINGS)})
        AND (end_time > ${endTime} OR (end_time = ${endTime} AND id > ${lastId}))
      ORDER BY end_time, id LIMIT ${BATCH}`);
    if (!ended.length) return;
    const subscriptions = (await listAllSubscriptions(tx, projectId)).filter((s) => s.filter.topic === 'cognite_workflows');
    const emails = new Map((await tx.all<{ type: string; externalId: string; email: string | null }>(sql`SELECT type, external_id AS "externalId",
        email_address AS "email" FROM signal_sinks WHERE project_id = ${projectId}`)).map((s) => [`${s.type}:${s.externalId}`, s.email]));
    const rows: Array<Array<string | number | null>> = [];
    for (const e of ended) {
      const ending = ENDINGS[e.status];
      const signal: Signal = {
        topic: 'cognite_workflows',
        severity: ending.severity,
        resourceId: e.workflowExternalId,
        category: ending.category,
        metadata: {},
        message: `Execution ${e.id} of workflow ${e.workflowExternalId} version ${e.version} ${ending.verb}`,
        ...(e.reason ? { details: e.reason } : {}),
      };
      const sinks = new Map<string, SinkKey>();
      for (const s of subscriptions) if (receives(s.filter, signal)) sinks.set(`${s.sink.type}:${s.sink.externalId}`, s.sink);
      for (const [key, sink] of sinks) {
        const delivery = deliver && emails.get(key) ? 'pending' : 'none';
        rows.push([sink.type, sink.externalId, randomUUID(), signal.topic, signal.severity, signal.resourceId, signal.category, '{}', signal.message, signal.details ?? null, delivery, runtime.now()]);
      }
    }
    const ids = await allocateIds(tx, 'signals', rows.length);
    await insertRows(
      tx,
      'signals',
      ['id', 'project_id', 'sink_type', 'sink_external_id', 'external_id', 'topic', 'severity', 'resource_id', 'category', 'metadata', 'message', 'details', 'delivery', 'created_time'],
      rows.map((r, i) => [ids[i], projectId, ...r]),
    );
    const last = ended[ended.length - 1];
    await tx.run(sql`UPDATE signal_positions SET end_time = ${last.endTime}, last_id = ${last.id} WHERE project_id = ${projectId} AND source = ${WORKFLOWS}`);
  });
}

/**
 * Sends the pending signals of the project's sinks with an e-mail address to the relay, one call each; a
 * signal the relay did not take stays pending for the next firing.
 */
async function deliver(runtime: AreaRuntime, projectId: number, signal: AbortSignal): Promise<void> {
  const { deliver: url } = runtime.settings.of(SIGNAL_SETTINGS);
  const outbound = runtime.outbound;
  if (!url || !outbound) return;
  const pending = await runtime.store.all<SignalRow & { email: string }>(sql`SELECT s.*, k.email_address AS email FROM signals s
      JOIN signal_sinks k ON k.project_id = s.project_id AND k.type = s.sink_type AND k.external_id = s.sink_external_id
    WHERE s.project_id = ${projectId} AND s.delivery = 'pending' AND k.email_address IS NOT NULL ORDER BY s.id LIMIT ${BATCH}`);
  for (const row of pending) {
    if (signal.aborted) return;
    const body = JSON.stringify({ to: row.email, subject: `[${row.severity}] ${row.message}`, text: row.details ?? row.message, signal: signalJson(row) });
    try {
      const res = await outbound.request(url, 'the signals e-mail relay', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (res.status < 200 || res.status >= 300) continue;
    } catch {
      continue;
    }
    await runtime.store.run(sql`UPDATE signals SET delivery = 'sent' WHERE project_id = ${projectId} AND id = ${row.id}`);
  }
}

async function runScan(runtime: AreaRuntime, job: Job, { signal }: JobContext): Promise<unknown> {
  await scan(runtime, job.projectId);
  await deliver(runtime, job.projectId, signal);
  return {};
}

export function registerSignalJobs(runtime: AreaRuntime): void {
  runtime.jobs.register(SCAN_JOB, (job, context) => runScan(runtime, job, context), { concurrency: 1, maxAttempts: 1, keepEndedMs: 3600_000 });
}

