/**
 * Schedules of transformations over HTTP, on both backends, with a clock the test moves: a schedule's
 * firing runs the transformation with its own sessions; paused, it runs nothing; a cron expression that
 * does not parse is a 400; one schedule per transformation; deleting the transformation deletes it; a
 * cancelled run ends as failed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findProjectAuth } from '../src/storage/projects.js';
import { sql } from '../src/storage/sql.js';
import { startCustomHarness } from './support/custom-harness.js';
import { errorMessage, type Harness, type Response } from './support/harness.js';
import { ManualClock } from './support/manual-clock.js';

const MINUTE = 60_000;
// Half a minute past a whole minute, so that "* * * * *" fires 30 s on.
const clock = new ManualClock(Date.UTC(2026, 10, 27, 3, 0, 30));
let h: Harness;
let projectId: number;

beforeAll(async () => {
  h = await startCustomHarness({ build: { clock } });
  projectId = (await findProjectAuth(h.strata.services.db, 'dev'))!.id;
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function nonce() {
  const { id, nonce } = ok(await h.post('/sessions', { items: [{ tokenExchange: true }] })).items[0];
  return { sessionId: id, nonce, cdfProjectName: 'dev' };
}

const jobsOf = async (externalId: string) => ok(await h.get(`/transformations/jobs?transformationExternalId=${externalId}`)).items;

/** Runs started by the job runner, whether or not they have begun to run. */
async function runsStarted(): Promise<number> {
  const row = await h.strata.services.db.get<{ n: number }>(sql`SELECT count(*) AS n FROM jobs WHERE project_id = ${projectId} AND kind = 'transformations.run'`);
  return Number(row!.n);
}

/** Waits (on the change feed) until the transformation has `count` finished jobs. */
async function finishedJobs(externalId: string, count: number): Promise<any[]> {
  for (;;) {
    const watch = h.strata.services.changes!.watch({ area: 'jobs', projectId });
    const jobs = await jobsOf(externalId);
    if (jobs.filter((j: any) => j.status === 'Completed' || j.status === 'Failed').length >= count) {
      watch.close();
      return jobs;
    }
    await watch.wait({ deadline: Infinity });
  }
}

it('runs a transformation at each firing of its schedule, and not while paused', async () => {
  const query = "select 'scheduled-asset' as externalId, 'Scheduled' as name";
  ok(await h.post('/transformations', { items: [{ externalId: 'sched', name: 'S', ignoreNullFields: true, query, destination: { type: 'assets' }, sourceNonce: await nonce(), destinationNonce: await nonce() }] }));
  const [s] = ok(await h.post('/transformations/schedules', { items: [{ externalId: 'sched', interval: '* * * * *' }] })).items;
  expect(s).toMatchObject({ externalId: 'sched', interval: '* * * * *', isPaused: false });
  expect((await h.post('/transformations/schedules', { items: [{ externalId: 'sched', interval: '0 * * * *' }] })).status).toBe(409);
  expect(await jobsOf('sched')).toEqual([]);

  clock.advance(MINUTE);
  const [first] = await finishedJobs('sched', 1);
  expect(first.status).toBe('Completed');
  expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'scheduled-asset' }] })).items[0].name).toBe('Scheduled');

  const [paused] = ok(await h.post('/transformations/schedules/update', { items: [{ externalId: 'sched', update: { isPaused: { set: true } } }] })).items;
  expect(paused.isPaused).toBe(true);
  clock.advance(5 * MINUTE);
  await h.strata.services.jobs!.settled();
  expect(await runsStarted()).toBe(1);

  ok(await h.post('/transformations/schedules/update', { items: [{ externalId: 'sched', update: { isPaused: { set: false }, interval: { set: '*/2 * * * *' } } }] }));
  clock.advance(2 * MINUTE);
  expect(await finishedJobs('sched', 2)).toHaveLength(2);

  expect(ok(await h.get('/transformations/schedules')).items.map((x: any) => x.externalId)).toEqual(['sched']);
  expect(ok(await h.post('/transformations/schedules/byids', { items: [{ externalId: 'sched' }] })).items[0].interval).toBe('*/2 * * * *');
});

it('refuses a cron expression that does not parse and changes nothing', async () => {
  ok(await h.post('/transformations', { items: [{ externalId: 'bad-cron', name: 'B', ignoreNullFields: false }] }));
  const res = await h.post('/transformations/schedules', { items: [{ externalId: 'bad-cron', interval: 'every day at noon' }] });
  expect(errorMessage(res, 400)).toMatch(/items\[0\]\.interval/);
  expect((await h.post('/transformations/schedules/byids', { items: [{ externalId: 'bad-cron' }] })).status).toBe(400);
  const update = await h.post('/transformations/schedules/update', { items: [{ externalId: 'sched', update: { interval: { set: '61 * * * *' } } }] });
  expect(errorMessage(update, 400)).toMatch(/interval/);
  expect(ok(await h.post('/transformations/schedules/byids', { items: [{ externalId: 'sched' }] })).items[0].interval).toBe('*/2 * * * *');
});

it('deletes a schedule on request and with its transformation', async () => {
  ok(await h.post('/transformations/schedules', { items: [{ externalId: 'bad-cron', interval: '0 0 * * *' }] }));
  ok(await h.post('/transformations/schedules/delete', { items: [{ externalId: 'bad-cron' }] }));
  expect(ok(await h.post('/transformations/schedules/byids', { items: [{ externalId: 'bad-cron' }], ignoreUnknownIds: true })).items).toEqual([]);

  ok(await h.post('/transformations/delete', { items: [{ externalId: 'sched' }] }));
  expect(ok(await h.get('/transformations/schedules')).items).toEqual([]);
  const before = await runsStarted();
  clock.advance(10 * MINUTE);
  await h.strata.services.jobs!.settled();
  expect(await runsStarted()).toBe(before);
});

it('cancels the jobs of a transformation that have not ended', async () => {
  ok(await h.post('/transformations', { items: [{ externalId: 'to-cancel', name: 'C', ignoreNullFields: true, query: 'select 1 as x', sourceNonce: await nonce(), destinationNonce: await nonce() }] }));
  // With this process's runner stopped, a run stays queued until it is cancelled.
  await h.strata.services.jobs!.close();
  const started = ok(await h.post('/transformations/run', { externalId: 'to-cancel' }));
  expect(started.status).toBe('Created');
  ok(await h.post('/transformations/cancel', { externalId: 'to-cancel' }));
  const [job] = ok(await h.post('/transformations/jobs/byids', { items: [{ id: started.id }] })).items;
  expect(job).toMatchObject({ status: 'Failed', error: 'The job was cancelled' });
  expect(errorMessage(await h.post('/transformations/cancel', { externalId: 'nothing' }), 400)).toMatch(/nothing/);
});
