/**
 * Time series through the official JavaScript client, called as its users call it: create, retrieve (by id,
 * external id and instance id), list (basic filter, partitions, advanced filter and sort), search, aggregate,
 * update (metadata, security categories, nulls) and delete; and the GET list, which the client reaches
 * through its plain `get`.
 */
import type { Timeseries, TimeseriesFilterQuery } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let assetId: number;
let dataSetId: number;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'timeseries' });
  [{ id: assetId }] = (await h.seed('POST', '/assets', { items: [{ externalId: 'sdk-ts-pump', name: 'pump' }] })).items;
  [{ id: dataSetId }] = (await h.seed('POST', '/datasets', { items: [{ externalId: 'sdk-ts-ds' }] })).items;
});
afterAll(() => h?.close());

const projectPath = (path: string) => `/api/v1/projects/${h.client.project}${path}`;
const xids = (items: Array<{ externalId?: string }>) => items.map((t) => t.externalId).sort();


describe('create and retrieve', () => {
  let created: Timeseries[];
  const fields = () => ({
    externalId: 'sdk-ts-full',
    name: 'Outlet pressure',
    isString: false,
    metadata: { site: 'north', line: '2' },
    unit: 'bar',
    unitExternalId: 'pressure:bar',
    assetId,
    isStep: true,
    description: 'pump outlet',
    securityCategories: [7],
    dataSetId,
  });
  beforeAll(async () => {
    created = await h.client.timeseries.create([
      // legacyName is deprecated and ignored.
      { ...fields(), legacyName: 'sdk-ts-full' },
      { externalId: 'sdk-ts-text', name: 'Operator note', isString: true },
      { name: 'no external id' },
    ]);
  });

  it('creates every field the client sends, and answers with the series as stored', () => {
    const [full, text, bare] = created;
    expect(full).toMatchObject(fields());
    expect((full as { legacyName?: string }).legacyName).toBeUndefined();
    expect(full.createdTime).toBeInstanceOf(Date);
    expect(full.lastUpdatedTime).toBeInstanceOf(Date);
    expect(text).toMatchObject({ externalId: 'sdk-ts-text', isString: true, isStep: false });
    expect(bare.externalId).toBeUndefined();
    expect(bare.description).toBeUndefined();
  });

  it('retrieves by id and by external id, in request order', async () => {
    const [full, text] = created;
    const got = await h.client.timeseries.retrieve([{ externalId: 'sdk-ts-text' }, { id: full.id }]);
    expect(got.map((t) => t.id)).toEqual([text.id, full.id]);
    expect(got[1]).toEqual(full);
  });

  it('retrieves by instance id', async () => {
    const instanceId = { space: 'sdk-space', externalId: 'sdk-ts-dm' };
    // Strata lets a create carry the instance id that data modeling would give the series.
    const [dm] = await h.client.timeseries.create([{ externalId: 'sdk-ts-dm', instanceId } as never]);
    expect(dm.instanceId).toEqual(instanceId);
    const [got] = await h.client.timeseries.retrieve([{ instanceId }]);
    expect(got.id).toBe(dm.id);
  });

  it('refuses unknown ids with 400 and their list, or skips them with ignoreUnknownIds', async () => {
    const err = await clientFailure(h.client.timeseries.retrieve([{ externalId: 'sdk-ts-nope' }, { id: created[0].id }]));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ externalId: 'sdk-ts-nope' }]);
    const got = await h.client.timeseries.retrieve([{ externalId: 'sdk-ts-nope' }, { id: created[0].id }], { ignoreUnknownIds: true });
    expect(got.map((t) => t.id)).toEqual([created[0].id]);
  });

  it('refuses a taken external id with 409 naming it', async () => {
    const err = await clientFailure(h.client.timeseries.create([{ externalId: 'sdk-ts-full' }]));
    expect(err.status).toBe(409);
    expect(err.duplicated).toEqual([{ externalId: 'sdk-ts-full' }]);
  });
});

describe('list, search and aggregate', () => {
  beforeAll(async () => {
    await h.client.timeseries.create(
      Array.from({ length: 30 }, (_, i) => ({
        externalId: `sdk-ts-l${String(i).padStart(2, '0')}`,
        name: i % 3 === 0 ? `cooling water flow ${i}` : `line speed ${i}`,
        description: i % 5 === 0 ? 'checked weekly' : undefined,
        isString: i % 10 === 9,
        isStep: i % 2 === 0,
        unit: i % 2 === 0 ? 'm3/h' : 'rpm',
        metadata: { bucket: String(i % 4) },
        ...(i < 5 ? { assetId, dataSetId } : {}),
      })),
    );
  });

  it('pages through every series with the client\'s auto-paging', async () => {
    const all = await h.client.timeseries.list({ filter: { externalIdPrefix: 'sdk-ts-l' }, limit: 7 }).autoPagingToArray({ limit: -1 });
    expect(all).toHaveLength(30);
    expect(new Set(all.map((t) => t.id)).size).toBe(30);
  });

  it('narrows by the basic filter', async () => {
    const list = (filter: TimeseriesFilterQuery['filter']) => h.client.timeseries.list({ filter, limit: 1000 }).autoPagingToArray({ limit: -1 });
    expect(await list({ externalIdPrefix: 'sdk-ts-l', isString: true })).toHaveLength(3);
    expect(await list({ externalIdPrefix: 'sdk-ts-l', isStep: true, unit: 'm3/h' })).toHaveLength(15);
    expect(await list({ externalIdPrefix: 'sdk-ts-l', metadata: { bucket: '1' } })).toHaveLength(8);
    expect(xids(await list({ assetIds: [assetId], externalIdPrefix: 'sdk-ts-l' }))).toEqual(['sdk-ts-l00', 'sdk-ts-l01', 'sdk-ts-l02', 'sdk-ts-l03', 'sdk-ts-l04']);
    expect(await list({ dataSetIds: [{ externalId: 'sdk-ts-ds' }], externalIdPrefix: 'sdk-ts-l' })).toHaveLength(5);
    expect(await list({ assetSubtreeIds: [{ id: assetId }], externalIdPrefix: 'sdk-ts-l' })).toHaveLength(5);
    expect(await list({ assetExternalIds: ['sdk-ts-pump'], externalIdPrefix: 'sdk-ts-l' })).toHaveLength(5);
    expect(await list({ name: 'line speed 1' })).toHaveLength(1);
    const since = await list({ externalIdPrefix: 'sdk-ts-l', createdTime: { min: 0 }, lastUpdatedTime: { max: Date.now() + 60_000 } });
    expect(since).toHaveLength(30);
  });

  it('reads in partitions that together are the whole list', async () => {
    const scope = { filter: { externalIdPrefix: 'sdk-ts-l' }, limit: 4 };
    const parts = await Promise.all(
      ['1/3', '2/3', '3/3'].map((partition) => h.client.timeseries.list({ ...scope, partition }).autoPagingToArray({ limit: -1 })),
    );
    const ids = parts.flat().map((t) => t.id);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('takes an advanced filter and a sort in the list scope', async () => {
    const scope = {
      advancedFilter: {
        and: [
          { prefix: { property: ['externalId'], value: 'sdk-ts-l' } },
          { equals: { property: ['metadata', 'bucket'], value: '2' } },
          { not: { equals: { property: ['isString'], value: true } } },
        ],
      },
      sort: [{ property: ['externalId'], order: 'desc' }],
      limit: 3,
    } as TimeseriesFilterQuery;
    const got = await h.client.timeseries.list(scope).autoPagingToArray({ limit: -1 });
    expect(got.map((t) => t.externalId)).toEqual(['sdk-ts-l26', 'sdk-ts-l22', 'sdk-ts-l18', 'sdk-ts-l14', 'sdk-ts-l10', 'sdk-ts-l06', 'sdk-ts-l02']);
  });

  it('searches by name, description and query, within a filter', async () => {
    const byName = await h.client.timeseries.search({ search: { name: 'cooling' }, filter: { externalIdPrefix: 'sdk-ts-l' }, limit: 100 });
    expect(byName).toHaveLength(10);
    const byDescription = await h.client.timeseries.search({ search: { description: 'weekly' }, filter: { isString: false } });
    expect(xids(byDescription)).toEqual(['sdk-ts-l00', 'sdk-ts-l05', 'sdk-ts-l10', 'sdk-ts-l15', 'sdk-ts-l20', 'sdk-ts-l25']);
    const byQuery = await h.client.timeseries.search({ search: { query: 'cooling weekly' }, filter: { externalIdPrefix: 'sdk-ts-l' }, limit: 3 });
    expect(byQuery).toHaveLength(3);
    // Both words match first.
    expect(byQuery[0].name).toMatch(/^cooling/);
    expect(byQuery[0].description).toBe('checked weekly');
  });

  it('counts with the basic filter, and answers the other aggregates', async () => {
    expect(await h.client.timeseries.aggregate({ filter: { externalIdPrefix: 'sdk-ts-l', isString: true } })).toEqual([{ count: 3 }]);
    const aggregate = (query: object) => h.client.timeseries.aggregate(query as never) as Promise<unknown[]>;
    const advancedFilter = { prefix: { property: ['externalId'], value: 'sdk-ts-l' } };
    expect(await aggregate({ aggregate: 'count', advancedFilter })).toEqual([{ count: 30 }]);
    expect(await aggregate({ aggregate: 'cardinalityValues', properties: [{ property: ['unit'] }], advancedFilter })).toEqual([{ count: 2 }]);
    const units = (await aggregate({ aggregate: 'uniqueValues', properties: [{ property: ['unit'] }], advancedFilter })) as Array<{ count: number; values: string[] }>;
    expect(units.map((u) => [u.values, u.count]).sort()).toEqual([[['m3/h'], 15], [['rpm'], 15]]);
    expect(await aggregate({ aggregate: 'uniqueProperties', path: ['metadata'], advancedFilter })).toEqual([
      { count: 30, values: [{ property: ['metadata', 'bucket'] }], value: { property: ['metadata', 'bucket'] } },
    ]);
    expect(await aggregate({ aggregate: 'cardinalityProperties', path: ['metadata'], advancedFilter })).toEqual([{ count: 1 }]);
  });

  it('lists with GET, with the query parameters of the reference', async () => {
    const res = await h.client.get<{ items: Timeseries[]; nextCursor?: string }>(projectPath('/timeseries'), {
      params: { limit: 2, includeMetadata: false, assetIds: [assetId], externalIdPrefix: 'sdk-ts-l' },
    });
    expect(res.status).toBe(200);
    expect(res.data.items).toHaveLength(2);
    expect(res.data.items[0].metadata).toBeUndefined();
    const next = await h.client.get<{ items: Timeseries[] }>(projectPath('/timeseries'), {
      params: { limit: 10, includeMetadata: false, assetIds: [assetId], externalIdPrefix: 'sdk-ts-l', cursor: res.data.nextCursor },
    });
    expect(next.data.items).toHaveLength(3);
    const part = await h.client.get<{ items: Timeseries[] }>(projectPath('/timeseries'), { params: { partition: '1/1', rootAssetIds: [assetId], limit: 100 } });
    expect(part.data.items.length).toBeGreaterThanOrEqual(6);
  });
});

describe('update and delete', () => {
  it('updates by id, external id and instance id, with set, add, remove and setNull', async () => {
    const instanceId = { space: 'sdk-space', externalId: 'sdk-ts-dm-upd' };
    const [a, b] = await h.client.timeseries.create([
      { externalId: 'sdk-ts-u1', name: 'before', unit: 'bar', metadata: { keep: '1', drop: '2' }, securityCategories: [1, 2], assetId },
      { externalId: 'sdk-ts-u2', instanceId, metadata: { a: '1' } } as never,
    ]);
    const [byId, byInstance] = await h.client.timeseries.update([
      { id: a.id, update: { name: { set: 'after' }, metadata: { add: { added: '3' }, remove: ['drop'] }, securityCategories: { add: [3], remove: [1] } } },
      { instanceId, update: { metadata: { set: { b: '2' } }, assetId: { set: assetId }, dataSetId: { set: dataSetId }, externalId: { set: 'sdk-ts-u2-renamed' } } },
    ]);
    const [byXid] = await h.client.timeseries.update([
      { externalId: 'sdk-ts-u1', update: { unit: { setNull: true }, description: { set: 'now described' }, dataSetId: { set: dataSetId } } },
    ]);
    expect(byId).toMatchObject({ name: 'after', metadata: { keep: '1', added: '3' }, securityCategories: [2, 3] });
    expect(byXid).toMatchObject({ name: 'after', description: 'now described', dataSetId });
    expect(byXid.unit).toBeUndefined();
    expect(byInstance).toMatchObject({ id: b.id, externalId: 'sdk-ts-u2-renamed', metadata: { b: '2' }, assetId, dataSetId });
    const [again] = await h.client.timeseries.update([{ id: a.id, update: { securityCategories: { set: [] }, assetId: { setNull: true }, metadata: { set: {} } } }]);
    expect(again.securityCategories ?? []).toEqual([]);
    expect(again.assetId).toBeUndefined();
    expect(again.metadata ?? {}).toEqual({});
  });

  it('refuses a request naming one series twice with 422 and the duplicate', async () => {
    const [t] = await h.client.timeseries.create([{ externalId: 'sdk-ts-twice' }]);
    const update = await clientFailure(
      h.client.timeseries.update([
        { id: t.id, update: { name: { set: 'a' } } },
        { externalId: 'sdk-ts-twice', update: { description: { set: 'b' } } },
      ]),
    );
    expect(update.status).toBe(422);
    expect(update.duplicated).toEqual([{ id: t.id }]);
    const retrieve = await clientFailure(h.client.timeseries.retrieve([{ id: t.id }, { id: t.id }]));
    expect(retrieve.status).toBe(422);
  });

  it('refuses an update of an unknown series with 400 and missing', async () => {
    const err = await clientFailure(h.client.timeseries.update([{ externalId: 'sdk-ts-gone', update: { name: { set: 'x' } } }]));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ externalId: 'sdk-ts-gone' }]);
  });

  it('deletes by id and external id, and ignores unknown ids when asked', async () => {
    const [a, b] = await h.client.timeseries.create([{ externalId: 'sdk-ts-d1' }, { externalId: 'sdk-ts-d2' }]);
    expect(await h.client.timeseries.delete([{ id: a.id }, { externalId: 'sdk-ts-d2' }])).toEqual({});
    const left = await h.client.timeseries.retrieve([{ id: a.id }, { id: b.id }], { ignoreUnknownIds: true });
    expect(left).toEqual([]);
    const err = await clientFailure(h.client.timeseries.delete([{ externalId: 'sdk-ts-d1' }]));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ externalId: 'sdk-ts-d1' }]);
    const res = await h.client.post(projectPath('/timeseries/delete'), { data: { items: [{ externalId: 'sdk-ts-d1' }], ignoreUnknownIds: true } });
    expect(res.status).toBe(200);
  });
});
