/**
 * Driving workflow executions in tests: a nonce for a run, and waiting, without sleeping, until the job
 * runner has no work due now (jobs queued for later, such as a task's timeout, wait for the clock).
 */
import { sql, TRUE } from '../../src/storage/sql.js';
import type { Harness } from './harness.js';

/** A nonce of a new session of the harness's client, as `POST /sessions` hands it out. */
export async function nonce(h: Harness): Promise<string> {
  const res = await h.post('/sessions', { items: [{ tokenExchange: true }] });
  if (res.status !== 200) throw new Error(`POST /sessions answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.items[0].nonce;
}

/**
 * Resolves once no job is running and none is due at the clock's time, leaving out jobs of the kinds
 * `except` (a function call held by its test while the workflow around it goes on).
 */
export async function dueJobsDone(h: Harness, except: readonly string[] = []): Promise<void> {
  const { db, changes, jobs, now } = h.strata.services;
  const project = h.base.split('/').pop()!;
  const { id } = (await db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${project}`))!;
  for (;;) {
    await jobs!.settled();
    const watch = changes!.watch({ area: 'jobs', projectId: id });
    const open = await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM jobs
      WHERE project_id = ${id} AND (state = 'running' OR (state = 'queued' AND run_after <= ${now()})) AND ${except.length ? sql`kind NOT IN (${except})` : TRUE}`);
    if (Number(open!.n) === 0) {
      watch.close();
      return;
    }
    await watch.wait({ deadline: Infinity });
  }
}
