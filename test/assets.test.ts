import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
const SCOPED = { clientId: 'assets-scoped', clientSecret: 'assets-scoped-secret', groups: ['assets-a'] };
beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify([SCOPED]) });
});
afterAll(() => h.close());

async function create(items: object[]): Promise<any[]> {
  const res = await h.post('/assets', { items });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.items;
}

async function byExternalIds(externalIds: string[], aggregatedProperties?: string[]): Promise<any[]> {
  const res = await h.post('/assets/byids', { items: externalIds.map((externalId) => ({ externalId })), ...(aggregatedProperties ? { aggregatedProperties } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items;
}

async function listAll(body: object, limit = 3): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const res = await h.post('/assets/list', { ...body, limit, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('paging did not end');
}

const xids = (items: any[]) => items.map((a) => a.externalId);
const count = async (filter: object = {}) => (await h.post('/assets/aggregate', { filter })).body.items[0].count as number;
const pathOf = (a: any) => a.aggregates.path.map((p: { id: number }) => p.id);

describe('create', () => {
  it('creates a root and children, with rootId, parentId and parentExternalId', async () => {
    const [root, child] = await create([
      { externalId: 'c-root', name: 'Plant', description: 'the plant', metadata: { Site: 'Oslo' }, source: 'sap', labels: [{ externalId: 'site' }] },
      { externalId: 'c-child', name: 'Pump', parentExternalId: 'c-root' },
    ]);
    expect(root).toMatchObject({ externalId: 'c-root', name: 'Plant', description: 'the plant', metadata: { Site: 'Oslo' }, source: 'sap' });
    expect(root.labels).toEqual([{ externalId: 'site' }]);
    expect(root.rootId).toBe(root.id);
    expect(root.parentId).toBeUndefined();
    expect(root.parentExternalId).toBeUndefined();
    expect(root.createdTime).toBe(root.lastUpdatedTime);
    expect(child).toMatchObject({ parentId: root.id, parentExternalId: 'c-root', rootId: root.id });

    const [byId] = await create([{ externalId: 'c-grandchild', name: 'Motor', parentId: child.id }]);
    expect(byId).toMatchObject({ parentId: child.id, parentExternalId: 'c-child', rootId: root.id });
  });

  it('places parents created in the same request in any order', async () => {
    const items = await create([
      { externalId: 'o-leaf', name: 'leaf', parentExternalId: 'o-mid' },
      { externalId: 'o-mid', name: 'mid', parentExternalId: 'o-top' },
      { externalId: 'o-top', name: 'top' },
    ]);
    expect(xids(items)).toEqual(['o-leaf', 'o-mid', 'o-top']);
    const top = items[2];
    expect(items.map((a) => a.rootId)).toEqual([top.id, top.id, top.id]);
    const [leaf, mid] = await byExternalIds(['o-leaf', 'o-mid'], ['depth', 'path']);
    expect(leaf.aggregates).toEqual({ depth: 2, path: [{ id: top.id }, { id: mid.id }, { id: leaf.id }] });
    expect(mid.aggregates.depth).toBe(1);
  });

  it('refuses a cycle within the request and creates nothing', async () => {
    const before = await count();
    const res = await h.post('/assets', {
      items: [
        { externalId: 'cy-ok', name: 'fine' },
        { externalId: 'cy-a', name: 'a', parentExternalId: 'cy-b' },
        { externalId: 'cy-b', name: 'b', parentExternalId: 'cy-a' },
      ],
    });
    expect(errorMessage(res, 400)).toMatch(/items\[1\]\.parentExternalId: the parents form a cycle \("cy-a" -> "cy-b" -> "cy-a"\)/);
    const self = await h.post('/assets', { items: [{ externalId: 'cy-self', name: 'self', parentExternalId: 'cy-self' }] });
    expect(errorMessage(self, 400)).toMatch(/cycle/);
    expect(await count()).toBe(before);
  });

  it('refuses unknown parents with missing, naming the item', async () => {
    const res = await h.post('/assets', { items: [{ name: 'ok' }, { name: 'orphan', parentExternalId: 'no-such-asset' }] });
    expect(errorMessage(res, 400)).toMatch(/items\[1\]\.parentExternalId: no asset with externalId "no-such-asset"/);
    expect(res.body.error.missing).toEqual([{ externalId: 'no-such-asset' }]);
    const byId = await h.post('/assets', { items: [{ name: 'orphan', parentId: 987654321 }] });
    expect(errorMessage(byId, 400)).toMatch(/items\[0\]\.parentId: no asset with id 987654321/);
    expect(byId.body.error.missing).toEqual([{ id: 987654321 }]);
  });

  it('takes parentId together with parentExternalId when they name the same asset, and refuses them otherwise', async () => {
    const [p, q] = await create([
      { externalId: 'both-p', name: 'p' },
      { externalId: 'both-q', name: 'q' },
    ]);
    // A copy of an asset read back (both fields), as SDK users create them.
    const [copy] = await create([{ externalId: 'both-copy', name: 'x', parentId: p.id, parentExternalId: 'both-p' }]);
    expect(copy).toMatchObject({ parentId: p.id, parentExternalId: 'both-p', rootId: p.id });

    const differ = await h.post('/assets', { items: [{ externalId: 'both-x', name: 'x' }, { externalId: 'both-y', name: 'y', parentId: p.id, parentExternalId: 'both-q' }] });
    expect(errorMessage(differ, 400)).toBe(`items[1]: parentId ${p.id} and parentExternalId "both-q" name different assets; give one of them`);
    const unknown = await h.post('/assets', { items: [{ externalId: 'both-x', name: 'x', parentId: q.id, parentExternalId: 'both-nowhere' }] });
    expect(errorMessage(unknown, 400)).toMatch(/items\[0\]\.parentExternalId: no asset with externalId "both-nowhere"/);
    expect(unknown.body.error.missing).toEqual([{ externalId: 'both-nowhere' }]);
    // Nothing of a refused request was created.
    expect((await h.post('/assets/byids', { items: [{ externalId: 'both-x' }, { externalId: 'both-y' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });

  it('refuses bad fields with a message naming them', async () => {
    const cases: Array<[object, RegExp]> = [
      [{}, /items\[0\]: missing required property "name"/],
      [{ name: '' }, /items\[0\]\.name: must be at least 1 character/],
      [{ name: 'x'.repeat(141) }, /items\[0\]\.name: must be at most 140 characters/],
      [{ name: null }, /items\[0\]\.name: null is not allowed/],
      [{ name: 'n', description: 'd'.repeat(501) }, /items\[0\]\.description: must be at most 500 characters/],
      [{ name: 'n', source: 's'.repeat(129) }, /items\[0\]\.source: must be at most 128 characters/],
      [{ name: 'n', externalId: 'e'.repeat(256) }, /items\[0\]\.externalId: must be at most 255 characters/],
      [{ name: 'n', parentId: null }, /items\[0\]\.parentId: null is not allowed/],
      [{ name: 'n', metadata: { k: 'v'.repeat(10_241) } }, /items\[0\]\.metadata/],
      [{ name: 'n', metadata: { a: 'v'.repeat(6000), b: 'v'.repeat(6000) } }, /items\[0\]\.metadata: keys and values total \d+ bytes; at most 10240/],
      [{ name: 'n', labels: Array.from({ length: 11 }, (_, i) => ({ externalId: `l${i}` })) }, /items\[0\]\.labels: must have at most 10 items/],
      [{ name: 'n', labels: [{ externalId: 'a' }, { externalId: 'a' }] }, /items\[0\]\.labels: must not contain duplicates/],
      [{ name: 'n', color: 'red' }, /items\[0\]: unknown property "color"/],
      [
        { name: 'n', geoLocation: { type: 'Feature', geometry: { type: 'LineString', coordinates: [[1, 2]] } } },
        /items\[0\]\.geoLocation\.geometry\.coordinates: a LineString needs an array of at least 2 positions/,
      ],
      [{ name: 'n', geoLocation: { type: 'Feature', geometry: { type: 'Circle', coordinates: [] } } }, /items\[0\]\.geoLocation\.geometry\.type: must be one of/],
    ];
    for (const [item, message] of cases) {
      expect(errorMessage(await h.post('/assets', { items: [item] }), 400), JSON.stringify(item).slice(0, 80)).toMatch(message);
    }
  });

  it('keeps a valid geoLocation', async () => {
    const geoLocation = { type: 'Feature', geometry: { type: 'Point', coordinates: [10.75, 59.91] }, properties: { label: 'Oslo' } };
    const [a] = await create([{ externalId: 'geo-1', name: 'located', geoLocation }]);
    expect(a.geoLocation).toEqual(geoLocation);
  });

  it('takes 1 to 1000 items per request', async () => {
    expect(errorMessage(await h.post('/assets', { items: [] }), 400)).toMatch(/items: must have at least 1 item/);
    const many = Array.from({ length: 1001 }, (_, i) => ({ name: `n${i}` }));
    expect(errorMessage(await h.post('/assets', { items: many }), 400)).toMatch(/items: must have at most 1000 items/);
    const most = await create(Array.from({ length: 1000 }, (_, i) => ({ externalId: `bulk-${i}`, name: `bulk ${i}`, ...(i ? { parentExternalId: 'bulk-0' } : {}) })));
    expect(most).toHaveLength(1000);
    expect((await byExternalIds(['bulk-0'], ['childCount']))[0].aggregates).toEqual({ childCount: 999 });
  });

  it('keeps external ids unique (409) and refuses unknown data sets (missing)', async () => {
    const dup = await h.post('/assets', { items: [{ externalId: 'c-root', name: 'again' }] });
    expect(errorMessage(dup, 409)).toMatch(/c-root/);
    expect(dup.body.error.duplicated).toEqual([{ externalId: 'c-root' }]);
    const inRequest = await h.post('/assets', { items: [{ externalId: 'twice', name: 'a' }, { externalId: 'twice', name: 'b' }] });
    expect(inRequest.body.error.duplicated).toEqual([{ externalId: 'twice' }]);
    const ds = await h.post('/assets', { items: [{ name: 'x', dataSetId: 55555 }] });
    expect(errorMessage(ds, 400)).toMatch(/items\[0\]\.dataSetId: no data set with id/);
    expect(ds.body.error.missing).toEqual([{ id: 55555 }]);
  });
});

describe('retrieve', () => {
  it('gets one asset by id, and 400 with missing for an unknown one', async () => {
    const [child] = await byExternalIds(['c-child']);
    const res = await h.get(`/assets/${child.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(child);
    const unknown = await h.get('/assets/99999999');
    expect(errorMessage(unknown, 400)).toMatch(/99999999/);
    expect(unknown.body.error.missing).toEqual([{ id: 99999999 }]);
  });

  it('retrieves by id or external id in request order, with ignoreUnknownIds and aggregates', async () => {
    const [root] = await byExternalIds(['c-root']);
    const res = await h.post('/assets/byids', {
      items: [{ externalId: 'c-grandchild' }, { id: root.id }, { externalId: 'nope' }],
      ignoreUnknownIds: true,
      aggregatedProperties: ['childCount', 'depth', 'path'],
    });
    expect(xids(res.body.items)).toEqual(['c-grandchild', 'c-root']);
    const [grandchild, top] = res.body.items;
    expect(top.aggregates).toEqual({ childCount: 1, depth: 0, path: [{ id: root.id }] });
    expect(grandchild.aggregates.childCount).toBe(0);
    expect(grandchild.aggregates.depth).toBe(2);
    const missing = await h.post('/assets/byids', { items: [{ externalId: 'nope' }, { id: 424242 }] });
    expect(errorMessage(missing, 400)).toBeTruthy();
    expect(missing.body.error.missing).toEqual([{ externalId: 'nope' }, { id: 424242 }]);
    expect(errorMessage(await h.post('/assets/byids', { items: [{ id: root.id }], aggregatedProperties: ['size'] }), 400)).toMatch(
      /aggregatedProperties\[0\]: must be one of "childCount", "path", "depth"/,
    );
  });
});

describe('update', () => {
  it('sets and removes fields, metadata and labels', async () => {
    await create([{ externalId: 'u-1', name: 'before', description: 'd', source: 's', metadata: { a: '1', b: '2' }, labels: [{ externalId: 'x' }] }]);
    const res = await h.post('/assets/update', {
      items: [
        {
          externalId: 'u-1',
          update: {
            name: { set: 'after' },
            description: { setNull: true },
            metadata: { add: { c: '3' }, remove: ['a'] },
            labels: { add: [{ externalId: 'y' }], remove: [{ externalId: 'x' }] },
            geoLocation: { set: { type: 'Feature', geometry: { type: 'Point', coordinates: [1, 2] } } },
          },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [u] = res.body.items;
    expect(u).toMatchObject({ name: 'after', source: 's', metadata: { b: '2', c: '3' }, labels: [{ externalId: 'y' }] });
    expect(u.description).toBeUndefined();
    expect(u.geoLocation.geometry.coordinates).toEqual([1, 2]);
    // An emptied list is absent, as every absent field, and emptied metadata is {}: in the answer and in every read after it.
    const set = await h.post('/assets/update', { items: [{ id: u.id, update: { labels: { set: [] }, metadata: { set: {} } } }] });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    for (const item of [set.body.items[0], (await h.get(`/assets/${u.id}`)).body, (await h.post('/assets/byids', { items: [{ id: u.id }] })).body.items[0]]) {
      expect(Object.keys(item)).not.toContain('labels');
      expect(item.metadata).toEqual({});
    }
    const created = await h.post('/assets', { items: [{ name: 'bare', labels: [], metadata: {} }] });
    expect(Object.keys(created.body.items[0])).not.toContain('labels');
    expect(created.body.items[0].metadata).toEqual({});
  });

  it('refuses removing the name or the parent, and bad values', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ name: { setNull: true } }, /update\.name/],
      [{ name: { set: '' } }, /update\.name\.set: must be at least 1 character/],
      [{ parentId: { setNull: true } }, /update\.parentId/],
      [{ description: { set: 'x'.repeat(501) } }, /update\.description\.set: must be at most 500 characters/],
      [{ labels: { set: [], add: [{ externalId: 'a' }] } }, /update\.labels: "set" cannot be combined/],
      [{ dataSetId: { set: 777777 } }, /items\[0\]\.dataSetId: no data set with id 777777/],
      [{ shape: { set: 1 } }, /update: unknown property "shape"/],
    ];
    for (const [update, message] of cases) {
      expect(errorMessage(await h.post('/assets/update', { items: [{ externalId: 'u-1', update }] }), 400), JSON.stringify(update)).toMatch(message);
    }
  });

  it('shows a parent external id change on the children (they refer to the parent by id)', async () => {
    const [p] = await create([{ externalId: 'rename-p', name: 'p' }]);
    await create([{ externalId: 'rename-c', name: 'c', parentExternalId: 'rename-p' }]);
    await h.post('/assets/update', { items: [{ id: p.id, update: { externalId: { set: 'renamed-p' } } }] });
    const [c] = await byExternalIds(['rename-c']);
    expect(c).toMatchObject({ parentId: p.id, parentExternalId: 'renamed-p' });
    await h.post('/assets/update', { items: [{ id: p.id, update: { externalId: { setNull: true } } }] });
    expect((await byExternalIds(['rename-c']))[0].parentExternalId).toBeUndefined();
  });
});

describe('moving within a hierarchy', () => {
  // m-root ─┬─ m-a ── m-a1 ── m-a1x
  //         └─ m-b
  // m-other (another root)
  let ids: Record<string, number>;
  beforeAll(async () => {
    const items = await create([
      { externalId: 'm-root', name: 'root' },
      { externalId: 'm-a', name: 'a', parentExternalId: 'm-root' },
      { externalId: 'm-a1', name: 'a1', parentExternalId: 'm-a' },
      { externalId: 'm-a1x', name: 'a1x', parentExternalId: 'm-a1' },
      { externalId: 'm-b', name: 'b', parentExternalId: 'm-root' },
      { externalId: 'm-other', name: 'other' },
    ]);
    ids = Object.fromEntries(items.map((a) => [a.externalId, a.id]));
  });

  const subtree = async (externalId: string) => xids(await listAll({ filter: { assetSubtreeIds: [{ externalId }] }, sort: [{ property: ['externalId'] }] }));

  it('moves an asset with its subtree: depth and path follow', async () => {
    const res = await h.post('/assets/update', { items: [{ externalId: 'm-a1', update: { parentExternalId: { set: 'm-b' } } }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items[0]).toMatchObject({ parentId: ids['m-b'], parentExternalId: 'm-b', rootId: ids['m-root'] });
    const [a1, a1x] = await byExternalIds(['m-a1', 'm-a1x'], ['depth', 'path']);
    expect(pathOf(a1)).toEqual([ids['m-root'], ids['m-b'], ids['m-a1']]);
    expect(pathOf(a1x)).toEqual([ids['m-root'], ids['m-b'], ids['m-a1'], ids['m-a1x']]);
    expect(a1x.aggregates.depth).toBe(3);
    expect(await subtree('m-b')).toEqual(['m-a1', 'm-a1x', 'm-b']);
    expect(await subtree('m-a')).toEqual(['m-a']);
    expect((await byExternalIds(['m-a'], ['childCount']))[0].aggregates.childCount).toBe(0);
  });

  it('moves up the hierarchy with parentId, decreasing depths', async () => {
    await h.post('/assets/update', { items: [{ id: ids['m-a1'], update: { parentId: { set: ids['m-root'] } } }] });
    const [a1x] = await byExternalIds(['m-a1x'], ['depth', 'path']);
    expect(pathOf(a1x)).toEqual([ids['m-root'], ids['m-a1'], ids['m-a1x']]);
    expect(a1x.aggregates.depth).toBe(2);
  });

  it('refuses a move under the asset itself or its descendants', async () => {
    const under = await h.post('/assets/update', { items: [{ externalId: 'm-a1', update: { parentExternalId: { set: 'm-a1x' } } }] });
    expect(errorMessage(under, 400)).toMatch(/items\[0\]\.update\.parentExternalId: asset \d+ \("m-a1x"\) is asset \d+ \("m-a1"\) itself or below it; the move would make a cycle/);
    const self = await h.post('/assets/update', { items: [{ externalId: 'm-a1', update: { parentId: { set: ids['m-a1'] } } }] });
    expect(errorMessage(self, 400)).toMatch(/cycle/);
  });

  it('judges several moves by the hierarchy they make together', async () => {
    // Alone, moving m-a1 under m-a1x is a cycle; with m-a1x first moved under m-b it is not.
    const res = await h.post('/assets/update', {
      items: [
        { externalId: 'm-a1', update: { parentExternalId: { set: 'm-a1x' } } },
        { externalId: 'm-a1x', update: { parentExternalId: { set: 'm-b' } } },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [a1, a1x] = await byExternalIds(['m-a1', 'm-a1x'], ['depth', 'path']);
    expect(pathOf(a1x)).toEqual([ids['m-root'], ids['m-b'], ids['m-a1x']]);
    expect(pathOf(a1)).toEqual([ids['m-root'], ids['m-b'], ids['m-a1x'], ids['m-a1']]);
    // Two moves that close a loop together are refused, and nothing of the request is applied.
    const loop = await h.post('/assets/update', {
      items: [
        { externalId: 'm-a', update: { parentExternalId: { set: 'm-b' }, name: { set: 'changed' } } },
        { externalId: 'm-b', update: { parentExternalId: { set: 'm-a' } } },
      ],
    });
    expect(errorMessage(loop, 400)).toMatch(/cycle/);
    expect((await byExternalIds(['m-a']))[0]).toMatchObject({ name: 'a', parentId: ids['m-root'] });
  });

  it('refuses moves to another hierarchy and giving a root a parent', async () => {
    const across = await h.post('/assets/update', { items: [{ externalId: 'm-b', update: { parentExternalId: { set: 'm-other' } } }] });
    expect(errorMessage(across, 400)).toMatch(/items\[0\]\.update\.parentExternalId: .*"m-other".* an asset can move only within its own hierarchy/);
    const root = await h.post('/assets/update', { items: [{ externalId: 'm-other', update: { parentExternalId: { set: 'm-b' } } }] });
    expect(errorMessage(root, 400)).toMatch(/"m-other"\) is the root of its hierarchy, and a root cannot be given a parent/);
    const unknown = await h.post('/assets/update', { items: [{ externalId: 'm-b', update: { parentExternalId: { set: 'm-nowhere' } } }] });
    expect(errorMessage(unknown, 400)).toMatch(/items\[0\]\.update\.parentExternalId: no asset with externalId "m-nowhere"/);
    expect(unknown.body.error.missing).toEqual([{ externalId: 'm-nowhere' }]);
    const both = await h.post('/assets/update', { items: [{ externalId: 'm-b', update: { parentId: { set: ids['m-root'] }, parentExternalId: { set: 'm-a' } } }] });
    expect(errorMessage(both, 400)).toMatch(/items\[0\]\.update: parentId \d+ and parentExternalId "m-a" name different assets; give one of them/);
  });

  it('takes parentId and parentExternalId together when they name the same asset, as SDKs send an asset they read', async () => {
    const [read] = await byExternalIds(['m-b']);
    expect(read.parentExternalId).toBeDefined();
    const update = { parentId: { set: read.parentId }, parentExternalId: { set: read.parentExternalId }, description: { set: 'edited' } };
    const res = await h.post('/assets/update', { items: [{ externalId: 'm-b', update }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items[0]).toMatchObject({ parentId: read.parentId, description: 'edited' });
    const moved = await h.post('/assets/update', { items: [{ externalId: 'm-b', update: { parentId: { set: ids['m-root'] }, parentExternalId: { set: 'm-root' } } }] });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await byExternalIds(['m-b']))[0].parentId).toBe(ids['m-root']);
  });
});

describe('delete', () => {
  beforeAll(async () => {
    await create([
      { externalId: 'd-root', name: 'r' },
      { externalId: 'd-a', name: 'a', parentExternalId: 'd-root' },
      { externalId: 'd-a1', name: 'a1', parentExternalId: 'd-a' },
      { externalId: 'd-b', name: 'b', parentExternalId: 'd-root' },
    ]);
  });
  const exists = async (externalId: string) =>
    (await h.post('/assets/byids', { items: [{ externalId }], ignoreUnknownIds: true })).body.items.length === 1;

  it('refuses to delete a parent without recursive, and deletes nothing', async () => {
    const res = await h.post('/assets/delete', { items: [{ externalId: 'd-b' }, { externalId: 'd-a' }] });
    expect(errorMessage(res, 400)).toMatch(/asset \d+ \("d-a"\) has children that this request does not delete \(\d+\).*"recursive": true/);
    expect(await exists('d-b')).toBe(true);
  });

  it('deletes a parent together with its children named in the same request', async () => {
    expect((await h.post('/assets/delete', { items: [{ externalId: 'd-a' }, { externalId: 'd-a1' }] })).status).toBe(200);
    expect(await exists('d-a')).toBe(false);
    expect(await exists('d-a1')).toBe(false);
  });

  it('deletes a whole subtree with recursive, and ignores unknown ids when asked', async () => {
    const missing = await h.post('/assets/delete', { items: [{ externalId: 'd-root' }, { externalId: 'd-none' }], recursive: true });
    expect(missing.body.error.missing).toEqual([{ externalId: 'd-none' }]);
    expect(await exists('d-root')).toBe(true);
    const res = await h.post('/assets/delete', { items: [{ externalId: 'd-root' }, { externalId: 'd-none' }], recursive: true, ignoreUnknownIds: true });
    expect(res.status).toBe(200);
    expect(await exists('d-root')).toBe(false);
    expect(await exists('d-b')).toBe(false);
    expect(await count({ externalIdPrefix: 'd-' })).toBe(0);
  });
});

describe('list, search and aggregate', () => {
  let ids: Record<string, number>;
  beforeAll(async () => {
    const [ds] = (await h.post('/datasets', { items: [{ externalId: 'l-ds' }] })).body.items;
    const items = await create([
      { externalId: 'l-root', name: 'Refinery', description: 'crude oil refinery', source: 'sap', dataSetId: ds.id, labels: [{ externalId: 'site' }] },
      { externalId: 'l-pump', name: 'Feed pump', parentExternalId: 'l-root', metadata: { Kind: 'Pump' }, labels: [{ externalId: 'rotating' }, { externalId: 'critical' }] },
      { externalId: 'l-valve', name: 'Inlet valve', parentExternalId: 'l-root', description: 'pump inlet', labels: [{ externalId: 'critical' }] },
      { externalId: 'l-motor', name: 'Pump motor', parentExternalId: 'l-pump', source: 'sap', dataSetId: ds.id },
      { externalId: 'l-root2', name: 'Depot' },
    ]);
    ids = Object.fromEntries(items.map((a) => [a.externalId, a.id]));
  });
  const mine = { externalIdPrefix: 'l-' };
  const list = async (filter: object, extra: object = {}) => xids(await listAll({ filter: { ...mine, ...filter }, ...extra }));

  it('filters on the hierarchy', async () => {
    expect(await list({ parentIds: [ids['l-root']] })).toEqual(['l-pump', 'l-valve']);
    expect(await list({ parentExternalIds: ['l-pump'] })).toEqual(['l-motor']);
    expect(await list({ rootIds: [{ externalId: 'l-root' }] })).toEqual(['l-root', 'l-pump', 'l-valve', 'l-motor']);
    expect(await list({ assetSubtreeIds: [{ id: ids['l-pump'] }, { externalId: 'l-root2' }] })).toEqual(['l-pump', 'l-motor', 'l-root2']);
    expect(await list({ root: true })).toEqual(['l-root', 'l-root2']);
    expect(await list({ root: false })).toEqual(['l-pump', 'l-valve', 'l-motor']);
    const unknown = await h.post('/assets/list', { filter: { assetSubtreeIds: [{ externalId: 'l-nope' }] } });
    expect(unknown.body.error.missing).toEqual([{ externalId: 'l-nope' }]);
    expect(await list({ parentExternalIds: ['l-nope'] })).toEqual([]);
    expect(await list({ parentExternalIds: ['l-nope', 'l-pump'] })).toEqual(['l-motor']);
  });

  it('filters on fields, metadata, data sets and labels', async () => {
    expect(await list({ name: 'Feed pump' })).toEqual(['l-pump']);
    expect(await list({ source: 'sap' })).toEqual(['l-root', 'l-motor']);
    expect(await list({ metadata: { kind: 'PUMP' } })).toEqual(['l-pump']);
    expect(await list({ dataSetIds: [{ externalId: 'l-ds' }] })).toEqual(['l-root', 'l-motor']);
    expect(await list({ labels: { containsAny: [{ externalId: 'critical' }, { externalId: 'site' }] } })).toEqual(['l-root', 'l-pump', 'l-valve']);
    expect(await list({ labels: { containsAll: [{ externalId: 'critical' }, { externalId: 'rotating' }] } })).toEqual(['l-pump']);
    expect(errorMessage(await h.post('/assets/list', { filter: { labels: {} } }), 400)).toMatch(/filter\.labels: give exactly one of "containsAny" and "containsAll"/);
  });

  it('takes advanced filters on the hierarchy properties, sorts and pages', async () => {
    const adv = { and: [{ prefix: { property: ['externalId'], value: 'l-' } }, { equals: { property: ['rootId'], value: ids['l-root'] } }] };
    expect(xids(await listAll({ advancedFilter: adv }))).toEqual(['l-root', 'l-pump', 'l-valve', 'l-motor']);
    const parent = { in: { property: ['parentId'], values: [ids['l-root'], ids['l-pump']] } };
    expect(xids(await listAll({ advancedFilter: parent, sort: [{ property: ['name'], order: 'desc' }] }))).toEqual(['l-motor', 'l-valve', 'l-pump']);
    const search = { search: { property: ['name'], value: 'pump' } };
    expect(xids(await listAll({ filter: mine, advancedFilter: search })).sort()).toEqual(['l-motor', 'l-pump']);
    expect(errorMessage(await h.post('/assets/list', { advancedFilter: { equals: { property: ['depth'], value: 1 } } }), 400)).toMatch(/unknown property/);
  });

  it('pages a sort on a property some assets lack at every page size, across the boundary of the nulls', async () => {
    const orders = { first: ['l-pump', 'l-valve', 'l-root2', 'l-root', 'l-motor'], last: ['l-root', 'l-motor', 'l-pump', 'l-valve', 'l-root2'] };
    for (const [nulls, expected] of Object.entries(orders)) {
      const body = { filter: mine, sort: [{ property: ['source'], nulls }] };
      for (const limit of [1, 2, 3, 4, 5, 6]) expect(xids(await listAll(body, limit)), `nulls ${nulls}, limit ${limit}`).toEqual(expected);
    }
  });

  it('splits a list into partitions that together are the whole', async () => {
    const whole = xids(await listAll({ filter: mine }, 2)).sort();
    const parts: string[] = [];
    for (let m = 1; m <= 3; m++) parts.push(...xids(await listAll({ filter: mine, partition: `${m}/3` }, 1)));
    expect(parts.sort()).toEqual(whole);
    expect(errorMessage(await h.post('/assets/list', { partition: '1/11' }), 400)).toMatch(/at most 10 partitions/);
  });

  it('returns aggregates on list when asked', async () => {
    const res = await h.post('/assets/list', { filter: { ...mine, root: true }, aggregatedProperties: ['childCount'] });
    expect(res.body.items.map((a: any) => [a.externalId, a.aggregates.childCount])).toEqual([
      ['l-root', 2],
      ['l-root2', 0],
    ]);
  });

  it('lists with query parameters', async () => {
    const res = await h.get(`/assets?externalIdPrefix=l-&assetSubtreeExternalIds=${encodeURIComponent('["l-pump"]')}&includeMetadata=false`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(xids(res.body.items)).toEqual(['l-pump', 'l-motor']);
    expect(res.body.items[0].metadata).toBeUndefined();
    const bySubtreeId = await h.get(`/assets?assetSubtreeIds=[${ids['l-root2']}]`);
    expect(xids(bySubtreeId.body.items)).toEqual(['l-root2']);
    expect(xids((await h.get(`/assets?externalIdPrefix=l-&root=true`)).body.items)).toEqual(['l-root', 'l-root2']);
    expect(xids((await h.get(`/assets?parentIds=[${ids['l-root']}]`)).body.items)).toEqual(['l-pump', 'l-valve']);
    const page = await h.get('/assets?externalIdPrefix=l-&limit=2&partition=1/1');
    expect(page.body.items).toHaveLength(2);
    expect(page.body.nextCursor).toBeTruthy();
    expect(errorMessage(await h.get('/assets?parentIds=1,2'), 400)).toMatch(/query parameter "parentIds"/);
    expect(errorMessage(await h.get('/assets?assetSubtreeExternalIds=[1]'), 400)).toMatch(/query parameter "assetSubtreeExternalIds"/);
  });

  it('searches names and descriptions', async () => {
    const search = async (s: object) => xids((await h.post('/assets/search', { filter: mine, search: s })).body.items);
    expect((await search({ name: 'pump' })).sort()).toEqual(['l-motor', 'l-pump']);
    expect(await search({ description: 'refinery' })).toEqual(['l-root']);
    expect((await search({ query: 'pump' })).sort()).toEqual(['l-motor', 'l-pump', 'l-valve']);
    expect((await h.post('/assets/search', { filter: { ...mine, parentIds: [ids['l-root']] }, search: { name: 'pump' } })).body.items).toHaveLength(1);
  });

  it('counts with filters and aggregates on hierarchy properties', async () => {
    expect(await count({ ...mine, assetSubtreeIds: [{ externalId: 'l-root' }] })).toBe(4);
    const res = await h.post('/assets/aggregate', { filter: mine, aggregate: 'uniqueValues', properties: [{ property: ['parentId'] }] });
    expect(res.body.items).toEqual([
      { count: 2, values: [ids['l-root']], value: ids['l-root'] },
      { count: 1, values: [ids['l-pump']], value: ids['l-pump'] },
    ]);
  });

  it('filters and aggregates on labels in the advanced filter and the aggregates, labels given as text or as {externalId}', async () => {
    const advanced = async (advancedFilter: object) => xids(await listAll({ filter: mine, advancedFilter }));
    expect(await advanced({ containsAny: { property: ['labels'], values: ['site', 'rotating'] } })).toEqual(['l-root', 'l-pump']);
    // The Python SDK sends Label objects as {"externalId": ...}.
    expect(await advanced({ containsAll: { property: ['labels'], values: [{ externalId: 'critical' }, { externalId: 'rotating' }] } })).toEqual(['l-pump']);
    expect(await advanced({ not: { exists: { property: ['labels'] } } })).toEqual(['l-motor', 'l-root2']);
    expect(errorMessage(await h.post('/assets/list', { advancedFilter: { equals: { property: ['labels'], value: 'site' } } }), 400)).toMatch(
      /equals does not apply to the array property \["labels"\]/,
    );
    expect(errorMessage(await h.post('/assets/list', { advancedFilter: { containsAny: { property: ['labels'], values: [{ id: 1 }] } } }), 400)).toMatch(
      /advancedFilter\.containsAny\.values\[0\]: expected a string for \["labels"\]/,
    );
    const aggregate = (body: object) => h.post('/assets/aggregate', { filter: mine, ...body });
    expect((await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['labels'] }] })).body.items).toEqual([
      { count: 2, values: ['critical'], value: 'critical' },
      { count: 1, values: ['rotating'], value: 'rotating' },
      { count: 1, values: ['site'], value: 'site' },
    ]);
    expect((await aggregate({ aggregate: 'cardinalityValues', properties: [{ property: ['labels'] }] })).body.items).toEqual([{ count: 3 }]);
    const notCritical = { not: { prefix: { value: 'crit' } } };
    expect((await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['labels'] }], aggregateFilter: notCritical })).body.items).toHaveLength(2);
    // A label that looks like a number is still text.
    await create([{ externalId: 'l-num', name: 'n', labels: [{ externalId: '42' }] }]);
    expect((await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['labels'] }], aggregateFilter: { prefix: { value: '4' } } })).body.items).toEqual([
      { count: 1, values: ['42'], value: '42' },
    ]);
    expect(await advanced({ containsAny: { property: ['labels'], values: ['42'] } })).toEqual(['l-num']);
    await h.post('/assets/delete', { items: [{ externalId: 'l-num' }] });
  });

  it('takes the deprecated metadataKeys and metadataValues aggregates', async () => {
    await create([
      { externalId: 'l-md-1', name: 'a', metadata: { Kind: 'Valve', Size: 'L' } },
      { externalId: 'l-md-2', name: 'b', metadata: { kind: 'Valve' } },
    ]);
    const aggregate = (body: object) => h.post('/assets/aggregate', { filter: mine, ...body });
    expect((await aggregate({ aggregate: 'metadataKeys' })).body.items).toEqual([
      { count: 3, values: ['kind'], value: 'kind' },
      { count: 1, values: ['size'], value: 'size' },
    ]);
    expect((await aggregate({ aggregate: 'metadataValues', keys: ['KIND'] })).body.items).toEqual([
      { count: 2, values: ['Valve'], value: 'Valve' },
      { count: 1, values: ['Pump'], value: 'Pump' },
    ]);
    expect(errorMessage(await aggregate({ aggregate: 'metadataValues' }), 400)).toBe('keys: metadataValues needs "keys" naming the metadata key');
    expect(errorMessage(await aggregate({ aggregate: 'metadataValues', keys: ['a', 'b'] }), 400)).toMatch(/keys: must have at most 1 item/);
    expect(errorMessage(await aggregate({ aggregate: 'uniqueValues', keys: ['kind'], properties: [{ property: ['name'] }] }), 400)).toBe(
      'keys: only used by the metadataValues aggregate',
    );
    expect(errorMessage(await aggregate({ aggregate: 'metadataValues', keys: ['kind'], properties: [{ property: ['name'] }] }), 400)).toMatch(
      /^properties: not used by metadataValues/,
    );
  });
});

describe('geographic filter', () => {
  const square = { type: 'Polygon', coordinates: [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]] };
  // The square with a hole in its middle.
  const donut = { type: 'Polygon', coordinates: [...square.coordinates, [[3, 3], [7, 3], [7, 7], [3, 7], [3, 3]]] };
  // A U: two arms joined at the bottom, open between x 3 and 7 above y 3.
  const u = { type: 'Polygon', coordinates: [[[0, 0], [10, 0], [10, 10], [7, 10], [7, 3], [3, 3], [3, 10], [0, 10], [0, 0]]] };
  const feature = (type: string, coordinates: unknown) => ({ type: 'Feature', geometry: { type, coordinates } });
  beforeAll(async () => {
    await create([
      { externalId: 'g-point', name: 'p', geoLocation: feature('Point', [5, 5]) },
      { externalId: 'g-edge', name: 'p', geoLocation: feature('Point', [0, 5]) },
      { externalId: 'g-out', name: 'p', geoLocation: feature('Point', [20, 20]) },
      { externalId: 'g-diagonal', name: 'l', geoLocation: feature('LineString', [[1, 1], [9, 9]]) },
      { externalId: 'g-across', name: 'l', geoLocation: feature('LineString', [[-5, 5], [15, 5]]) },
      { externalId: 'g-arms', name: 'l', geoLocation: feature('LineString', [[1, 8], [9, 8]]) },
      { externalId: 'g-small', name: 'a', geoLocation: feature('Polygon', [[[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]) },
      { externalId: 'g-frame', name: 'a', geoLocation: feature('Polygon', [[[2.5, 2.5], [7.5, 2.5], [7.5, 7.5], [2.5, 7.5], [2.5, 2.5]]]) },
      { externalId: 'g-huge', name: 'a', geoLocation: feature('Polygon', [[[-100, -100], [100, -100], [100, 100], [-100, 100], [-100, -100]]]) },
      { externalId: 'g-scatter', name: 'm', geoLocation: feature('MultiPoint', [[5, 5], [30, 30]]) },
      { externalId: 'g-nowhere', name: 'n' },
    ]);
  });
  const matching = async (relation: string, shape: object) =>
    xids(await listAll({ filter: { externalIdPrefix: 'g-', geoLocation: { relation, shape } } }, 100)).sort();

  it('finds the assets whose geometry intersects a polygon, or lies within it (its boundary included)', async () => {
    expect(await matching('INTERSECTS', square)).toEqual(['g-across', 'g-arms', 'g-diagonal', 'g-edge', 'g-frame', 'g-huge', 'g-point', 'g-scatter', 'g-small']);
    expect(await matching('WITHIN', square)).toEqual(['g-arms', 'g-diagonal', 'g-edge', 'g-frame', 'g-point', 'g-small']);
    // Assets without a geoLocation stand in no relation to any shape.
    expect(await matching('DISJOINT', square)).toEqual(['g-out']);
  });

  it('counts a hole as outside its polygon, and an edge that leaves a concave polygon as outside it', async () => {
    expect(await matching('INTERSECTS', donut)).toEqual(['g-across', 'g-arms', 'g-diagonal', 'g-edge', 'g-frame', 'g-huge', 'g-small']);
    // g-diagonal runs through the hole; g-frame lies in the ring but encloses the hole.
    expect(await matching('WITHIN', donut)).toEqual(['g-arms', 'g-edge', 'g-small']);
    expect(await matching('DISJOINT', donut)).toEqual(['g-out', 'g-point', 'g-scatter']);
    // g-arms has both ends in the arms of the U and crosses the gap between them.
    expect(await matching('WITHIN', u)).toEqual(['g-edge', 'g-small']);
    expect(await matching('INTERSECTS', u)).toContain('g-arms');
  });

  it('relates to lines and points as shapes', async () => {
    const line = { type: 'LineString', coordinates: [[0, 5], [10, 5]] };
    expect(await matching('INTERSECTS', line)).toEqual(['g-across', 'g-diagonal', 'g-edge', 'g-frame', 'g-huge', 'g-point', 'g-scatter']);
    expect(await matching('WITHIN', line)).toEqual(['g-edge', 'g-point']);
    expect(await matching('WITHIN', { type: 'Point', coordinates: [5, 5] })).toEqual(['g-point']);
    expect(await matching('INTERSECTS', { type: 'Point', coordinates: [5, 5] })).toEqual(['g-across', 'g-diagonal', 'g-frame', 'g-huge', 'g-point', 'g-scatter']);
    const two = { type: 'MultiPolygon', coordinates: [[[[19, 19], [21, 19], [21, 21], [19, 21], [19, 19]]], [[[0.5, 0.5], [2.5, 0.5], [2.5, 2.5], [0.5, 2.5], [0.5, 0.5]]]] };
    expect(await matching('WITHIN', two)).toEqual(['g-out', 'g-small']);
    expect(await matching('INTERSECTS', { type: 'MultiLineString', coordinates: [[[20, 0], [20, 40]]] })).toEqual(['g-huge', 'g-out']);
  });

  it('narrows search and aggregate too', async () => {
    const geoLocation = { relation: 'WITHIN', shape: square };
    expect((await h.post('/assets/aggregate', { filter: { externalIdPrefix: 'g-', geoLocation } })).body.items).toEqual([{ count: 6 }]);
    const found = await h.post('/assets/search', { search: { name: 'a' }, filter: { geoLocation } });
    expect(xids(found.body.items).sort()).toEqual(['g-frame', 'g-small']);
  });

  it('refuses shapes that are not one, naming the place', async () => {
    const refused = async (geoLocation: object) => errorMessage(await h.post('/assets/list', { filter: { geoLocation } }), 400);
    expect(await refused({ relation: 'WITHIN', shape: { type: 'Polygon', coordinates: [[1, 2]] } })).toBe(
      'filter.geoLocation.shape.coordinates: a Polygon needs an array of rings, each an array of at least 2 positions',
    );
    expect(await refused({ relation: 'NEAR', shape: square })).toMatch(/^filter\.geoLocation\.relation: must be one of "INTERSECTS", "DISJOINT", "WITHIN"/);
    expect(await refused({ relation: 'WITHIN', shape: { type: 'MultiPoint', coordinates: [[1, 2]] } })).toMatch(/^filter\.geoLocation\.shape\.type: must be one of/);
    expect(await refused({ shape: square })).toMatch(/filter\.geoLocation: missing required property "relation"/);
  });
});

describe('access', () => {
  it('keeps a recursive delete within the scope of the request', async () => {
    const [a, b] = (await h.post('/datasets', { items: [{ externalId: 'acc-a' }, { externalId: 'acc-b' }] })).body.items.map((d: { id: number }) => d.id);
    await createGroup(h, { name: 'Assets in A', sourceId: 'assets-a', capabilities: [capability('assetsAcl', ['READ', 'WRITE'], { datasetScope: { ids: [a] } })] });
    const token = await clientToken(h, SCOPED.clientId, SCOPED.clientSecret);
    await create([
      { externalId: 'acc-root', name: 'root', dataSetId: a },
      { externalId: 'acc-in', name: 'in scope', dataSetId: a, parentExternalId: 'acc-root' },
      { externalId: 'acc-out', name: 'out of scope', dataSetId: b, parentExternalId: 'acc-in' },
    ]);
    const listed = await h.request('POST', '/assets/list', { filter: { externalIdPrefix: 'acc-' } }, bearer(token));
    expect(xids(listed.body.items)).toEqual(['acc-root', 'acc-in']);
    const res = await h.request('POST', '/assets/delete', { items: [{ externalId: 'acc-root' }], recursive: true }, bearer(token));
    expect(errorMessage(res, 403)).toMatch(/assetsAcl:WRITE/);
    expect(await count({ externalIdPrefix: 'acc-' })).toBe(3);
  });

  it('declares assetsAcl:READ for reads and assetsAcl:WRITE for writes', () => {
    const assets = h.strata.routes.filter((r) => r.path === '/assets' || r.path.startsWith('/assets/'));
    const declared = assets.map((r) => `${r.method} ${r.path} ${r.capability?.acl}:${r.capability?.action}`).sort();
    expect(declared).toEqual(
      [
        'GET /assets assetsAcl:READ',
        'GET /assets/:id assetsAcl:READ',
        'POST /assets assetsAcl:WRITE',
        'POST /assets/aggregate assetsAcl:READ',
        'POST /assets/byids assetsAcl:READ',
        'POST /assets/delete assetsAcl:WRITE',
        'POST /assets/list assetsAcl:READ',
        'POST /assets/search assetsAcl:READ',
        'POST /assets/update assetsAcl:WRITE',
      ].sort(),
    );
  });
});
