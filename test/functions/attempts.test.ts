/**
 * A call whose runner stops on its last attempt (its process died) ends `Failed`, saying so, rather than
 * staying `Running`: the job's row is made to look as a dead process on its last attempt leaves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_ATTEMPTS } from '../../src/resources/functions/service.js';
import { sql } from '../../src/storage/sql.js';
import { startHarness, type Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';
import { ManualClock } from '../support/manual-clock.js';
import { canRun, deployed, nonce } from './support.js';

const clock = new ManualClock(Date.UTC(2026, 1, 1));
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
});
afterAll(() => h.close());

/** Resolves once the job `jobId` is in the state `state`. */
async function jobIn(jobId: number, state: string): Promise<void> {
  const { db, changes } = h.strata.services;
  for (;;) {
    const watch = changes!.watch({ area: 'jobs' });
    const row = await db.get<{ state: string }>(sql`SELECT state FROM jobs WHERE id = ${jobId}`);
    if (row?.state === state) {
      watch.close();
      return;
    }
    await watch.wait({ deadline: Infinity });
  }
}

describe('a call whose runner stops on its last attempt', () => {
  it.runIf(canRun)('ends Failed with a reason that says the runner stopped', async () => {
    // Never returns: only its runner's end ends it.
    const fn = await deployed(h, { 'handler.js': 'exports.handle = () => new Promise(() => setInterval(() => {}, 1000));' }, { functionPath: 'handler.js' });
    const call = await h.post(`/functions/${fn.id}/call`, { data: {}, nonce: await nonce(h) });
    expect(call.status, JSON.stringify(call.body)).toBe(201);
    const { db } = h.strata.services;
    const { jobId } = (await db.get<{ jobId: number }>(sql`SELECT job_id AS "jobId" FROM function_calls WHERE id = ${call.body.id}`))!;
    await jobIn(Number(jobId), 'running');
    // The attempt running now is the call's last, and its runner is gone: the job holds a lease no one renews.
    await db.run(sql`UPDATE jobs SET attempts = ${CALL_ATTEMPTS}, lease_owner = ${'a-dead-process'} WHERE id = ${jobId}`);
    clock.advance(30_000);
    await h.strata.services.jobs!.settled();
    clock.advance(31_000);
    await jobsDone(h);

    const ended = (await h.get(`/functions/${fn.id}/calls/${call.body.id}`)).body;
    expect(ended).toMatchObject({ status: 'Failed', endTime: clock.now() });
    expect(ended.error.message).toMatch(new RegExp(`runner stopped before the call ended, on each of its ${CALL_ATTEMPTS} attempts`));
  });
});
