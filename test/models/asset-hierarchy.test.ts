/**
 * The asset hierarchy of the core data model over HTTP: users write a CogniteAsset's `parent`; the service
 * keeps `root`, `path` (from the root down to the node itself) and `pathLastUpdatedTime`, for the nodes
 * written and for every descendant when a subtree moves or loses its top, in the write's transaction and in
 * the sync feed. Cycles, paths longer than the path property takes, and writes of what the service keeps
 * are refused, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let clock = Date.now();
const ASSET = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const ASSET_CONTAINER = { type: 'container', space: 'cdf_cdm', externalId: 'CogniteAsset' };
const S = 'site';

beforeAll(async () => {
  h = await startHarness({}, {}, { now: () => clock });
  await ok('/models/spaces', { items: [{ space: S }, { space: 'other' }] });
});
afterAll(() => h?.close());

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const ref = (externalId: string, space = S) => ({ space, externalId });
/** A node written through CogniteAsset, with the parent given (null: a root), or no parent property at all. */
const asset = (externalId: string, parent?: string | null, extra: Record<string, unknown> = {}) => ({
  instanceType: 'node',
  space: S,
  externalId,
  sources: [{ source: ASSET, properties: { name: externalId, ...(parent === undefined ? {} : { parent: parent === null ? null : ref(parent) }), ...extra } }],
});
const apply = (...items: unknown[]) => ok('/models/instances', { items });

interface Asset {
  externalId: string;
  version: number;
  lastUpdatedTime: number;
  root?: string;
  path?: string[];
  pathLastUpdatedTime?: number;
  parent?: string;
}

/** The nodes read through CogniteAsset, with references shown as `space:externalId` (the site's as bare ids). */
async function read(...externalIds: string[]): Promise<Record<string, Asset>> {
  const body = await ok('/models/instances/byids', { items: externalIds.map((x) => ({ instanceType: 'node', space: S, externalId: x })), sources: [{ source: ASSET }] });
  const out: Record<string, Asset> = {};
  for (const item of body.items) out[item.externalId] = shape(item);
  return out;
}

const name = (r: { space: string; externalId: string }) => (r.space === S ? r.externalId : `${r.space}:${r.externalId}`);
function shape(item: any): Asset {
  const p = item.properties?.cdf_cdm?.['CogniteAsset/v1'] ?? {};
  return {
    externalId: item.externalId,
    version: item.version,
    lastUpdatedTime: item.lastUpdatedTime,
    ...(p.root ? { root: name(p.root) } : {}),
    ...(p.path ? { path: p.path.map(name) } : {}),
    ...(p.pathLastUpdatedTime ? { pathLastUpdatedTime: Date.parse(p.pathLastUpdatedTime) } : {}),
    ...(p.parent ? { parent: name(p.parent) } : {}),
  };
}

const paths = (assets: Record<string, Asset>) => Object.fromEntries(Object.entries(assets).map(([k, a]) => [k, { root: a.root, path: a.path }]));

describe('root and path', () => {
  it('are set from the parents for a hierarchy written in one request, children before their parents', async () => {
    clock += 1000;
    const written = await apply(asset('motor', 'pump'), asset('pump', 'area'), asset('area', 'plant'), asset('plant', null), asset('area-b', 'plant'));
    expect(written.items.map((i: any) => i.version)).toEqual([1, 1, 1, 1, 1]);
    const got = await read('plant', 'area', 'pump', 'motor', 'area-b');
    expect(paths(got)).toEqual({
      plant: { root: 'plant', path: ['plant'] },
      area: { root: 'plant', path: ['plant', 'area'] },
      pump: { root: 'plant', path: ['plant', 'area', 'pump'] },
      motor: { root: 'plant', path: ['plant', 'area', 'pump', 'motor'] },
      'area-b': { root: 'plant', path: ['plant', 'area-b'] },
    });
    for (const a of Object.values(got)) expect(a.pathLastUpdatedTime).toBe(clock);
  });

  it('are set for a node written under an existing one, and for one written without a parent property', async () => {
    await apply(asset('valve', 'pump'), asset('lone'));
    expect(paths(await read('valve', 'lone'))).toEqual({
      valve: { root: 'plant', path: ['plant', 'area', 'pump', 'valve'] },
      lone: { root: 'lone', path: ['lone'] },
    });
  });

  it('find a subtree with a filter on path, and a hierarchy with one on root', async () => {
    const list = async (filter: unknown) =>
      (await ok('/models/instances/list', { instanceType: 'node', sources: [{ source: ASSET }], filter, limit: 1000 })).items.map((i: any) => i.externalId).sort();
    expect(await list({ containsAny: { property: ['cdf_cdm', 'CogniteAsset/v1', 'path'], values: [ref('pump')] } })).toEqual(['motor', 'pump', 'valve']);
    expect(await list({ equals: { property: ['cdf_cdm', 'CogniteAsset/v1', 'root'], value: ref('plant') } })).toEqual(['area', 'area-b', 'motor', 'plant', 'pump', 'valve']);
  });

  it('do not change, nor does the version, when a node is written again with the same parent', async () => {
    const before = await read('pump', 'motor');
    const again = await apply(asset('pump', 'area'));
    expect(again.items[0].wasModified).toBe(false);
    expect(await read('pump', 'motor')).toEqual(before);

    // Another property of the same container changes; the path, and when it last changed, do not.
    clock += 1000;
    await ok('/models/instances', {
      items: [
        { instanceType: 'node', space: S, externalId: 'centrifugal', sources: [{ source: { ...ASSET, externalId: 'CogniteAssetClass' }, properties: { name: 'Centrifugal', code: 'C' } }] },
        asset('pump', 'area', { assetClass: ref('centrifugal') }),
      ],
    });
    const after = await read('pump', 'motor');
    expect(after.pump).toMatchObject({ version: before.pump.version + 1, lastUpdatedTime: clock, path: before.pump.path, pathLastUpdatedTime: before.pump.pathLastUpdatedTime });
    expect(after.motor).toEqual(before.motor);
  });

  it('are kept through replace', async () => {
    const res = await ok('/models/instances', { items: [asset('valve', 'pump', { description: 'replaced' })], replace: true });
    expect(res.items[0].wasModified).toBe(true);
    expect(paths(await read('valve'))).toEqual({ valve: { root: 'plant', path: ['plant', 'area', 'pump', 'valve'] } });
  });

  it('are the service’s: writing root, path or pathLastUpdatedTime is a 400 naming the property, through a view or the container', async () => {
    const tries = [
      asset('x1', null, { root: ref('plant') }),
      asset('x1', null, { path: [ref('x1')] }),
      asset('x1', null, { pathLastUpdatedTime: '2024-01-01T00:00:00Z' }),
      { instanceType: 'node', space: S, externalId: 'x1', sources: [{ source: ASSET_CONTAINER, properties: { assetHierarchy_root: null } }] },
    ];
    for (const [i, item] of tries.entries()) {
      const message = errorMessage(await h.post('/models/instances', { items: [asset('x0', null), item] }), 400);
      expect(message).toMatch(/^items\[1\]\.sources\[0\]\.properties\./);
      expect(message, `try ${i}`).toMatch(/assetHierarchy_(root|path|path_last_updated_time) of the container cdf_cdm:CogniteAsset is set by the service/);
    }
    expect(await read('x0', 'x1')).toEqual({});
  });
});

describe('moving a subtree', () => {
  it('changes the root and path of every descendant, with a new version, lastUpdatedTime and pathLastUpdatedTime', async () => {
    await apply(asset('site-2', null));
    const before = await read('area', 'pump', 'motor', 'valve', 'area-b', 'plant');
    const set = { nodes: { filter: { equals: { property: ['node', 'space'], value: S } } } };
    const select = { s: { sources: [{ source: ASSET, properties: ['path'] }] } };
    let cursor: string | undefined;
    for (let i = 0; i < 50; i++) {
      const page = await ok('/models/instances/sync', { with: { s: set }, select, ...(cursor ? { cursors: { s: cursor } } : {}) });
      cursor = page.nextCursor.s;
      if (page.items.s.length === 0) break;
    }

    clock += 1000;
    const moved = await apply(asset('area', 'site-2'));
    expect(moved.items[0]).toMatchObject({ version: before.area.version + 1, wasModified: true, lastUpdatedTime: clock });
    const after = await read('area', 'pump', 'motor', 'valve', 'area-b', 'plant');
    expect(paths(after)).toMatchObject({
      area: { root: 'site-2', path: ['site-2', 'area'] },
      pump: { root: 'site-2', path: ['site-2', 'area', 'pump'] },
      motor: { root: 'site-2', path: ['site-2', 'area', 'pump', 'motor'] },
      valve: { root: 'site-2', path: ['site-2', 'area', 'pump', 'valve'] },
      'area-b': { root: 'plant', path: ['plant', 'area-b'] },
      plant: { root: 'plant', path: ['plant'] },
    });
    for (const x of ['area', 'pump', 'motor', 'valve']) {
      expect(after[x], x).toMatchObject({ version: before[x].version + 1, lastUpdatedTime: clock, pathLastUpdatedTime: clock });
    }
    for (const x of ['area-b', 'plant']) expect(after[x], x).toEqual(before[x]);

    // A client following the feed receives the descendants, with their new paths.
    const changes = await ok('/models/instances/sync', { with: { s: set }, select, cursors: { s: cursor } });
    const seen = Object.fromEntries(changes.items.s.map((i: any) => [i.externalId, i.properties.cdf_cdm['CogniteAsset/v1'].path.map(name)]));
    expect(seen).toEqual({
      area: ['site-2', 'area'],
      pump: ['site-2', 'area', 'pump'],
      motor: ['site-2', 'area', 'pump', 'motor'],
      valve: ['site-2', 'area', 'pump', 'valve'],
    });
  });

  it('reports a node of the request whose path changed through a parent written in the same request as modified', async () => {
    clock += 1000;
    const before = await read('pump');
    const res = await apply(asset('pump', 'area'), asset('area', 'plant'));
    expect(res.items[0]).toMatchObject({ externalId: 'pump', wasModified: true, version: before.pump.version + 1, lastUpdatedTime: clock });
    const after = await read('pump', 'motor');
    expect(after.pump).toMatchObject({ version: before.pump.version + 1, lastUpdatedTime: clock });
    expect(paths(after)).toEqual({
      pump: { root: 'plant', path: ['plant', 'area', 'pump'] },
      motor: { root: 'plant', path: ['plant', 'area', 'pump', 'motor'] },
    });
  });

  it('to the top: a node whose parent is cleared is a root, with its subtree', async () => {
    await apply(asset('pump', null));
    expect(paths(await read('pump', 'motor'))).toEqual({ pump: { root: 'pump', path: ['pump'] }, motor: { root: 'pump', path: ['pump', 'motor'] } });
    await apply(asset('pump', 'area'));
    expect(paths(await read('motor'))).toEqual({ motor: { root: 'plant', path: ['plant', 'area', 'pump', 'motor'] } });
  });
});

describe('cycles', () => {
  it('are refused with a 400 naming the instance, and the request changes nothing', async () => {
    const before = await read('plant', 'area', 'pump', 'motor', 'area-b');
    const res = await h.post('/models/instances', { items: [asset('area-b', 'lone'), asset('plant', 'motor')] });
    const message = errorMessage(res, 400);
    expect(message).toContain('items[1]');
    expect(message).toContain('site:plant');
    expect(message).toMatch(/cycle/);
    expect(await read('plant', 'area', 'pump', 'motor', 'area-b')).toEqual(before);
  });

  it('made among the nodes of one request are refused', async () => {
    const message = errorMessage(await h.post('/models/instances', { items: [asset('c1', 'c2'), asset('c2', 'c3'), asset('c3', 'c1')] }), 400);
    expect(message).toMatch(/cycle/);
    expect(message).toMatch(/cycle .*site:c\d -> site:c\d -> site:c\d -> site:c\d$/);
    expect(await read('c1', 'c2', 'c3')).toEqual({});
  });

  it('of a node with itself are refused', async () => {
    const message = errorMessage(await h.post('/models/instances', { items: [asset('lone', 'lone')] }), 400);
    expect(message).toContain('items[0]');
    expect(message).toContain('site:lone -> site:lone');
    expect(paths(await read('lone'))).toEqual({ lone: { root: 'lone', path: ['lone'] } });
  });
});

describe('parents that are not assets', () => {
  it('a parent that does not exist is created as any direct relation target is, and is the root', async () => {
    const res = await apply(asset('orphan', 'missing'), asset('orphan-child', 'orphan'));
    expect(res.items).toHaveLength(2);
    expect(paths(await read('orphan', 'orphan-child'))).toEqual({
      orphan: { root: 'missing', path: ['missing', 'orphan'] },
      'orphan-child': { root: 'missing', path: ['missing', 'orphan', 'orphan-child'] },
    });
    // Without autoCreateDirectRelations, the missing parent is a 400 as for any direct relation.
    const refused = await h.post('/models/instances', { items: [asset('orphan-2', 'missing-2')], autoCreateDirectRelations: false });
    expect(errorMessage(refused, 400)).toContain('missing-2');
    expect(refused.body.error.missing).toEqual([{ instanceType: 'node', space: S, externalId: 'missing-2' }]);
  });

  it('once the parent is written as an asset, the subtree below it takes its path', async () => {
    await apply(asset('missing', 'plant'));
    expect(paths(await read('missing', 'orphan', 'orphan-child'))).toEqual({
      missing: { root: 'plant', path: ['plant', 'missing'] },
      orphan: { root: 'plant', path: ['plant', 'missing', 'orphan'] },
      'orphan-child': { root: 'plant', path: ['plant', 'missing', 'orphan', 'orphan-child'] },
    });
  });

  it('a parent in another space, with data in other containers only, is the root', async () => {
    await ok('/models/instances', {
      items: [
        { instanceType: 'node', space: 'other', externalId: 'equipment', sources: [{ source: { ...ASSET, externalId: 'CogniteDescribable' }, properties: { name: 'not an asset' } }] },
        asset('under-equipment', undefined, { parent: ref('equipment', 'other') }),
      ],
    });
    expect(paths(await read('under-equipment'))).toEqual({ 'under-equipment': { root: 'other:equipment', path: ['other:equipment', 'under-equipment'] } });
  });
});

describe('deleting a parent', () => {
  it('leaves the children with their parent, and makes the deleted node the root of their paths', async () => {
    await apply(asset('top', null), asset('mid', 'top'), asset('leaf', 'mid'), asset('leaf-2', 'leaf'));
    const before = await read('mid', 'leaf', 'leaf-2');
    clock += 1000;
    const res = await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: S, externalId: 'mid' }] });
    expect(res.items).toEqual([{ instanceType: 'node', space: S, externalId: 'mid' }]);
    const after = await read('mid', 'leaf', 'leaf-2');
    expect(after.mid).toBeUndefined();
    expect(after.leaf).toMatchObject({ parent: 'mid', root: 'mid', path: ['mid', 'leaf'], version: before.leaf.version + 1, lastUpdatedTime: clock, pathLastUpdatedTime: clock });
    expect(after['leaf-2']).toMatchObject({ parent: 'leaf', root: 'mid', path: ['mid', 'leaf', 'leaf-2'], version: before['leaf-2'].version + 1 });
  });

  it('in the delete list of an apply, as well; writing it again puts the subtree back under it', async () => {
    await apply(asset('mid', 'top'));
    expect(paths(await read('leaf-2'))).toEqual({ 'leaf-2': { root: 'top', path: ['top', 'mid', 'leaf', 'leaf-2'] } });
    await ok('/models/instances', { items: [asset('unrelated', null)], delete: [{ instanceType: 'node', space: S, externalId: 'mid' }] });
    expect(paths(await read('leaf', 'leaf-2'))).toEqual({ leaf: { root: 'mid', path: ['mid', 'leaf'] }, 'leaf-2': { root: 'mid', path: ['mid', 'leaf', 'leaf-2'] } });
  });
});

describe('depth', () => {
  it('a path holds at most 100 nodes; a deeper one is a 400 and changes nothing', async () => {
    const chain = Array.from({ length: 100 }, (_, i) => asset(`d${i}`, i === 0 ? null : `d${i - 1}`));
    await ok('/models/instances', { items: chain });
    expect((await read('d99')).d99.path).toHaveLength(100);
    const message = errorMessage(await h.post('/models/instances', { items: [asset('d100', 'd99')] }), 400);
    expect(message).toContain('items[0]');
    expect(message).toMatch(/more than 100/);
    expect(await read('d100')).toEqual({});
    // Nor can a subtree be moved where it would be too deep.
    await apply(asset('e0', null), asset('e1', 'e0'));
    expect(errorMessage(await h.post('/models/instances', { items: [asset('e0', 'd98')] }), 400)).toMatch(/site:e1 .* more than 100/);
    expect(paths(await read('e1'))).toEqual({ e1: { root: 'e0', path: ['e0', 'e1'] } });
  });
});
