/**
 * An item without metadata answers `"metadata": {}`, as the reference service does: the official Python
 * SDK reads a missing map as None (`"key" in asset.metadata` fails) and its tests expect `{}` after an
 * update that sets metadata to `{}`; the JavaScript SDK's expects the same of a wiped asset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** Each resource with metadata, and which of the reads it has: `GET /{id}`, `GET` list, `search`. */
const RESOURCES = [
  { path: '/events', item: (x: string) => ({ externalId: x }), byPath: true, getList: true, search: true },
  { path: '/assets', item: (x: string) => ({ externalId: x, name: x }), byPath: true, getList: true, search: true },
  { path: '/timeseries', item: (x: string) => ({ externalId: x, name: x }), byPath: false, getList: true, search: true },
  { path: '/datasets', item: (x: string) => ({ externalId: x }), byPath: false, getList: false, search: false },
];

describe.each(RESOURCES)('$path', ({ path, item, byPath, getList, search }) => {
  const x = `md-${path.slice(1)}`;
  let id: number;

  it('gives {} for an item created without metadata, on every read', async () => {
    const created = await h.post(path, { items: [item(x)] });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    expect(created.body.items[0].metadata).toEqual({});
    id = created.body.items[0].id;

    const reads = [
      (await h.post(`${path}/byids`, { items: [{ id }] })).body.items[0],
      (await h.post(`${path}/list`, { filter: { externalIdPrefix: x }, limit: 10 })).body.items[0],
    ];
    if (byPath) reads.push((await h.get(`${path}/${id}`)).body);
    if (getList) reads.push((await h.get(`${path}?limit=1000`)).body.items.find((i: { id: number }) => i.id === id));
    if (search) reads.push(...(await h.post(`${path}/search`, { filter: { externalIdPrefix: x } })).body.items);
    expect(reads.length).toBeGreaterThan(1);
    for (const read of reads) expect(read).toMatchObject({ id, metadata: {} });
  });

  it('gives {} after an update sets metadata to {} or removes its last key', async () => {
    const set = await h.post(`${path}/update`, { items: [{ id, update: { metadata: { set: { a: 'b' } } } }] });
    expect(set.body.items[0].metadata).toEqual({ a: 'b' });
    const emptied = await h.post(`${path}/update`, { items: [{ id, update: { metadata: { set: {} } } }] });
    expect(emptied.status, JSON.stringify(emptied.body)).toBe(200);
    expect(emptied.body.items[0].metadata).toEqual({});
    expect((await h.post(`${path}/list`, { filter: { externalIdPrefix: x } })).body.items[0].metadata).toEqual({});

    await h.post(`${path}/update`, { items: [{ id, update: { metadata: { add: { k: 'v' } } } }] });
    const removed = await h.post(`${path}/update`, { items: [{ id, update: { metadata: { remove: ['k'] } } }] });
    expect(removed.body.items[0].metadata).toEqual({});
    expect((await h.post(`${path}/byids`, { items: [{ id }] })).body.items[0].metadata).toEqual({});
  });
});
