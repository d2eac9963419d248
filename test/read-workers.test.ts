/**
 * List pages read by worker threads, as on a file-backed store: the same answers as pages read in process
 * (cursors included, so a client may page through either), and a client reads its own writes at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { inProcessReader, ReadPool, ReadPoolUnavailable, sharedReader } from '../src/storage/read-pool.js';
import { sql } from '../src/storage/sql.js';
import { startHarness, type Harness } from './support/harness.js';

let dir: string;
let pooled: Harness;
let inProcess: Harness;
let shared: Harness;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-read-workers-'));
  // Every list read on the workers, even a lone request's.
  pooled = await startHarness({ dataDir: dir, readWorkers: 2 }, {}, { readsOnWorkers: true });
  // A second app on the same store that reads on its main thread.
  inProcess = await startHarness({ dataDir: dir, readWorkers: 0 });
  // And one as configured by default: workers only while other requests are in progress.
  shared = await startHarness({ dataDir: dir, readWorkers: 2 });
  const words = ['pump', 'valve', 'cavitation', 'leak', 'noise', 'Überdruck'];
  const assets = await pooled.post('/assets', { items: [{ externalId: 'root', name: 'root' }] });
  expect(assets.status).toBe(201);
  const assetId = assets.body.items[0].id;
  for (let batch = 0; batch < 3; batch++) {
    const items = Array.from({ length: 100 }, (_, k) => {
      const i = batch * 100 + k;
      return {
        externalId: `site-${i % 3}/unit-${i % 7}/${i}`,
        ...(i % 5 === 0 ? {} : { startTime: 1_000_000 + ((i * 7919) % 1000) }),
        ...(i % 4 === 0 ? {} : { endTime: 2_000_000 + i }),
        type: `type-${i % 4}`,
        description: `${words[i % words.length]} ${words[(i * 3) % words.length]} «${i}»`,
        metadata: { operator: `op-${i % 10}`, note: `line "${i}"\n` },
        ...(i % 6 === 0 ? { assetIds: [assetId] } : {}),
      };
    });
    expect((await pooled.post('/events', { items })).status).toBe(201);
  }
  const series = Array.from({ length: 40 }, (_, i) => ({ externalId: `ts-${i}`, name: `series ${i}`, ...(i % 2 ? { unit: 'bar' } : {}) }));
  expect((await pooled.post('/timeseries', { items: series })).status).toBe(201);
  const children = Array.from({ length: 30 }, (_, i) => ({
    externalId: `child-${i}`,
    parentExternalId: 'root',
    name: `child ${i}`,
    ...(i % 3 ? {} : { geoLocation: { type: 'Feature', geometry: { type: 'Point', coordinates: [i, i] } } }),
  }));
  expect((await pooled.post('/assets', { items: children })).status).toBe(201);
});

afterAll(async () => {
  await pooled?.close();
  await inProcess?.close();
  await shared?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('reads list pages on worker threads when the store is a file', async () => {
  expect(inProcess.strata.readPool).toBeUndefined();
  const before = pooled.strata.readPool!.queries;
  expect((await pooled.post('/events/list', { limit: 1 })).status).toBe(200);
  expect(pooled.strata.readPool!.queries).toBeGreaterThan(before);
});

it('reads a lone request in process, and partitions and concurrent requests on the workers', async () => {
  const pool = shared.strata.readPool!;
  const queriesOnWorkers = async (requests: object[]) => {
    const before = pool.queries;
    const answers = await Promise.all(requests.map((body) => shared.post('/events/list', body)));
    expect(answers.map((a) => a.status)).toEqual(requests.map(() => 200));
    return pool.queries - before;
  };
  expect(await queriesOnWorkers([{ limit: 10 }])).toBe(0);
  expect(await queriesOnWorkers([{ limit: 10, partition: '1/4' }])).toBeGreaterThan(0);
  expect(await queriesOnWorkers(Array.from({ length: 6 }, () => ({ limit: 10 })))).toBeGreaterThan(0);
  // Every finished request was counted out again.
  expect(await queriesOnWorkers([{ limit: 10 }])).toBe(0);
});

describe('the same pages as reading in process', () => {
  const lists: Array<[string, object]> = [
    ['/events/list', { limit: 1000 }],
    ['/events/list', { sort: [{ property: ['startTime'], order: 'desc', nulls: 'first' }], limit: 7 }],
    ['/events/list', { advancedFilter: { equals: { property: ['metadata', 'operator'], value: 'OP-3' } }, sort: [{ property: ['startTime'], order: 'desc' }], limit: 9 }],
    ['/events/list', { advancedFilter: { search: { property: ['description'], value: 'cavitation' } }, limit: 11 }],
    ['/events/list', { advancedFilter: { prefix: { property: ['externalId'], value: 'site-1/' } }, sort: [{ property: ['endTime'] }], limit: 13 }],
    ['/events/list', { filter: { assetSubtreeIds: [{ externalId: 'root' }] }, partition: '2/3', limit: 5 }],
    ['/events/list', { partition: '3/3', limit: 17, sort: [{ property: ['type'] }, { property: ['metadata', 'operator'], order: 'desc' }] }],
    ['/timeseries/list', { limit: 6, sort: [{ property: ['description'], nulls: 'last' }, { property: ['name'], order: 'desc' }] }],
    ['/assets/list', { limit: 8, filter: { parentExternalIds: ['root'] } }],
    // The geographic filter is an SQL function every connection has, the workers' too.
    ['/assets/list', { limit: 2, filter: { geoLocation: { relation: 'WITHIN', shape: { type: 'Polygon', coordinates: [[[0, 0], [15, 0], [15, 15], [0, 15], [0, 0]]] } } } }],
  ];

  for (const [path, body] of lists) {
    it(`${path} ${JSON.stringify(body)}`, async () => {
      let cursor: string | undefined;
      let pages = 0;
      do {
        const request = { ...body, ...(cursor ? { cursor } : {}) };
        const a = await pooled.post(path, request);
        const b = await inProcess.post(path, request);
        expect(a.status, JSON.stringify(a.body)).toBe(200);
        expect(a.body).toEqual(b.body);
        // Alternate which app continues: a cursor from one is good on the other.
        cursor = (pages % 2 ? b : a).body.nextCursor;
        pages++;
      } while (cursor && pages < 200);
      expect(cursor).toBeUndefined();
    });
  }

  it('GET /events with query parameters', async () => {
    const path = '/events?limit=4&type=type-2';
    const a = await pooled.get(path);
    const b = await inProcess.get(path);
    expect(a.status).toBe(200);
    expect(a.body.items).toHaveLength(4);
    expect(a.body).toEqual(b.body);
  });
});

describe('reading its own writes', () => {
  it('lists what was just created, updated and deleted', async () => {
    for (let i = 0; i < 20; i++) {
      const externalId = `fresh-${i}`;
      const created = await pooled.post('/events', { items: [{ externalId, description: `first ${i}` }] });
      expect(created.status).toBe(201);
      const filter = { advancedFilter: { equals: { property: ['externalId'], value: externalId } } };
      expect((await pooled.post('/events/list', filter)).body.items.map((e: { description: string }) => e.description)).toEqual([`first ${i}`]);
      expect((await pooled.post('/events/update', { items: [{ externalId, update: { description: { set: `second ${i}` } } }] })).status).toBe(200);
      expect((await pooled.post('/events/list', filter)).body.items.map((e: { description: string }) => e.description)).toEqual([`second ${i}`]);
      expect((await pooled.post('/events/delete', { items: [{ externalId }] })).status).toBe(200);
      expect((await pooled.post('/events/list', filter)).body.items).toEqual([]);
    }
  });
});

describe('the pool', () => {
  it('rejects a failing query with its message and keeps answering', async () => {
    const pool = new ReadPool(join(dir, 'strata.db'), 1);
    try {
      await expect(pool.all(sql`SELECT no_such_column FROM events`)).rejects.toThrow(/no such column/);
      const [row] = await pool.all<{ n: number }>(sql`SELECT count(*) AS n FROM events WHERE type = ${'type-1'}`);
      expect(row.n).toBe(75);
      // A BLOB comes back as a Buffer, as it does from a read in process.
      const [blob] = await pool.all<{ b: Buffer; t: string }>(sql`SELECT CAST(${'«ü»,b'} AS BLOB) AS b, 'text' AS t`);
      expect(Buffer.isBuffer(blob.b)).toBe(true);
      expect(blob.b.toString('utf8')).toBe('«ü»,b');
      expect(blob.t).toBe('text');
    } finally {
      await pool.close();
    }
    await expect(pool.all(sql`SELECT 1`)).rejects.toThrow(/closed/);
  });

  it('reads in process when its workers cannot run, and says so', async () => {
    const stopped: Error[] = [];
    const pool = new ReadPool(join(dir, 'no-such-dir', 'strata.db'), 1, (e) => stopped.push(e));
    const reader = sharedReader(pool, inProcessReader(inProcess.strata.services.db), () => true);
    try {
      const query = sql`SELECT count(*) AS n FROM events WHERE type = ${'type-1'}`;
      // The worker fails to open the file; the read in flight and the next (within the restart delay) run here.
      for (let i = 0; i < 2; i++) expect(await reader.all<{ n: number }>(query)).toEqual([{ n: 75 }]);
      await expect(pool.all(query)).rejects.toBeInstanceOf(ReadPoolUnavailable);
      expect(stopped.length).toBeGreaterThan(0);
      expect(stopped[0].message).toMatch(/read worker stopped/);
      // A failing query is not a failing worker: its error reaches the caller.
      await expect(reader.all(sql`SELECT no_such_column FROM events`)).rejects.toThrow(/no such column/);
    } finally {
      await pool.close();
    }
  });

  it('refuses a nonsense number of read workers at start-up', () => {
    for (const bad of ['-1', 'two', '1.5', '65']) {
      expect(() => loadConfig([], { STRATA_READ_WORKERS: bad }), bad).toThrow(/STRATA_READ_WORKERS/);
    }
    expect(loadConfig(['--read-workers', '0'], {}).readWorkers).toBe(0);
  });
});
