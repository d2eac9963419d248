/**
 * Every events operation through the official JavaScript client, called as its users call it: the typed
 * methods where the client has one, and its generic `get`/`post` for what it leaves to them (advanced filter,
 * the other aggregate kinds, GET forms).
 */
import type { CogniteClient, CogniteEvent } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
let project: string;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'events' });
  client = h.client;
  project = client.project;
});
afterAll(() => h?.close());

const ids = (events: readonly CogniteEvent[]) => events.map((e) => e.externalId).sort();
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

describe('events through the official JavaScript client', () => {
  let pump: number;
  let valve: number;
  let dataSet: number;
  let created: CogniteEvent[];

  beforeAll(async () => {
    [{ id: dataSet }] = await client.datasets.create([{ externalId: 'ev-ds', name: 'Events' }]);
    const assets = await client.assets.create([
      { externalId: 'ev-site', name: 'Site' },
      { externalId: 'ev-pump', name: 'Pump', parentExternalId: 'ev-site' },
      { externalId: 'ev-valve', name: 'Valve', parentExternalId: 'ev-site' },
    ]);
    pump = assets.find((a) => a.externalId === 'ev-pump')!.id;
    valve = assets.find((a) => a.externalId === 'ev-valve')!.id;
    created = await client.events.create([
      {
        externalId: 'ev-1',
        type: 'alarm',
        subtype: 'high',
        description: 'Pump pressure too high',
        startTime: T0,
        endTime: T0 + HOUR,
        assetIds: [pump],
        dataSetId: dataSet,
        source: 'scada',
        metadata: { Severity: 'critical', zone: 'north' },
      },
      { externalId: 'ev-2', type: 'alarm', subtype: 'low', description: 'Valve pressure low', startTime: T0 + 2 * HOUR, assetIds: [valve], source: 'scada' },
      { externalId: 'ev-3', type: 'maintenance', description: 'Pump overhaul', startTime: T0 + 3 * HOUR, endTime: T0 + 5 * HOUR, assetIds: [pump, valve] },
      { externalId: 'ev-4', type: 'note', metadata: { zone: 'south' } },
    ]);
  });

  it('creates events and gives them back with ids and dates', () => {
    expect(created.map((e) => e.externalId)).toEqual(['ev-1', 'ev-2', 'ev-3', 'ev-4']);
    const [first] = created;
    expect(first).toMatchObject({ type: 'alarm', startTime: T0, endTime: T0 + HOUR, assetIds: [pump], dataSetId: dataSet, metadata: { Severity: 'critical', zone: 'north' } });
    expect(first.createdTime).toBeInstanceOf(Date);
    expect(first.lastUpdatedTime).toBeInstanceOf(Date);
    // Fields not given are left out, not sent as null.
    expect(Object.keys(created[3]).sort()).toEqual(['createdTime', 'externalId', 'id', 'lastUpdatedTime', 'metadata', 'type']);
  });

  it('retrieves by id and external id, in request order, and says which are missing', async () => {
    const got = await client.events.retrieve([{ externalId: 'ev-3' }, { id: created[0].id }]);
    expect(got.map((e) => e.externalId)).toEqual(['ev-3', 'ev-1']);
    expect(await client.events.retrieve([{ externalId: 'ev-none' }, { externalId: 'ev-2' }], { ignoreUnknownIds: true })).toMatchObject([{ externalId: 'ev-2' }]);
    await expect(client.events.retrieve([{ externalId: 'ev-none' }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'ev-none' }] });
    const one = await client.get<CogniteEvent>(`/api/v1/projects/${project}/events/${created[1].id}`);
    expect(one.data).toMatchObject({ externalId: 'ev-2', startTime: T0 + 2 * HOUR });
    await expect(client.get(`/api/v1/projects/${project}/events/987654321`)).rejects.toMatchObject({ status: 400, missing: [{ id: 987654321 }] });
  });

  it('lists with every filter of the basic filter', async () => {
    const list = async (filter: object) => ids(await client.events.list({ filter }).autoPagingToArray({ limit: Infinity }));
    expect(await list({ type: 'alarm' })).toEqual(['ev-1', 'ev-2']);
    expect(await list({ type: 'alarm', subtype: 'low' })).toEqual(['ev-2']);
    expect(await list({ source: 'scada' })).toEqual(['ev-1', 'ev-2']);
    expect(await list({ startTime: { min: new Date(T0 + HOUR), max: T0 + 3 * HOUR } })).toEqual(['ev-2', 'ev-3']);
    expect(await list({ endTime: { isNull: true }, type: 'alarm' })).toEqual(['ev-2']);
    expect(await list({ endTime: { min: T0 + 4 * HOUR } })).toEqual(['ev-3']);
    expect(await list({ activeAtTime: { min: T0 + 4 * HOUR, max: T0 + 4 * HOUR } })).toEqual(['ev-2', 'ev-3']);
    expect(await list({ metadata: { severity: 'CRITICAL' } })).toEqual(['ev-1']);
    expect(await list({ assetIds: [valve] })).toEqual(['ev-2', 'ev-3']);
    expect(await list({ assetExternalIds: ['ev-pump'] })).toEqual(['ev-1', 'ev-3']);
    expect(await list({ assetSubtreeIds: [{ externalId: 'ev-site' }] })).toEqual(['ev-1', 'ev-2', 'ev-3']);
    expect(await list({ dataSetIds: [{ id: dataSet }] })).toEqual(['ev-1']);
    expect(await list({ dataSetIds: [{ externalId: 'ev-ds' }] })).toEqual(['ev-1']);
    expect(await list({ externalIdPrefix: 'ev-' })).toEqual(['ev-1', 'ev-2', 'ev-3', 'ev-4']);
    expect(await list({ createdTime: { max: new Date(Date.now() + HOUR) }, lastUpdatedTime: { min: 0 } })).toEqual(['ev-1', 'ev-2', 'ev-3', 'ev-4']);
  });

  it('sorts, pages and follows cursors', async () => {
    const sorted = await client.events.list({ filter: { externalIdPrefix: 'ev-' }, sort: { startTime: 'desc' } }).autoPagingToArray({ limit: Infinity });
    // Without a start time, ev-4 sorts as larger than any: first when descending.
    expect(sorted.map((e) => e.externalId)).toEqual(['ev-4', 'ev-3', 'ev-2', 'ev-1']);
    const first = await client.events.list({ filter: { externalIdPrefix: 'ev-' }, limit: 3 });
    expect(first.items).toHaveLength(3);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await first.next!();
    expect(second.items.map((e) => e.externalId)).toEqual(['ev-4']);
    expect(second.nextCursor).toBeUndefined();
    const seen: string[] = [];
    await client.events.list({ filter: { externalIdPrefix: 'ev-' }, limit: 1 }).autoPagingEach((e) => void seen.push(e.externalId!));
    expect(seen).toEqual(['ev-1', 'ev-2', 'ev-3', 'ev-4']);
  });

  it('reads every event once across partitions', async () => {
    const all = await client.events.list({ filter: { externalIdPrefix: 'ev-' } }).autoPagingToArray({ limit: Infinity });
    const parts = await Promise.all(
      ['1/3', '2/3', '3/3'].map((partition) => client.events.list({ filter: { externalIdPrefix: 'ev-' }, partition, limit: 1 }).autoPagingToArray({ limit: Infinity })),
    );
    expect(ids(parts.flat())).toEqual(ids(all));
  });

  it('filters with the advanced filter and sorts by the sort specification', async () => {
    const res = await client.post<{ items: CogniteEvent[] }>(`/api/v1/projects/${project}/events/list`, {
      data: {
        advancedFilter: {
          and: [
            { in: { property: ['type'], values: ['alarm', 'maintenance'] } },
            { containsAny: { property: ['assetIds'], values: [pump] } },
            { not: { equals: { property: ['metadata', 'zone'], value: 'south' } } },
          ],
        },
        sort: [{ property: ['startTime'], order: 'desc', nulls: 'last' }],
      },
    });
    expect(res.data.items.map((e) => e.externalId)).toEqual(['ev-3', 'ev-1']);
    const searched = await client.post<{ items: CogniteEvent[] }>(`/api/v1/projects/${project}/events/list`, {
      data: { advancedFilter: { search: { property: ['description'], value: 'pump' } } },
    });
    expect(ids(searched.data.items)).toEqual(['ev-1', 'ev-3']);
  });

  it('lists with the GET form and its query parameters', async () => {
    const res = await client.get<{ items: CogniteEvent[] }>(`/api/v1/projects/${project}/events`, {
      params: { type: 'alarm', assetIds: JSON.stringify([pump]), minStartTime: T0, includeMetadata: false, sort: ['startTime:desc'] },
    });
    expect(res.data.items.map((e) => e.externalId)).toEqual(['ev-1']);
    expect(res.data.items[0].metadata).toBeUndefined();
  });

  it('searches descriptions, narrowed by the filter', async () => {
    expect(ids(await client.events.search({ search: { description: 'pressure' } }))).toEqual(['ev-1', 'ev-2']);
    expect(ids(await client.events.search({ search: { description: 'pressure' }, filter: { subtype: 'low' } }))).toEqual(['ev-2']);
    expect(ids(await client.events.search({ filter: { type: 'maintenance' }, limit: 10 }))).toEqual(['ev-3']);
  });

  it('aggregates: count and unique values, as the client offers them', async () => {
    expect(await client.events.aggregate.count({ filter: { type: 'alarm' } })).toEqual([{ count: 2 }]);
    const types = await client.events.aggregate.uniqueValues({ filter: { externalIdPrefix: 'ev-' }, fields: ['type'] });
    expect(types.map((b) => [b.value, b.count])).toEqual([
      ['alarm', 2],
      ['maintenance', 1],
      ['note', 1],
    ]);
    const dataSets = await client.events.aggregate.uniqueValues({ filter: { externalIdPrefix: 'ev-' }, fields: ['dataSetId'] });
    expect(dataSets).toMatchObject([{ value: dataSet, count: 1 }]);
  });

  it('aggregates: the other kinds, through the generic request', async () => {
    const aggregate = async (body: object) => (await client.post<{ items: unknown[] }>(`/api/v1/projects/${project}/events/aggregate`, { data: body })).data.items;
    const filter = { externalIdPrefix: 'ev-' };
    expect(await aggregate({ aggregate: 'cardinalityValues', properties: [{ property: ['source'] }], filter })).toEqual([{ count: 1 }]);
    expect(await aggregate({ aggregate: 'cardinalityProperties', path: ['metadata'], filter })).toEqual([{ count: 2 }]);
    expect(await aggregate({ aggregate: 'uniqueProperties', path: ['metadata'], filter })).toMatchObject([
      { count: 2, values: [{ property: ['metadata', 'zone'] }] },
      { count: 1, values: [{ property: ['metadata', 'severity'] }] },
    ]);
    expect(await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['subtype'] }], filter, aggregateFilter: { prefix: { value: 'h' } } })).toMatchObject([
      { count: 1, values: ['high'] },
    ]);
    expect(await aggregate({ aggregate: 'count', advancedFilter: { exists: { property: ['endTime'] } }, filter })).toEqual([{ count: 2 }]);
  });

  it('updates fields, metadata and asset ids', async () => {
    const [updated] = await client.events.update([
      {
        externalId: 'ev-2',
        update: {
          description: { set: 'Valve pressure very low' },
          endTime: { set: T0 + 4 * HOUR },
          source: { setNull: true },
          metadata: { add: { owner: 'ops' }, remove: [] },
          assetIds: { add: [pump] },
        },
      },
    ]);
    expect(updated).toMatchObject({ externalId: 'ev-2', description: 'Valve pressure very low', endTime: T0 + 4 * HOUR, metadata: { owner: 'ops' }, assetIds: [valve, pump] });
    expect(updated.source).toBeUndefined();
    const [again] = await client.events.update([{ id: updated.id, update: { metadata: { add: {}, remove: ['owner'] }, assetIds: { set: [] }, dataSetId: { set: dataSet } } }]);
    expect(again.metadata ?? {}).toEqual({});
    expect(again.assetIds ?? []).toEqual([]);
    expect(again.dataSetId).toBe(dataSet);
    await expect(client.events.update([{ externalId: 'ev-none', update: { type: { set: 'x' } } }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'ev-none' }] });
  });

  it('deletes, and says which are missing', async () => {
    const [temp] = await client.events.create([{ externalId: 'ev-temp' }]);
    expect(await client.events.delete([{ id: temp.id }])).toEqual({});
    expect(await client.events.retrieve([{ id: temp.id }], { ignoreUnknownIds: true })).toEqual([]);
    await expect(client.events.delete([{ externalId: 'ev-temp' }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'ev-temp' }] });
  });
});
