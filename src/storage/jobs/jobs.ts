/**
 * Durable jobs: work that outlives the request that asked for it (a function call, a workflow execution, a
 * transformation run, a schedule's firing). A job is a row in `jobs`, keyed by its project and id. Any
 * process runs any job of a kind it has a handler for:
 *
 * - Starting a job is a write in the caller's transaction; after it commits, runners here and in every
 *   process on the same PostgreSQL are woken (the change feed), and the job is never started by a
 *   transaction that rolled back.
 * - A runner claims a due job by moving it to `running` under a lease (its own name and a time), in one
 *   compare-and-set statement: of several runners that see the same job, one gets it. While the handler
 *   runs, the runner renews the lease; a job whose runner died is claimed again once its lease has expired.
 * - A handler that throws is run again after a backoff that doubles at each attempt, until its attempts are
 *   spent (then `failed`). A `JobFailure` that says so fails the job without retrying.
 * - A deadline ends a job that has not finished by then as `timedOut`, queued or running. Cancelling ends it
 *   as `cancelled`. Either way the handler's signal aborts; what it returns afterwards is dropped.
 * - Every change of a job's state or progress is recorded (area `jobs`, key its id), so a request can wait
 *   for a job to finish (changes.ts).
 *
 * Every write of a runner is conditional on the job still being its own (state `running`, its lease, its
 * attempt): a runner that lost a job (cancelled, past its lease and taken over) writes nothing more of it.
 * Time is the injected clock's, so tests move it by hand.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ChangeFeed } from '../changes.js';
import type { Clock } from '../clock.js';
import { allocateIds } from '../ids.js';
import { Sql, sql } from '../sql.js';
import type { Queryable, Store } from '../store.js';
import { advanceSchedule, deleteSchedule, dueSchedules, nextScheduleTime, putSchedule, type ScheduleSpec } from './schedules.js';

export type JobState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timedOut';

export interface Job {
  id: number;
  projectId: number;
  kind: string;
  key?: string;
  payload: unknown;
  state: JobState;
  /** Attempts begun so far, the one running included. */
  attempts: number;
  maxAttempts: number;
  /** When it may run (next): its start, or the end of a backoff. */
  runAfter: number;
  deadline?: number;
  /** The time its schedule fired for, when a schedule started it. */
  scheduledTime?: number;
  progress?: unknown;
  result?: unknown;
  /** Why the last attempt failed, or why the job ended unfinished. */
  error?: string;
  createdTime: number;
  startedTime?: number;
  finishedTime?: number;
  lastUpdatedTime: number;
}

export interface StartJob {
  projectId: number;
  kind: string;
  payload?: unknown;
  /** Starting a job of this kind and key again in the project answers the existing job. */
  key?: string;
  /** Not before this time (ms); now when absent. */
  runAfter?: number;
  /** A time (ms) by which the job ends, as `timedOut` if it has not finished. */
  deadline?: number;
  /** Attempts before the job fails; the kind's setting when absent. */
  maxAttempts?: number;
}

export interface JobContext {
  /** Aborts when the job is cancelled, passes its deadline, is lost to another runner, or the process stops. */
  signal: AbortSignal;
  /** Records how far the job has come (any JSON value); readers of the job see it. */
  progress(value: unknown): Promise<void>;
}

/** What a handler does with a job; what it returns (JSON) is the job's result. */
export type JobHandler = (job: Job, context: JobContext) => Promise<unknown>;

export interface KindOptions {
  /** Jobs of this kind one process runs at once. */
  concurrency?: number;
  /** How long a claim lasts without renewal; a runner renews at a third of it. */
  leaseMs?: number;
  maxAttempts?: number;
  /** The wait before the second attempt, doubled at each further one up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * How long a job of this kind is kept once it has ended; the runner then deletes it. `Infinity` for kinds
   * whose ended jobs are read later (a record that shows a job's state).
   */
  keepEndedMs?: number;
}

/** Thrown by a handler: the job fails at once, without further attempts. */
export class JobFailure extends Error {
  override readonly name = 'JobFailure';
}

export interface JobsOptions {
  db: Store;
  clock: Clock;
  changes: ChangeFeed;
  /** This runner's name in leases; unique per process. */
  owner?: string;
  /** Longest time between two looks for due work, whatever the notifications (processes sharing a SQLite file hear none). */
  pollMs?: number;
}

const DEFAULTS: Required<KindOptions> = { concurrency: 2, leaseMs: 30_000, maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 5 * 60_000, keepEndedMs: 7 * 24 * 3600_000 };
/** How often a runner deletes the ended jobs past their kind's `keepEndedMs`. */
const PRUNE_EVERY_MS = 3600_000;
const AREA = 'jobs';
/** Candidates read per look for due work. */
const BATCH = 20;
/** Ended jobs of a kind deleted in one pass. */
const PRUNE_BATCH = 1000;

interface Kind {
  handler: JobHandler;
  options: Required<KindOptions>;
  running: number;
}

interface Running {
  job: Job;
  controller: AbortController;
}

/** Why a runner stops running a job before its handler returns. */
type Stop = 'cancelled' | 'lost' | 'deadline' | 'shutdown';

const COLUMNS = Sql.raw(`id, project_id AS "projectId", kind, dedupe_key AS "key", payload, state, attempts, max_attempts AS "maxAttempts",
  run_after AS "runAfter", deadline, scheduled_time AS "scheduledTime", progress, result, error, created_time AS "createdTime",
  started_time AS "startedTime", finished_time AS "finishedTime", last_updated_time AS "lastUpdatedTime"`);

type JobRow = Omit<Job, 'payload' | 'progress' | 'result'> & { payload: string; progress: string | null; result: string | null };

function toJob(row: JobRow): Job {
  const job: Record<string, unknown> = { ...row, payload: JSON.parse(row.payload) };
  job.progress = row.progress === null ? undefined : JSON.parse(row.progress);
  job.result = row.result === null ? undefined : JSON.parse(row.result);
  for (const [k, v] of Object.entries(job)) if (v === null || v === undefined) delete job[k];
  return job as unknown as Job;
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
const jobKey = (projectId: number, id: number) => `${projectId}/${id}`;

export class Jobs {
  readonly owner: string;
  private readonly db: Store;
  private readonly clock: Clock;
  private readonly changes: ChangeFeed;
  private readonly pollMs: number;
  private readonly kinds = new Map<string, Kind>();
  private readonly running = new Map<string, Running>();
  /** The ends of the runs under way, which close() waits for. */
  private readonly ending = new Set<Promise<void>>();
  private unsubscribe?: () => void;
  private cancelTimer?: () => void;
  private pumping?: Promise<void>;
  private again = false;
  /** When this runner next deletes ended jobs (the clock's time). */
  private nextPrune = 0;
  private closed = false;

  constructor({ db, clock, changes, owner, pollMs = 2000 }: JobsOptions) {
    this.db = db;
    this.clock = clock;
    this.changes = changes;
    this.pollMs = pollMs;
    this.owner = owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  }

  /** Registers the handler of a kind; this process then runs jobs of that kind. */
  register(kind: string, handler: JobHandler, options: KindOptions = {}): void {
    if (this.kinds.has(kind)) throw new Error(`the job kind "${kind}" is registered twice`);
    this.kinds.set(kind, { handler, options: { ...DEFAULTS, ...options }, running: 0 });
    this.unsubscribe ??= this.changes.subscribe({ area: AREA }, () => this.wake());
    this.wake();
  }

  /** Starts a job in the caller's transaction; its id. Runners are woken once the transaction commits. */
  async start(tx: Queryable, spec: StartJob & { scheduledTime?: number }): Promise<number> {
    const now = this.clock.now();
    const maxAttempts = spec.maxAttempts ?? this.kinds.get(spec.kind)?.options.maxAttempts ?? DEFAULTS.maxAttempts;
    if (spec.key !== undefined) {
      const existing = await this.idOf(tx, spec.projectId, spec.kind, spec.key);
      if (existing !== undefined) return existing;
    }
    const [id] = await allocateIds(tx, 'jobs', 1);
    const inserted = await tx.run(sql`INSERT INTO jobs (id, project_id, kind, dedupe_key, payload, state, attempts, max_attempts, run_after, deadline,
        scheduled_time, created_time, last_updated_time)
      VALUES (${id}, ${spec.projectId}, ${spec.kind}, ${spec.key ?? null}, ${JSON.stringify(spec.payload ?? null)}, 'queued', 0, ${maxAttempts},
        ${spec.runAfter ?? now}, ${spec.deadline ?? null}, ${spec.scheduledTime ?? null}, ${now}, ${now})
      ON CONFLICT DO NOTHING`);
    // Another transaction started the same key meanwhile (PostgreSQL; SQLite's writers take turns).
    if (inserted.changes === 0) return (await this.idOf(tx, spec.projectId, spec.kind, spec.key!))!;
    await this.changed(tx, spec.projectId, id);
    return id;
  }

  async get(db: Queryable, projectId: number, id: number): Promise<Job | undefined> {
    const row = await db.get<JobRow>(sql`SELECT ${COLUMNS} FROM jobs WHERE project_id = ${projectId} AND id = ${id}`);
    return row && toJob(row);
  }

  /** Cancels a job that has not ended, in the caller's transaction: whether it did. A running handler's signal aborts. */
  async cancel(tx: Queryable, projectId: number, id: number): Promise<boolean> {
    const now = this.clock.now();
    const done = await tx.run(sql`UPDATE jobs SET state = 'cancelled', finished_time = ${now}, last_updated_time = ${now}, lease_owner = NULL, lease_until = NULL
      WHERE project_id = ${projectId} AND id = ${id} AND state IN ('queued', 'running')`);
    if (done.changes === 0) return false;
    await this.changed(tx, projectId, id);
    // A handler running here stops at once; one running in another process when its runner hears the change.
    tx.afterCommit(() => this.running.get(jobKey(projectId, id))?.controller.abort('cancelled' satisfies Stop));
    return true;
  }

  /** Creates or replaces a schedule (see schedules.ts), in the caller's transaction. */
  async schedule(tx: Queryable, spec: ScheduleSpec): Promise<void> {
    await putSchedule(tx, spec, this.clock.now());
    await this.changes.record(tx, [{ area: AREA, projectId: spec.projectId }]);
  }

  async unschedule(tx: Queryable, projectId: number, name: string): Promise<boolean> {
    return deleteSchedule(tx, projectId, name);
  }

  /** Resolves once the runner has looked for due work and found none left to claim now (tests). */
  async settled(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stops running: handlers' signals abort, and their jobs are handed back for another process to claim at once. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.cancelTimer?.();
    await this.settled();
    const stopping = [...this.running.values()];
    for (const r of stopping) r.controller.abort('shutdown' satisfies Stop);
    await Promise.allSettled([...this.ending]);
    await Promise.all(stopping.map((r) => this.release(r.job).catch(() => {})));
  }

  private async idOf(db: Queryable, projectId: number, kind: string, key: string): Promise<number | undefined> {
    return (await db.get<{ id: number }>(sql`SELECT id FROM jobs WHERE project_id = ${projectId} AND kind = ${kind} AND dedupe_key = ${key}`))?.id;
  }

  private changed(tx: Queryable, projectId: number, id: number): Promise<void> {
    return this.changes.record(tx, [{ area: AREA, projectId, key: String(id) }]);
  }

  /** Looks for due work soon; looks that are asked for while one is under way are made once, after it. */
  private wake(): void {
    if (this.closed || this.kinds.size === 0) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      // Asked for after the pump's last look: look again.
      if (this.again) this.wake();
    });
  }

  private async pump(): Promise<void> {
    let next: number;
    do {
      this.again = false;
      // Work due by the time the look began is claimed now; anything due later (even if that time has passed
      // by the end of the look, as the clock moves meanwhile) sets the next look.
      const began = this.clock.now();
      try {
        await this.fireSchedules();
        await this.endOverdue();
        await this.claimDue(began);
        await this.pruneEnded();
        await this.checkRunning();
        next = Math.min(await this.nextDue(began), this.clock.now() + this.pollMs);
      } catch {
        // The database is away for now (StoreUnavailable): look again at the next poll.
        next = this.clock.now() + this.pollMs;
      }
    } while (this.again && !this.closed);
    if (this.closed) return;
    this.cancelTimer?.();
    this.cancelTimer = this.clock.at(next, () => this.wake());
  }

  private async fireSchedules(): Promise<void> {
    const now = this.clock.now();
    for (const s of await dueSchedules(this.db, now, BATCH)) {
      await this.db.transaction(async (tx) => {
        if (await advanceSchedule(tx, s, now)) {
          await this.start(tx, { projectId: s.projectId, kind: s.kind, payload: JSON.parse(s.payload), key: `schedule:${s.name}:${s.nextTime}`, scheduledTime: s.nextTime });
        }
      });
    }
  }

  /** Ends jobs past their deadline that no live runner holds: queued ones, and running ones whose lease expired. */
  private async endOverdue(): Promise<void> {
    const now = this.clock.now();
    const overdue = await this.db.all<{ projectId: number; id: number; attempts: number }>(sql`SELECT project_id AS "projectId", id, attempts FROM jobs
      WHERE state IN ('queued', 'running') AND deadline <= ${now} AND (state = 'queued' OR lease_until <= ${now}) LIMIT ${BATCH}`);
    for (const j of overdue) {
      await this.db.transaction(async (tx) => {
        const ended = await tx.run(sql`UPDATE jobs SET state = 'timedOut', error = ${'the job did not finish by its deadline'}, finished_time = ${now},
            last_updated_time = ${now}, lease_owner = NULL, lease_until = NULL
          WHERE project_id = ${j.projectId} AND id = ${j.id} AND attempts = ${j.attempts} AND state IN ('queued', 'running')
            AND (state = 'queued' OR lease_until <= ${now})`);
        if (ended.changes) await this.changed(tx, j.projectId, j.id);
      });
    }
  }

  private async claimDue(now: number): Promise<void> {
    const free = [...this.kinds].filter(([, k]) => k.running < k.options.concurrency).map(([name]) => name);
    if (free.length === 0) return;
    const candidates = await this.db.all<JobRow>(sql`SELECT ${COLUMNS} FROM jobs WHERE kind IN (${free})
      AND ((state = 'queued' AND run_after <= ${now}) OR (state = 'running' AND lease_until <= ${now}))
      AND (deadline IS NULL OR deadline > ${now}) ORDER BY run_after, id LIMIT ${BATCH}`);
    for (const row of candidates) {
      const kind = this.kinds.get(row.kind)!;
      if (kind.running >= kind.options.concurrency || this.closed) continue;
      const job = await this.claim(toJob(row), kind, this.clock.now());
      if (job) this.run(job, kind);
    }
  }

  /** Takes a due job if no other runner has meanwhile: the job as claimed, or undefined. */
  private async claim(job: Job, kind: Kind, now: number): Promise<Job | undefined> {
    const taken = sql`project_id = ${job.projectId} AND id = ${job.id} AND state = ${job.state} AND attempts = ${job.attempts}
      AND (state = 'queued' OR lease_until <= ${now})`;
    return this.db.transaction(async (tx) => {
      if (job.attempts >= job.maxAttempts) {
        // Its last attempt's runner stopped (the lease expired): nothing is left to try.
        const ended = await tx.run(sql`UPDATE jobs SET state = 'failed', error = ${'the process running its last attempt stopped'}, finished_time = ${now},
          last_updated_time = ${now}, lease_owner = NULL, lease_until = NULL WHERE ${taken}`);
        if (ended.changes) await this.changed(tx, job.projectId, job.id);
        return undefined;
      }
      const leaseUntil = now + kind.options.leaseMs;
      const claimed = await tx.run(sql`UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_owner = ${this.owner}, lease_until = ${leaseUntil},
        started_time = coalesce(started_time, ${now}), last_updated_time = ${now} WHERE ${taken}`);
      if (claimed.changes === 0) return undefined;
      await this.changed(tx, job.projectId, job.id);
      return { ...job, state: 'running', attempts: job.attempts + 1, startedTime: job.startedTime ?? now, lastUpdatedTime: now };
    });
  }

  /** The condition of a job still being this runner's attempt. */
  private own(job: Job): Sql {
    return sql`project_id = ${job.projectId} AND id = ${job.id} AND state = 'running' AND lease_owner = ${this.owner} AND attempts = ${job.attempts}`;
  }

  /** Writes the end of this runner's attempt, if the job is still its own. */
  private async finish(job: Job, set: Sql): Promise<void> {
    await this.db.transaction(async (tx) => {
      const now = this.clock.now();
      const done = await tx.run(sql`UPDATE jobs SET ${set}, lease_owner = NULL, lease_until = NULL, last_updated_time = ${now} WHERE ${this.own(job)}`);
      if (done.changes) await this.changed(tx, job.projectId, job.id);
    });
  }

  private run(job: Job, kind: Kind): void {
    kind.running++;
    const controller = new AbortController();
    const key = jobKey(job.projectId, job.id);
    this.running.set(key, { job, controller });
    const stopped = new Promise<Stop>((resolve) => controller.signal.addEventListener('abort', () => resolve(controller.signal.reason as Stop), { once: true }));
    const timers: Array<() => void> = [];
    let ended = false;
    if (job.deadline !== undefined) timers.push(this.clock.at(job.deadline, () => controller.abort('deadline' satisfies Stop)));
    const renew = (at: number) => {
      if (ended) return;
      timers.push(
        this.clock.at(at, () => {
          const now = this.clock.now();
          this.db.run(sql`UPDATE jobs SET lease_until = ${now + kind.options.leaseMs} WHERE ${this.own(job)}`).then(
            (r) => (r.changes ? renew(now + kind.options.leaseMs / 3) : controller.abort('lost' satisfies Stop)),
            () => renew(now + kind.options.leaseMs / 3),
          );
        }),
      );
    };
    renew(this.clock.now() + kind.options.leaseMs / 3);
    const context: JobContext = {
      signal: controller.signal,
      progress: async (value) => {
        await this.db.transaction(async (tx) => {
          const r = await tx.run(sql`UPDATE jobs SET progress = ${json(value)}, last_updated_time = ${this.clock.now()} WHERE ${this.own(job)}`);
          if (r.changes) await this.changed(tx, job.projectId, job.id);
          else controller.abort('lost' satisfies Stop);
        });
      },
    };
    const outcome = Promise.race([
      Promise.resolve()
        .then(() => kind.handler(job, context))
        .then(
          (result) => ({ ok: true as const, result }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
      stopped.then((stop) => ({ stop })),
    ]);
    const end = outcome
      .then((o) => {
        ended = true;
        for (const cancel of timers) cancel();
        const now = this.clock.now();
        if ('stop' in o) {
          // Cancelled or lost: another writer owns the job's state now; shutdown: close() hands it back.
          return o.stop === 'deadline' ? this.finish(job, sql`state = 'timedOut', error = ${'the job did not finish by its deadline'}, finished_time = ${now}`) : undefined;
        }
        if (o.ok) return this.finish(job, sql`state = 'succeeded', result = ${json(o.result)}, error = NULL, finished_time = ${now}`);
        const message = o.error instanceof Error ? o.error.message : String(o.error);
        if (o.error instanceof JobFailure || job.attempts >= job.maxAttempts) {
          return this.finish(job, sql`state = 'failed', error = ${message}, finished_time = ${now}`);
        }
        const backoff = Math.min(kind.options.backoffMs * 2 ** (job.attempts - 1), kind.options.maxBackoffMs);
        return this.finish(job, sql`state = 'queued', error = ${message}, run_after = ${now + backoff}`);
      })
      .catch(() => {
        // The end could not be written (the database is away): the lease runs out and another attempt follows.
      })
      .finally(() => {
        kind.running--;
        this.running.delete(key);
        this.ending.delete(end);
        this.wake();
      });
    this.ending.add(end);
  }

  /** Aborts the handlers of jobs running here that were cancelled or taken over meanwhile. */
  /** Deletes ended jobs kept past their kind's time, in batches of short statements that other writes go between. */
  private async pruneEnded(): Promise<void> {
    const now = this.clock.now();
    if (now < this.nextPrune) return;
    this.nextPrune = now + PRUNE_EVERY_MS;
    for (const [kind, { options }] of this.kinds) {
      if (!Number.isFinite(options.keepEndedMs)) continue;
      const before = now - options.keepEndedMs;
      let deleted: number;
      do {
        const done = await this.db.run(sql`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE kind = ${kind} AND finished_time < ${before}
          AND state IN ('succeeded', 'failed', 'cancelled', 'timedOut') LIMIT ${PRUNE_BATCH})`);
        deleted = done.changes;
      } while (deleted === PRUNE_BATCH && !this.closed);
    }
  }

  private async checkRunning(): Promise<void> {
    if (this.running.size === 0) return;
    const jobs = [...this.running.values()];
    const pairs = Sql.join(
      jobs.map((r) => sql`(${r.job.projectId}, ${r.job.id})`),
      ', ',
    );
    const rows = await this.db.all<{ projectId: number; id: number; state: string; owner: string | null; attempts: number }>(
      sql`SELECT project_id AS "projectId", id, state, lease_owner AS owner, attempts FROM jobs WHERE (project_id, id) IN (${pairs})`,
    );
    const current = new Map(rows.map((r) => [jobKey(r.projectId, r.id), r]));
    for (const r of jobs) {
      const row = current.get(jobKey(r.job.projectId, r.job.id));
      if (row?.state === 'running' && row.owner === this.owner && row.attempts === r.job.attempts) continue;
      r.controller.abort((row?.state === 'cancelled' ? 'cancelled' : 'lost') satisfies Stop);
    }
  }

  /** Hands a job this runner holds back to the queue, as if its attempt had not begun. */
  private async release(job: Job): Promise<void> {
    await this.finish(job, sql`state = 'queued', attempts = attempts - 1, run_after = ${this.clock.now()}`);
  }

  /** When there may next be work after `since`: a queued job's time, a lease's end, a deadline, a schedule's time. */
  private async nextDue(since: number): Promise<number> {
    const kinds = [...this.kinds.keys()];
    const row = await this.db.get<{ queued: number | null; lease: number | null; deadline: number | null }>(sql`SELECT
      (SELECT min(run_after) FROM jobs WHERE state = 'queued' AND kind IN (${kinds})) AS queued,
      (SELECT min(lease_until) FROM jobs WHERE state = 'running' AND kind IN (${kinds})) AS lease,
      (SELECT min(deadline) FROM jobs WHERE state IN ('queued', 'running') AND deadline IS NOT NULL) AS deadline`);
    // Work already due waits for a free slot, and a slot that frees looks again (run's end wakes the runner).
    const times = [row?.queued, row?.lease, row?.deadline, await nextScheduleTime(this.db)].filter((t): t is number => typeof t === 'number' && t > since);
    return times.length ? Math.min(...times) : Infinity;
  }
}
