/**
 * Long data modeling requests leave the server free for others, on a store in a file (SQLite with its read
 * workers) and on PostgreSQL: while a large container apply, histograms over many instances, a query of
 * a hundred thousand instances or the build of an index over every instance runs, a `GET /events/{id}` sent
 * once the store works on it is answered before it ends. Nothing here times anything: each test asserts the
 * order in which the two answers come.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DM_LIMITS } from '../../src/resources/models/limits.js';
import { sql } from '../../src/storage/sql.js';
import type { SqliteStore } from '../../src/storage/sqlite-store.js';
import { startHarness, type Harness, type Response } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';

let h: Harness;
let dir: string;
let eventId: number;
const NODES = 20_000;
const C = (externalId: string) => ({ type: 'container', space: 'long', externalId });
const V = { type: 'view', space: 'long', externalId: 'N', version: '1' };
const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
  return res.body;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-long-'));
  h = await startHarness({ dataDir: dir, readWorkers: 2 });
  eventId = (await h.post('/events', { items: [{ externalId: 'probe' }] })).body.items[0].id;
  await ok('/models/spaces', { items: [{ space: 'long' }] });
  const properties = Object.fromEntries(range(5, (p) => [`n${p}`, { type: { type: 'float64' } }]));
  await ok('/models/containers', { items: [{ space: 'long', externalId: 'N', properties }] });
  await ok('/models/views', { items: [{ space: 'long', externalId: 'N', version: '1', properties: Object.fromEntries(range(5, (p) => [`n${p}`, { container: C('N'), containerPropertyIdentifier: `n${p}` }])) }] });
  for (let at = 0; at < NODES; at += 1000) {
    const items = range(1000, (k) => ({
      instanceType: 'node',
      space: 'long',
      externalId: `n${at + k}`,
      sources: [{ source: V, properties: Object.fromEntries(range(5, (p) => [`n${p}`, (at + k) * (p + 1)])) }],
    }));
    await ok('/models/instances', { items });
  }
  // The read workers start with their first read: started here, so that no GET below waits for one to start.
  await ok('/models/instances/aggregate', { view: V, aggregates: [{ count: {} }] });
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether the store is at work: a transaction or a statement under way, or a read handed to a worker since `reads`. */
function working(reads: number): boolean {
  const c = h.strata.store.connections();
  return c.idle < c.total || (h.strata.readPool?.queries ?? 0) > reads;
}

/**
 * Sends `long`, waits until the store works on it (or until `started` says so; each check after a turn of
 * the event loop, which it only gets while the server waits or yields), sends the GET, and answers in which
 * order the two finished.
 */
async function order<T = Response>(long: () => Promise<T>, started?: () => boolean | Promise<boolean>): Promise<{ order: string[]; long: T }> {
  const finished: string[] = [];
  const reads = h.strata.readPool?.queries ?? 0;
  started ??= () => working(reads);
  const pending = long().then((res) => {
    finished.push('long');
    return res;
  });
  while (!(await started()) && finished.length === 0) await new Promise((resolve) => setImmediate(resolve));
  const get = await h.get(`/events/${eventId}`);
  finished.push('get');
  expect(get.status).toBe(200);
  return { order: finished, long: await pending };
}

it('answers others while it creates a hundred containers of a hundred properties, ten indexes and ten constraints each', async () => {
  const items = range(DM_LIMITS.schemaItems, (k) => ({
    space: 'long',
    externalId: `Big${k}`,
    properties: Object.fromEntries(range(DM_LIMITS.containerProperties, (p) => [`p${p}`, { type: { type: p % 2 ? 'int64' : 'text' } }])),
    indexes: Object.fromEntries(range(DM_LIMITS.indexes, (x) => [`i${x}`, { indexType: 'btree', properties: [`p${x}`] }])),
    constraints: Object.fromEntries(range(DM_LIMITS.uniquenessConstraints, (x) => [`u${x}`, { constraintType: 'uniqueness', properties: [`p${DM_LIMITS.indexes + x}`] }])),
  }));
  const { order: finished, long } = await order(() => h.post('/models/containers', { items }));
  expect(long.status).toBe(200);
  expect(long.body.items).toHaveLength(DM_LIMITS.schemaItems);
  expect(finished).toEqual(['get', 'long']);
});

it('answers others while it computes histograms over every instance', async () => {
  const aggregates = range(DM_LIMITS.aggregates, (p) => ({ histogram: { property: `n${p}`, interval: (p + 1) * 3 } }));
  const { order: finished, long } = await order(() => h.post('/models/instances/aggregate', { view: V, aggregates }));
  expect(long.status).toBe(200);
  expect(long.body.items[0].aggregates[0].buckets).toHaveLength(Math.ceil(NODES / 3));
  expect(finished).toEqual(['get', 'long']);
});

it('answers others while it reads and renders a query of a hundred thousand instances', async () => {
  const limit = DM_LIMITS.querySetLimitMax;
  const sets = DM_LIMITS.queryInstances / limit;
  const body = {
    with: Object.fromEntries(range(sets, (i) => [`s${i}`, { nodes: { filter: { hasData: [V] } }, limit }])),
    select: Object.fromEntries(range(sets, (i) => [`s${i}`, { sources: [{ source: V, properties: ['*'] }] }])),
  };
  const { order: finished, long } = await order(() => h.post('/models/instances/query', body));
  expect(long.status).toBe(200);
  expect(Object.values(long.body.items as Record<string, unknown[]>).map((items) => items.length)).toEqual(range(sets, () => limit));
  expect(finished).toEqual(['get', 'long']);
});

/** Whether an index is being built: on SQLite by a thread of the store, on PostgreSQL by any connection. */
async function building(): Promise<boolean> {
  const store = h.strata.store;
  if (store.kind === 'sqlite') return (store as SqliteStore).indexBuilds > 0;
  return Number((await store.get<{ n: number }>(sql`SELECT count(*) AS n FROM pg_stat_progress_create_index`))!.n) > 0;
}

it('answers others while it builds an index and a uniqueness constraint over every instance, which go from pending to current', async () => {
  const read = async () => (await ok('/models/containers/byids', { items: [{ space: 'long', externalId: 'N' }] })).items[0];
  const { properties } = await read();
  const added = { space: 'long', externalId: 'N', properties, indexes: { all: { properties: range(5, (p) => `n${p}`) } }, constraints: { unique: { properties: ['n1'] } } };
  const { order: finished, long: applied } = await order(async () => {
    const res = await ok('/models/containers', { items: [added] });
    // A write meanwhile waits for the build on SQLite and goes on beside it on PostgreSQL: it is not refused.
    const write = h.post('/events', { items: [{ externalId: 'while-building' }] });
    await jobsDone(h);
    expect((await write).status).toBe(201);
    return res;
  }, building);
  expect(finished).toEqual(['get', 'long']);
  expect([applied.items[0].indexes.all.state, applied.items[0].constraints.unique.state]).toEqual(['pending', 'pending']);
  const after = await read();
  expect([after.indexes.all.state, after.constraints.unique.state]).toEqual(['current', 'current']);
});
