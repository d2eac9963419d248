/**
 * Schedules of transformations: at most one per transformation, answered under the transformation's id and
 * external id. A schedule that is not paused is a cron schedule of the job runner (storage/jobs), whose
 * firings start runs with the transformation's own sessions; pausing it removes that schedule and keeps the
 * row. A transformation the request does not see has no schedule it can see.
 */
import { badRequest, duplicatedItems, formatPath } from '../../http/errors.js';
import type { Principal } from '../../auth/principal.js';
import type { Services } from '../../http/services.js';
import { inLeaf } from '../../query/basic.js';
import { InvalidSchedule } from '../../storage/jobs/schedules.js';
import { insertItems, type Item } from '../../storage/items.js';
import { sql } from '../../storage/sql.js';
import { fromModel, inWrite, listItems, retrieveItems, type ResourceSpec } from '../crud.js';
import { scheduleModel } from './model.js';
import { dropSchedule, othersPrivate, RUN_KIND, scheduleName, transformationSpec } from './service.js';

type Ref = { id?: number; externalId?: string };
type Project = { id: number; name: string };

const spec = fromModel(scheduleModel) as ResourceSpec<unknown>;
const transformations = transformationSpec as ResourceSpec<unknown>;

interface ScheduleRow {
  transformationId: number;
  interval: string;
  isPaused: number | boolean;
  createdTime: number;
  lastUpdatedTime: number;
}

async function schedulesOf(services: Services, projectId: number, ids: readonly number[]): Promise<Map<number, ScheduleRow>> {
  if (ids.length === 0) return new Map();
  const rows = await services.db.all<ScheduleRow>(sql`SELECT transformation_id AS "transformationId", cron_interval AS interval, is_paused AS "isPaused", created_time AS "createdTime",
      last_updated_time AS "lastUpdatedTime" FROM transformation_schedules WHERE project_id = ${projectId} AND transformation_id IN (${ids})`);
  return new Map(rows.map((r) => [Number(r.transformationId), r]));
}

function present(tf: Item, s: ScheduleRow): Record<string, unknown> {
  return { id: tf.id, externalId: tf.externalId, createdTime: Number(s.createdTime), lastUpdatedTime: Number(s.lastUpdatedTime), interval: s.interval, isPaused: !!s.isPaused };
}

/** Puts the job runner's schedule in line with the row: there while not paused, with its interval. */
async function sync(services: Services, project: Project, transformationId: number, interval: string, isPaused: boolean, path: Array<string | number>): Promise<void> {
  const jobs = services.jobs!;
  if (isPaused) {
    await jobs.unschedule(services.db, project.id, scheduleName(transformationId));
    return;
  }
  try {
    await jobs.schedule(services.db, { projectId: project.id, name: scheduleName(transformationId), kind: RUN_KIND, cron: interval, timeZone: 'UTC', payload: { transformationId, project: project.name } });
  } catch (error) {
    if (error instanceof InvalidSchedule) throw badRequest(`${formatPath(path)}: "${interval}" is not a cron expression (five fields, such as "0 * * * *"): ${error.message}`);
    throw error;
  }
}

const refOf = (item: Ref): Ref => (item.id !== undefined ? { id: item.id } : { externalId: item.externalId });

export function createSchedules(services: Services, project: Project, items: ReadonlyArray<Ref & { interval: string; isPaused?: boolean }>) {
  return inWrite(services, async (services) => {
    const tfs = await retrieveItems(transformations, services, project.id, items.map(refOf), false);
    const existing = await schedulesOf(services, project.id, tfs.map((t) => t.id));
    if (existing.size) throw duplicatedItems(items.filter((_, i) => existing.has(tfs[i].id)).map(refOf) as Array<{ id: number }>);
    const now = services.now();
    await insertItems(services.db, scheduleModel.table, project.id, items.map((item, i) => ({ transformationId: tfs[i].id, interval: item.interval, isPaused: item.isPaused ?? false })), now);
    for (const [i, item] of items.entries()) await sync(services, project, tfs[i].id, item.interval, item.isPaused ?? false, ['items', i, 'interval']);
    return tfs.map((tf, i) => present(tf, { transformationId: tf.id, interval: items[i].interval, isPaused: items[i].isPaused ?? false, createdTime: now, lastUpdatedTime: now }));
  });
}

/** The schedules of the transformations named; one without a schedule is unknown like a transformation that does not exist. */
async function named(services: Services, projectId: number, refs: readonly Ref[], ignoreUnknownIds: boolean) {
  const tfs = await retrieveItems(transformations, services, projectId, refs.map(refOf), ignoreUnknownIds);
  const schedules = await schedulesOf(services, projectId, tfs.map((t) => t.id));
  const missing = tfs.filter((t) => !schedules.has(t.id));
  if (missing.length && !ignoreUnknownIds) throw badRequest('Some transformations have no schedule', { missing: missing.map((t) => ({ id: t.id })) });
  return tfs.filter((t) => schedules.has(t.id)).map((tf) => ({ tf, schedule: schedules.get(tf.id)! }));
}

export async function schedulesByIds(services: Services, projectId: number, refs: readonly Ref[], ignoreUnknownIds = false) {
  return { items: (await named(services, projectId, refs, ignoreUnknownIds)).map(({ tf, schedule }) => present(tf, schedule)) };
}

export async function listSchedules(services: Services, principal: Principal, projectId: number, q: { limit?: number; cursor?: string }) {
  const page = await listItems(spec, services, projectId, { limit: q.limit, cursor: q.cursor }, undefined);
  const hidden = new Set(await othersPrivate(services, principal, projectId));
  const shown = page.items.filter((s) => !hidden.has(s.transformationId as number));
  const ids = shown.map((s) => s.transformationId as number);
  // Only schedules of transformations the request sees: a page may come out shorter than the limit.
  const seen = await listItems(transformations, services, projectId, { limit: 1000 }, ids.length ? inLeaf(transformationSpec.catalog, 'id', ids) : undefined);
  const tfs = new Map(seen.items.map((t) => [t.id, t]));
  const items = shown.filter((s) => tfs.has(s.transformationId as number)).map((s) => present(tfs.get(s.transformationId as number)!, s as unknown as ScheduleRow));
  return page.nextCursor ? { items, nextCursor: page.nextCursor } : { items };
}

export function updateSchedules(services: Services, project: Project, items: ReadonlyArray<Ref & { update: { interval?: { set: string }; isPaused?: { set: boolean } } }>) {
  return inWrite(services, async (services) => {
    const found = await named(services, project.id, items, false);
    const now = services.now();
    const out = [];
    for (const [i, { tf, schedule }] of found.entries()) {
      const interval = items[i].update.interval?.set ?? schedule.interval;
      const isPaused = items[i].update.isPaused?.set ?? !!schedule.isPaused;
      await services.db.run(sql`UPDATE transformation_schedules SET cron_interval = ${interval}, is_paused = ${isPaused ? 1 : 0}, last_updated_time = ${now}
        WHERE project_id = ${project.id} AND transformation_id = ${tf.id}`);
      await sync(services, project, tf.id, interval, isPaused, ['items', i, 'update', 'interval', 'set']);
      out.push(present(tf, { ...schedule, interval, isPaused, lastUpdatedTime: now }));
    }
    return out;
  });
}

export function deleteSchedules(services: Services, projectId: number, refs: readonly Ref[], ignoreUnknownIds = false) {
  return inWrite(services, async (services) => {
    for (const { tf } of await named(services, projectId, refs, ignoreUnknownIds)) await dropSchedule(services, projectId, tf.id);
    return {};
  });
}
