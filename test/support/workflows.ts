/**
 * Driving workflow executions in tests: answers checked, nonces for a run or a transformation, and waiting,
 * without sleeping, until the job runner has no work due now (jobs queued for later, such as a task's
 * timeout, wait for the clock).
 */
import { sql, TRUE } from '../../src/storage/sql.js';
import type { Harness, Response } from './harness.js';

/** The body of an answer of the status `status`; anything else throws, showing the answer. */
export function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A new session of the harness's client, as `POST /sessions` hands it out. */
async function session(h: Harness): Promise<{ id: number; nonce: string }> {
  return ok(await h.post('/sessions', { items: [{ tokenExchange: true }] })).items[0];
}

/** The nonce of a new session, as a run takes it. */
export async function nonce(h: Harness): Promise<string> {
  return (await session(h)).nonce;
}

/** A new session as a transformation takes it (`sourceNonce`, `destinationNonce`, a run's `nonce`). */
export async function transformationNonce(h: Harness): Promise<{ sessionId: number; nonce: string; cdfProjectName: string }> {
  const { id, nonce } = await session(h);
  return { sessionId: id, nonce, cdfProjectName: h.base.split('/').pop()! };
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
