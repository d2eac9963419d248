import { sql } from '../src/storage/sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function create(items: object[]): Promise<any[]> {
  const res = await h.post('/timeseries', { items });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.items;
}
const count = async (body: object = {}) => (await h.post('/timeseries/aggregate', body)).body.items[0].count as number;
const xids = (items: any[]) => items.map((t) => t.externalId);

describe('create', () => {
  it('creates a new series on every request without externalId (not idempotent)', async () => {
    const before = await count();
    const [a] = await create([{ name: 'anonymous' }]);
    const [b] = await create([{ name: 'anonymous' }]);
    expect(a.id).not.toBe(b.id);
    expect(await count()).toBe(before + 2);
  });

  it('returns every field, with type following isString', async () => {
    const [ds] = (await h.post('/datasets', { items: [{ externalId: 'ts-ds' }] })).body.items;
    const [num, str] = await create([
      {
        externalId: 'ts-num',
        name: 'Pump pressure',
        metadata: { Site: 'North' },
        unit: 'bar',
        unitExternalId: 'pressure:bar',
        isStep: true,
        description: 'outlet pressure',
        securityCategories: [1, 2],
        dataSetId: ds.id,
        legacyName: 'ignored',
      },
      { externalId: 'ts-str', isString: true },
    ]);
    expect(num).toMatchObject({
      externalId: 'ts-num',
      name: 'Pump pressure',
      isString: false,
      type: 'numeric',
      isStep: true,
      unit: 'bar',
      unitExternalId: 'pressure:bar',
      securityCategories: [1, 2],
      dataSetId: ds.id,
    });
    expect(num.legacyName).toBeUndefined();
    expect(str).toMatchObject({ isString: true, type: 'string', isStep: false });
  });

  it('refuses a taken externalId with 409 and creates nothing', async () => {
    const before = await count();
    const res = await h.post('/timeseries', { items: [{ externalId: 'ts-new' }, { externalId: 'ts-num' }] });
    expect(errorMessage(res, 409)).toMatch(/ts-num/);
    expect(res.body.error.duplicated).toEqual([{ externalId: 'ts-num' }]);
    expect(await count()).toBe(before);
    const twice = await h.post('/timeseries', { items: [{ externalId: 'ts-twice' }, { externalId: 'ts-twice' }] });
    expect(twice.body.error.duplicated).toEqual([{ externalId: 'ts-twice' }]);
  });

  it('refuses a taken instanceId with 409, also when the request names it twice, and creates nothing', async () => {
    const instanceId = { space: 'sp', externalId: 'ts-inst' };
    await create([{ externalId: 'ts-inst', instanceId }]);
    const before = await count();
    const taken = await h.post('/timeseries', { items: [{ externalId: 'ts-inst-new' }, { instanceId }] });
    expect(errorMessage(taken, 409)).toMatch(/instance ids: .*ts-inst/);
    expect(taken.body.error.duplicated).toEqual([{ instanceId }]);
    const both = await h.post('/timeseries', { items: [{ externalId: 'ts-inst', instanceId }] });
    expect(errorMessage(both, 409)).toMatch(/external ids and instance ids/);
    expect(both.body.error.duplicated).toEqual([{ externalId: 'ts-inst' }, { instanceId }]);
    const again = { space: 'sp', externalId: 'ts-inst-twice' };
    const twice = await h.post('/timeseries', { items: [{ instanceId: again }, { externalId: 'other', instanceId: again }] });
    expect(errorMessage(twice, 409)).toMatch(/ts-inst-twice/);
    expect(twice.body.error.duplicated).toEqual([{ instanceId: again }]);
    expect(await count()).toBe(before);
  });

  it('refuses bad input, naming the field', async () => {
    const bad: Array<[object, RegExp]> = [
      [{ isString: true, unitExternalId: 'temperature:deg_c' }, /items\[0\]\.unitExternalId: a unit from the unit catalog applies only to numeric/],
      [{ unit: 'x'.repeat(33) }, /items\[0\]\.unit: must be at most 32/],
      [{ dataSetId: 99999 }, /items\[0\]\.dataSetId: no data set with id 99999/],
      [{ assetId: 99999 }, /items\[0\]\.assetId: no asset with id 99999/],
      [{ isStep: 'yes' }, /items\[0\]\.isStep: expected boolean/],
      [{ metadata: { k: 'v'.repeat(10_001) } }, /items\[0\]\.metadata\.k: must be at most 10000/],
      [{ instanceId: { space: '', externalId: 'x' } }, /items\[0\]\.instanceId\.space: must be at least 1 character/],
      [{ name: null }, /items\[0\]\.name: null is not allowed/],
      [{ unitExternalId: 'temperature:celsius' }, /^items\[0\]\.unitExternalId: "temperature:celsius" is not a unit of the units catalog/],
    ];
    const before = await count();
    for (const [item, message] of bad) expect(errorMessage(await h.post('/timeseries', { items: [item] }), 400)).toMatch(message);
    expect(errorMessage(await h.post('/timeseries', { items: Array.from({ length: 1001 }, () => ({})) }), 400)).toMatch(/at most 1000/);
    const oneUnknownUnit = await h.post('/timeseries', { items: [{ unitExternalId: 'pressure:bar' }, { unitExternalId: 'pressure:bars' }] });
    expect(errorMessage(oneUnknownUnit, 400)).toMatch(/^items\[1\]\.unitExternalId: "pressure:bars" is not a unit/);
    expect(await count()).toBe(before);
  });
});

describe('retrieve, update, delete', () => {
  it('retrieves by id, externalId and instanceId in request order', async () => {
    const [a, b] = await create([{ externalId: 'ts-r1' }, { externalId: 'ts-r2', instanceId: { space: 'sp', externalId: 'ts-r2' } }]);
    const res = await h.post('/timeseries/byids', { items: [{ instanceId: { space: 'sp', externalId: 'ts-r2' } }, { externalId: 'ts-r1' }] });
    expect(res.body.items.map((t: any) => t.id)).toEqual([b.id, a.id]);
    expect(res.body.items[0].instanceId).toEqual({ space: 'sp', externalId: 'ts-r2' });
    const missing = await h.post('/timeseries/byids', { items: [{ instanceId: { space: 'sp', externalId: 'nope' } }, { id: a.id }] });
    expect(missing.body.error.missing).toEqual([{ instanceId: { space: 'sp', externalId: 'nope' } }]);
    const ignored = await h.post('/timeseries/byids', { items: [{ instanceId: { space: 'sp', externalId: 'nope' } }, { id: a.id }], ignoreUnknownIds: true });
    expect(ignored.body.items.map((t: any) => t.id)).toEqual([a.id]);
    expect(errorMessage(await h.post('/timeseries/byids', { items: [{ id: a.id, externalId: 'ts-r1' }] }), 400)).toMatch(/exactly one/);
  });

  it('sets and removes unitExternalId, edits isStep, and refuses changing isString', async () => {
    const [t] = await create([{ externalId: 'ts-u', unitExternalId: 'temperature:deg_c' }]);
    const removed = await h.post('/timeseries/update', { items: [{ id: t.id, update: { unitExternalId: { setNull: true }, isStep: { set: true } } }] });
    expect(removed.body.items[0].unitExternalId).toBeUndefined();
    expect(removed.body.items[0].isStep).toBe(true);
    const set = await h.post('/timeseries/update', { items: [{ externalId: 'ts-u', update: { unitExternalId: { set: 'temperature:deg_f' } } }] });
    expect(set.body.items[0].unitExternalId).toBe('temperature:deg_f');
    const [other] = await create([{ externalId: 'ts-u2' }]);
    const unknown = await h.post('/timeseries/update', { items: [{ id: other.id, update: { name: { set: 'renamed' } } }, { externalId: 'ts-u', update: { unitExternalId: { set: 'temp:f' } } }] });
    expect(errorMessage(unknown, 400)).toMatch(/^items\[1\]\.update\.unitExternalId\.set: "temp:f" is not a unit of the units catalog/);
    expect((await h.post('/timeseries/byids', { items: [{ id: t.id }] })).body.items[0].unitExternalId).toBe('temperature:deg_f');
    expect((await h.post('/timeseries/byids', { items: [{ id: other.id }] })).body.items[0].name).toBeUndefined();
    const isString = await h.post('/timeseries/update', { items: [{ id: t.id, update: { isString: { set: true } } }] });
    expect(errorMessage(isString, 400)).toMatch(/update\.isString: isString is fixed/);
    expect(errorMessage(await h.post('/timeseries/update', { items: [{ id: t.id, update: { isStep: { setNull: true } } }] }), 400)).toMatch(
      /isStep/,
    );
  });

  it('only lets fields not managed by data modeling change on a series with an instanceId', async () => {
    const [t] = await create([{ externalId: 'ts-dm', name: 'dm', instanceId: { space: 'sp', externalId: 'ts-dm' } }]);
    const ref = { instanceId: { space: 'sp', externalId: 'ts-dm' } };
    const refused = await h.post('/timeseries/update', { items: [{ ...ref, update: { name: { set: 'x' }, isStep: { set: true }, metadata: { set: { a: 'b' } } } }] });
    expect(errorMessage(refused, 400)).toMatch(/items\[0\]\.update: name, isStep are managed by data modeling/);
    for (const field of ['description', 'unit', 'unitExternalId']) {
      const one = await h.post('/timeseries/update', { items: [{ ...ref, update: { [field]: { setNull: true } } }] });
      expect(errorMessage(one, 400)).toMatch(new RegExp(`items\\[0\\]\\.update: ${field} is managed by data modeling`));
    }
    expect((await h.post('/timeseries/byids', { items: [ref] })).body.items[0].name).toBe('dm');
    const [asset] = (await h.post('/assets', { items: [{ externalId: 'ts-dm-asset', name: 'pump' }] })).body.items;
    // The asset link is asset-centric: the official SDKs update it by instance id (the Python SDK's replace
    // mode clears it with setNull).
    const allowed = await h.post('/timeseries/update', {
      items: [{ ...ref, update: { metadata: { set: { a: 'b' } }, securityCategories: { add: [3] }, assetId: { set: asset.id }, externalId: { set: 'ts-dm-2' } } }],
    });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(allowed.body.items[0]).toMatchObject({ id: t.id, externalId: 'ts-dm-2', metadata: { a: 'b' }, securityCategories: [3], assetId: asset.id });
    const cleared = await h.post('/timeseries/update', { items: [{ ...ref, update: { assetId: { setNull: true }, dataSetId: { setNull: true } } }] });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.items[0].assetId).toBeUndefined();
  });

  it('links series to existing assets, and stays editable after its asset is deleted', async () => {
    const [asset] = (await h.post('/assets', { items: [{ externalId: 'ts-asset', name: 'pump' }] })).body.items;
    const [t] = await create([{ externalId: 'ts-linked', assetId: asset.id }]);
    expect((await h.post('/timeseries/list', { filter: { assetIds: [asset.id] } })).body.items.map((x: any) => x.id)).toEqual([t.id]);
    expect((await h.post('/assets/delete', { items: [{ id: asset.id }] })).status).toBe(200);
    const renamed = await h.post('/timeseries/update', { items: [{ id: t.id, update: { name: { set: 'still editable' } } }] });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    const moved = await h.post('/timeseries/update', { items: [{ id: t.id, update: { assetId: { set: 424242 } } }] });
    expect(moved.body.error.missing).toEqual([{ id: 424242 }]);
  });

  it('filters by assetExternalIds, assetSubtreeIds and rootAssetIds', async () => {
    const assets = await h.post('/assets', {
      items: [
        { externalId: 'tsa-root', name: 'plant' },
        { externalId: 'tsa-line', name: 'line', parentExternalId: 'tsa-root' },
        { externalId: 'tsa-pump', name: 'pump', parentExternalId: 'tsa-line' },
        { externalId: 'tsa-other', name: 'other plant' },
      ],
    });
    const id = Object.fromEntries(assets.body.items.map((a: any) => [a.externalId, a.id]));
    await create([
      { externalId: 'tsa/pump', assetId: id['tsa-pump'] },
      { externalId: 'tsa/line', assetId: id['tsa-line'] },
      { externalId: 'tsa/other', assetId: id['tsa-other'] },
    ]);
    const list = async (filter: object) =>
      xids((await h.post('/timeseries/list', { filter: { externalIdPrefix: 'tsa/', ...filter } })).body.items).sort();
    expect(await list({ assetExternalIds: ['tsa-pump'] })).toEqual(['tsa/pump']);
    expect(await list({ assetSubtreeIds: [{ externalId: 'tsa-line' }] })).toEqual(['tsa/line', 'tsa/pump']);
    expect(await list({ rootAssetIds: [id['tsa-root']] })).toEqual(['tsa/line', 'tsa/pump']);
    expect(xids((await h.get(`/timeseries?rootAssetIds=[${id['tsa-other']}]`)).body.items)).toEqual(['tsa/other']);
    expect((await h.post('/timeseries/list', { filter: { assetSubtreeIds: [{ externalId: 'nope' }] } })).body.error.missing).toEqual([
      { externalId: 'nope' },
    ]);
  });

  it('refuses a request naming one series twice with 422 and the duplicate, as the reference has it for time series', async () => {
    const instanceId = { space: 'sp', externalId: 'ts-twice-dm' };
    const [t] = await create([{ externalId: 'ts-named-twice', instanceId }]);
    const cases: Array<[string, object, unknown[]]> = [
      ['/timeseries/byids', { items: [{ id: t.id }, { externalId: 'ts-named-twice' }, { id: t.id }] }, [{ id: t.id }]],
      ['/timeseries/byids', { items: [{ instanceId }, { instanceId }] }, [{ instanceId }]],
      ['/timeseries/delete', { items: [{ externalId: 'ts-named-twice' }, { externalId: 'ts-named-twice' }] }, [{ externalId: 'ts-named-twice' }]],
      ['/timeseries/update', { items: [{ id: t.id, update: { name: { set: 'a' } } }, { id: t.id, update: { name: { set: 'b' } } }] }, [{ id: t.id }]],
      // Two references to one series are one series named twice.
      ['/timeseries/update', { items: [{ instanceId, update: { name: { set: 'a' } } }, { externalId: 'ts-named-twice', update: { description: { set: 'b' } } }] }, [{ id: t.id }]],
    ];
    for (const [path, body, duplicated] of cases) {
      const res = await h.post(path, body);
      expect(errorMessage(res, 422), path).toMatch(/names the same item more than once/);
      expect(res.body.error.duplicated, path).toEqual(duplicated);
    }
    expect((await h.post('/timeseries/byids', { items: [{ id: t.id }] })).body.items[0].name).toBeUndefined();
  });

  it('deletes by id or externalId, not by instanceId', async () => {
    const [t] = await create([{ externalId: 'ts-del' }]);
    expect(errorMessage(await h.post('/timeseries/delete', { items: [{ instanceId: { space: 'a', externalId: 'b' } }] }), 400)).toMatch(/instanceId/);
    expect((await h.post('/timeseries/delete', { items: [{ externalId: 'ts-del' }, { id: 123456789 }] })).body.error.missing).toEqual([{ id: 123456789 }]);
    expect((await h.post('/timeseries/delete', { items: [{ externalId: 'ts-del' }, { id: 123456789 }], ignoreUnknownIds: true })).status).toBe(200);
    expect((await h.post('/timeseries/byids', { items: [{ id: t.id }] })).body.error.missing).toEqual([{ id: t.id }]);
  });
});

describe('list, search and aggregate', () => {
  beforeAll(async () => {
    await h.post('/datasets', { items: [{ externalId: 'ts-agg-ds' }] });
    const [ds] = (await h.post('/datasets/byids', { items: [{ externalId: 'ts-agg-ds' }] })).body.items;
    await create([
      { externalId: 'agg/a', name: 'compressor temperature', isStep: true, dataSetId: ds.id, instanceId: { space: 'plant', externalId: 'a' } },
      { externalId: 'agg/b', name: 'pump flow', description: 'compressor outlet', dataSetId: ds.id, metadata: { Area: 'North' } },
      { externalId: 'agg/c', name: 'valve state', isString: true, instanceId: { space: 'other', externalId: 'c' } },
    ]);
  });

  it('counts by externalIdPrefix, dataSetIds (ids or external ids) and advancedFilter on instanceId', async () => {
    expect(await count({ filter: { externalIdPrefix: 'agg/' } })).toBe(3);
    expect(await count({ filter: { dataSetIds: [{ externalId: 'ts-agg-ds' }] } })).toBe(2);
    const [ds] = (await h.post('/datasets/byids', { items: [{ externalId: 'ts-agg-ds' }] })).body.items;
    expect(await count({ filter: { dataSetIds: [{ id: ds.id }], isStep: true } })).toBe(1);
    expect(await count({ advancedFilter: { equals: { property: ['instanceId', 'space'], value: 'plant' } } })).toBe(1);
    expect(await count({ advancedFilter: { prefix: { property: ['instanceId', 'externalId'], value: 'c' } } })).toBe(1);
    expect(await count({ filter: { externalIdPrefix: 'agg/' }, advancedFilter: { equals: { property: ['isString'], value: true } } })).toBe(1);
    expect(errorMessage(await h.post('/timeseries/aggregate', { advancedFilter: { equals: { property: ['isString'], value: 'yes' } } }), 400)).toMatch(
      /expected true or false/,
    );
    expect((await h.post('/timeseries/aggregate', { filter: { dataSetIds: [{ externalId: 'nope' }] } })).body.error.missing).toEqual([
      { externalId: 'nope' },
    ]);
  });

  it('aggregates on property paths of up to 256 characters an element, as it filters on them', async () => {
    const key = 'k'.repeat(256);
    const unique = await h.post('/timeseries/aggregate', { aggregate: 'uniqueValues', properties: [{ property: ['metadata', key] }] });
    expect(unique.status, JSON.stringify(unique.body)).toBe(200);
    expect(unique.body.items).toEqual([]);
    const longer = await h.post('/timeseries/aggregate', { aggregate: 'cardinalityValues', properties: [{ property: ['metadata', `${key}k`] }] });
    expect(errorMessage(longer, 400)).toBe('properties[0].property[1]: must be at most 256 characters');
    // Events take at most 128.
    const events = await h.post('/events/aggregate', { aggregate: 'uniqueValues', properties: [{ property: ['metadata', 'k'.repeat(129)] }] });
    expect(errorMessage(events, 400)).toBe('properties[0].property[1]: must be at most 128 characters');
  });

  it('lists with filter, advancedFilter, sort and partitions', async () => {
    const listed = await h.post('/timeseries/list', { filter: { externalIdPrefix: 'agg/' }, sort: [{ property: ['instanceId', 'externalId'], order: 'desc' }] });
    expect(xids(listed.body.items)).toEqual(['agg/b', 'agg/c', 'agg/a']);
    const md = await h.post('/timeseries/list', { advancedFilter: { equals: { property: ['metadata', 'area'], value: 'north' } } });
    expect(xids(md.body.items)).toEqual(['agg/b']);
    const parts: string[] = [];
    for (const p of ['1/2', '2/2']) parts.push(...xids((await h.post('/timeseries/list', { filter: { externalIdPrefix: 'agg/' }, partition: p })).body.items));
    expect(parts.sort()).toEqual(['agg/a', 'agg/b', 'agg/c']);
    const viaGet = await h.get('/timeseries?externalIdPrefix=agg/&partition=1/1&limit=2');
    expect(viaGet.body.items).toHaveLength(2);
    expect(viaGet.body.nextCursor).toBeTruthy();
    expect(errorMessage(await h.get('/timeseries?partition=11/11'), 400)).toMatch(/partition/);
    expect(errorMessage(await h.post('/timeseries/list', { sort: [{ property: ['unit'] }] }), 400)).toMatch(/^sort\[0\]\.property: cannot sort time series on \["unit"\]/);
  });

  it('accepts 256-character property elements and values for time series', async () => {
    const long = 'k'.repeat(256);
    expect((await h.post('/timeseries/list', { advancedFilter: { equals: { property: ['metadata', long], value: long } } })).status).toBe(200);
    expect(errorMessage(await h.post('/timeseries/list', { advancedFilter: { equals: { property: ['metadata', long + 'k'], value: 'x' } } }), 400)).toMatch(
      /at most 256/,
    );
    expect(errorMessage(await h.post('/timeseries/list', { advancedFilter: { equals: { property: ['name'], value: long + 'x' } } }), 400)).toMatch(
      /at most 256/,
    );
  });

  it('filters by unitQuantity, the quantity of the series unit in the catalog, in filter and advancedFilter', async () => {
    const [legacy] = await create([
      { externalId: 'uq/c', unitExternalId: 'temperature:deg_c', name: 'uq oven' },
      { externalId: 'uq/f', unitExternalId: 'temperature:deg_f', name: 'uq oven' },
      { externalId: 'uq/bar', unitExternalId: 'pressure:bar', name: 'uq oven' },
      { externalId: 'uq/none', name: 'uq oven' },
      { externalId: 'uq/legacy', name: 'uq oven' },
    ]).then((items) => items.slice(4));
    // A series stored with a unit the catalog lacks has no quantity.
    await h.strata.services.db.run(sql`UPDATE timeseries SET unit_external_id = 'temperature:legacy' WHERE id = ${legacy.id}`);
    const scope = { externalIdPrefix: 'uq/' };
    const listed = async (body: object) => {
      const res = await h.post('/timeseries/list', body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return xids(res.body.items).sort();
    };
    expect(await listed({ filter: { ...scope, unitQuantity: 'Temperature' } })).toEqual(['uq/c', 'uq/f']);
    expect(await listed({ filter: { ...scope, unitQuantity: 'Pressure' } })).toEqual(['uq/bar']);
    expect(await listed({ filter: { ...scope, unitQuantity: 'temperature' } })).toEqual([]);
    expect(await listed({ filter: { ...scope, unitQuantity: 'Loudness' } })).toEqual([]);
    expect(await count({ filter: { ...scope, unitQuantity: 'Temperature' } })).toBe(2);
    const searched = await h.post('/timeseries/search', { search: { name: 'oven' }, filter: { ...scope, unitQuantity: 'Pressure' } });
    expect(xids(searched.body.items)).toEqual(['uq/bar']);
    const adv = (f: object) => listed({ filter: scope, advancedFilter: f });
    const q = ['unitQuantity'];
    expect(await adv({ equals: { property: q, value: 'Temperature' } })).toEqual(['uq/c', 'uq/f']);
    expect(await adv({ in: { property: q, values: ['Pressure', 'Temperature'] } })).toEqual(['uq/bar', 'uq/c', 'uq/f']);
    expect(await adv({ prefix: { property: q, value: 'Pres' } })).toEqual(['uq/bar']);
    expect(await adv({ equals: { property: q, value: 'temperature' } })).toEqual([]);
    expect(await adv({ range: { property: q, gte: 'P', lt: 'Q' } })).toEqual(['uq/bar']);
    expect(await adv({ range: { property: q, gt: 'Pressure', lte: 'Temperature' } })).toEqual(['uq/c', 'uq/f']);
    expect(await adv({ range: { property: q, gte: 'Pressure', lt: 'Temperature' } })).toEqual(['uq/bar']);
    expect(await adv({ exists: { property: q } })).toEqual(['uq/bar', 'uq/c', 'uq/f']);
    expect(await adv({ not: { equals: { property: q, value: 'Temperature' } } })).toEqual(['uq/bar', 'uq/legacy', 'uq/none']);
    expect(await adv({ and: [{ equals: { property: q, value: 'Temperature' } }, { equals: { property: ['unitExternalId'], value: 'temperature:deg_f' } }] })).toEqual(['uq/f']);
    expect(await count({ filter: scope, advancedFilter: { equals: { property: q, value: 'Temperature' } } })).toBe(2);
    expect(errorMessage(await h.post('/timeseries/list', { advancedFilter: { equals: { property: q, value: 3 } } }), 400)).toMatch(/expected a string for \["unitQuantity"\]/);
    expect(errorMessage(await h.post('/timeseries/list', { filter: { unitQuantity: 'x'.repeat(257) } }), 400)).toMatch(/filter\.unitQuantity: must be at most 256/);
  });

  it('searches name, description, or both with query', async () => {
    const search = async (s: object) => xids((await h.post('/timeseries/search', { search: s, filter: { externalIdPrefix: 'agg/' } })).body.items);
    expect(await search({ name: 'compressor' })).toEqual(['agg/a']);
    expect(await search({ description: 'compressor' })).toEqual(['agg/b']);
    expect((await search({ query: 'compressor' })).sort()).toEqual(['agg/a', 'agg/b']);
    const adv = await h.post('/timeseries/list', { advancedFilter: { search: { property: ['query'], value: 'compressor' } } });
    expect(xids(adv.body.items).sort()).toEqual(['agg/a', 'agg/b']);
    expect(errorMessage(await h.post('/timeseries/list', { advancedFilter: { equals: { property: ['query'], value: 'x' } } }), 400)).toMatch(
      /only be used in a search/,
    );
  });
});
