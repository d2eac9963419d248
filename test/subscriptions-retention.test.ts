/**
 * The change log of data point subscriptions keeps a week: the project's hourly retention job deletes older
 * changes, and a listing from the start, or from a cursor taken before them, continues after what is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETENTION_JOB } from '../src/resources/subscriptions/retention.js';
import { sql } from '../src/storage/sql.js';
import { bearer, builtInSigner } from './support/auth.js';
import { startHarness, type Harness } from './support/harness.js';
import { jobsDone } from './support/jobs.js';
import { ManualClock } from './support/manual-clock.js';

const DAY = 24 * 3600_000;
const clock = new ManualClock(Date.now());
let h: Harness;
let auth: () => Promise<Record<string, string>>;

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
  const signer = await builtInSigner(h);
  // A token valid on the server's clock, which the test moves by days.
  auth = async () => bearer(await signer.sign({ sub: 'strata-admin' }, { exp: Math.floor(clock.now() / 1000) + 600 }));
});
afterAll(() => h.close());

async function ok(path: string, body: unknown): Promise<any> {
  const res = await h.request('POST', path, body, await auth());
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

const points = (from: number) => [{ externalId: 'rt', datapoints: [0, 1].map((i) => ({ timestamp: from + i, value: from + i })) }];
const delivered = (body: any): number[] => body.updates.flatMap((u: any) => (u.upserts ?? []).map((p: any) => p.timestamp));

async function runRetention(): Promise<void> {
  const db = h.strata.services.db;
  const { project_id: projectId } = (await db.get<{ project_id: number }>(sql`SELECT project_id FROM subscriptions WHERE external_id = 'rt-sub'`))!;
  await db.transaction((tx) => h.strata.services.jobs!.start(tx, { projectId: Number(projectId), kind: RETENTION_JOB, payload: {} }));
  await jobsDone(h);
}

describe('subscription change retention', () => {
  it('schedules an hourly job for the project, which deletes the changes older than a week and keeps the rest', async () => {
    await ok('/timeseries', { items: [{ externalId: 'rt' }] });
    await ok('/timeseries/subscriptions', { items: [{ externalId: 'rt-sub', partitionCount: 1, timeSeriesIds: ['rt'] }] });
    const schedules = await h.strata.services.db.all<{ kind: string; cron: string }>(sql`SELECT kind, cron FROM job_schedules WHERE kind = ${RETENTION_JOB}`);
    expect(schedules).toEqual([{ kind: RETENTION_JOB, cron: '7 * * * *' }]);

    const start = await ok('/timeseries/subscriptions/data/list', { externalId: 'rt-sub', partitions: [{ index: 0 }], limit: 100 });
    const cursor = start.partitions[0].nextCursor;
    const fromStart = async () => delivered(await ok('/timeseries/subscriptions/data/list', { externalId: 'rt-sub', partitions: [{ index: 0 }], limit: 100 }));
    await ok('/timeseries/data', { items: points(1000) });
    clock.advance(3 * DAY);
    await ok('/timeseries/data', { items: points(2000) });
    // Nothing is past a week yet.
    await runRetention();
    expect(await fromStart()).toEqual([1000, 1001, 2000, 2001]);

    clock.advance(5 * DAY);
    await ok('/timeseries/data', { items: points(3000) });
    // Eight days after the first write, five after the second: the job deletes the first. It is started here
    // rather than waited for from its schedule, whose firing after a move of the clock no request waits for.
    await runRetention();
    expect(await fromStart()).toEqual([2000, 2001, 3000, 3001]);
    const fromCursor = await ok('/timeseries/subscriptions/data/list', { externalId: 'rt-sub', partitions: [{ index: 0, cursor }], limit: 100 });
    expect(delivered(fromCursor)).toEqual([2000, 2001, 3000, 3001]);

    // A second run with nothing past a week deletes nothing.
    await runRetention();
    expect(await fromStart()).toEqual([2000, 2001, 3000, 3001]);
  });
});
