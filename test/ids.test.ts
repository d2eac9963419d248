/**
 * Service-generated ids (storage/ids.ts): large, below 2^53, unique and in creation order, never a small
 * integer a client could take for one that does not exist; partitions still split them evenly; a database
 * written when ids counted from 1 keeps its ids, and new ones never collide with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventModel } from '../src/resources/events/model.js';
import { renderMissingJson } from '../src/storage/items.js';
import { sql } from '../src/storage/sql.js';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SMALL = [1, 2, 3, 42, 1337];

async function created(path: string, items: object[]): Promise<number[]> {
  const res = await h.post(path, { items });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.items.map((i: { id: number }) => i.id);
}

async function listAll(body: object): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const res = await h.post('/events/list', { ...body, limit: 1000, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(...res.body.items.map((e: { id: number }) => e.id));
    cursor = res.body.nextCursor;
  } while (cursor);
  return ids;
}

describe('ids', () => {
  it('are large, below 2^53, unique and in creation order, for every resource', async () => {
    const all: number[] = [];
    for (const [path, make] of [
      ['/events', (i: number) => ({ externalId: `ids-event-${i}` })],
      ['/assets', (i: number) => ({ externalId: `ids-asset-${i}`, name: 'a' })],
      ['/timeseries', (i: number) => ({ externalId: `ids-series-${i}` })],
      ['/datasets', (i: number) => ({ externalId: `ids-set-${i}` })],
    ] as const) {
      const ids = [...(await created(path, [0, 1, 2].map(make))), ...(await created(path, [3, 4].map(make)))];
      expect(ids, path).toEqual([...ids].sort((a, b) => a - b));
      all.push(...ids);
    }
    const group = await h.post('/groups', { items: [{ name: 'ids', capabilities: [] }] });
    all.push(group.body.items[0].id);
    for (const id of all) {
      expect(Number.isSafeInteger(id), String(id)).toBe(true);
      expect(id).toBeGreaterThan(2 ** 40);
    }
    expect(new Set(all).size).toBe(all.length);
  });

  it('are never the small integers clients take for ids that do not exist', async () => {
    await created('/events', [{ externalId: 'ids-small-e' }]);
    await created('/assets', [{ externalId: 'ids-small-a', name: 'a' }]);
    await created('/timeseries', [{ externalId: 'ids-small-t' }]);
    await created('/datasets', [{ externalId: 'ids-small-d' }]);
    for (const resource of ['events', 'assets', 'timeseries', 'datasets']) {
      const found = await h.post(`/${resource}/byids`, { items: SMALL.map((id) => ({ id })), ignoreUnknownIds: true });
      expect(found.body.items, resource).toEqual([]);
      const missing = await h.post(`/${resource}/byids`, { items: SMALL.map((id) => ({ id })) });
      expect(missing.status, resource).toBe(400);
      expect(missing.body.error.missing, resource).toEqual(SMALL.map((id) => ({ id })));
    }
  });

  it('are split evenly by partitions, which together are the whole list once', async () => {
    const ids = await created(
      '/events',
      Array.from({ length: 800 }, (_, i) => ({ externalId: `ids-part-${i}`, type: 'ids-part' })),
    );
    const filter = { filter: { type: 'ids-part' } };
    for (const n of [2, 3, 10]) {
      const parts = await Promise.all(Array.from({ length: n }, (_, m) => listAll({ ...filter, partition: `${m + 1}/${n}` })));
      expect(parts.flat().sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      // Runs of 16 consecutive ids go to one partition: each gets its share, within a run or two.
      for (const part of parts) expect(Math.abs(part.length - 800 / n), `${n} partitions: ${parts.map((p) => p.length)}`).toBeLessThanOrEqual(32);
    }
  });
});

describe('a database written when ids counted from 1', () => {
  it('keeps its ids, and new ones never collide with them', async () => {
    const legacy = Array.from({ length: 40 }, (_, i) => i + 1);
    await h.strata.store.transaction(async (db) => {
      const project = await db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${'other'}`);
      for (const id of legacy) {
        await db.run(sql`INSERT INTO events (id, project_id, external_id, type, created_time, last_updated_time) VALUES (${id}, ${project!.id}, ${`old-${id}`}, ${'legacy'}, ${id}, ${id})`);
      }
      await renderMissingJson(db, eventModel.table);
      if (db.dialect.kind === 'postgres') await db.run(sql`SELECT setval('events_id_seq', 40)`);
    });
    const other = (path: string, body: object) => h.request('POST', `/api/v1/projects/other${path}`, body);
    const fresh = (await other('/events', { items: legacy.map((i) => ({ externalId: `new-${i}`, type: 'legacy' })) })).body.items.map((e: { id: number }) => e.id);
    for (const id of fresh) expect(id).toBeGreaterThan(2 ** 40);

    const old = await other('/events/byids', { items: [{ id: 1 }, { id: 40 }] });
    expect(old.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['old-1', 'old-40']);
    const everything = [...legacy, ...fresh];
    const parts = await Promise.all(
      [1, 2, 3].map(async (m) => (await other('/events/list', { filter: { type: 'legacy' }, partition: `${m}/3`, limit: 1000 })).body.items.map((e: { id: number }) => e.id)),
    );
    expect(parts.flat().sort((a: number, b: number) => a - b)).toEqual(everything);
    for (const part of parts) expect(part.length).toBeGreaterThanOrEqual(16);
  });
});
