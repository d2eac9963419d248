/**
 * The core data model in every project: its spaces, containers, views and data model are global items every
 * project reads (`isGlobal`, listed with `includeGlobal`, found by ids), that no request changes, that users
 * build on, and that count against no project's limits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemModels } from '../../src/resources/models/core-model.js';
import { seedCoreModel } from '../../src/resources/models/global-layer.js';
import { sql } from '../../src/storage/sql.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { openTestStore } from '../support/test-store.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const CDM = (externalId: string) => ({ type: 'view', space: 'cdf_cdm', externalId, version: 'v1' });

async function ok(path: string, body?: unknown) {
  const res = body === undefined ? await h.get(path) : await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function all(path: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(`${path}${path.includes('?') ? '&' : '?'}limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

describe('the core data model as global items', () => {
  it('lists its spaces, containers, views and data model with includeGlobal only, marked global', async () => {
    await ok('/models/spaces', { items: [{ space: 'mine' }] });
    expect((await all('/models/spaces')).map((s) => s.space)).toEqual(['mine']);
    const spaces = await all('/models/spaces?includeGlobal=true');
    expect(spaces.filter((s) => s.isGlobal).map((s) => s.space).sort()).toEqual(['cdf_cdm', 'cdf_cdm_3d', 'cdf_cdm_units', 'cdf_core', 'cdf_extraction_extensions']);
    expect(spaces.find((s) => s.space === 'mine')).toMatchObject({ isGlobal: false });

    expect(await all('/models/containers')).toEqual([]);
    const containers = await all('/models/containers?includeGlobal=true');
    expect(containers).toHaveLength(systemModels().containers.length);
    expect(containers.every((c) => c.isGlobal)).toBe(true);
    expect(await all('/models/containers?includeGlobal=true&space=cdf_cdm_3d')).not.toHaveLength(0);

    expect(await all('/models/views')).toEqual([]);
    const views = await all('/models/views?includeGlobal=true');
    expect(views).toHaveLength(systemModels().views.length);
    expect(views.every((v) => v.isGlobal)).toBe(true);

    const models = await all('/models/datamodels?includeGlobal=true');
    expect(models).toMatchObject([{ space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1', isGlobal: true }]);
    expect(await all('/models/datamodels')).toEqual([]);
  });

  it('finds them by ids without includeGlobal', async () => {
    expect((await ok('/models/spaces/byids', { items: [{ space: 'cdf_cdm' }] })).items).toMatchObject([{ space: 'cdf_cdm', isGlobal: true }]);
    const [container] = (await ok('/models/containers/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteTimeSeries' }] })).items;
    expect(container).toMatchObject({ isGlobal: true, usedFor: 'node' });
    expect(container.properties.type.type).toMatchObject({ type: 'enum' });
    const [asset] = (await ok('/models/views/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] })).items;
    expect(asset).toMatchObject({ isGlobal: true, writable: true });
    expect(Object.keys(asset.properties)).toHaveLength(23);
    const [model] = (await ok('/models/datamodels/byids?inlineViews=true', { items: [{ space: 'cdf_cdm', externalId: 'CogniteCore' }] })).items;
    expect(model.views).toHaveLength(33);
    expect(model.views.every((v: any) => v.isGlobal)).toBe(true);
  });

  it('refuses every change to them, naming the item, and changes nothing', async () => {
    const asset = (await ok('/models/containers/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset' }] })).items[0];
    const refusals: Array<[string, unknown, RegExp]> = [
      ['/models/spaces', { items: [{ space: 'cdf_cdm', name: 'mine now' }] }, /items\[0\]\.space: the space "cdf_cdm" is in the system space "cdf_cdm"/],
      ['/models/spaces/delete', { items: [{ space: 'cdf_cdm_units' }] }, /items\[0\]\.space: the space "cdf_cdm_units"/],
      ['/models/containers', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset', properties: { x: { type: { type: 'int32' } } } }] }, /items\[0\]: the container cdf_cdm:CogniteAsset is in the system space "cdf_cdm"/],
      ['/models/containers', { items: [{ space: 'cdf_cdm', externalId: 'Brand_new', properties: { x: { type: { type: 'int32' } } } }] }, /the container cdf_cdm:Brand_new/],
      ['/models/containers/delete', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset' }] }, /items\[0\]: the container cdf_cdm:CogniteAsset/],
      ['/models/containers/indexes/delete', { items: [{ space: 'cdf_cdm', containerExternalId: 'CogniteAsset', identifier: Object.keys(asset.indexes)[0] }] }, /the container cdf_cdm:CogniteAsset/],
      ['/models/containers/constraints/delete', { items: [{ space: 'cdf_cdm', containerExternalId: 'CogniteAsset', identifier: 'x' }] }, /the container cdf_cdm:CogniteAsset/],
      ['/models/views', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] }, /items\[0\]: the view cdf_cdm:CogniteAsset\/v1/],
      ['/models/views/delete', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] }, /the view cdf_cdm:CogniteAsset\/v1/],
      ['/models/datamodels', { items: [{ space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1', views: [] }] }, /items\[0\]: the data model cdf_cdm:CogniteCore\/v1/],
      ['/models/datamodels/delete', { items: [{ space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1' }] }, /the data model cdf_cdm:CogniteCore\/v1/],
    ];
    await ok('/models/spaces', { items: [{ space: 'plant' }] });
    refusals.push([
      '/models/datamodels',
      { items: [{ space: 'plant', externalId: 'M', version: '1', views: [{ space: 'cdf_cdm', externalId: 'Sneaky', version: 'v1', properties: {} }] }] },
      /items\[0\]\.views\[0\]: the view cdf_cdm:Sneaky\/v1/,
    ]);
    for (const [path, body, message] of refusals) expect(errorMessage(await h.post(path, body), 400), path).toMatch(message);

    expect((await ok('/models/containers/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset' }] })).items).toEqual([asset]);
    expect((await ok('/models/views/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' }] })).items).toHaveLength(1);
    expect((await ok('/models/datamodels/byids', { items: [{ space: 'cdf_cdm', externalId: 'CogniteCore', version: 'v1' }] })).items[0].views).toHaveLength(33);
    expect((await ok('/models/spaces/byids', { items: [{ space: 'cdf_cdm' }] })).items[0].name).not.toBe('mine now');
  });

  it('refuses instances in cdf_cdm, cdf_cdm_3d and cdf_cdm_units', async () => {
    const node = (space: string) => ({ instanceType: 'node', space, externalId: 'n1' });
    expect(errorMessage(await h.post('/models/instances', { items: [node('cdf_cdm')] }), 400)).toMatch(/items\[0\]: the node cdf_cdm:n1 is in the system space "cdf_cdm"/);
    expect(errorMessage(await h.post('/models/instances', { items: [node('cdf_cdm_3d')] }), 400)).toMatch(/the node cdf_cdm_3d:n1/);
    expect(errorMessage(await h.post('/models/instances', { items: [], delete: [node('cdf_cdm')] }), 400)).toMatch(/delete\[0\]: the node cdf_cdm:n1/);
    expect(errorMessage(await h.post('/models/instances/delete', { items: [node('cdf_cdm')] }), 400)).toMatch(/items\[0\]: the node cdf_cdm:n1/);
    // The unit nodes are the service's (test/models/system-nodes.test.ts).
    const unit = { instanceType: 'node', space: 'cdf_cdm_units', externalId: 'temperature:deg_c' };
    expect(errorMessage(await h.post('/models/instances', { items: [unit] }), 400)).toMatch(/items\[0\]: the node cdf_cdm_units:temperature:deg_c is in the system space "cdf_cdm_units"/);
  });
});

describe('building on the core data model', () => {
  it('user views implement core views and map core containers; instances write core containers through either', async () => {
    await ok('/models/spaces', { items: [{ space: 'site' }] });
    await ok('/models/containers', { items: [{ space: 'site', externalId: 'PumpData', properties: { rating: { type: { type: 'float64' } } } }] });
    const [pump] = (
      await ok('/models/views', {
        items: [
          {
            space: 'site',
            externalId: 'Pump',
            version: '1',
            implements: [CDM('CogniteEquipment')],
            properties: {
              rating: { container: { type: 'container', space: 'site', externalId: 'PumpData' }, containerPropertyIdentifier: 'rating' },
              label: { container: { type: 'container', space: 'cdf_cdm', externalId: 'CogniteDescribable' }, containerPropertyIdentifier: 'name' },
            },
          },
        ],
      })
    ).items;
    expect(pump.isGlobal).toBe(false);
    expect(pump.properties).toHaveProperty('rating');
    expect(pump.properties).toHaveProperty('equipmentType');
    expect(pump.mappedContainers).toEqual(expect.arrayContaining([{ type: 'container', space: 'cdf_cdm', externalId: 'CogniteEquipment' }]));

    await ok('/models/instances', {
      items: [
        { instanceType: 'node', space: 'site', externalId: 'p1', sources: [{ source: { type: 'view', space: 'site', externalId: 'Pump', version: '1' }, properties: { label: 'P-1', rating: 7.5, manufacturer: 'Acme', sourceId: 'erp-1' } }] },
        { instanceType: 'node', space: 'site', externalId: 'a1', sources: [{ source: CDM('CogniteAsset'), properties: { name: 'Area 1', tags: ['x'] } }] },
      ],
    });
    const read = await ok('/models/instances/byids', {
      items: [
        { instanceType: 'node', space: 'site', externalId: 'p1' },
        { instanceType: 'node', space: 'site', externalId: 'a1' },
      ],
      sources: [{ source: CDM('CogniteDescribable') }],
    });
    expect(read.items.map((n: any) => n.properties.cdf_cdm['CogniteDescribable/v1'].name)).toEqual(['P-1', 'Area 1']);
    const equipment = await ok('/models/instances/list', { instanceType: 'node', sources: [{ source: CDM('CogniteEquipment') }] });
    expect(equipment.items.map((n: any) => [n.externalId, n.properties.cdf_cdm['CogniteEquipment/v1'].manufacturer])).toEqual([['p1', 'Acme']]);

    // Another project shares the schema, not the data.
    const other = await h.request('POST', '/api/v1/projects/other/models/instances/list', { instanceType: 'node', sources: [{ source: CDM('CogniteAsset') }] });
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    expect(other.body.items).toEqual([]);
  });

  it('counts none of the core data model in the statistics or against the limits', async () => {
    const stats = await ok('/models/statistics');
    const spaces = (await all('/models/spaces')).length;
    const containers = (await all('/models/containers')).length;
    expect(stats.spaces.count).toBe(spaces);
    expect(stats.containers.count).toBe(containers);
    expect(stats.views.count).toBe((await all('/models/views?allVersions=true')).length);
    expect(stats.dataModels.count).toBe(0);
    const own = (await all('/models/containers')).reduce((n, c) => n + Object.keys(c.properties).length, 0);
    expect(stats.containerProperties.count).toBe(own);
    const perSpace = await ok('/models/statistics/spaces/byids', { items: [{ space: 'cdf_cdm' }, { space: 'site' }] });
    expect(perSpace.items.map((s: any) => s.space)).toEqual(['site']);
  });
});

describe('the global layer in the store', () => {
  it('is written once per database, by the first data modeling request; seeding again changes nothing', async () => {
    const store = await openTestStore();
    const globalRows = async () => (await store.all<{ id: number }>(sql`SELECT id FROM dm_containers WHERE project_id = 0 ORDER BY id`)).map((r) => r.id);
    try {
      const first = await startHarness({}, {}, { store });
      expect((await first.get('/events')).status).toBe(200);
      expect(await globalRows()).toEqual([]);
      // Two requests at once seed it once.
      const [a, b] = await Promise.all([first.get('/models/spaces?includeGlobal=true'), first.get('/models/views?includeGlobal=true')]);
      expect([a.status, b.status]).toEqual([200, 200]);
      const seeded = await globalRows();
      expect(seeded).toHaveLength(systemModels().containers.length);
      await first.close();

      // Seeding again (a process whose catalog differs) changes nothing that is the same.
      const before = (await store.all(sql`SELECT id, definition, layout, last_updated_time FROM dm_containers WHERE project_id = 0 ORDER BY id`));
      await store.transaction((db) => seedCoreModel(db, Date.now() + 1000));
      expect(await store.all(sql`SELECT id, definition, layout, last_updated_time FROM dm_containers WHERE project_id = 0 ORDER BY id`)).toEqual(before);
      const second = await startHarness({}, {}, { store });
      expect((await second.get('/models/views?includeGlobal=true&limit=1000')).body.items).toHaveLength(systemModels().views.length);
      expect(await globalRows()).toEqual(seeded);
      await second.close();
    } finally {
      await store.close();
    }
  });
});
