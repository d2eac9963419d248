/**
 * Requests shaped exactly as the official Python SDK sends them: every POST body gzipped, `cdf-version:
 * 20230101` on every request, and list bodies `{"filter": {}, "limit": 1000, "cursor": null}` (with
 * `"partition": "m/n"` for partitioned lists), following `nextCursor` until it is absent.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SDK_HEADERS = {
  'content-type': 'application/json',
  'content-encoding': 'gzip',
  'cdf-version': '20230101',
  'x-cdp-sdk': 'CognitePythonSDK:7.0.0',
  'x-cdp-app': 'strata-test',
};
const sdkPost = (path: string, body: unknown) => h.request('POST', path, gzipSync(JSON.stringify(body)), SDK_HEADERS);

async function create(path: string, items: unknown[]): Promise<void> {
  const res = await sdkPost(path, { items });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(path === '/datasets' ? 200 : 201);
}

/** All items of a list, read as the SDK reads it: cursor null first, then each nextCursor. */
async function listAll(resource: string, partition?: string): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const res = await sdkPost(`/${resource}/list`, { filter: {}, limit: 7, cursor, ...(partition ? { partition } : {}) });
    expect(res.status, `${resource} page ${page}: ${JSON.stringify(res.body)}`).toBe(200);
    ids.push(...res.body.items.map((item: { id: number }) => item.id));
    cursor = res.body.nextCursor ?? null;
    if (cursor === null) return ids;
  }
  throw new Error(`${resource}: no end after 100 pages`);
}

describe('requests as the official Python SDK sends them', () => {
  beforeAll(async () => {
    const n = Array.from({ length: 20 }, (_, i) => i);
    await create('/datasets', n.slice(0, 9).map((i) => ({ externalId: `sdk-ds-${i}` })));
    await create('/assets', n.map((i) => ({ externalId: `sdk-a-${i}`, name: `asset ${i}` })));
    await create('/events', n.map((i) => ({ externalId: `sdk-e-${i}`, startTime: i })));
    await create('/timeseries', n.map((i) => ({ externalId: `sdk-t-${i}` })));
  });

  for (const [resource, count] of [['events', 20], ['assets', 20], ['timeseries', 20], ['datasets', 9]] as const) {
    it(`lists every ${resource} item once, starting from "cursor": null`, async () => {
      const ids = await listAll(resource);
      expect(ids).toHaveLength(count);
      expect(new Set(ids).size).toBe(count);
    });
  }

  for (const resource of ['events', 'assets', 'timeseries'] as const) {
    it(`reads ${resource} in partitions, each starting from "cursor": null`, async () => {
      const all = await listAll(resource);
      const parts = await Promise.all(['1/3', '2/3', '3/3'].map((p) => listAll(resource, p)));
      expect(parts.flat().sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
    });
  }

  it('searches assets and time series with the search fields not given sent as null', async () => {
    await create('/assets', [{ externalId: 'sdk-search-a', name: 'Cooling water pump' }]);
    await create('/timeseries', [{ externalId: 'sdk-search-t', name: 'cooling water flow' }]);
    for (const [resource, expected] of [['assets', 'sdk-search-a'], ['timeseries', 'sdk-search-t']]) {
      for (const search of [{ name: 'cooling', description: null, query: null }, { name: null, description: null, query: 'cooling' }]) {
        const res = await sdkPost(`/${resource}/search`, { search, filter: {}, limit: 25 });
        expect(res.status, `${resource} ${JSON.stringify(search)}: ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body.items.map((item: { externalId: string }) => item.externalId)).toEqual([expected]);
      }
      expect(errorMessage(await sdkPost(`/${resource}/search`, { search: { name: 5, description: null } }), 400)).toMatch(/search\.name/);
    }
  });

  it('searches events by the filter alone, the description sent as null', async () => {
    // client.events.search(filter={"external_id_prefix": "sdk-e-1"}) without a description.
    const res = await sdkPost('/events/search', { search: { description: null }, filter: { externalIdPrefix: 'sdk-e-1' }, limit: 25 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['sdk-e-1', ...Array.from({ length: 10 }, (_, i) => `sdk-e-1${i}`)]);
    // Null stands for "not given" only there: a null filter value is still refused.
    expect(errorMessage(await sdkPost('/events/search', { search: { description: null }, filter: { type: null } }), 400)).toMatch(/filter\.type: null is not allowed/);
  });

  it('stores integer and boolean metadata values as text, as its fixture scripts send them', async () => {
    // scripts/create_ts_for_integration_tests.py: TimeSeries(..., metadata={"offset": 1, "delta": 10}).
    await create('/timeseries', [{ name: 'sdk-md-t', externalId: 'sdk-md-t', isString: false, metadata: { offset: 1, delta: 10 } }]);
    await create('/events', [{ externalId: 'sdk-md-e', metadata: { offset: 2, delta: 86_400_000, active: true } }]);
    await create('/assets', [{ externalId: 'sdk-md-a', name: 'a', metadata: { offset: 3, checked: false } }]);
    await create('/datasets', [{ externalId: 'sdk-md-d', metadata: { version: 4 } }]);
    const read = async (resource: string, externalId: string) => (await sdkPost(`/${resource}/byids`, { items: [{ externalId }], ignoreUnknownIds: false })).body.items[0].metadata;
    expect(await read('timeseries', 'sdk-md-t')).toEqual({ offset: '1', delta: '10' });
    expect(await read('events', 'sdk-md-e')).toEqual({ offset: '2', delta: '86400000', active: 'true' });
    expect(await read('assets', 'sdk-md-a')).toEqual({ offset: '3', checked: 'false' });
    expect(await read('datasets', 'sdk-md-d')).toEqual({ version: '4' });
    // EventUpdate(...).metadata.add({"offset": 5}): the same in an update.
    const updated = await sdkPost('/events/update', { items: [{ externalId: 'sdk-md-e', update: { metadata: { add: { offset: 5 }, remove: [] } } }] });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.items[0].metadata).toEqual({ offset: '5', delta: '86400000', active: 'true' });
  });

  it('aggregates as its aggregate_* methods ask', async () => {
    const aggregate = async (resource: string, body: object) => {
      const res = await sdkPost(`/${resource}/aggregate`, body);
      expect(res.status, `${resource} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.items;
    };
    // data_sets.aggregate_count(), events.aggregate_count(property=EventProperty.metadata)
    expect(await aggregate('datasets', { filter: {} })).toEqual([{ count: 10 }]);
    expect(await aggregate('events', { aggregate: 'count', properties: [{ property: ['metadata'] }] })).toEqual([{ count: 1 }]);
    // events.aggregate_unique_values(EventProperty.metadata_key("offset"))
    expect(await aggregate('events', { aggregate: 'uniqueValues', properties: [{ property: ['metadata', 'offset'] }] })).toEqual([{ count: 1, values: ['5'], value: '5' }]);
    // assets.aggregate_cardinality_properties(AssetProperty.metadata)
    expect(await aggregate('assets', { aggregate: 'cardinalityProperties', path: ['metadata'], filter: { externalIdPrefix: 'sdk-md-' } })).toEqual([{ count: 2 }]);
  });

  it('walks an asset subtree as retrieve_subtree does: children by parentIds, every page', async () => {
    await create('/assets', [{ externalId: 'sdk-tree', name: 'root' }]);
    await create('/assets', [1, 2, 3].map((i) => ({ externalId: `sdk-tree-${i}`, name: `child ${i}`, parentExternalId: 'sdk-tree' })));
    await create('/assets', [{ externalId: 'sdk-tree-1-1', name: 'grandchild', parentExternalId: 'sdk-tree-1' }]);
    const [root] = (await sdkPost('/assets/byids', { items: [{ externalId: 'sdk-tree' }], ignoreUnknownIds: true })).body.items;
    const tree: string[] = [];
    let level = [root.id as number];
    while (level.length) {
      const res = await sdkPost('/assets/list', { filter: { parentIds: level }, limit: 1000, cursor: null });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      tree.push(...res.body.items.map((a: { externalId: string }) => a.externalId));
      level = res.body.items.map((a: { id: number }) => a.id);
    }
    expect(tree.sort()).toEqual(['sdk-tree-1', 'sdk-tree-1-1', 'sdk-tree-2', 'sdk-tree-3']);
    // assets.delete(external_id="sdk-tree", recursive=True)
    const deleted = await sdkPost('/assets/delete', { items: [{ externalId: 'sdk-tree' }], recursive: true, ignoreUnknownIds: false });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await sdkPost('/assets/byids', { items: [{ externalId: 'sdk-tree-1-1' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });

  it('lists sorted by its sort objects', async () => {
    // events.list(sort=EventSort("start_time", "desc"), limit=3)
    const res = await sdkPost('/events/list', { filter: { externalIdPrefix: 'sdk-e-' }, limit: 3, cursor: null, sort: [{ property: ['startTime'], order: 'desc' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['sdk-e-19', 'sdk-e-18', 'sdk-e-17']);
  });

  it('takes the 7.x SDK\'s "replace" update, which clears metadata with {"set": []}', async () => {
    await create('/events', [{ externalId: 'sdk-replace-e', metadata: { a: '1' }, description: 'd', assetIds: [] }]);
    await create('/assets', [{ externalId: 'sdk-replace-a', name: 'a', metadata: { a: '1' } }]);
    const events = await sdkPost('/events/update', {
      items: [{ externalId: 'sdk-replace-e', update: { metadata: { set: [] }, assetIds: { set: [] }, description: { setNull: true }, type: { set: 't' } } }],
    });
    expect(events.status, JSON.stringify(events.body)).toBe(200);
    expect(events.body.items[0]).toMatchObject({ externalId: 'sdk-replace-e', type: 't' });
    expect(events.body.items[0].metadata ?? {}).toEqual({});
    expect(events.body.items[0].description).toBeUndefined();
    const assets = await sdkPost('/assets/update', { items: [{ externalId: 'sdk-replace-a', update: { metadata: { set: [] }, name: { set: 'b' } } }] });
    expect(assets.status, JSON.stringify(assets.body)).toBe(200);
    expect(assets.body.items[0].metadata ?? {}).toEqual({});
    // Only the empty array stands for an empty map.
    expect(errorMessage(await sdkPost('/events/update', { items: [{ externalId: 'sdk-replace-e', update: { metadata: { set: ['a'] } } }] }), 400)).toMatch(
      /items\[0\]\.update\.metadata\.set: expected object, got an array/,
    );
  });

  it('still refuses null where it means nothing', async () => {
    expect(errorMessage(await sdkPost('/events/list', { limit: null, cursor: null }), 400)).toMatch(/limit: null is not allowed/);
    expect(errorMessage(await sdkPost('/events/list', { cursor: 5 }), 400)).toMatch(/cursor/);
    expect(errorMessage(await sdkPost('/events/list', { cursor: '' }), 400)).toMatch(/cursor/);
  });
});

/**
 * Data point retrieval as the SDK's fetch tasks page it: every query item carries `"cursor": null` until a
 * page returns one; after a full page the next request moves `start` past the last point (or bucket) it got,
 * may narrow `end`, and sends the cursor along; `includeOutsidePoints` is asked for on its own, as a query of
 * `limit: 0`.
 */
describe('data point retrieval as the official Python SDK pages it', () => {
  const HOUR = 3_600_000;
  let seriesId: number;
  beforeAll(async () => {
    const res = await sdkPost('/timeseries', { items: [{ externalId: 'sdk-dp' }] });
    seriesId = res.body.items[0].id;
    // One point a minute for 10 hours, from 1 h to 11 h.
    const datapoints = Array.from({ length: 600 }, (_, i) => ({ timestamp: HOUR + i * 60_000, value: i }));
    expect((await sdkPost('/timeseries/data', { items: [{ id: seriesId, datapoints }] })).status).toBe(200);
  });

  /** The SDK's paging: cursor null first; after a full page, start = last + step, the cursor sent along. */
  async function fetchAll(query: Record<string, unknown>, step: number, narrowEnd?: number): Promise<Array<{ timestamp: number }>> {
    const got: Array<{ timestamp: number }> = [];
    let start = query.start as number;
    let end = query.end as number;
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const res = await sdkPost('/timeseries/data/list', { items: [{ id: seriesId, ...query, start, end, cursor }], ignoreUnknownIds: false });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const [item] = res.body.items;
      got.push(...item.datapoints);
      if (!item.nextCursor) return got;
      cursor = item.nextCursor;
      start = item.datapoints[item.datapoints.length - 1].timestamp + step;
      if (narrowEnd !== undefined) end = narrowEnd;
    }
    throw new Error('no end after 100 pages');
  }

  it('pages raw points with a moving start and the cursor, each point once', async () => {
    const points = await fetchAll({ start: 0, end: 12 * HOUR, limit: 70 }, 1);
    expect(points.map((p) => p.timestamp)).toEqual(Array.from({ length: 600 }, (_, i) => HOUR + i * 60_000));
    // The window narrowed on the way (a split subtask): the request's end holds.
    const narrowed = await fetchAll({ start: 0, end: 12 * HOUR, limit: 70 }, 1, 3 * HOUR);
    expect(narrowed.map((p) => p.timestamp)).toEqual(Array.from({ length: 120 }, (_, i) => HOUR + i * 60_000));
  });

  it('pages aggregates with a moving start and the cursor, each bucket once', async () => {
    const buckets = await fetchAll({ start: HOUR, end: 11 * HOUR, limit: 3, aggregates: ['count'], granularity: '1h' }, HOUR);
    expect(buckets).toEqual(Array.from({ length: 10 }, (_, i) => ({ timestamp: (i + 1) * HOUR, count: 60 })));
  });

  it('answers limit 0 with the outside points alone, or with nothing', async () => {
    const outside = await sdkPost('/timeseries/data/list', { items: [{ id: seriesId, start: 2 * HOUR, end: 3 * HOUR, limit: 0, includeOutsidePoints: true, cursor: null }] });
    expect(outside.status, JSON.stringify(outside.body)).toBe(200);
    expect(outside.body.items[0].datapoints).toEqual([
      { timestamp: 2 * HOUR - 60_000, value: 59 },
      { timestamp: 3 * HOUR, value: 120 },
    ]);
    expect(outside.body.items[0].nextCursor).toBeUndefined();
    for (const extra of [{}, { aggregates: ['count'], granularity: '1h' }]) {
      const none = await sdkPost('/timeseries/data/list', { items: [{ id: seriesId, start: 0, end: 12 * HOUR, limit: 0, ...extra }] });
      expect(none.status, JSON.stringify(none.body)).toBe(200);
      expect(none.body.items[0].datapoints).toEqual([]);
      expect(none.body.items[0].nextCursor).toBeUndefined();
    }
  });
});
