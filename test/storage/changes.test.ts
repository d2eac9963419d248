/**
 * Recording changes and waiting for them, through test operations of an app on this run's engine: a wait
 * ends when a matching write commits (not when one rolls back), at its deadline on the injected clock, or
 * when its client disconnects, and then holds nothing. On PostgreSQL a write committed by another process
 * wakes it too, also after the feed's connection was cut and made again.
 */
import { spawn } from 'node:child_process';
import { Type } from '@sinclair/typebox';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { badRequest } from '../../src/http/errors.js';
import { route } from '../../src/http/route.js';
import { ChangeFeed, type WaitOutcome } from '../../src/storage/changes.js';
import { PostgresStore } from '../../src/storage/postgres-store.js';
import { sql } from '../../src/storage/sql.js';
import { manualClock, startCustomHarness } from '../support/custom-harness.js';
import type { Harness } from '../support/harness.js';
import { testEngine } from '../support/test-store.js';

const AREA = 'test-things';
const clock = manualClock();
/** What each wait request ended with, and a promise per wait that has begun, by key. */
const outcomes = new Map<string, WaitOutcome>();
const begun = new Map<string, { promise: Promise<void>; resolve: () => void }>();
function waitBegun(key: string): Promise<void> {
  if (!begun.has(key)) {
    let resolve!: () => void;
    begun.set(key, { promise: new Promise<void>((r) => (resolve = r)), resolve });
  }
  return begun.get(key)!.promise;
}

const routes = [
  route({
    method: 'POST',
    path: '/test-things/write',
    capability: null,
    body: Type.Object({ key: Type.String(), fail: Type.Optional(Type.Boolean()) }),
    handler: async ({ body, project, services }) =>
      services.db.transaction(async (tx) => {
        await services.changes!.record(tx, [{ area: AREA, projectId: project.id, key: body.key }]);
        if (body.fail) throw badRequest('refused after recording the change');
        return {};
      }),
  }),
  route({
    method: 'GET',
    path: '/test-things/wait',
    capability: null,
    query: Type.Object({ key: Type.String(), timeoutMs: Type.Integer() }),
    handler: async ({ query, project, services, signal }) => {
      const watch = services.changes!.watch({ area: AREA, projectId: project.id, key: query.key });
      const waiting = watch.wait({ deadline: services.clock!.now() + query.timeoutMs, signal });
      void waitBegun(query.key);
      begun.get(query.key)!.resolve();
      const outcome = await waiting;
      outcomes.set(query.key, outcome);
      return { outcome };
    },
  }),
];

let h: Harness;
beforeAll(async () => {
  h = await startCustomHarness({ build: { clock, extraRoutes: routes } });
  clock.catchUp();
});
afterAll(() => h.close());

/** Waits under way (a wait ends, and stops counting, as soon as a change or its deadline reaches it). */
const waiting = () => h.strata.services.changes!.waiting;

describe('waiting for a change', () => {
  it('ends when a matching write commits, and not for another key', async () => {
    const answer = h.get('/test-things/wait?key=a&timeoutMs=60000');
    await waitBegun('a');
    expect((await h.post('/test-things/write', { key: 'b' })).status).toBe(200);
    expect(waiting()).toBe(1);
    expect((await h.post('/test-things/write', { key: 'a' })).status).toBe(200);
    expect((await answer).body).toEqual({ outcome: 'changed' });
    expect(waiting()).toBe(0);
  });

  it('is not ended by a write that rolls back, and ends at its deadline on the clock', async () => {
    const answer = h.get('/test-things/wait?key=c&timeoutMs=30000');
    await waitBegun('c');
    expect((await h.post('/test-things/write', { key: 'c', fail: true })).status).toBe(400);
    clock.advance(29_999);
    expect(waiting()).toBe(1);
    clock.advance(1);
    expect((await answer).body).toEqual({ outcome: 'timeout' });
    expect(waiting()).toBe(0);
  });

  it('sees a change committed between its watch and its wait', async () => {
    const changes = h.strata.services.changes!;
    const watch = changes.watch({ area: AREA, projectId: 1, key: 'd' });
    await h.strata.store.transaction((tx) => changes.record(tx, [{ area: AREA, projectId: 1, key: 'd' }]));
    expect(watch.changed).toBe(true);
    expect(await watch.wait({ deadline: clock.now() + 1000 })).toBe('changed');
  });

  it('ends as aborted, under way or to come, once the feed closes (the server stops)', async () => {
    const feed = new ChangeFeed(clock);
    const pending = feed.wait({ area: AREA, projectId: 1 }, { deadline: Infinity });
    await feed.close();
    expect(await pending).toBe('aborted');
    expect(await feed.wait({ area: AREA, projectId: 1 }, { deadline: Infinity })).toBe('aborted');
  });

  it('ends when its client disconnects, holding nothing after', async () => {
    const address = await h.strata.app.listen({ host: '127.0.0.1', port: 0 });
    const client = new AbortController();
    const request = fetch(`${address}${h.base}/test-things/wait?key=e&timeoutMs=60000`, { headers: { authorization: `Bearer ${h.token}` }, signal: client.signal });
    await waitBegun('e');
    expect(waiting()).toBe(1);
    client.abort();
    await expect(request).rejects.toThrow();
    while (!outcomes.has('e')) await new Promise((resolve) => setImmediate(resolve));
    expect(outcomes.get('e')).toBe('aborted');
    expect(waiting()).toBe(0);
  });
});

describe.runIf(testEngine() === 'postgres')('waiting for a change made by another process', () => {
  const url = () => (h.strata.store as PostgresStore).pool.options.connectionString!;
  const writeFromAnotherProcess = (key: string) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['test/support/platform-child.mjs', url(), 'write-change', AREA, String(projectId), key], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.once('exit', (code) => (code === 0 && output.includes('committed') ? resolve() : reject(new Error(`the writer exited with ${code}: ${output}`))));
    });
  let projectId: number;
  beforeAll(async () => {
    projectId = (await h.strata.store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${'dev'}`))!.id;
  });

  it('ends when a write committed by another process matches', async () => {
    const waiting = h.get('/test-things/wait?key=f&timeoutMs=60000');
    await waitBegun('f');
    await writeFromAnotherProcess('f');
    expect((await waiting).body).toEqual({ outcome: 'changed' });
  });

  it('hears other processes again after its connection is cut', async () => {
    const changes = h.strata.services.changes!;
    const relistened = changes.relistened();
    const admin = new pg.Client({ connectionString: url() });
    await admin.connect();
    try {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'strata-changes' AND datname = current_database() AND pid <> pg_backend_pid()`);
    } finally {
      await admin.end();
    }
    await relistened;
    const waiting = h.get('/test-things/wait?key=g&timeoutMs=60000');
    await waitBegun('g');
    await writeFromAnotherProcess('g');
    expect((await waiting).body).toEqual({ outcome: 'changed' });
  });
});
