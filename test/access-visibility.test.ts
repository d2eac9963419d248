/**
 * What a principal scoped to data set 1 can learn about items of data set 2: nothing. Filters, references in
 * writes, by-id reads and data point operations answer for a data set 2 item exactly as for one that does not
 * exist; hierarchy messages never name one; the hierarchy fields and counts of data set 1 assets read as if
 * data set 2 held nothing.
 *
 * The fixture (D1 = data set 1, D2 = data set 2):
 *
 *   root2 (D2) ── a1 (D1) ── b1 (D1) ┬─ mid2 (D2) ── c1 (D1)
 *                                    └─ d1 (D1)
 *   r1 (D1) ┬─ e1 (D1)
 *           └─ f2 (D2)
 *
 * As data set 1 sees it: a1, c1 and r1 are roots; a1's hierarchy is a1, b1, d1; c1's is c1; r1's is r1, e1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
let ds1: number;
let ds2: number;
let reader: string;
let writer: string;
let setsReader: string;
const asset: Record<string, number> = {};
const series: Record<string, number> = {};
const HIDDEN_ASSETS = ['root2', 'mid2', 'f2'];
const UNKNOWN_ID = 987_654_321;

const CLIENTS = [
  { clientId: 'vis-reader', clientSecret: 'vis-reader-secret', groups: ['vis-read'] },
  { clientId: 'vis-writer', clientSecret: 'vis-writer-secret', groups: ['vis-write'] },
  { clientId: 'vis-sets', clientSecret: 'vis-sets-secret', groups: ['vis-sets'] },
];

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  // Asset ids of four digits, which no count, depth or small id in an answer can be mistaken for.
  expect((await h.post('/assets', { items: Array.from({ length: 1000 }, (_, i) => ({ name: `filler ${i}` })) })).status).toBe(201);
  [ds1, ds2] = (await h.post('/datasets', { items: [{ externalId: 'vis-ds1' }, { externalId: 'SECRET-ds2' }] })).body.items.map((d: { id: number }) => d.id);
  const tree = [
    ['root2', ds2, undefined],
    ['a1', ds1, 'root2'],
    ['b1', ds1, 'a1'],
    ['mid2', ds2, 'b1'],
    ['c1', ds1, 'mid2'],
    ['d1', ds1, 'b1'],
    ['r1', ds1, undefined],
    ['e1', ds1, 'r1'],
    ['f2', ds2, 'r1'],
  ] as const;
  const created = await h.post('/assets', {
    items: tree.map(([externalId, dataSetId, parent]) => ({ externalId, name: externalId, dataSetId, ...(parent ? { parentExternalId: parent } : {}) })),
  });
  expect(created.status).toBe(201);
  for (const a of created.body.items) asset[a.externalId] = a.id;
  const events = await h.post('/events', {
    items: ['a1', 'c1', 'd1', 'mid2'].map((a) => ({ externalId: `ev-${a}`, dataSetId: ds1, assetIds: [asset[a]] })),
  });
  expect(events.status).toBe(201);
  const ts = await h.post('/timeseries', {
    items: [
      { externalId: 'ts-a1', dataSetId: ds1, assetId: asset.a1 },
      { externalId: 'ts-c1', dataSetId: ds1, assetId: asset.c1 },
      { externalId: 'ts-secret', dataSetId: ds2 },
    ],
  });
  for (const s of ts.body.items) series[s.externalId] = s.id;
  const scope = { datasetScope: { ids: [ds1] } };
  const acls = ['assetsAcl', 'eventsAcl', 'timeSeriesAcl'];
  await createGroup(h, { name: 'Read D1', sourceId: 'vis-read', capabilities: acls.map((acl) => capability(acl, ['READ'], scope)) });
  await createGroup(h, { name: 'Write D1', sourceId: 'vis-write', capabilities: acls.map((acl) => capability(acl, ['READ', 'WRITE'], scope)) });
  await createGroup(h, {
    name: 'Read D1 events, see every data set',
    sourceId: 'vis-sets',
    capabilities: [capability('eventsAcl', ['READ'], scope), capability('datasetsAcl', ['READ'], { all: {} })],
  });
  reader = await clientToken(h, 'vis-reader', 'vis-reader-secret');
  setsReader = await clientToken(h, 'vis-sets', 'vis-sets-secret');
  writer = await clientToken(h, 'vis-writer', 'vis-writer-secret');
});
afterAll(() => h.close());

const as = (t: string, method: string, path: string, body?: unknown): Promise<Response> => h.request(method, path, body, bearer(t));
const xids = (res: Response) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as Array<{ externalId: string }>).map((a) => a.externalId).sort();
};

/** Everything that would identify a data set 2 item: ids, external ids and names. */
function expectNothingHidden(res: Response | { body: unknown }): void {
  const text = JSON.stringify(res.body);
  for (const name of HIDDEN_ASSETS) {
    expect(text).not.toMatch(new RegExp(`\\b${asset[name]}\\b`));
    expect(text).not.toContain(name);
  }
  expect(text).not.toMatch(new RegExp(`(data set |"dataSetId":|"id":)${ds2}\\b`));
  expect(text).not.toContain('SECRET');
}

type Value = number | string;

/** The body with `value` (an id or external id the request named) replaced by a placeholder, in values and in messages. */
function scrub(body: unknown, value: Value): unknown {
  const escaped = String(value).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const inText = new RegExp(typeof value === 'number' ? `\\b${escaped}\\b` : escaped, 'g');
  const walk = (v: unknown): unknown => {
    if (v === value) return '<named>';
    if (typeof v === 'string') return v.replace(inText, '<named>');
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(body);
}

/**
 * Sends the request once naming a data set 2 item and once naming one that does not exist, and requires the
 * same status and body (apart from the value named). Returns the answer about the hidden item.
 */
async function answersAsUnknown(token: string, method: string, path: string, build: (v: Value) => unknown, hidden: Value, unknown: Value): Promise<Response> {
  const a = await as(token, method, path, build(hidden));
  const b = await as(token, method, path, build(unknown));
  expect(a.status, JSON.stringify(a.body)).toBe(b.status);
  expect(scrub(a.body, hidden)).toEqual(scrub(b.body, unknown));
  expectNothingHidden({ body: scrub(a.body, hidden) });
  return a;
}

describe('references to items outside the scope answer as for unknown items', () => {
  const reads: Array<[string, string, (v: Value) => unknown, 'id' | 'externalId' | 'ds']> = [
    ['POST', '/assets/list', (v) => ({ filter: { assetSubtreeIds: [{ id: v }] } }), 'id'],
    ['POST', '/assets/list', (v) => ({ filter: { assetSubtreeIds: [{ externalId: v }] } }), 'externalId'],
    ['POST', '/assets/list', (v) => ({ filter: { rootIds: [{ id: v }] } }), 'id'],
    ['POST', '/assets/list', (v) => ({ filter: { dataSetIds: [{ id: v }] } }), 'ds'],
    ['POST', '/assets/aggregate', (v) => ({ filter: { assetSubtreeIds: [{ id: v }] } }), 'id'],
    ['POST', '/assets/search', (v) => ({ filter: { rootIds: [{ id: v }] } }), 'id'],
    ['POST', '/assets/byids', (v) => ({ items: [{ externalId: v }] }), 'externalId'],
    ['POST', '/events/list', (v) => ({ filter: { assetSubtreeIds: [{ id: v }] } }), 'id'],
    ['POST', '/events/list', (v) => ({ filter: { dataSetIds: [{ id: v }] } }), 'ds'],
    ['POST', '/events/aggregate', (v) => ({ filter: { assetSubtreeIds: [{ externalId: v }] } }), 'externalId'],
    ['POST', '/timeseries/list', (v) => ({ filter: { assetSubtreeIds: [{ id: v }] } }), 'id'],
    ['POST', '/timeseries/list', (v) => ({ filter: { rootAssetIds: [v] } }), 'id'],
    ['POST', '/timeseries/aggregate', (v) => ({ filter: { dataSetIds: [{ id: v }] } }), 'ds'],
  ];

  it.each(reads)('%s %s, a filter naming an asset or data set', async (method, path, build, kind) => {
    const [hidden, unknown] = kind === 'id' ? [asset.mid2, UNKNOWN_ID] : kind === 'ds' ? [ds2, UNKNOWN_ID] : ['root2', 'no-such-asset'];
    const res = await answersAsUnknown(reader, method, path, build, hidden, unknown);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.missing)).toContain(JSON.stringify(hidden));
  });

  it.each([
    ['/assets/list', { parentExternalIds: ['root2'] }],
    ['/events/list', { assetExternalIds: ['root2'] }],
    ['/events/search', { assetExternalIds: ['root2'] }],
    ['/timeseries/list', { assetExternalIds: ['root2'] }],
  ])('POST %s, a filter naming a hidden asset by external id, finds nothing, as for an unknown one', async (path, filter) => {
    const res = await answersAsUnknown(reader, 'POST', path, (v) => ({ filter: JSON.parse(JSON.stringify(filter).replace('root2', v as string)) }), 'root2', 'no-such-asset');
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([]);
  });

  it('answers filters by data set external id and query parameters alike', async () => {
    await answersAsUnknown(reader, 'POST', '/events/list', (v) => ({ filter: { dataSetIds: [{ externalId: v }] } }), 'SECRET-ds2', 'no-such-set');
    for (const path of ['/events?assetSubtreeIds=', '/timeseries?rootAssetIds=', '/assets?assetSubtreeIds=']) {
      const a = await as(reader, 'GET', `${path}[${asset.mid2}]`);
      const b = await as(reader, 'GET', `${path}[${UNKNOWN_ID}]`);
      expect(a.status).toBe(400);
      expect([a.status, scrub(a.body, asset.mid2)]).toEqual([b.status, scrub(b.body, UNKNOWN_ID)]);
    }
  });

  it('sees the data sets its scope names, and those its data set capability covers', async () => {
    const byDataSet = (t: string, ref: object) => as(t, 'POST', '/events/list', { filter: { dataSetIds: [ref] } });
    expect(xids(await byDataSet(reader, { externalId: 'vis-ds1' }))).toEqual(['ev-a1', 'ev-c1', 'ev-d1', 'ev-mid2']);
    expect(xids(await byDataSet(setsReader, { id: ds2 }))).toEqual([]);
    expect(xids(await byDataSet(setsReader, { externalId: 'vis-ds1' }))).toHaveLength(4);
  });

  it('answers by-id reads and data point reads of a hidden item as for an unknown one', async () => {
    for (const path of ['/assets', '/events']) {
      const a = await as(reader, 'GET', `${path}/${asset.mid2}`);
      const b = await as(reader, 'GET', `${path}/${UNKNOWN_ID}`);
      expect([a.status, scrub(a.body, asset.mid2)]).toEqual([b.status, scrub(b.body, UNKNOWN_ID)]);
    }
    await answersAsUnknown(reader, 'POST', '/timeseries/data/list', (v) => ({ items: [{ externalId: v }] }), 'ts-secret', 'no-such-series');
    await answersAsUnknown(reader, 'POST', '/timeseries/data/latest', (v) => ({ items: [{ id: v }] }), series['ts-secret'], UNKNOWN_ID);
  });

  it('treats a parent outside the scope as unknown in filters that match without resolving', async () => {
    expect(xids(await as(reader, 'POST', '/assets/list', { filter: { parentIds: [asset.mid2] } }))).toEqual([]);
    expect(xids(await as(reader, 'POST', '/assets/list', { filter: { parentIds: [asset.b1] } }))).toEqual(['d1']);
    expect(xids(await as(reader, 'POST', '/assets/list', { advancedFilter: { equals: { property: ['parentId'], value: asset.root2 } } }))).toEqual([]);
    expect(xids(await as(reader, 'POST', '/assets/list', { advancedFilter: { in: { property: ['rootId'], values: [asset.root2, asset.r1] } } }))).toEqual(['e1', 'r1']);
  });

  it('refuses references to hidden items in writes as for unknown ones, and writes nothing', async () => {
    const w = (method: string, path: string, build: (v: Value) => unknown, hidden: Value, unknown: Value) =>
      answersAsUnknown(writer, method, path, build, hidden, unknown).then((res) => {
        expect(res.status).toBe(400);
        return res;
      });
    await w('POST', '/assets', (v) => ({ items: [{ name: 'x', dataSetId: ds1, parentId: v }] }), asset.mid2, UNKNOWN_ID);
    await w('POST', '/assets', (v) => ({ items: [{ name: 'x', dataSetId: ds1, parentExternalId: v }] }), 'root2', 'no-such-asset');
    await w('POST', '/assets/update', (v) => ({ items: [{ id: asset.d1, update: { parentId: { set: v } } }] }), asset.mid2, UNKNOWN_ID);
    await w('POST', '/assets/update', (v) => ({ items: [{ externalId: 'd1', update: { parentExternalId: { set: v } } }] }), 'mid2', 'no-such-asset');
    await w('POST', '/events', (v) => ({ items: [{ dataSetId: ds1, assetIds: [asset.a1, v] }] }), asset.f2, UNKNOWN_ID);
    await w('POST', '/events/update', (v) => ({ items: [{ externalId: 'ev-a1', update: { assetIds: { add: [v] } } }] }), asset.root2, UNKNOWN_ID);
    await w('POST', '/timeseries', (v) => ({ items: [{ dataSetId: ds1, assetId: v }] }), asset.root2, UNKNOWN_ID);
    await w('POST', '/timeseries/update', (v) => ({ items: [{ externalId: 'ts-a1', update: { assetId: { set: v } } }] }), asset.mid2, UNKNOWN_ID);
    await w('POST', '/assets/update', (v) => ({ items: [{ id: v, update: { description: { set: 'x' } } }] }), asset.f2, UNKNOWN_ID);
    await w('POST', '/assets/delete', (v) => ({ items: [{ id: v }] }), asset.mid2, UNKNOWN_ID);
    await w('POST', '/timeseries/data', (v) => ({ items: [{ externalId: v, datapoints: [{ timestamp: 1, value: 1 }] }] }), 'ts-secret', 'no-such-series');
    await w('POST', '/timeseries/data/delete', (v) => ({ items: [{ id: v, inclusiveBegin: 0 }] }), series['ts-secret'], UNKNOWN_ID);
    const ignoring = await as(writer, 'POST', '/assets/delete', { items: [{ id: asset.mid2 }], ignoreUnknownIds: true });
    expect(ignoring.status).toBe(200);
    expect((await h.get(`/assets/${asset.mid2}`)).status).toBe(200);
    expect((await h.get(`/assets/${asset.d1}`)).body.parentId).toBe(asset.b1);
    expect((await h.post('/events/byids', { items: [{ externalId: 'ev-a1' }] })).body.items[0].assetIds).toEqual([asset.a1]);
  });

  it('refuses moving an item into a data set outside the write scope the same way whether that data set exists or not', async () => {
    const res = await answersAsUnknown(writer, 'POST', '/events', (v) => ({ items: [{ dataSetId: v }] }), ds2, UNKNOWN_ID);
    expect(res.status).toBe(403);
  });
});

describe('hierarchy messages name no hidden asset', () => {
  it('an asset whose parent is hidden is a root to the writer: it cannot be given a parent', async () => {
    const res = await as(writer, 'POST', '/assets/update', { items: [{ externalId: 'a1', update: { parentId: { set: asset.e1 } } }] });
    expect(errorMessage(res, 400)).toMatch(/asset \d+ \("a1"\) is the root of its hierarchy/);
    expectNothingHidden(res);
  });

  it('moving across hierarchies names the roots as the writer sees them', async () => {
    const res = await as(writer, 'POST', '/assets/update', { items: [{ externalId: 'd1', update: { parentExternalId: { set: 'c1' } } }] });
    expect(errorMessage(res, 400)).toContain(`is in the hierarchy of root ${asset.c1}, and asset ${asset.d1} ("d1") in that of root ${asset.a1}`);
    expectNothingHidden(res);
    const within = await as(writer, 'POST', '/assets/update', { items: [{ externalId: 'd1', update: { parentExternalId: { set: 'a1' } } }] });
    expect(within.status, JSON.stringify(within.body)).toBe(200);
    expect(within.body.items[0]).toMatchObject({ parentId: asset.a1, parentExternalId: 'a1', rootId: asset.a1 });
    await as(writer, 'POST', '/assets/update', { items: [{ externalId: 'd1', update: { parentExternalId: { set: 'b1' } } }] });
  });

  it('deleting an asset with hidden descendants is refused without naming them', async () => {
    const kept = await as(writer, 'POST', '/assets/delete', { items: [{ id: asset.b1 }] });
    expect(errorMessage(kept, 400)).toContain(`has children that this request does not delete (${asset.d1})`);
    expectNothingHidden(kept);
    for (const body of [
      { items: [{ id: asset.b1 }, { id: asset.d1 }] },
      { items: [{ id: asset.b1 }], recursive: true },
      { items: [{ id: asset.r1 }], recursive: true },
      { items: [{ externalId: 'r1' }, { externalId: 'e1' }] },
    ]) {
      const res = await as(writer, 'POST', '/assets/delete', body);
      expect(errorMessage(res, 403)).toMatch(/has descendants outside what this principal can see/);
      expectNothingHidden(res);
    }
    expect(xids(await h.post('/assets/byids', { items: ['b1', 'd1', 'r1', 'e1'].map((externalId) => ({ externalId })) }))).toEqual(['b1', 'd1', 'e1', 'r1']);
  });

  it('a create whose external id is taken by a hidden item is refused with 409, naming only what the request sent', async () => {
    const res = await as(writer, 'POST', '/assets', { items: [{ externalId: 'root2', name: 'x', dataSetId: ds1 }] });
    errorMessage(res, 409);
    expect(res.body.error.duplicated).toEqual([{ externalId: 'root2' }]);
    expectNothingHidden({ body: scrub(res.body, 'root2') });
  });
});

describe('hierarchy fields and counts show only what is in scope', () => {
  const all = ['a1', 'b1', 'c1', 'd1', 'e1', 'r1'];
  const aggregatedProperties = ['childCount', 'depth', 'path'];

  it('reads each asset with the parent, root, depth, path and child count it has among visible assets', async () => {
    const res = await as(reader, 'POST', '/assets/byids', { items: all.map((externalId) => ({ externalId })), aggregatedProperties });
    expectNothingHidden(res);
    const got = Object.fromEntries(
      (res.body.items as any[]).map((a) => [a.externalId, { parent: a.parentExternalId, parentId: a.parentId, root: a.rootId, ...a.aggregates }]),
    );
    const p = (...names: string[]) => names.map((n) => ({ id: asset[n] }));
    expect(got).toEqual({
      a1: { parent: undefined, parentId: undefined, root: asset.a1, childCount: 1, depth: 0, path: p('a1') },
      b1: { parent: 'a1', parentId: asset.a1, root: asset.a1, childCount: 1, depth: 1, path: p('a1', 'b1') },
      c1: { parent: undefined, parentId: undefined, root: asset.c1, childCount: 0, depth: 0, path: p('c1') },
      d1: { parent: 'b1', parentId: asset.b1, root: asset.a1, childCount: 0, depth: 2, path: p('a1', 'b1', 'd1') },
      e1: { parent: 'r1', parentId: asset.r1, root: asset.r1, childCount: 0, depth: 1, path: p('r1', 'e1') },
      r1: { parent: undefined, parentId: undefined, root: asset.r1, childCount: 1, depth: 0, path: p('r1') },
    });
    for (const read of [
      await as(reader, 'GET', `/assets/${asset.c1}`),
      await as(reader, 'POST', '/assets/list', { aggregatedProperties }),
      await as(reader, 'GET', '/assets'),
      await as(reader, 'POST', '/assets/search', { search: { name: 'a1' } }),
    ]) {
      expect(read.status).toBe(200);
      expectNothingHidden(read);
    }
  });

  it('filters and aggregates on the hierarchy agree with what the assets show', async () => {
    const list = (body: object) => as(reader, 'POST', '/assets/list', body).then(xids);
    expect(await list({ filter: { root: true } })).toEqual(['a1', 'c1', 'r1']);
    expect(await list({ filter: { root: false } })).toEqual(['b1', 'd1', 'e1']);
    expect(await list({ filter: { rootIds: [{ id: asset.a1 }] } })).toEqual(['a1', 'b1', 'd1']);
    expect(await list({ filter: { rootIds: [{ externalId: 'c1' }, { externalId: 'b1' }] } })).toEqual(['c1']);
    expect(await list({ filter: { assetSubtreeIds: [{ externalId: 'b1' }] } })).toEqual(['b1', 'd1']);
    expect(await list({ filter: { assetSubtreeIds: [{ externalId: 'a1' }, { externalId: 'b1' }] } })).toEqual(['a1', 'b1', 'd1']);
    expect(await list({ filter: { parentExternalIds: ['r1'] } })).toEqual(['e1']);
    expect(await list({ advancedFilter: { equals: { property: ['rootId'], value: asset.a1 } } })).toEqual(['a1', 'b1', 'd1']);
    expect(await list({ advancedFilter: { not: { exists: { property: ['parentId'] } } } })).toEqual(['a1', 'c1', 'r1']);
    const unique = async (property: string) =>
      (await as(reader, 'POST', '/assets/aggregate', { aggregate: 'uniqueValues', properties: [{ property: [property] }] })).body.items;
    expect(await unique('rootId')).toEqual([
      { count: 3, values: [asset.a1], value: asset.a1 },
      { count: 2, values: [asset.r1], value: asset.r1 },
      { count: 1, values: [asset.c1], value: asset.c1 },
    ]);
    expect(await unique('parentId')).toEqual([asset.a1, asset.b1, asset.r1].sort((x, y) => x - y).map((id) => ({ count: 1, values: [id], value: id })));
    const count = await as(reader, 'POST', '/assets/aggregate', { aggregate: 'cardinalityValues', properties: [{ property: ['rootId'] }] });
    expect(count.body.items).toEqual([{ count: 3 }]);
  });

  it('events and time series under a subtree are those under it as seen', async () => {
    const events = (filter: object) => as(reader, 'POST', '/events/list', { filter }).then(xids);
    expect(await events({ assetSubtreeIds: [{ id: asset.a1 }] })).toEqual(['ev-a1', 'ev-d1']);
    expect(await events({ assetSubtreeIds: [{ id: asset.c1 }] })).toEqual(['ev-c1']);
    const ts = (filter: object) => as(reader, 'POST', '/timeseries/list', { filter }).then(xids);
    expect(await ts({ assetSubtreeIds: [{ externalId: 'a1' }] })).toEqual(['ts-a1']);
    expect(await ts({ rootAssetIds: [asset.c1] })).toEqual(['ts-c1']);
    expect(await ts({ rootAssetIds: [asset.a1] })).toEqual(['ts-a1']);
    expect(await ts({ rootAssetIds: [asset.b1] })).toEqual([]);
  });
});
