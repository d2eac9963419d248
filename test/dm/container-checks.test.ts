/**
 * The checks of a container (resources/models/container-checks.ts) are durable jobs: a check that no
 * process got to before a restart is done by the next process on the store, and an index deleted while
 * its build waits leaves no database index behind. The app's own job runner is stopped where a test runs
 * the checks on a runner of its own, whose index builds wait until the test lets them go.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerContainerChecks } from '../../src/resources/models/container-checks.js';
import { systemClock } from '../../src/storage/clock.js';
import { Jobs } from '../../src/storage/jobs/jobs.js';
import { inProcessReader } from '../../src/storage/read-pool.js';
import { sql } from '../../src/storage/sql.js';
import type { Store } from '../../src/storage/store.js';
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

it('drops the index built for an index deleted while its build waited', async () => {
  const h = await startHarness({}, {}, { store });
  await h.strata.services.jobs!.close();
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The checks on a runner whose builds wait for the test: all they use of the store is here.
  const gated = {
    dialect: store.dialect,
    all: (q: Parameters<Store['all']>[0]) => store.all(q),
    transaction: (fn: Parameters<Store['transaction']>[0]) => store.transaction(fn),
    buildIndex: async (index: TableIndex) => {
      reached();
      await gate;
      return store.buildIndex(index);
    },
  } as unknown as Store;
  const jobs = new Jobs({ db: store, clock: systemClock, changes: h.strata.services.changes! });
  registerContainerChecks({ jobs, store: gated, reads: inProcessReader(store), now: Date.now });
  await ok(h, '/models/containers', { items: [{ space: 'chk', externalId: 'Box', properties: { size: { type: { type: 'int32' } } }, indexes: { gone: { properties: ['size'] } } }] });
  await waiting;
  await ok(h, '/models/containers/indexes/delete', { items: [{ space: 'chk', containerExternalId: 'Box', identifier: 'gone' }] });
  release();
  await jobsDone(h);
  await jobs.close();
  expect(await indexState(h, 'gone')).toBeUndefined();
  const [row] = await store.all<{ layout: string }>(sql`SELECT layout FROM dm_containers WHERE external_id = ${'Box'}`);
  const table = JSON.parse(row.layout).table as string;
  // bySize, from the test before, is the container's only index.
  expect((await databaseIndexes(h, `${table}_`)).filter((n) => /_[iu]\d+$/.test(n))).toHaveLength(1);
  await h.close();
});
