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

/** A GET as the SDK sends it (its query booleans spelled as Python prints them, or as httpx does). */
const sdkGet = (path: string) => h.request('GET', path, undefined, { 'cdf-version': SDK_HEADERS['cdf-version'], 'x-cdp-sdk': SDK_HEADERS['x-cdp-sdk'] });

describe('access as the official Python SDK calls it', () => {
  it('lists groups with all=False (the default it always sends) and all=True', async () => {
    const created = await sdkPost('/groups', {
      items: [{ name: 'sdk readers', sourceId: 'sdk-readers', capabilities: [{ eventsAcl: { actions: ['READ'], scope: { datasetScope: { ids: [1] } } } }] }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const [group] = created.body.items;
    expect(group).toMatchObject({ name: 'sdk readers', isDeleted: false });
    // The administrator belongs to no group: its own groups are none, every group is listed with all.
    for (const value of ['False', 'false']) {
      const own = await sdkGet(`/groups?all=${value}`);
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(own.body.items).toEqual([]);
    }
    const all = await sdkGet('/groups?all=True');
    expect(all.status).toBe(200);
    expect(all.body.items.map((g: { id: number }) => g.id)).toContain(group.id);
    // groups.delete(id) sends the ids bare.
    expect((await sdkPost('/groups/delete', { items: [group.id] })).status).toBe(200);
    expect((await sdkGet('/groups?all=True')).body.items.map((g: { id: number }) => g.id)).not.toContain(group.id);
  });

  it('creates, lists by status, retrieves and revokes sessions as the SDK sends them', async () => {
    const { clientId, secret } = h.strata.idp.devClient;
    // sessions.create() with the client's own OAuthClientCredentials, then with session_type="TOKEN_EXCHANGE".
    const fromCredentials = await sdkPost('/sessions', { items: [{ clientId, clientSecret: secret }] });
    expect(fromCredentials.status, JSON.stringify(fromCredentials.body)).toBe(200);
    expect(fromCredentials.body.items[0]).toMatchObject({ type: 'CLIENT_CREDENTIALS', status: 'READY', clientId, nonce: expect.any(String) });
    const exchanged = await sdkPost('/sessions', { items: [{ tokenExchange: true }] });
    const ids = [fromCredentials.body.items[0].id, exchanged.body.items[0].id];
    // sessions.list(status="ready") upper-cases the status and sends its default limit.
    const listed = await sdkGet('/sessions?status=READY&limit=25');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    for (const s of listed.body.items) expect(Object.keys(s).sort()).toEqual(expect.arrayContaining(['creationTime', 'expirationTime', 'id', 'status', 'type']));
    expect(listed.body.items.map((s: { id: number }) => s.id)).toEqual(expect.arrayContaining(ids));
    // sessions.retrieve(id): a single unknown id is a 400 with missing, which the SDK turns into None.
    const got = await sdkPost('/sessions/byids', { items: [{ id: ids[1] }] });
    expect(got.body.items).toEqual([expect.objectContaining({ id: ids[1], type: 'TOKEN_EXCHANGE' })]);
    const unknown = await sdkPost('/sessions/byids', { items: [{ id: 987654 }] });
    expect(errorMessage(unknown, 400)).toMatch(/987654/);
    expect(unknown.body.error.missing).toEqual([{ id: 987654 }]);
    // sessions.revoke(ids) wraps each id.
    const revoked = await sdkPost('/sessions/revoke', { items: ids.map((id) => ({ id })) });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body.items.map((s: { id: number; status: string }) => [s.id, s.status])).toEqual(ids.map((id) => [id, 'REVOKED']));
  });

  it('inspects the token in the shape iam.token.inspect() loads', async () => {
    const res = await sdkGet('/api/v1/token/inspect');
    expect(res.status).toBe(200);
    expect(res.body.subject).toEqual(expect.any(String));
    expect(res.body.projects).toEqual(expect.arrayContaining([{ projectUrlName: 'dev', groups: [] }]));
    expect(res.body.capabilities.length).toBeGreaterThan(0);
    for (const capability of res.body.capabilities) {
      // One ACL and its project scope: the SDK loads each with ProjectScope.
      const { projectScope, ...acl } = capability;
      expect(projectScope).toEqual(expect.objectContaining({}));
      expect(Object.keys(acl)).toHaveLength(1);
      expect(Object.values(acl)[0]).toEqual({ actions: expect.any(Array), scope: expect.any(Object) });
    }
  });

  it('turns user profiles on and off as user_profiles.enable() and disable() do', async () => {
    for (const enabled of [true, false]) {
      const res = await sdkPost('/api/v1/projects/dev/update', { update: { userProfilesConfiguration: { set: { enabled } } } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.userProfilesConfiguration).toEqual({ enabled });
    }
  });
});

describe('time series as the official Python SDK writes them', () => {
  beforeAll(async () => {
    await create('/assets', [{ externalId: 'sdk-ts-asset', name: 'pump' }]);
    await create('/datasets', [{ externalId: 'sdk-ts-ds' }]);
  });

  it('updates in mode "replace": every field it does not set is cleared, security categories with {"set": []}', async () => {
    const [asset] = (await sdkPost('/assets/byids', { items: [{ externalId: 'sdk-ts-asset' }] })).body.items;
    await create('/timeseries', [
      { externalId: 'sdk-ts-replace', name: 'n', unit: 'bar', metadata: { a: '1' }, securityCategories: [1], assetId: asset.id, description: 'd', isStep: true },
    ]);
    const res = await sdkPost('/timeseries/update', {
      items: [
        {
          externalId: 'sdk-ts-replace',
          update: {
            name: { set: 'renamed' },
            metadata: { set: {} },
            unit: { setNull: true },
            unitExternalId: { setNull: true },
            assetId: { setNull: true },
            description: { setNull: true },
            securityCategories: { set: [] },
            dataSetId: { setNull: true },
            isStep: { set: false },
          },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [ts] = res.body.items;
    expect(ts).toMatchObject({ externalId: 'sdk-ts-replace', name: 'renamed', isStep: false });
    for (const cleared of ['unit', 'unitExternalId', 'assetId', 'description', 'dataSetId']) expect(ts[cleared], cleared).toBeUndefined();
    expect(ts.metadata ?? {}).toEqual({});
    expect(ts.securityCategories ?? []).toEqual([]);
  });

  it('updates a series with an instanceId in mode "replace": metadata, asset and data set, by instance id', async () => {
    const instanceId = { space: 'sdk-space', externalId: 'sdk-ts-dm' };
    await create('/timeseries', [{ externalId: 'sdk-ts-dm', instanceId, metadata: { a: '1' } }]);
    const [ds] = (await sdkPost('/datasets/byids', { items: [{ externalId: 'sdk-ts-ds' }] })).body.items;
    const res = await sdkPost('/timeseries/update', {
      items: [{ instanceId, update: { metadata: { set: {} }, assetId: { setNull: true }, dataSetId: { set: ds.id }, externalId: { set: 'sdk-ts-dm' } } }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items[0]).toMatchObject({ instanceId, dataSetId: ds.id });
  });

  it('upserts: an update naming an unknown external id is a 400 with missing, after which the SDK creates it', async () => {
    const update = await sdkPost('/timeseries/update', { items: [{ externalId: 'sdk-ts-upsert', update: { name: { set: 'new' } } }] });
    expect(errorMessage(update, 400)).toMatch(/sdk-ts-upsert/);
    expect(update.body.error.missing).toEqual([{ externalId: 'sdk-ts-upsert' }]);
    await create('/timeseries', [{ externalId: 'sdk-ts-upsert', name: 'new' }]);
  });

  it('aggregates as aggregate_count and aggregate_unique_values send it', async () => {
    await create('/timeseries', [{ externalId: 'sdk-ts-agg-1', unit: 'rpm', isString: true }, { externalId: 'sdk-ts-agg-2', unit: 'rpm' }]);
    const count = await sdkPost('/timeseries/aggregate', { aggregate: 'count', filter: { isString: true, externalIdPrefix: 'sdk-ts-agg-' } });
    expect(count.body.items).toEqual([{ count: 1 }]);
    const unique = await sdkPost('/timeseries/aggregate', {
      aggregate: 'uniqueValues',
      properties: [{ property: ['unit'] }],
      advancedFilter: { prefix: { property: ['externalId'], value: 'sdk-ts-agg-' } },
    });
    expect(unique.body.items).toEqual([{ count: 2, values: ['rpm'], value: 'rpm' }]);
  });

  it('retrieves one unknown series as a 400 with missing (the SDK returns None), or skips it with ignoreUnknownIds', async () => {
    const one = await sdkPost('/timeseries/byids', { items: [{ externalId: 'sdk-ts-nope' }] });
    expect(one.body.error.missing).toEqual([{ externalId: 'sdk-ts-nope' }]);
    const many = await sdkPost('/timeseries/byids', { items: [{ externalId: 'sdk-ts-nope' }, { externalId: 'sdk-ts-agg-1' }], ignoreUnknownIds: true });
    expect(many.body.items.map((t: { externalId: string }) => t.externalId)).toEqual(['sdk-ts-agg-1']);
  });
});

describe('data points as the official Python SDK writes and reads the latest', () => {
  const BAD = 0x80000000;
  beforeAll(async () => {
    await create('/timeseries', [{ externalId: 'sdk-dp-w' }, { externalId: 'sdk-dp-s', isString: true }]);
  });

  it('inserts statuses by code or symbol, a missing value as null and a non-finite one as a string, on bad points', async () => {
    const res = await sdkPost('/timeseries/data', {
      items: [
        {
          externalId: 'sdk-dp-w',
          datapoints: [
            { timestamp: 1000, value: 1 },
            { timestamp: 2000, value: 2, status: { symbol: 'Uncertain' } },
            { timestamp: 3000, value: null, status: { code: BAD } },
            { timestamp: 4000, value: 'NaN', status: { code: BAD, symbol: 'Bad' } },
          ],
        },
        { externalId: 'sdk-dp-s', datapoints: [{ timestamp: 1000, value: 'on' }, { timestamp: 2000, value: null, status: { symbol: 'Bad' } }] },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const read = await sdkPost('/timeseries/data/list', {
      items: [{ externalId: 'sdk-dp-w', start: 0, end: 5000, includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false, cursor: null }],
    });
    expect(read.body.items[0].datapoints.map((p: { timestamp: number; value?: unknown }) => [p.timestamp, p.value])).toEqual([
      [1000, 1],
      [2000, 2],
      [3000, undefined],
      [4000, 'NaN'],
    ]);
  });

  it('reads the latest point with before in milliseconds and the status options; each item says whether it holds strings', async () => {
    const res = await sdkPost('/timeseries/data/latest', {
      items: [
        { externalId: 'sdk-dp-w', before: 3500 },
        { externalId: 'sdk-dp-s', before: 10_000, includeStatus: true, ignoreBadDataPoints: false },
        { externalId: 'sdk-dp-w', before: 3500, includeStatus: true, ignoreBadDataPoints: false, treatUncertainAsBad: false },
      ],
      ignoreUnknownIds: false,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [numeric, strings, withBad] = res.body.items;
    expect(numeric).toMatchObject({ externalId: 'sdk-dp-w', isString: false, datapoints: [{ timestamp: 1000, value: 1 }] });
    expect(strings).toMatchObject({ isString: true, datapoints: [{ timestamp: 2000, status: { code: BAD, symbol: 'Bad' } }] });
    expect(withBad.datapoints).toEqual([{ timestamp: 3000, status: { code: BAD, symbol: 'Bad' } }]);
  });

  it('deletes ranges as delete_range and delete_ranges send them', async () => {
    const res = await sdkPost('/timeseries/data/delete', { items: [{ externalId: 'sdk-dp-w', inclusiveBegin: 2000, exclusiveEnd: 4000 }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const read = await sdkPost('/timeseries/data/list', { items: [{ externalId: 'sdk-dp-w', start: 0, end: 5000, ignoreBadDataPoints: false }] });
    expect(read.body.items[0].datapoints.map((p: { timestamp: number }) => p.timestamp)).toEqual([1000, 4000]);
  });
});
