/**
 * How a subscription delivers, on both backends: under concurrent writers, some of whose requests roll back
 * after writing, a chain of cursors read while they write gives every committed insert exactly once and
 * nothing of a rolled-back one, in an order that, replayed, leaves exactly the points stored. A listing with
 * nothing to answer waits: a committed write ends the wait with that write, a rolled-back one does not, the
 * timeout (on the injected clock) ends it empty at the same positions. On PostgreSQL a write through another
 * app instance on the same database ends it too.
 */
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { badRequest } from '../src/http/errors.js';
import { route } from '../src/http/route.js';
import { insertDatapoints } from '../src/resources/datapoints/write-service.js';
import type { PostgresStore } from '../src/storage/postgres-store.js';
import { startCustomHarness } from './support/custom-harness.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import { ManualClock } from './support/manual-clock.js';
import { testEngine } from './support/test-store.js';

const clock = new ManualClock(Date.now());
let h: Harness;

/** Inserts as `POST /timeseries/data` does, in a transaction that then rolls back. */
const rollingBack = route({
  method: 'POST',
  path: '/test-subscriptions/insert-then-fail',
  capability: null,
  body: Type.Object({ items: Type.Array(Type.Any()) }),
  handler: ({ services, project, body, version }) =>
    services.db.transaction(async (db) => {
      await insertDatapoints({ ...services, db }, project.id, body as never, version.at('stringDatapointMaxLength'));
      throw badRequest('rolled back after writing');
    }),
});

beforeAll(async () => {
  h = await startCustomHarness({ build: { clock, extraRoutes: [rollingBack] } });
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

type Cursors = Array<{ index: number; cursor?: string }>;
const cursorsOf = (body: { partitions: Array<{ index: number; nextCursor: string }> }): Cursors => body.partitions.map((p) => ({ index: p.index, cursor: p.nextCursor }));
const list = (app: Harness, externalId: string, partitions: Cursors, pollTimeoutSeconds: number) =>
  app.post('/timeseries/subscriptions/data/list', { externalId, partitions, pollTimeoutSeconds, limit: 1000 });

const waiting = () => h.strata.services.changes!.waiting;
/** Resolves once more waits are under way than `than`. */
async function waitingMore(than: number): Promise<void> {
  while (waiting() <= than) await new Promise((resolve) => setImmediate(resolve));
}

describe('concurrent writers', () => {
  it('every committed insert is delivered once, in an order that replays to the stored points; nothing rolled back is', async () => {
    const names = ['cw-0', 'cw-1', 'cw-2', 'cw-3'];
    ok(await h.post('/timeseries', { items: names.map((externalId) => ({ externalId })) }), 201);
    ok(await h.post('/timeseries/subscriptions', { items: [{ externalId: 'cw', partitionCount: 2, timeSeriesIds: names }] }), 201);
    let cursors: Cursors = cursorsOf(ok(await list(h, 'cw', [{ index: 0 }, { index: 1 }], 0)));
    const delivered: Array<{ series: string; timestamp: number; value: number }> = [];
    const take = (body: any) => {
      for (const u of body.updates) for (const p of u.upserts) delivered.push({ series: u.timeSeries.externalId, timestamp: p.timestamp, value: p.value });
      cursors = cursorsOf(body);
    };
    const committed: typeof delivered = [];
    const rolledBack = new Set<number>();
    const WRITERS = 6;
    const REQUESTS = 12;
    let running = WRITERS;
    const writer = async (w: number) => {
      for (let r = 0; r < REQUESTS; r++) {
        // Two series a request, the same few timestamps for everyone: writes overwrite each other's points.
        const items = [names[(w + r) % 4], names[(w + r + 1) % 4]].map((externalId, k) => ({
          externalId,
          datapoints: Array.from({ length: 3 }, (_, j) => ({ timestamp: (r + j + k) % 8, value: w * 10_000 + r * 100 + k * 10 + j })),
        }));
        if (r % 4 === 3) {
          expect(errorMessage(await h.post('/test-subscriptions/insert-then-fail', { items }), 400)).toBe('rolled back after writing');
          for (const item of items) for (const p of item.datapoints) rolledBack.add(p.value);
        } else {
          ok(await h.post('/timeseries/data', { items }));
          for (const item of items) for (const p of item.datapoints) committed.push({ series: item.externalId, ...p });
        }
      }
      running--;
    };
    const reader = async () => {
      while (running > 0) take(ok(await list(h, 'cw', cursors, 0)));
    };
    await Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), reader()]);
    for (let body = ok(await list(h, 'cw', cursors, 0)); ; body = ok(await list(h, 'cw', cursors, 0))) {
      take(body);
      if (!body.hasNext && body.updates.length === 0) break;
    }

    const key = (p: { series: string; timestamp: number; value: number }) => `${p.series}|${p.timestamp}|${p.value}`;
    expect(delivered.map(key).sort()).toEqual(committed.map(key).sort());
    expect(delivered.filter((p) => rolledBack.has(p.value))).toEqual([]);
    const replayed = new Map<string, number>();
    for (const p of delivered) replayed.set(`${p.series}|${p.timestamp}`, p.value);
    const stored = ok(await h.post('/timeseries/data/list', { items: names.map((externalId) => ({ externalId })), start: 0, end: 100 })).items;
    const storedMap = new Map<string, number>();
    for (const item of stored) for (const p of item.datapoints) storedMap.set(`${item.externalId}|${p.timestamp}`, p.value);
    expect(replayed).toEqual(storedMap);
  });
});

describe('long polling', () => {
  let start: Cursors;
  beforeAll(async () => {
    ok(await h.post('/timeseries', { items: [{ externalId: 'lp' }] }), 201);
    ok(await h.post('/timeseries/subscriptions', { items: [{ externalId: 'lp', partitionCount: 1, timeSeriesIds: ['lp'] }] }), 201);
    start = cursorsOf(ok(await list(h, 'lp', [{ index: 0 }], 0)));
  });

  it('a listing with nothing to answer waits for the next committed write, and answers with it', async () => {
    const base = waiting();
    const answer = list(h, 'lp', start, 5);
    await waitingMore(base);
    ok(await h.post('/timeseries/data', { items: [{ externalId: 'lp', datapoints: [{ timestamp: 1, value: 1 }] }] }));
    const body = ok(await answer);
    expect(body.updates.map((u: { upserts: unknown[] }) => u.upserts)).toEqual([[{ timestamp: 1, value: 1 }]]);
    expect(waiting()).toBe(base);
    start = cursorsOf(body);
  });

  it('a rolled-back write does not end the wait; the timeout does, with nothing and the same positions', async () => {
    const base = waiting();
    const answer = list(h, 'lp', start, 5);
    await waitingMore(base);
    errorMessage(await h.post('/test-subscriptions/insert-then-fail', { items: [{ externalId: 'lp', datapoints: [{ timestamp: 2, value: 2 }] }] }), 400);
    clock.advance(4999);
    expect(waiting()).toBe(base + 1);
    clock.advance(1);
    expect(ok(await answer)).toEqual({ updates: [], subscriptionChanges: { added: [], removed: [] }, partitions: [{ index: 0, nextCursor: start[0].cursor }], hasNext: false });
  });

  it('a time series node of data modeling, created or deleted, ends the wait with its series joining or leaving', async () => {
    ok(await h.post('/models/spaces', { items: [{ space: 'lp-space' }] }));
    ok(await h.post('/timeseries/subscriptions', { items: [{ externalId: 'lp-dm', partitionCount: 1, instanceIds: [{ space: 'lp-space', externalId: 'lp-node' }] }] }), 201);
    const node = { instanceType: 'node', space: 'lp-space', externalId: 'lp-node' };
    const source = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
    let cursors = cursorsOf(ok(await list(h, 'lp-dm', [{ index: 0 }], 0)));
    for (const [write, change] of [
      [() => h.post('/models/instances', { items: [{ ...node, sources: [{ source, properties: { type: 'numeric' } }] }] }), 'added'],
      [() => h.post('/models/instances/delete', { items: [node] }), 'removed'],
    ] as const) {
      const base = waiting();
      const answer = list(h, 'lp-dm', cursors, 5);
      await waitingMore(base);
      ok(await write());
      const body = ok(await answer);
      expect(body.subscriptionChanges[change].map((s: { instanceId: unknown }) => s.instanceId)).toEqual([{ space: 'lp-space', externalId: 'lp-node' }]);
      cursors = cursorsOf(body);
    }
  });

  it('a series joining or leaving ends the wait too, and so does the deletion of the subscription', async () => {
    const base = waiting();
    const joined = list(h, 'lp', start, 5);
    await waitingMore(base);
    ok(await h.post('/timeseries/subscriptions/update', { items: [{ externalId: 'lp', update: { timeSeriesIds: { add: ['lp-2'] } } }] }));
    ok(await h.post('/timeseries', { items: [{ externalId: 'lp-2' }] }), 201);
    const body = ok(await joined);
    expect(body.subscriptionChanges.added.map((s: { externalId: string }) => s.externalId)).toEqual(['lp-2']);
    const deleted = list(h, 'lp', cursorsOf(body), 5);
    await waitingMore(base);
    ok(await h.post('/timeseries/subscriptions/delete', { items: [{ externalId: 'lp' }] }));
    expect((await deleted).body.error.missing).toEqual([{ externalId: 'lp' }]);
  });
});

describe.runIf(testEngine() === 'postgres')('long polling with several app instances on one PostgreSQL database', () => {
  it('a write through another instance ends the wait', async () => {
    const url = (h.strata.store as PostgresStore).pool.options.connectionString!;
    const other = await startHarness({}, { STRATA_DATABASE_URL: url });
    try {
      ok(await h.post('/timeseries', { items: [{ externalId: 'mp' }] }), 201);
      ok(await h.post('/timeseries/subscriptions', { items: [{ externalId: 'mp', partitionCount: 1, timeSeriesIds: ['mp'] }] }), 201);
      const start = cursorsOf(ok(await list(h, 'mp', [{ index: 0 }], 0)));
      const base = waiting();
      const answer = list(h, 'mp', start, 5);
      await waitingMore(base);
      ok(await other.post('/timeseries/data', { items: [{ externalId: 'mp', datapoints: [{ timestamp: 7, value: 7 }] }] }));
      expect(ok(await answer).updates.map((u: { upserts: unknown[] }) => u.upserts)).toEqual([[{ timestamp: 7, value: 7 }]]);
      // And the other instance's listing continues from this one's cursor.
      expect(ok(await list(other, 'mp', start, 0)).updates).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});
