/**
 * The checks of a container (resources/models/container-checks.ts) are durable jobs: a check that no
 * process got to before a restart is done by the next process on the store, an index deleted while its
 * build waits leaves no database index behind, and a change of the schema made while a check sets its
 * state is kept. The app's own job runner is stopped where a test runs the checks on a runner of its own,
 * which stops where the test says until the test lets it go.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerContainerChecks } from '../../src/resources/models/container-checks.js';
import { systemClock } from '../../src/storage/clock.js';
import { Jobs } from '../../src/storage/jobs/jobs.js';
import { inProcessReader } from '../../src/storage/read-pool.js';
import { sql, type Sql } from '../../src/storage/sql.js';
import type { Queryable, Store } from '../../src/storage/store.js';
import type { TableIndex } from '../../src/storage/table-index.js';
import { startHarness, type Harness } from '../support/harness.js';
import { databaseIndexes, jobsDone } from '../support/jobs.js';
import { openTestStore } from '../support/test-store.js';

let store: Store;
beforeAll(async () => {
  store = await openTestStore();
});
afterAll(() => store.close());

const C = { type: 'container', space: 'chk', externalId: 'Box' };

async function ok(h: Harness, path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const indexState = async (h: Harness, id: string) => (await ok(h, '/models/containers/byids', { items: [{ space: 'chk', externalId: 'Box' }] })).items[0].indexes[id]?.state;

it('does a check that no process got to before a restart in the next process on the store', async () => {
  const first = await startHarness({}, {}, { store });
  await ok(first, '/models/spaces', { items: [{ space: 'chk' }] });
  await ok(first, '/models/containers', { items: [{ space: 'chk', externalId: 'Box', properties: { size: { type: { type: 'int32' } } } }] });
  await ok(first, '/models/instances', { items: [{ instanceType: 'node', space: 'chk', externalId: 'b1', sources: [{ source: C, properties: { size: 3 } }] }] });
  // This process stops before it runs the check the apply asks for.
  await first.strata.services.jobs!.close();
  await ok(first, '/models/containers', { items: [{ space: 'chk', externalId: 'Box', properties: { size: { type: { type: 'int32' } } }, indexes: { bySize: { properties: ['size'] } } }] });
  await first.close();
  const [row] = await store.all<{ states: string }>(sql`SELECT states FROM dm_containers WHERE external_id = ${'Box'}`);
  expect(JSON.parse(row.states).indexes).toEqual({ bySize: 'pending' });
  const second = await startHarness({}, {}, { store });
  await jobsDone(second);
  expect(await indexState(second, 'bySize')).toBe('current');
  await second.close();
});

/** A point the checks stop at until the test lets them go: `reached` resolves once they are there. */
function gate() {
  let arrive!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  let release!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  return { reached, release, pass: () => (arrive(), open) };
}

/**
 * Runs the checks of the harness's app on a runner of the test's own, whose store is `store` but for
 * `overrides` (all the checks use of a store is named here); the app's own runner is stopped.
 */
async function checksOn(h: Harness, overrides: Partial<Pick<Store, 'buildIndex' | 'transaction'>>): Promise<Jobs> {
  await h.strata.services.jobs!.close();
  const checks = {
    dialect: store.dialect,
    all: (q: Parameters<Store['all']>[0]) => store.all(q),
    transaction: (fn: Parameters<Store['transaction']>[0]) => store.transaction(fn),
    buildIndex: (index: TableIndex) => store.buildIndex(index),
    ...overrides,
  } as unknown as Store;
  const jobs = new Jobs({ db: store, clock: systemClock, changes: h.strata.services.changes! });
  const s = h.strata.services;
  registerContainerChecks({ jobs, store: checks, reads: inProcessReader(store), now: Date.now, api: s.api!, auth: s.auth!, blobs: s.blobs!, outbound: s.outbound!, publicUrl: 'http://localhost', cursors: s.cursors, settings: s.settings });
  return jobs;
}

/** The database indexes of the container Box's indexes and constraints (named `<table>_i<n>` and `<table>_u<n>`). */
async function boxIndexes(h: Harness): Promise<string[]> {
  const [row] = await store.all<{ layout: string }>(sql`SELECT layout FROM dm_containers WHERE external_id = ${'Box'}`);
  const table = JSON.parse(row.layout).table as string;
  return (await databaseIndexes(h, `${table}_`)).filter((n) => /_[iu]\d+$/.test(n));
}

const boxWithIndex = (id: string) => ({ items: [{ space: 'chk', externalId: 'Box', properties: { size: { type: { type: 'int32' } } }, indexes: { [id]: { properties: ['size'] } } }] });
const boxIndex = (id: string) => ({ items: [{ space: 'chk', containerExternalId: 'Box', identifier: id }] });

it('drops the index built for an index deleted while its build waited', async () => {
  const h = await startHarness({}, {}, { store });
  const building = gate();
  const jobs = await checksOn(h, {
    buildIndex: async (index: TableIndex) => {
      await building.pass();
      return store.buildIndex(index);
    },
  });
  await ok(h, '/models/containers', boxWithIndex('gone'));
  await building.reached;
  await ok(h, '/models/containers/indexes/delete', boxIndex('gone'));
  building.release();
  await jobsDone(h);
  await jobs.close();
  expect(await indexState(h, 'gone')).toBeUndefined();
  // bySize, from the first test, is the container's only index.
  expect(await boxIndexes(h)).toHaveLength(1);
  await h.close();
});

/** Whether a transaction of the store waits for another's write: SQLite's turn, or a lock on PostgreSQL. */
async function writerWaits(): Promise<boolean> {
  if (store.kind === 'sqlite') return store.connections().waiting > 0;
  const [row] = await store.all<{ n: number }>(
    sql`SELECT count(*) AS n FROM pg_locks WHERE NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return Number(row.n) > 0;
}

it('keeps a change of the schema made while a check sets its state', async () => {
  const h = await startHarness({}, {}, { store });
  const settling = gate();
  // The check's state is written after the container is read: it stops there.
  const pausing = (tx: Queryable): Queryable =>
    new Proxy(tx, {
      get: (target, key) => {
        if (key !== 'run') {
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (q: Sql) => {
          if (q.text.startsWith('UPDATE dm_containers')) await settling.pass();
          return target.run(q);
        };
      },
    });
  const jobs = await checksOn(h, { transaction: (fn) => store.transaction((tx) => fn(pausing(tx))) });
  await ok(h, '/models/containers', boxWithIndex('late'));
  await settling.reached;
  // The delete goes on while the check waits, or waits for it: either way the index stays deleted.
  let deleted = false;
  const deleting = ok(h, '/models/containers/indexes/delete', boxIndex('late')).then(() => (deleted = true));
  while (!deleted && !(await writerWaits())) await new Promise((resolve) => setImmediate(resolve));
  settling.release();
  await deleting;
  await jobsDone(h);
  await jobs.close();
  expect(await indexState(h, 'late')).toBeUndefined();
  expect(await boxIndexes(h)).toHaveLength(1);
  await h.close();
});
