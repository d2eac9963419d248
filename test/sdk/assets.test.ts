/**
 * Every assets operation through the official JavaScript client, called as its users call it: a hierarchy
 * created in one call (the client orders parents before children), reads with aggregated properties, the
 * subtree of an asset, search, aggregate, updates of labels and metadata, and recursive delete; its generic
 * `get`/`post` for what it leaves to them (GET forms, the other aggregate kinds, the geographic filter).
 */
import type { Asset, CogniteClient } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
let project: string;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'assets' });
  client = h.client;
  project = client.project;
});
afterAll(() => h?.close());

const xids = (assets: readonly Asset[]) => assets.map((a) => a.externalId).sort();

describe('assets through the official JavaScript client', () => {
  let created: Asset[];
  let byXid: Record<string, Asset>;
  let dataSet: number;

  beforeAll(async () => {
    [{ id: dataSet }] = await client.datasets.create([{ externalId: 'as-ds', name: 'Plant' }]);
    // Children before their parents: the client sorts them so that every parent is created first.
    created = await client.assets.create([
      { externalId: 'as-motor', name: 'Pump motor', parentExternalId: 'as-pump', metadata: { power: '7kW' } },
      { externalId: 'as-pump', name: 'Feed pump', parentExternalId: 'as-plant', description: 'Pumps crude feed', labels: [{ externalId: 'rotating' }] },
      { externalId: 'as-valve', name: 'Inlet valve', parentExternalId: 'as-plant', source: 'sap', labels: [{ externalId: 'critical' }] },
      { externalId: 'as-plant', name: 'Refinery', description: 'Crude oil refinery', dataSetId: dataSet, metadata: { site: 'north' } },
      { externalId: 'as-depot', name: 'Depot' },
    ]);
    byXid = Object.fromEntries(created.map((a) => [a.externalId, a]));
  });

  it('creates a hierarchy in one call, giving the items back in the order given', () => {
    expect(created.map((a) => a.externalId)).toEqual(['as-motor', 'as-pump', 'as-valve', 'as-plant', 'as-depot']);
    const { 'as-plant': plant, 'as-pump': pump, 'as-motor': motor } = byXid;
    expect(plant).toMatchObject({ rootId: plant.id, dataSetId: dataSet, metadata: { site: 'north' } });
    expect(plant.parentId).toBeUndefined();
    expect(pump).toMatchObject({ parentId: plant.id, parentExternalId: 'as-plant', rootId: plant.id, labels: [{ externalId: 'rotating' }] });
    expect(motor).toMatchObject({ parentId: pump.id, parentExternalId: 'as-pump', rootId: plant.id });
    expect(motor.createdTime).toBeInstanceOf(Date);
  });

  it('retrieves by id and external id, with aggregated properties, and says which are missing', async () => {
    const got = await client.assets.retrieve([{ externalId: 'as-pump' }, { id: byXid['as-plant'].id }], { aggregatedProperties: ['childCount', 'depth', 'path'] });
    expect(got.map((a) => [a.externalId, a.aggregates])).toEqual([
      ['as-pump', { childCount: 1, depth: 1, path: [{ id: byXid['as-plant'].id }, { id: byXid['as-pump'].id }] }],
      ['as-plant', { childCount: 2, depth: 0, path: [{ id: byXid['as-plant'].id }] }],
    ]);
    expect(await client.assets.retrieve([{ externalId: 'as-none' }], { ignoreUnknownIds: true })).toEqual([]);
    await expect(client.assets.retrieve([{ externalId: 'as-none' }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'as-none' }] });
    const one = await client.get<Asset>(`/api/v1/projects/${project}/assets/${byXid['as-valve'].id}`);
    expect(one.data).toMatchObject({ externalId: 'as-valve', source: 'sap', parentExternalId: 'as-plant' });
    await expect(client.get(`/api/v1/projects/${project}/assets/987654321`)).rejects.toMatchObject({ status: 400, missing: [{ id: 987654321 }] });
  });

  it('lists with the basic filter, aggregated properties, cursors and partitions', async () => {
    const list = async (filter: object) => xids(await client.assets.list({ filter: { externalIdPrefix: 'as-', ...filter } }).autoPagingToArray({ limit: Infinity }));
    expect(await list({})).toEqual(['as-depot', 'as-motor', 'as-plant', 'as-pump', 'as-valve']);
    expect(await list({ root: true })).toEqual(['as-depot', 'as-plant']);
    expect(await list({ parentIds: [byXid['as-plant'].id] })).toEqual(['as-pump', 'as-valve']);
    expect(await list({ parentExternalIds: ['as-pump'] })).toEqual(['as-motor']);
    expect(await list({ rootIds: [{ externalId: 'as-plant' }] })).toEqual(['as-motor', 'as-plant', 'as-pump', 'as-valve']);
    expect(await list({ dataSetIds: [{ id: dataSet }] })).toEqual(['as-plant']);
    expect(await list({ name: 'Depot' })).toEqual(['as-depot']);
    expect(await list({ source: 'sap' })).toEqual(['as-valve']);
    expect(await list({ metadata: { SITE: 'North' } })).toEqual(['as-plant']);
    expect(await list({ labels: { containsAny: [{ externalId: 'rotating' }, { externalId: 'critical' }] } })).toEqual(['as-pump', 'as-valve']);
    expect(await list({ createdTime: { min: 0, max: new Date(Date.now() + 60_000) } })).toHaveLength(5);

    const withCounts = await client.assets.list({ filter: { root: true, externalIdPrefix: 'as-' }, aggregatedProperties: ['childCount'] }).autoPagingToArray({ limit: Infinity });
    expect(withCounts.map((a) => [a.externalId, a.aggregates?.childCount]).sort()).toEqual([
      ['as-depot', 0],
      ['as-plant', 2],
    ]);

    const first = await client.assets.list({ filter: { externalIdPrefix: 'as-' }, limit: 2 });
    expect(first.items).toHaveLength(2);
    const seen: string[] = [];
    await client.assets.list({ filter: { externalIdPrefix: 'as-' }, limit: 2 }).autoPagingEach((a) => void seen.push(a.externalId!));
    expect(seen.sort()).toEqual(['as-depot', 'as-motor', 'as-plant', 'as-pump', 'as-valve']);

    const parts = await Promise.all(
      ['1/2', '2/2'].map((partition) => client.assets.list({ filter: { externalIdPrefix: 'as-' }, partition, limit: 1 }).autoPagingToArray({ limit: Infinity })),
    );
    expect(xids(parts.flat())).toEqual(['as-depot', 'as-motor', 'as-plant', 'as-pump', 'as-valve']);
  });

  it('reads the subtree of an asset, with depths', async () => {
    const subtree = await client.assets
      .list({ filter: { assetSubtreeIds: [{ externalId: 'as-pump' }] }, aggregatedProperties: ['depth'] })
      .autoPagingToArray({ limit: Infinity });
    expect(subtree.map((a) => [a.externalId, a.aggregates?.depth]).sort()).toEqual([
      ['as-motor', 2],
      ['as-pump', 1],
    ]);
    const whole = await client.assets.list({ filter: { assetSubtreeIds: [{ id: byXid['as-plant'].id }] } }).autoPagingToArray({ limit: Infinity });
    expect(xids(whole)).toEqual(['as-motor', 'as-plant', 'as-pump', 'as-valve']);
  });

  it('lists with the GET form and its query parameters', async () => {
    const res = await client.get<{ items: Asset[] }>(`/api/v1/projects/${project}/assets`, {
      params: { parentIds: JSON.stringify([byXid['as-plant'].id]), includeMetadata: false, limit: 10 },
    });
    expect(xids(res.data.items)).toEqual(['as-pump', 'as-valve']);
    const roots = await client.get<{ items: Asset[] }>(`/api/v1/projects/${project}/assets`, { params: { root: true, externalIdPrefix: 'as-' } });
    expect(xids(roots.data.items)).toEqual(['as-depot', 'as-plant']);
  });

  it('filters with the advanced filter and sorts', async () => {
    const res = await client.post<{ items: Asset[] }>(`/api/v1/projects/${project}/assets/list`, {
      data: {
        advancedFilter: { and: [{ prefix: { property: ['externalId'], value: 'as-' } }, { equals: { property: ['rootId'], value: byXid['as-plant'].id } }] },
        sort: [{ property: ['name'], order: 'desc' }],
      },
    });
    expect(res.data.items.map((a) => a.name)).toEqual(['Refinery', 'Pump motor', 'Inlet valve', 'Feed pump']);
  });

  it('filters by geography through the generic request (the client has no typed form for it)', async () => {
    await client.assets.create([
      { externalId: 'as-geo-in', name: 'Well 1', geoLocation: { type: 'Feature', geometry: { type: 'Point', coordinates: [10.7, 59.9] } } } as never,
      { externalId: 'as-geo-out', name: 'Well 2', geoLocation: { type: 'Feature', geometry: { type: 'Point', coordinates: [5.3, 60.4] } } } as never,
    ]);
    const shape = { type: 'Polygon', coordinates: [[[10, 59], [11, 59], [11, 60], [10, 60], [10, 59]]] };
    const res = await client.post<{ items: Asset[] }>(`/api/v1/projects/${project}/assets/list`, {
      data: { filter: { externalIdPrefix: 'as-geo-', geoLocation: { relation: 'WITHIN', shape } } },
    });
    expect(xids(res.data.items)).toEqual(['as-geo-in']);
    expect(res.data.items[0]).toMatchObject({ geoLocation: { type: 'Feature', geometry: { type: 'Point', coordinates: [10.7, 59.9] } } });
    await client.assets.delete([{ externalId: 'as-geo-in' }, { externalId: 'as-geo-out' }]);
  });

  it('searches names, descriptions and both', async () => {
    expect(xids(await client.assets.search({ search: { name: 'pump' } }))).toEqual(['as-motor', 'as-pump']);
    expect(xids(await client.assets.search({ search: { description: 'crude' }, filter: { root: true } }))).toEqual(['as-plant']);
    expect(xids(await client.assets.search({ search: { query: 'crude' }, limit: 10 }))).toEqual(['as-plant', 'as-pump']);
  });

  it('aggregates: the count the client offers, the other kinds through the generic request', async () => {
    expect(await client.assets.aggregate({ filter: { externalIdPrefix: 'as-', root: false } })).toEqual([{ count: 3 }]);
    const aggregate = async (body: object) => (await client.post<{ items: unknown[] }>(`/api/v1/projects/${project}/assets/aggregate`, { data: body })).data.items;
    const filter = { externalIdPrefix: 'as-' };
    expect(await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['parentId'] }], filter })).toEqual([
      { count: 2, values: [byXid['as-plant'].id], value: byXid['as-plant'].id },
      { count: 1, values: [byXid['as-pump'].id], value: byXid['as-pump'].id },
    ]);
    expect(await aggregate({ aggregate: 'cardinalityValues', properties: [{ property: ['rootId'] }], filter })).toEqual([{ count: 2 }]);
    expect(await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['labels'] }], filter })).toEqual([
      { count: 1, values: ['critical'], value: 'critical' },
      { count: 1, values: ['rotating'], value: 'rotating' },
    ]);
    expect(await aggregate({ aggregate: 'uniqueProperties', path: ['metadata'], filter })).toHaveLength(2);
    expect(await aggregate({ aggregate: 'metadataKeys', filter })).toEqual([
      { count: 1, values: ['power'], value: 'power' },
      { count: 1, values: ['site'], value: 'site' },
    ]);
    expect(await aggregate({ aggregate: 'metadataValues', keys: ['site'], filter })).toEqual([{ count: 1, values: ['north'], value: 'north' }]);
  });

  it('updates fields, labels and metadata; an emptied list is left out, emptied metadata is {} (as the SDK\'s own test expects)', async () => {
    const [pump] = await client.assets.update([
      {
        externalId: 'as-pump',
        update: {
          name: { set: 'Main feed pump' },
          description: { setNull: true },
          labels: { add: [{ externalId: 'critical' }], remove: [{ externalId: 'rotating' }] },
          metadata: { add: { rpm: '1450' }, remove: [] },
          dataSetId: { set: dataSet },
        },
      },
    ]);
    expect(pump).toMatchObject({ name: 'Main feed pump', labels: [{ externalId: 'critical' }], metadata: { rpm: '1450' }, dataSetId: dataSet, parentExternalId: 'as-plant' });
    expect(pump.description).toBeUndefined();
    const [bare] = await client.assets.update([{ id: pump.id, update: { labels: { remove: [{ externalId: 'critical' }] }, metadata: { set: {} } } }]);
    expect(bare).not.toHaveProperty('labels');
    expect(bare.metadata).toEqual({});
  });

  it('deletes a whole subtree with recursive, and refuses a parent without it', async () => {
    await client.assets.create([
      { externalId: 'as-tmp', name: 'Temporary' },
      { externalId: 'as-tmp-child', name: 'Child', parentExternalId: 'as-tmp' },
    ]);
    await expect(client.assets.delete([{ externalId: 'as-tmp' }])).rejects.toMatchObject({ status: 400 });
    expect(await client.assets.delete([{ externalId: 'as-tmp' }], { recursive: true })).toEqual({});
    expect(await client.assets.retrieve([{ externalId: 'as-tmp' }, { externalId: 'as-tmp-child' }], { ignoreUnknownIds: true })).toEqual([]);
    // The client always asks to ignore unknown ids on delete.
    expect(await client.assets.delete([{ externalId: 'as-tmp' }])).toEqual({});
  });
});
