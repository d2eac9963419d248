/**
 * Durable jobs on this run's engine, on a clock the test moves: a job started in a transaction runs once
 * after it commits (never after a rollback), is retried with a doubling backoff, can be cancelled, ends at
 * its deadline, reports progress, and schedules fire at their times in their time zone across a change of
 * daylight saving time; ended jobs are deleted once their kind keeps them no longer. A job whose process is killed (`kill -9`) is taken over once its lease expires, by
 * another process on the same database (PostgreSQL, or one SQLite file).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appSchema } from '../../src/app.js';
import { ChangeFeed } from '../../src/storage/changes.js';
import { InvalidSchedule } from '../../src/storage/jobs/schedules.js';
import { JobFailure, Jobs, type Job, type JobContext, type JobState } from '../../src/storage/jobs/jobs.js';
import { migrate } from '../../src/storage/migrate.js';
import { openStore } from '../../src/storage/open.js';
import { ensureProjects } from '../../src/storage/projects.js';
import { sql, type Sql } from '../../src/storage/sql.js';
import type { Store } from '../../src/storage/store.js';
import { ManualClock } from '../support/manual-clock.js';
import { newPostgresDatabase, openTestStore, testEngine } from '../support/test-store.js';

let store: Store;
let projectId: number;
beforeAll(async () => {
  store = await openTestStore();
  await ensureProjects(store, ['dev'], Date.now());
  projectId = (await store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${'dev'}`))!.id;
});
afterAll(() => store.close());

interface Runner {
  clock: ManualClock;
  changes: ChangeFeed;
  jobs: Jobs;
  /** Resolves once the job is in one of these states. */
  until(id: number, ...states: JobState[]): Promise<Job>;
}
const open: Runner[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) {
    await r.jobs.close();
    await r.changes.close();
  }
});

function runner(db: Store = store, start = Date.UTC(2026, 0, 1)): Runner {
  const clock = new ManualClock(start);
  const changes = new ChangeFeed(clock, db);
  const jobs = new Jobs({ db, clock, changes });
  const until = async (id: number, ...states: JobState[]): Promise<Job> => {
    for (;;) {
      const watch = changes.watch({ area: 'jobs', projectId, key: String(id) });
      const job = await jobs.get(db, projectId, id);
      if (job && states.includes(job.state)) {
        watch.close();
        return job;
      }
      await watch.wait({ deadline: Infinity });
    }
  };
  const r = { clock, changes, jobs, until };
  open.push(r);
  return r;
}

/** Calls of a handler, each awaited by the test in turn; `respond` decides what the handler does. */
function calls(respond: (job: Job, context: JobContext, n: number) => Promise<unknown>) {
  const seen: Array<{ job: Job; context: JobContext }> = [];
  const waiting: Array<() => void> = [];
  return {
    seen,
    handler: (job: Job, context: JobContext) => {
      seen.push({ job, context });
      for (const w of waiting.splice(0)) w();
      return respond(job, context, seen.length);
    },
    /** Resolves once the handler has been called n times in all. */
    async reached(n: number): Promise<void> {
      while (seen.length < n) await new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}

describe('jobs', () => {
  it('runs a job started in a transaction once, after the commit, and never one whose transaction rolled back', async () => {
    const { jobs, until, clock } = runner();
    const work = calls(async (job) => ({ doubled: (job.payload as { n: number }).n * 2 }));
    jobs.register('double', work.handler);
    await expect(
      store.transaction(async (tx) => {
        await jobs.start(tx, { projectId, kind: 'double', payload: { n: 1 } });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const id = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'double', payload: { n: 21 } }));
    const done = await until(id, 'succeeded');
    expect(done).toMatchObject({ state: 'succeeded', attempts: 1, result: { doubled: 42 }, payload: { n: 21 } });
    clock.advance(3_600_000);
    await jobs.settled();
    expect(work.seen.map((c) => c.job.id)).toEqual([id]);
    // Starting it again under the same key answers the same job.
    const keyed = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'double', payload: { n: 2 }, key: 'once' }));
    expect(await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'double', payload: { n: 3 }, key: 'once' }))).toBe(keyed);
    expect((await until(keyed, 'succeeded')).result).toEqual({ doubled: 4 });
  });

  it('deletes ended jobs once their kind keeps them no longer, and keeps those of kinds that keep them', async () => {
    const { jobs, until, clock } = runner();
    jobs.register('brief', async () => 'ok', { keepEndedMs: 60_000 });
    jobs.register('kept', async () => 'ok', { keepEndedMs: Infinity });
    const brief = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'brief' }));
    const kept = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'kept' }));
    await until(brief, 'succeeded');
    await until(kept, 'succeeded');
    const waiting = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'brief', runAfter: clock.now() + 10 * 3_600_000 }));
    clock.advance(30_000);
    await jobs.settled();
    expect(await jobs.get(store, projectId, brief)).toMatchObject({ state: 'succeeded' });
    clock.advance(2 * 3_600_000);
    await jobs.settled();
    expect(await jobs.get(store, projectId, brief)).toBeUndefined();
    expect(await jobs.get(store, projectId, kept)).toMatchObject({ state: 'succeeded' });
    expect(await jobs.get(store, projectId, waiting)).toMatchObject({ state: 'queued' });
  });

  it('retries a failed job after a backoff that doubles, then fails it when its attempts are spent', async () => {
    const { jobs, until, clock } = runner();
    const work = calls(async (_job, _context, n) => {
      if (n < 3) throw new Error(`failure ${n}`);
      return 'third time';
    });
    jobs.register('flaky', work.handler, { backoffMs: 1000, maxAttempts: 3 });
    const id = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'flaky' }));
    const first = await until(id, 'queued');
    await work.reached(1);
    const queued = await until(id, 'queued');
    expect(queued).toMatchObject({ attempts: 1, error: 'failure 1', runAfter: clock.now() + 1000 });
    expect(first.state).toBe('queued');
    clock.advance(999);
    await jobs.settled();
    expect(work.seen).toHaveLength(1);
    clock.advance(1);
    await work.reached(2);
    expect((await until(id, 'queued')).runAfter).toBe(clock.now() + 2000);
    clock.advance(2000);
    expect(await until(id, 'succeeded')).toMatchObject({ attempts: 3, result: 'third time' });

    const hopeless = calls(async () => {
      throw new Error('always');
    });
    jobs.register('hopeless', hopeless.handler, { backoffMs: 10, maxAttempts: 2 });
    const doomed = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'hopeless' }));
    await hopeless.reached(1);
    await until(doomed, 'queued');
    clock.advance(10);
    expect(await until(doomed, 'failed')).toMatchObject({ attempts: 2, error: 'always' });
    // A JobFailure fails the job at once.
    jobs.register('refused', async () => {
      throw new JobFailure('bad input');
    });
    const refused = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'refused' }));
    expect(await until(refused, 'failed')).toMatchObject({ attempts: 1, error: 'bad input' });
  });

  it('cancels a running job (its signal aborts, its late result is dropped) and a queued one (it never runs)', async () => {
    const { jobs, until, clock } = runner();
    let finish!: (value: unknown) => void;
    const work = calls(() => new Promise((resolve) => (finish = resolve)));
    jobs.register('long', work.handler);
    const id = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'long' }));
    await work.reached(1);
    expect(await store.transaction((tx) => jobs.cancel(tx, projectId, id))).toBe(true);
    expect(work.seen[0].context.signal.aborted).toBe(true);
    expect(work.seen[0].context.signal.reason).toBe('cancelled');
    finish('too late');
    expect(await until(id, 'cancelled')).not.toHaveProperty('result');
    expect(await store.transaction((tx) => jobs.cancel(tx, projectId, id))).toBe(false);

    const later = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'long', runAfter: clock.now() + 60_000 }));
    expect(await store.transaction((tx) => jobs.cancel(tx, projectId, later))).toBe(true);
    clock.advance(120_000);
    await jobs.settled();
    expect(work.seen).toHaveLength(1);
    expect((await jobs.get(store, projectId, later))?.state).toBe('cancelled');
  });

  it('ends a job at its deadline, running or still queued, and reports progress meanwhile', async () => {
    const { jobs, until, clock } = runner();
    const work = calls(async (_job, context) => {
      await context.progress({ done: 1, of: 3 });
      return new Promise(() => {});
    });
    jobs.register('slow', work.handler);
    const id = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'slow', deadline: clock.now() + 10_000 }));
    await work.reached(1);
    expect((await until(id, 'running')).state).toBe('running');
    for (;;) {
      const job = await jobs.get(store, projectId, id);
      if (job?.progress) {
        expect(job.progress).toEqual({ done: 1, of: 3 });
        break;
      }
      await until(id, 'running');
    }
    clock.advance(9_999);
    expect(work.seen[0].context.signal.aborted).toBe(false);
    clock.advance(1);
    expect(await until(id, 'timedOut')).toMatchObject({ error: 'the job did not finish by its deadline' });
    expect(work.seen[0].context.signal.reason).toBe('deadline');

    const queued = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'slow', runAfter: clock.now() + 5000, deadline: clock.now() + 1000 }));
    clock.advance(1000);
    expect((await until(queued, 'timedOut')).attempts).toBe(0);
    expect(work.seen).toHaveLength(1);
  });

  it('hands the jobs it runs back to the queue when it stops, for another runner to take at once', async () => {
    const first = runner();
    const held = calls(() => new Promise(() => {}));
    first.jobs.register('handed', held.handler);
    const id = await store.transaction((tx) => first.jobs.start(tx, { projectId, kind: 'handed' }));
    await held.reached(1);
    await first.jobs.close();
    expect(held.seen[0].context.signal.reason).toBe('shutdown');
    expect(await first.jobs.get(store, projectId, id)).toMatchObject({ state: 'queued', attempts: 0 });
    const second = runner();
    second.jobs.register('handed', async (job) => `attempt ${job.attempts}`);
    expect(await second.until(id, 'succeeded')).toMatchObject({ attempts: 1, result: 'attempt 1' });
  });

  it('runs a job that falls due while the runner is looking for when work is next due', async () => {
    // The clock moves on while the runner reads when the next job is due: that time has then passed, and the
    // runner must still look again at it rather than wait for its next poll.
    let moveOn: (() => void) | undefined;
    const db = new Proxy(store, {
      get(target, prop) {
        if (prop === 'get') {
          return async (query: Sql) => {
            const row = await target.get(query);
            if (query.text.includes('min(run_after)') && moveOn) [moveOn, moveOn = undefined][0]!();
            return row;
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const { jobs, until, clock } = runner(db);
    jobs.register('soon', async () => 'ran');
    await jobs.settled();
    moveOn = () => clock.advance(1000);
    const id = await store.transaction((tx) => jobs.start(tx, { projectId, kind: 'soon', runAfter: clock.now() + 1000 }));
    const outcome = await Promise.race([until(id, 'succeeded'), new Promise<'not run'>((resolve) => setTimeout(resolve, 5000, 'not run'))]);
    expect(moveOn).toBeUndefined();
    expect(outcome).toMatchObject({ state: 'succeeded', result: 'ran' });
  });

  it('fires a schedule at its times in its time zone, across the start of daylight saving time', async () => {
    // Oslo moves from UTC+1 to UTC+2 at 01:00 UTC on 29 March 2026: 09:00 there is 08:00 UTC before, 07:00 after.
    const { jobs, clock } = runner(store, Date.UTC(2026, 2, 27, 12));
    const work = calls(async () => 'ran');
    jobs.register('report', work.handler);
    await store.transaction((tx) => jobs.schedule(tx, { projectId, name: 'morning', kind: 'report', cron: '0 9 * * *', timeZone: 'Europe/Oslo', payload: { to: 'ops' } }));
    const expected = [Date.UTC(2026, 2, 28, 8), Date.UTC(2026, 2, 29, 7), Date.UTC(2026, 2, 30, 7)];
    for (const [i, at] of expected.entries()) {
      clock.set(at - 1);
      await jobs.settled();
      expect(work.seen).toHaveLength(i);
      clock.set(at);
      await work.reached(i + 1);
      expect(work.seen[i].job).toMatchObject({ scheduledTime: at, payload: { to: 'ops' } });
    }
    // Times missed while nothing ran fire once, then the schedule goes on.
    clock.set(Date.UTC(2026, 3, 3, 12));
    await work.reached(4);
    expect(work.seen[3].job.scheduledTime).toBe(Date.UTC(2026, 2, 31, 7));
    await jobs.settled();
    expect(work.seen).toHaveLength(4);
    expect(await jobs.unschedule(store, projectId, 'morning')).toBe(true);

    await expect(store.transaction((tx) => jobs.schedule(tx, { projectId, name: 'x', kind: 'report', cron: '61 * * * *' }))).rejects.toThrow(InvalidSchedule);
    await expect(store.transaction((tx) => jobs.schedule(tx, { projectId, name: 'x', kind: 'report', cron: '0 * * * *', timeZone: 'Mars/Base' }))).rejects.toThrow(
      'timeZone: "Mars/Base" is not a time zone',
    );
  });
});

describe('a job whose process was killed', () => {
  const children: ChildProcess[] = [];
  let dir: string | undefined;
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is taken over by another process once its lease expires', async () => {
    // A database both processes reach: this run's PostgreSQL, or one SQLite file.
    let where: string;
    let shared: Store;
    if (testEngine() === 'postgres') {
      where = await newPostgresDatabase();
      shared = openStore({ dataDir: ':memory:', databaseUrl: where });
    } else {
      dir = mkdtempSync(join(tmpdir(), 'strata-jobs-'));
      where = dir;
      shared = openStore({ dataDir: dir });
    }
    try {
      await migrate(shared, appSchema());
      await ensureProjects(shared, ['dev'], Date.now());
      const project = (await shared.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${'dev'}`))!.id;
      const child = spawn(process.execPath, ['test/support/platform-child.mjs', where, 'run-jobs', 'hold'], { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let output = '';
      const said = (text: string) =>
        new Promise<void>((resolve, reject) => {
          const check = () => output.includes(text) && resolve();
          child.stdout!.on('data', (d) => {
            output += d;
            check();
          });
          child.stderr!.on('data', (d) => (output += d));
          child.once('exit', (code) => reject(new Error(`the runner exited with ${code}: ${output}`)));
          check();
        });
      await said('ready');
      const starter = runner(shared, Date.now());
      const id = await shared.transaction((tx) => starter.jobs.start(tx, { projectId: project, kind: 'hold', payload: 'work' }));
      await said(`started ${id} 1`);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      expect((await starter.jobs.get(shared, project, id))?.state).toBe('running');

      // Another process's runner, whose clock is past the dead runner's lease (30 s from its claim).
      const taker = runner(shared, Date.now() + 31_000);
      const work = calls(async (job) => `done by attempt ${job.attempts}`);
      taker.jobs.register('hold', work.handler);
      await work.reached(1);
      const job = await new Promise<Job>((resolve, reject) => {
        const check = async (): Promise<void> => {
          const watch = taker.changes.watch({ area: 'jobs', projectId: project, key: String(id) });
          const current = await taker.jobs.get(shared, project, id);
          if (current?.state === 'succeeded') return resolve(current);
          await watch.wait({ deadline: Infinity });
          return check();
        };
        check().catch(reject);
      });
      expect(job).toMatchObject({ state: 'succeeded', attempts: 2, result: 'done by attempt 2' });
    } finally {
      for (const r of open.splice(0)) {
        await r.jobs.close();
        await r.changes.close();
      }
      await shared.close();
    }
  });
});
