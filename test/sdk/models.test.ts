/**
 * Data modeling through the official JavaScript client, called as its users call it: `client.spaces`,
 * `client.containers`, `client.views`, `client.dataModels` and `client.instances`.
 */
import type { CogniteClient } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'models' });
  client = h.client;
});
afterAll(() => h?.close());

const container = { type: 'container' as const, space: 'sdk', externalId: 'Pump' };
const view = { type: 'view' as const, space: 'sdk', externalId: 'Pump', version: 'v1' };

describe('data modeling through the official JavaScript client', () => {
  it('spaces: upsert, list, retrieve', async () => {
    const created = await client.spaces.upsert([{ space: 'sdk', name: 'SDK' }, { space: 'sdk-other' }]);
    expect(created.items.map((s) => s.space)).toEqual(['sdk', 'sdk-other']);
    const listed = await client.spaces.list().autoPagingToArray({ limit: 100 });
    expect(listed.map((s) => s.space)).toEqual(expect.arrayContaining(['sdk', 'sdk-other']));
    const got = await client.spaces.retrieve(['sdk']);
    expect(got.items[0]).toMatchObject({ space: 'sdk', name: 'SDK', isGlobal: false });
  });

  it('containers and views: upsert, list, retrieve', async () => {
    const [c] = (
      await client.containers.upsert([
        {
          space: 'sdk',
          externalId: 'Pump',
          properties: { name: { type: { type: 'text' } }, pressure: { type: { type: 'float64' }, nullable: false } },
          indexes: { byPressure: { properties: ['pressure'], cursorable: true } },
        } as never,
      ])
    ).items;
    expect(Object.keys(c.properties).sort()).toEqual(['name', 'pressure']);
    expect((await client.containers.list({ space: 'sdk' } as never)).items.map((x) => x.externalId)).toEqual(['Pump']);
    expect((await client.containers.retrieve([{ space: 'sdk', externalId: 'Pump' }])).items).toHaveLength(1);

    const [v] = (
      await client.views.upsert([
        {
          space: 'sdk',
          externalId: 'Pump',
          version: 'v1',
          properties: { name: { container, containerPropertyIdentifier: 'name' }, pressure: { container, containerPropertyIdentifier: 'pressure' } },
        },
      ])
    ).items;
    expect(v.mappedContainers).toEqual([container]);
    expect((await client.views.list({ space: 'sdk' } as never)).items.map((x) => x.externalId)).toEqual(['Pump']);
    const retrieved = await client.views.retrieve([{ space: 'sdk', externalId: 'Pump', version: 'v1' }], { includeInheritedProperties: true } as never);
    expect(retrieved.items[0].properties).toHaveProperty('pressure');
  });

  it('data models: upsert, list, retrieve with inline views, delete', async () => {
    await client.dataModels.upsert([{ space: 'sdk', externalId: 'Plant', version: '1', views: [view] }]);
    const listed = await client.dataModels.list({ space: 'sdk', inlineViews: true } as never);
    expect(listed.items[0].externalId).toBe('Plant');
    const got = await client.dataModels.retrieve([{ space: 'sdk', externalId: 'Plant', version: '1' }], { inlineViews: true } as never);
    expect((got.items[0].views as unknown as Array<{ externalId: string }>)[0].externalId).toBe('Pump');
    await client.dataModels.delete([{ space: 'sdk', externalId: 'Plant', version: '1' }]);
    expect((await client.dataModels.retrieve([{ space: 'sdk', externalId: 'Plant', version: '1' }])).items).toEqual([]);
  });

  it('instances: upsert, retrieve, list with filter and sort, search, aggregate, inspect, delete', async () => {
    const written = await client.instances.upsert({
      items: [1, 2, 3].map((n) => ({
        instanceType: 'node' as const,
        space: 'sdk',
        externalId: `pump-${n}`,
        sources: [{ source: view, properties: { name: `Pump ${n}`, pressure: n * 1.5 } }],
      })),
    });
    expect(written.items.map((i) => i.version)).toEqual([1, 1, 1]);
    const got = await client.instances.retrieve({ items: [{ instanceType: 'node', space: 'sdk', externalId: 'pump-2' }], sources: [{ source: view }] });
    expect(got.items[0].properties).toEqual({ sdk: { 'Pump/v1': { name: 'Pump 2', pressure: 3 } } });
    const listed = await client.instances.list({
      instanceType: 'node',
      sources: [{ source: view }],
      filter: { range: { property: ['sdk', 'Pump/v1', 'pressure'], gt: 2 } },
      sort: [{ property: ['sdk', 'Pump/v1', 'pressure'], direction: 'descending' }],
      limit: 10,
    });
    expect(listed.items.map((i) => i.externalId)).toEqual(['pump-3', 'pump-2']);
    const all = await client.instances.search({ view, query: 'pump 3' });
    expect(all.items.map((i) => i.externalId)[0]).toBe('pump-3');
    const found = await client.instances.search({ view, query: 'pump 3', operator: 'AND' } as never);
    expect(found.items.map((i) => i.externalId)).toEqual(['pump-3']);
    const agg = await client.instances.aggregate({ view, aggregates: [{ avg: { property: 'pressure' } }] });
    expect(agg.items[0].aggregates[0]).toMatchObject({ aggregate: 'avg', property: 'pressure', value: 3 });
    const inspected = await client.instances.inspect({ inspectionOperations: { involvedContainers: {} }, items: [{ instanceType: 'node', space: 'sdk', externalId: 'pump-1' }] } as never);
    expect((inspected as { items: Array<{ inspectionResults: unknown }> }).items[0].inspectionResults).toEqual({ involvedContainers: [container] });
    await client.instances.delete([{ instanceType: 'node', space: 'sdk', externalId: 'pump-1' }]);
    const after = await client.instances.retrieve({ items: [{ instanceType: 'node', space: 'sdk', externalId: 'pump-1' }] });
    expect(after.items).toEqual([]);
  });

  it('instances: sync follows changes and deletes through cursors', async () => {
    const request = {
      with: { pumps: { nodes: { filter: { equals: { property: ['node', 'space'], value: 'sdk-other' } } }, limit: 2 } },
      select: { pumps: { sources: [{ source: view, properties: ['name'] }] } },
    };
    await client.instances.upsert({
      items: ['s1', 's2', 's3'].map((x) => ({ instanceType: 'node' as const, space: 'sdk-other', externalId: x, sources: [{ source: view, properties: { name: x, pressure: 1 } }] })),
    });
    const seen: string[] = [];
    let cursors: Record<string, string> | undefined;
    for (;;) {
      const page = await client.instances.sync({ ...request, ...(cursors ? { cursors } : {}) } as never);
      cursors = page.nextCursor as Record<string, string>;
      if (page.items.pumps.length === 0) break;
      seen.push(...page.items.pumps.map((i) => i.externalId));
    }
    expect(seen.sort()).toEqual(['s1', 's2', 's3']);
    await client.instances.delete([{ instanceType: 'node', space: 'sdk-other', externalId: 's2' }]);
    const changes = await client.instances.sync({ ...request, cursors } as never);
    expect(changes.items.pumps.map((i) => [i.externalId, typeof (i as { deletedTime?: number }).deletedTime])).toEqual([['s2', 'number']]);
    await client.instances.delete(['s1', 's3'].map((x) => ({ instanceType: 'node' as const, space: 'sdk-other', externalId: x })));
  });

  it('instances.sync: a chained set returns the changes of the instances it reaches', async () => {
    const pump = (externalId: string, pressure: number) => ({ instanceType: 'node' as const, space: 'sdk', externalId, sources: [{ source: view, properties: { name: externalId, pressure } }] });
    const at = (externalId: string) => ({ space: 'sdk', externalId });
    const drives = { instanceType: 'edge' as const, space: 'sdk', externalId: 'drives-1', type: at('drives'), startNode: at('motor-1'), endNode: at('fan-1') };
    await client.instances.upsert({ items: [pump('motor-1', 1), pump('fan-1', 1), pump('fan-2', 1), drives] });
    const request = {
      with: {
        motors: { nodes: { filter: { prefix: { property: ['node', 'externalId'], value: 'motor-' } } } },
        drives: { edges: { from: 'motors', direction: 'outwards' as const, maxDistance: 1, filter: { equals: { property: ['edge', 'type'], value: at('drives') } } } },
        driven: { nodes: { from: 'drives', chainTo: 'destination' as const } },
      },
      select: { drives: {}, driven: { sources: [{ source: view, properties: ['pressure'] }] } },
    };
    const first = await client.instances.sync(request);
    expect(first.items.drives.map((e) => e.externalId)).toEqual(['drives-1']);
    expect(first.items.driven.map((n) => [n.externalId, n.properties])).toEqual([['fan-1', { sdk: { 'Pump/v1': { pressure: 1 } } }]]);
    expect(Object.keys(first.nextCursor).sort()).toEqual(['driven', 'drives', 'motors']);
    // Both fans change; only the one the motor drives comes.
    await client.instances.upsert({ items: [pump('fan-2', 2), pump('fan-1', 2)] });
    const next = await client.instances.sync({ ...request, cursors: first.nextCursor });
    expect(next.items.driven.map((n) => n.externalId)).toEqual(['fan-1']);
    expect(next.items.drives).toEqual([]);
    await client.instances.delete([{ instanceType: 'edge', space: 'sdk', externalId: 'drives-1' }]);
    // The edge's type was created as a node with it.
    await client.instances.delete(['motor-1', 'fan-1', 'fan-2', 'drives'].map((externalId) => ({ instanceType: 'node' as const, space: 'sdk', externalId })));
  });

  it('instances.query: chained result sets, selected properties, typing and paging by cursor', async () => {
    await client.instances.upsert({
      items: [
        ...[4, 5, 6].map((n) => ({ instanceType: 'node' as const, space: 'sdk', externalId: `pump-${n}`, sources: [{ source: view, properties: { name: `Pump ${n}`, pressure: n } }] })),
        ...[5, 6].map((n) => ({
          instanceType: 'edge' as const,
          space: 'sdk',
          externalId: `feeds-${n}`,
          type: { space: 'sdk', externalId: 'pump-4' },
          startNode: { space: 'sdk', externalId: 'pump-4' },
          endNode: { space: 'sdk', externalId: `pump-${n}` },
        })),
      ],
    });
    const request = {
      with: {
        first: { nodes: { filter: { equals: { property: ['node', 'externalId'], value: { parameter: 'start' } } } }, limit: 1 },
        feeds: { edges: { from: 'first', direction: 'outwards' as const, maxDistance: 1 }, limit: 1, sort: [{ property: ['edge', 'externalId'] }] },
        fed: { nodes: { from: 'feeds', chainTo: 'destination' as const } },
      },
      select: { feeds: {}, fed: { sources: [{ source: view, properties: ['pressure'] }] } },
      parameters: { start: 'pump-4' },
      includeTyping: true,
    };
    const res = await client.instances.query(request);
    expect(res.items.feeds.map((e) => e.externalId)).toEqual(['feeds-5']);
    expect(res.items.fed.map((n) => [n.externalId, n.properties])).toEqual([['pump-5', { sdk: { 'Pump/v1': { pressure: 5 } } }]]);
    expect(Object.keys(res.typing!.fed.sdk['Pump/v1'])).toEqual(['pressure']);
    expect(Object.keys(res.nextCursor)).toEqual(['feeds']);
    const next = await client.instances.query({ ...request, cursors: { feeds: res.nextCursor.feeds } });
    expect(next.items.feeds.map((e) => e.externalId)).toEqual(['feeds-6']);
    expect(next.items.fed.map((n) => n.externalId)).toEqual(['pump-6']);
    await client.instances.delete(['feeds-5', 'feeds-6'].map((externalId) => ({ instanceType: 'edge' as const, space: 'sdk', externalId })));
    await client.instances.delete([4, 5, 6].map((n) => ({ instanceType: 'node' as const, space: 'sdk', externalId: `pump-${n}` })));
  });

  it('instances: the unit nodes of cdf_cdm_units, retrieved through CogniteUnit and not writable', async () => {
    const unitView = { type: 'view' as const, space: 'cdf_cdm', externalId: 'CogniteUnit', version: 'v1' };
    const degC = { instanceType: 'node' as const, space: 'cdf_cdm_units', externalId: 'temperature:deg_c' };
    const got = await client.instances.retrieve({ items: [degC, { ...degC, externalId: 'pressure:bar' }], sources: [{ source: unitView }] });
    expect(got.items.map((i) => i.externalId)).toEqual(['temperature:deg_c', 'pressure:bar']);
    expect(got.items[0].properties).toEqual({
      cdf_cdm: {
        'CogniteUnit/v1': {
          name: 'DEG_C',
          description: 'Degree Celsius',
          aliases: expect.arrayContaining(['degC', '°C']),
          symbol: '°C',
          quantity: 'Temperature',
          source: 'qudt.org',
          sourceReference: 'https://qudt.org/vocab/unit/DEG_C',
        },
      },
    });
    expect(got.items[1].properties?.cdf_cdm['CogniteUnit/v1']).toMatchObject({ symbol: 'bar', quantity: 'Pressure' });
    await expect(client.instances.upsert({ items: [{ ...degC, sources: [{ source: unitView, properties: { symbol: 'C' } }] }] })).rejects.toMatchObject({ status: 400 });
    await expect(client.instances.delete([degC])).rejects.toMatchObject({ status: 400 });
    expect((await client.instances.retrieve({ items: [degC], sources: [{ source: unitView }] })).items[0]).toMatchObject({ version: got.items[0].version });
  });

  it('instances: a CogniteAsset hierarchy, whose root and path the service keeps as parents are written and moved', async () => {
    const asset = { type: 'view' as const, space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
    const node = (externalId: string, parent: string | null) => ({
      instanceType: 'node' as const,
      space: 'sdk',
      externalId,
      sources: [{ source: asset, properties: { name: externalId, ...(parent ? { parent: { space: 'sdk', externalId: parent } } : {}) } }],
    });
    const hierarchy = async (...externalIds: string[]) => {
      const got = await client.instances.retrieve({ items: externalIds.map((externalId) => ({ instanceType: 'node' as const, space: 'sdk', externalId })), sources: [{ source: asset }] });
      return Object.fromEntries(
        got.items.map((i) => {
          const p = i.properties!.cdf_cdm['CogniteAsset/v1'] as { root: { externalId: string }; path: Array<{ externalId: string }> };
          return [i.externalId, [p.root.externalId, p.path.map((r) => r.externalId).join('/')]];
        }),
      );
    };
    await client.instances.upsert({ items: [node('line', 'plant'), node('plant', null), node('other-plant', null), node('cell', 'line')] });
    expect(await hierarchy('plant', 'line', 'cell')).toEqual({ plant: ['plant', 'plant'], line: ['plant', 'plant/line'], cell: ['plant', 'plant/line/cell'] });

    const moved = await client.instances.upsert({ items: [node('line', 'other-plant')] });
    expect(moved.items[0]).toMatchObject({ externalId: 'line', wasModified: true });
    expect(await hierarchy('line', 'cell')).toEqual({ line: ['other-plant', 'other-plant/line'], cell: ['other-plant', 'other-plant/line/cell'] });

    const cycle = await clientFailure(client.instances.upsert({ items: [node('other-plant', 'cell')] }));
    expect(cycle.status).toBe(400);
    expect(cycle.message).toContain('sdk:other-plant');
    const path = await clientFailure(client.instances.upsert({ items: [{ ...node('cell', 'line'), sources: [{ source: asset, properties: { path: [] } }] }] }));
    expect(path.status).toBe(400);
    expect(await hierarchy('other-plant', 'cell')).toEqual({ 'other-plant': ['other-plant', 'other-plant'], cell: ['other-plant', 'other-plant/line/cell'] });
    await client.instances.delete(['plant', 'line', 'other-plant', 'cell'].map((externalId) => ({ instanceType: 'node' as const, space: 'sdk', externalId })));
  });

  it('deletes views, containers and spaces', async () => {
    await client.instances.delete([2, 3].map((n) => ({ instanceType: 'node' as const, space: 'sdk', externalId: `pump-${n}` })));
    await client.views.delete([{ space: 'sdk', externalId: 'Pump', version: 'v1' }]);
    await client.containers.delete([{ space: 'sdk', externalId: 'Pump' }]);
    await client.spaces.delete(['sdk', 'sdk-other']);
    expect((await client.spaces.retrieve(['sdk', 'sdk-other'])).items).toEqual([]);
  });
});
