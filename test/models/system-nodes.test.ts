/**
 * The system nodes of every project. The unit nodes of `cdf_cdm_units`: one node per unit of the units
 * catalog, with `cdf_cdm:CogniteUnit` data taken from the catalog, read through by ids, lists, search,
 * aggregates and queries; direct relations and time series point at them. The type nodes of the core
 * model's edges (`cdf_cdm:image-360-annotation`). No request writes or deletes them; they count against no
 * project.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureGlobalLayer } from '../../src/resources/models/global-layer.js';
import { applySystemInstances } from '../../src/resources/models/instance-writes-store.js';
import { seedSystemNodes } from '../../src/resources/models/system-nodes.js';
import { appSchema } from '../../src/app.js';
import { migrate } from '../../src/storage/migrate.js';
import { openStore } from '../../src/storage/open.js';
import { sql } from '../../src/storage/sql.js';
import type { Queryable } from '../../src/storage/store.js';
import { bearer, capability, clientToken, createGroup } from '../support/auth.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { newPostgresDatabase, openTestStore, testEngine } from '../support/test-store.js';

interface CatalogUnit {
  externalId: string;
  name: string;
  longName: string;
  symbol: string;
  aliasNames: string[];
  quantity: string;
  source?: string | null;
  sourceReference?: string | null;
}
const catalog: CatalogUnit[] = JSON.parse(readFileSync(new URL('../../catalog/units/units.json', import.meta.url), 'utf8'));
const catalogUnit = (externalId: string) => catalog.find((u) => u.externalId === externalId)!;

const UNITS = 'cdf_cdm_units';
const UNIT_VIEW = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteUnit', version: 'v1' };
const TS_VIEW = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
const unitId = (externalId: string) => ({ instanceType: 'node', space: UNITS, externalId });
const IN_UNITS = { equals: { property: ['node', 'space'], value: UNITS } };
const props = (item: any) => item.properties.cdf_cdm['CogniteUnit/v1'];

/** What the node of a catalog unit holds through CogniteUnit/v1: the catalog's values, nothing else. */
function expected(u: CatalogUnit): Record<string, unknown> {
  const out: Record<string, unknown> = { name: u.name, description: u.longName, aliases: u.aliasNames, symbol: u.symbol, quantity: u.quantity };
  if (u.source != null) out.source = u.source;
  if (u.sourceReference != null) out.sourceReference = u.sourceReference;
  return out;
}

// Principals whose instance access is scoped to the unit space, or to another.
const CLIENTS = [
  { clientId: 'units-reader', clientSecret: 'units-reader-secret', groups: ['units-reader'] },
  { clientId: 'plant-reader', clientSecret: 'plant-reader-secret', groups: ['plant-reader'] },
];

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  await ok('/models/spaces', { items: [{ space: 'plant' }] });
});
afterAll(() => h?.close());

async function ok(path: string, body?: unknown) {
  const res = body === undefined ? await h.get(path) : await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function listAll(body: Record<string, unknown>): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok('/models/instances/list', { ...body, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const byIds = async (externalIds: string[], withSource = true) =>
  (await ok('/models/instances/byids', { items: externalIds.map(unitId), ...(withSource ? { sources: [{ source: UNIT_VIEW }] } : {}) })).items;

describe('the unit nodes of cdf_cdm_units', () => {
  it('are found by id, with the catalog unit as CogniteUnit data', async () => {
    const [deg, fraction] = await byIds(['temperature:deg_c', 'dimensionless_ratio:fraction']);
    expect(deg).toMatchObject({ instanceType: 'node', space: UNITS, externalId: 'temperature:deg_c', version: 1 });
    expect(props(deg)).toEqual(expected(catalogUnit('temperature:deg_c')));
    expect(props(deg)).toMatchObject({ name: 'DEG_C', symbol: '°C', quantity: 'Temperature', source: 'qudt.org', sourceReference: 'https://qudt.org/vocab/unit/DEG_C' });
    expect(props(fraction)).toEqual(expected(catalogUnit('dimensionless_ratio:fraction')));
    // Read through CogniteDescribable, the names are the same.
    const [described] = (await ok('/models/instances/byids', { items: [unitId('temperature:deg_c')], sources: [{ source: { ...UNIT_VIEW, externalId: 'CogniteDescribable' } }] })).items;
    expect(described.properties.cdf_cdm['CogniteDescribable/v1']).toEqual({ name: 'DEG_C', description: 'Degree Celsius', aliases: catalogUnit('temperature:deg_c').aliasNames });
    expect(await byIds(['temperature:no_such_unit'])).toEqual([]);
  });

  it('are one node per catalog unit, listed in the space, each holding its catalog values', async () => {
    const nodes = await listAll({ instanceType: 'node', sources: [{ source: UNIT_VIEW }], filter: { equals: { property: ['node', 'space'], value: UNITS } } });
    expect(nodes.map((n) => n.externalId).sort()).toEqual(catalog.map((u) => u.externalId).sort());
    const byId = new Map(nodes.map((n) => [n.externalId, props(n)]));
    for (const u of catalog) expect(byId.get(u.externalId), u.externalId).toEqual(expected(u));
  });

  it('are listed by a filter on their quantity', async () => {
    const filter = { and: [IN_UNITS, { equals: { property: ['cdf_cdm', 'CogniteUnit/v1', 'quantity'], value: 'Temperature' } }] };
    const nodes = await listAll({ instanceType: 'node', sources: [{ source: UNIT_VIEW }], filter });
    const temperatures = catalog.filter((u) => u.quantity === 'Temperature').map((u) => u.externalId);
    expect(temperatures.length).toBeGreaterThan(1);
    expect(nodes.map((n) => n.externalId).sort()).toEqual(temperatures.sort());
    expect(nodes.every((n) => props(n).quantity === 'Temperature')).toBe(true);
  });

  it('are found by search and counted by aggregates through CogniteUnit', async () => {
    // Global nodes: a search or an aggregate asks for their space (test/dm/clients.test.ts).
    const found = await ok('/models/instances/search', { view: UNIT_VIEW, query: 'celsius', filter: IN_UNITS, limit: 1000 });
    expect(found.items.map((n: any) => n.externalId)).toContain('temperature:deg_c');
    const count = await ok('/models/instances/aggregate', { view: UNIT_VIEW, filter: IN_UNITS, aggregates: [{ count: {} }] });
    expect(count.items[0].aggregates).toEqual([{ aggregate: 'count', value: catalog.length }]);
    const grouped = await ok('/models/instances/aggregate', {
      view: UNIT_VIEW,
      groupBy: ['quantity'],
      filter: { and: [IN_UNITS, { in: { property: ['cdf_cdm', 'CogniteUnit/v1', 'quantity'], values: ['Temperature', 'Pressure'] } }] },
      aggregates: [{ count: {} }],
    });
    const counts = Object.fromEntries(grouped.items.map((g: any) => [g.group.quantity, g.aggregates[0].value]));
    expect(counts).toEqual({
      Temperature: catalog.filter((u) => u.quantity === 'Temperature').length,
      Pressure: catalog.filter((u) => u.quantity === 'Pressure').length,
    });
  });

  it('are read in every project', async () => {
    const res = await h.request('POST', '/api/v1/projects/other/models/instances/byids', { items: [unitId('pressure:bar')], sources: [{ source: UNIT_VIEW }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items.map((n: any) => props(n))).toEqual([expected(catalogUnit('pressure:bar'))]);
  });

  it('are read by every principal that reads instances, whatever its space scope, and a writer scoped to its own space points at them', async () => {
    const seen: Record<string, string[]> = {};
    for (const [client, space] of [
      ['units-reader', UNITS],
      ['plant-reader', 'plant'],
    ]) {
      const scope = { spaceIdScope: { spaceIds: [space] } };
      await createGroup(h, {
        name: client,
        sourceId: client,
        capabilities: [capability('dataModelsAcl', ['READ']), capability('dataModelInstancesAcl', ['READ', 'WRITE'], scope)],
      });
      const token = await clientToken(h, client, `${client}-secret`);
      const res = await h.request('POST', `${h.base}/models/instances/byids`, { items: [unitId('pressure:bar')], sources: [{ source: UNIT_VIEW }] }, bearer(token));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen[client] = res.body.items.map((n: any) => n.externalId);
    }
    expect(seen).toEqual({ 'units-reader': ['pressure:bar'], 'plant-reader': ['pressure:bar'] });
    const token = await clientToken(h, 'plant-reader', 'plant-reader-secret');
    const series = {
      instanceType: 'node',
      space: 'plant',
      externalId: 'scoped-series',
      sources: [{ source: { type: 'view', space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' }, properties: { type: 'numeric', isStep: false, unit: { space: UNITS, externalId: 'pressure:bar' } } }],
    };
    const write = await h.request('POST', `${h.base}/models/instances`, { items: [series] }, bearer(token));
    expect(write.status, JSON.stringify(write.body)).toBe(200);
    // It may read them, never write them.
    const refused = await h.request('POST', `${h.base}/models/instances/delete`, { items: [unitId('pressure:bar')] }, bearer(token));
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(await byIds(['pressure:bar'])).toHaveLength(1);
  });

  it('refuse every write and delete, and nothing changes', async () => {
    const [before] = await byIds(['temperature:deg_c']);
    const changed = { ...unitId('temperature:deg_c'), sources: [{ source: UNIT_VIEW, properties: { symbol: 'C' } }] };
    const refusals: Array<[string, unknown, RegExp]> = [
      ['/models/instances', { items: [changed] }, /items\[0\]: the node cdf_cdm_units:temperature:deg_c is in the system space "cdf_cdm_units"/],
      ['/models/instances', { items: [{ ...unitId('length:new_unit'), sources: [{ source: UNIT_VIEW, properties: { name: 'NEW' } }] }] }, /items\[0\]: the node cdf_cdm_units:length:new_unit/],
      ['/models/instances', { items: [], delete: [unitId('temperature:deg_c')] }, /delete\[0\]: the node cdf_cdm_units:temperature:deg_c/],
      ['/models/instances/delete', { items: [unitId('temperature:deg_c')] }, /items\[0\]: the node cdf_cdm_units:temperature:deg_c/],
      [
        '/models/instances',
        { items: [{ instanceType: 'edge', space: UNITS, externalId: 'e', type: { space: 'plant', externalId: 't' }, startNode: { space: UNITS, externalId: 'temperature:deg_c' }, endNode: { space: UNITS, externalId: 'pressure:bar' } }], autoCreateDirectRelations: true },
        /items\[0\]: the edge cdf_cdm_units:e/,
      ],
    ];
    for (const [path, body, message] of refusals) expect(errorMessage(await h.post(path, body), 400), path).toMatch(message);
    expect(await byIds(['temperature:deg_c'])).toEqual([before]);
    expect(await byIds(['length:new_unit'])).toEqual([]);
  });

  it('are what direct relations point at; one to a unit that does not exist is refused, not created', async () => {
    await ok('/models/containers', { items: [{ space: 'plant', externalId: 'Gauge', properties: { shows: { type: { type: 'direct' } } } }] });
    const gauge = (externalId: string, unit: string) => ({
      instanceType: 'node',
      space: 'plant',
      externalId,
      sources: [{ source: { type: 'container', space: 'plant', externalId: 'Gauge' }, properties: { shows: { space: UNITS, externalId: unit } } }],
    });
    const [before] = await byIds(['pressure:bar']);
    const written = await ok('/models/instances', { items: [gauge('g1', 'pressure:bar')], autoCreateDirectRelations: true });
    expect(written.items).toMatchObject([{ externalId: 'g1', wasModified: true }]);
    expect(await byIds(['pressure:bar'])).toEqual([before]);

    const refused = await h.post('/models/instances', { items: [gauge('g2', 'pressure:no_such_unit')], autoCreateDirectRelations: true });
    expect(errorMessage(refused, 400)).toMatch(/the node cdf_cdm_units:pressure:no_such_unit, which the items refer to and which does not exist, is in the system space "cdf_cdm_units"/);
    expect(await byIds(['pressure:no_such_unit'], false)).toEqual([]);
    expect((await ok('/models/instances/byids', { items: [{ instanceType: 'node', space: 'plant', externalId: 'g2' }] })).items).toEqual([]);
  });

  it('give a time series node its unitExternalId, and are reached from it by a query', async () => {
    const series = (externalId: string, unit: string) => ({
      instanceType: 'node',
      space: 'plant',
      externalId,
      sources: [{ source: TS_VIEW, properties: { name: externalId, type: 'numeric', unit: { space: UNITS, externalId: unit } } }],
    });
    await ok('/models/instances', { items: [series('flow-1', 'volume_flow_rate:m3-per-hr'), series('temp-1', 'temperature:deg_c')] });
    const ts = await ok('/timeseries/byids', { items: [{ instanceId: { space: 'plant', externalId: 'flow-1' } }, { instanceId: { space: 'plant', externalId: 'temp-1' } }] });
    expect(ts.items.map((s: any) => s.unitExternalId)).toEqual(['volume_flow_rate:m3-per-hr', 'temperature:deg_c']);

    const res = await ok('/models/instances/query', {
      with: {
        series: { nodes: { filter: { equals: { property: ['node', 'externalId'], value: 'temp-1' } } } },
        units: { nodes: { from: 'series', through: { source: TS_VIEW, identifier: 'unit' }, direction: 'outwards' } },
      },
      select: { units: { sources: [{ source: UNIT_VIEW, properties: ['symbol', 'quantity'] }] } },
    });
    expect(res.items.units.map((n: any) => [n.externalId, props(n)])).toEqual([['temperature:deg_c', { symbol: '°C', quantity: 'Temperature' }]]);

    // A unit that is not a unit node: the relation requires CogniteUnit data, and nothing is created.
    const refused = await h.post('/models/instances', { items: [series('bad-1', 'temperature:no_such_unit')], autoCreateDirectRelations: true });
    expect(errorMessage(refused, 400)).toMatch(/cdf_cdm_units:temperature:no_such_unit/);
    expect(await byIds(['temperature:no_such_unit'], false)).toEqual([]);
  });

  it('count against no project: not in its statistics', async () => {
    const stats = await ok('/models/statistics');
    const own = await listAll({ instanceType: 'node', filter: { not: { equals: { property: ['node', 'space'], value: UNITS } } } });
    expect(own.length).toBeGreaterThan(0);
    expect(stats.instances.nodes).toBe(own.length);
  });
});

describe('the type nodes of the core model edges', () => {
  const annotationType = { instanceType: 'node', space: 'cdf_cdm', externalId: 'image-360-annotation' };

  it('are in a project from its first data modeling request, read by id, kept out of lists and statistics', async () => {
    const found = (await ok('/models/instances/byids', { items: [annotationType] })).items;
    expect(found).toEqual([expect.objectContaining({ ...annotationType, version: 1 })]);
    const listed = await listAll({ instanceType: 'node', filter: { equals: { property: ['node', 'space'], value: 'cdf_cdm' } } });
    expect(listed.map((n) => n.externalId)).toEqual(['image-360-annotation']);
    const unfiltered = await listAll({ instanceType: 'node' });
    expect(unfiltered.filter((n) => n.space.startsWith('cdf_'))).toEqual([]);
    const stats = await ok('/models/statistics');
    expect(stats.instances.nodes).toBe(unfiltered.length);
  });

  it('are not written or deleted by a request', async () => {
    const write = await h.post('/models/instances', { items: [annotationType] });
    expect(errorMessage(write, 400)).toMatch(/system space "cdf_cdm"/);
    const gone = await h.post('/models/instances/delete', { items: [annotationType] });
    expect(errorMessage(gone, 400)).toMatch(/system space "cdf_cdm"/);
    expect((await ok('/models/instances/byids', { items: [annotationType] })).items).toHaveLength(1);
  });
});

describe('seeding the unit nodes', () => {
  const unitRows = (store: Queryable, projectId: number) =>
    store.all<{ external_id: string; version: number; change_seq: number }>(
      sql`SELECT external_id, version, change_seq FROM dm_instances WHERE project_id = ${projectId} AND space = ${UNITS} ORDER BY external_id`,
    );

  it('writes them once per project, for requests arriving together, and seeding again changes nothing', async () => {
    const store = await openTestStore();
    try {
      const first = await startHarness({}, {}, { store });
      const [a, b] = await Promise.all([first.post('/models/instances/byids', { items: [unitId('pressure:bar')] }), first.get('/models/spaces')]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.items).toHaveLength(1);
      const project = (await store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
      const rows = await unitRows(store, project);
      expect(rows).toHaveLength(catalog.length);
      expect(rows.every((r) => Number(r.version) === 1)).toBe(true);
      await first.close();

      // Seeding again (a project seeded by an earlier build: its digest differs) applies the same nodes and changes nothing.
      await store.run(sql`UPDATE dm_seeds SET digest = 'older' WHERE project_id = ${project}`);
      await store.transaction((db) => seedSystemNodes(db, { cursors: first.strata.services.cursors, now: () => Date.now() + 1000, settings: first.strata.services.settings }, project));
      expect(await unitRows(store, project)).toEqual(rows);
    } finally {
      await store.close();
    }
  });

  it("writes them once when two processes serve the project's first requests together", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-units-'));
    const url = testEngine() === 'postgres' ? await newPostgresDatabase() : undefined;
    const stores = [openStore({ dataDir: dir, databaseUrl: url }), openStore({ dataDir: dir, databaseUrl: url })];
    const apps: Harness[] = [];
    try {
      await migrate(stores[0], appSchema());
      for (const store of stores) apps.push(await startHarness({}, {}, { store }));
      const answers = await Promise.all(apps.map((app) => app.post('/models/instances/byids', { items: [unitId('pressure:bar'), unitId('length:m')] })));
      expect(answers.map((r) => [r.status, r.body.items?.length])).toEqual([
        [200, 2],
        [200, 2],
      ]);
      const project = (await stores[0].get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
      const rows = await unitRows(stores[0], project);
      expect(rows).toHaveLength(catalog.length);
      expect(rows.every((r) => Number(r.version) === 1)).toBe(true);
    } finally {
      for (const app of apps) await app.close();
      for (const store of stores) await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('brings a project from before them up to the catalog at its first request: a unit node it wrote holds the catalog values', async () => {
    const store = await openTestStore();
    try {
      const h2 = await startHarness({}, {}, { store });
      const services = h2.strata.services;
      const project = (await store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!.id;
      // As an earlier build left a project: the core data model, no unit nodes seeded, and one unit node the
      // project wrote itself, with its own values.
      await ensureGlobalLayer(services);
      await store.transaction((db) =>
        applySystemInstances(db, { ...services, db }, project, {
          items: [{ ...unitId('temperature:deg_c'), sources: [{ source: UNIT_VIEW, properties: { name: 'degree Celsius', symbol: 'C', tags: ['mine'] } }] }],
        } as never),
      );
      expect(await unitRows(store, project)).toHaveLength(1);

      const res = await h2.post('/models/instances/byids', { items: [unitId('temperature:deg_c'), unitId('pressure:bar')], sources: [{ source: UNIT_VIEW }] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const [deg, bar] = res.body.items;
      expect(props(deg)).toEqual(expected(catalogUnit('temperature:deg_c')));
      expect(deg.version).toBe(2);
      expect(props(bar)).toEqual(expected(catalogUnit('pressure:bar')));
      expect(await unitRows(store, project)).toHaveLength(catalog.length);
      await h2.close();
    } finally {
      await store.close();
    }
  });
});
