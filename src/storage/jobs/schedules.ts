/**
 * Schedules: a cron expression read in a time zone starts a job of a kind at each time it names. A schedule
 * keeps the next time it fires; whichever runner first sees that time pass moves it on and starts the job,
 * in one transaction, so a firing starts one job however many processes see it. Times missed while no
 * process ran fire once, when one comes back, and the schedule goes on from then.
 */
import { Cron } from 'croner';
import { sql } from '../sql.js';
import type { Queryable } from '../store.js';

export interface ScheduleSpec {
  projectId: number;
  /** Unique in the project: setting a schedule of an existing name replaces it. */
  name: string;
  /** The kind of job it starts. */
  kind: string;
  /** Five fields (minute hour day-of-month month day-of-week), or six with seconds first. */
  cron: string;
  /** An IANA time zone (`Europe/Oslo`) the expression's times are read in; UTC when absent. */
  timeZone?: string;
  /** The payload of every job it starts. */
  payload?: unknown;
}

/** A cron expression or time zone that cannot be used; the message names which. */
export class InvalidSchedule extends Error {
  override readonly name = 'InvalidSchedule';
}

/** A calculator of the expression's times (no timers of its own). */
export function cronOf(cron: string, timeZone: string): Cron {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
  } catch {
    throw new InvalidSchedule(`timeZone: "${timeZone}" is not a time zone; use an IANA name such as Europe/Oslo or UTC`);
  }
  try {
    return new Cron(cron, { timezone: timeZone });
  } catch (error) {
    throw new InvalidSchedule(`cron: "${cron}" is not a cron expression: ${(error as Error).message}`);
  }
}

/** The first time the expression names after `after` (ms), or undefined when it names none. */
export function nextTime(cron: Cron, after: number): number | undefined {
  return cron.nextRun(new Date(after))?.getTime();
}

/** Creates or replaces a schedule; it first fires at the first time after `now`. */
export async function putSchedule(tx: Queryable, spec: ScheduleSpec, now: number): Promise<void> {
  const timeZone = spec.timeZone ?? 'UTC';
  const next = nextTime(cronOf(spec.cron, timeZone), now);
  if (next === undefined) throw new InvalidSchedule(`cron: "${spec.cron}" names no time after now`);
  const payload = JSON.stringify(spec.payload ?? null);
  await tx.run(sql`INSERT INTO job_schedules (project_id, name, kind, cron, time_zone, payload, next_time, created_time, last_updated_time)
    VALUES (${spec.projectId}, ${spec.name}, ${spec.kind}, ${spec.cron}, ${timeZone}, ${payload}, ${next}, ${now}, ${now})
    ON CONFLICT (project_id, name) DO UPDATE SET kind = excluded.kind, cron = excluded.cron, time_zone = excluded.time_zone,
      payload = excluded.payload, next_time = excluded.next_time, last_updated_time = excluded.last_updated_time`);
}

/** Deletes a schedule; whether there was one. */
export async function deleteSchedule(tx: Queryable, projectId: number, name: string): Promise<boolean> {
  return (await tx.run(sql`DELETE FROM job_schedules WHERE project_id = ${projectId} AND name = ${name}`)).changes > 0;
}

export interface DueSchedule {
  projectId: number;
  name: string;
  kind: string;
  cron: string;
  timeZone: string;
  payload: string;
  nextTime: number;
}

export async function dueSchedules(db: Queryable, now: number, limit: number): Promise<DueSchedule[]> {
  return db.all<DueSchedule>(sql`SELECT project_id AS "projectId", name, kind, cron, time_zone AS "timeZone", payload, next_time AS "nextTime"
    FROM job_schedules WHERE next_time <= ${now} ORDER BY next_time LIMIT ${limit}`);
}

/**
 * Moves a due schedule on to its first time after `now`, if no other runner has: whether this one did (and
 * so starts the job). A schedule that names no later time is deleted.
 */
export async function advanceSchedule(tx: Queryable, s: DueSchedule, now: number): Promise<boolean> {
  const next = nextTime(cronOf(s.cron, s.timeZone), now);
  const where = sql`project_id = ${s.projectId} AND name = ${s.name} AND next_time = ${s.nextTime}`;
  const moved = next === undefined ? await tx.run(sql`DELETE FROM job_schedules WHERE ${where}`) : await tx.run(sql`UPDATE job_schedules SET next_time = ${next} WHERE ${where}`);
  return moved.changes === 1;
}

/** The earliest time a schedule fires next, if any. */
export async function nextScheduleTime(db: Queryable): Promise<number | undefined> {
  return (await db.get<{ t: number | null }>(sql`SELECT min(next_time) AS t FROM job_schedules`))?.t ?? undefined;
}
