/**
 * A Strata process killed (SIGKILL) while it runs a workflow execution: another process on the same store
 * (the PostgreSQL database, or the SQLite file) carries the execution on where it was, and every task completes. The test learns that
 * the last task ran by long polling a data point subscription the task writes into, so it never sleeps.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startServerProcess } from '../support/server-process.js';
import { storeEnv, testEngine } from '../support/test-store.js';

const SECRET = 'workflow-kill-secret';
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A server on the store of this run: a PostgreSQL database of its own, or a SQLite file in a directory of its own. */
async function storeOfRun(): Promise<Record<string, string>> {
  if (testEngine() === 'postgres') return storeEnv();
  const dir = mkdtempSync(join(tmpdir(), 'strata-wf-kill-'));
  dirs.push(dir);
  return { STRATA_DATA_DIR: dir };
}

const start = (store: Record<string, string>) =>
  startServerProcess({ ...store, STRATA_PROJECTS: 'dev', STRATA_DEV_CLIENT_SECRET: SECRET, STRATA_PUBLIC_URL: 'http://strata.test' }, children);

async function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const tokenRes = await fetch(`${base}/oauth2/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'strata-admin', client_secret: SECRET }) });
  const { access_token } = (await tokenRes.json()) as { access_token: string };
  const res = await fetch(`${base}/api/v1/projects/dev${path}`, {
    method,
    headers: { authorization: `Bearer ${access_token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

it('a killed process leaves its executions to another, which completes them', { timeout: 120_000 }, async () => {
  const store = await storeOfRun();
  const victim = await start(store);
  const steps = Array.from({ length: 12 }, (_, i) => ({
    externalId: `t${i}`,
    type: 'cdf',
    parameters: { cdfRequest: { resourcePath: '/events', method: 'POST', body: { items: [{ externalId: `kill-${i}` }] } } },
    ...(i > 0 ? { dependsOn: [{ externalId: `t${i - 1}` }] } : {}),
  }));
  const done = {
    externalId: 'done',
    type: 'cdf',
    parameters: { cdfRequest: { resourcePath: '/timeseries/data', method: 'POST', body: { items: [{ externalId: 'wf-done', datapoints: [{ timestamp: 1, value: 1 }] }] } } },
    dependsOn: [{ externalId: 't11' }],
  };
  expect((await call(victim.base, 'POST', '/timeseries', { items: [{ externalId: 'wf-done' }] })).status).toBe(201);
  expect((await call(victim.base, 'POST', '/timeseries/subscriptions', { items: [{ externalId: 'wf-done', partitionCount: 1, timeSeriesIds: ['wf-done'] }] })).status).toBe(201);
  const first = await call(victim.base, 'POST', '/timeseries/subscriptions/data/list', { externalId: 'wf-done', partitions: [{ index: 0 }], pollTimeoutSeconds: 0 });
  let cursor = first.body.partitions[0].nextCursor;
  expect((await call(victim.base, 'POST', '/workflows/versions', { items: [{ workflowExternalId: 'wf-kill', version: '1', workflowDefinition: { tasks: [...steps, done] } }] })).status).toBe(200);
  const session = await call(victim.base, 'POST', '/sessions', { items: [{ tokenExchange: true }] });
  const run = await call(victim.base, 'POST', '/workflows/wf-kill/versions/1/run', { authentication: { nonce: session.body.items[0].nonce } });
  expect(run.status).toBe(202);
  victim.child.kill('SIGKILL');

  const survivor = await start(store);
  for (let page = 0; page < 40; page++) {
    const res = await call(survivor.base, 'POST', '/timeseries/subscriptions/data/list', { externalId: 'wf-done', partitions: [{ index: 0, cursor }], pollTimeoutSeconds: 5 });
    cursor = res.body.partitions[0].nextCursor;
    if (res.body.updates.length) break;
  }
  // The data point is written by the last task's request, just before the task's end is: read until that is.
  let execution = await call(survivor.base, 'GET', `/workflows/executions/${run.body.id}`);
  for (let read = 0; read < 500 && execution.body.status === 'RUNNING'; read++) execution = await call(survivor.base, 'GET', `/workflows/executions/${run.body.id}`);
  expect(execution.body.status).toBe('COMPLETED');
  expect(execution.body.executedTasks.map((t: { externalId: string; status: string }) => [t.externalId, t.status])).toEqual([...steps, done].map((t) => [t.externalId, 'COMPLETED']));
  const events = await call(survivor.base, 'POST', '/events/list', { filter: { externalIdPrefix: 'kill-' }, limit: 100 });
  expect(events.body.items).toHaveLength(12);
});
