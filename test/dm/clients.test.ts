/**
 * Data modeling requests as the official clients send them, over HTTP: the system models they write through
 * (cdf_core, cdf_extraction_extensions), a node's `"type": null`, the clients' own debug options, the
 * read-only state fields of a container sent back, floats written as JSON floats, counts and groups over base
 * properties, and the global unit nodes left out of listings that do not ask for their space.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { jobsDone } from '../support/jobs.js';

let h: Harness;
const DESCRIBABLE = { type: 'view', space: 'cdf_core', externalId: 'Describable', version: 'v1' };
const VIEW = { type: 'view', space: 'cl', externalId: 'Pump', version: '1' };
const UNIT = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteUnit', version: 'v1' };
const C = { type: 'container', space: 'cl', externalId: 'Pump' };
const node = (externalId: string, source: object, properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  instanceType: 'node',
  space: 'cl',
  externalId,
  sources: [{ source, properties }],
  ...extra,
});

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The body as sent: `165.0` and `165` parse alike. */
async function text(path: string, body: unknown): Promise<string> {
  const res = await h.strata.app.inject({ method: 'POST', url: `${h.base}${path}`, headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

beforeAll(async () => {
  h = await startHarness();
  await ok('/models/spaces', { items: [{ space: 'cl' }] });
  await ok('/models/containers', {
    items: [
      {
        space: 'cl',
        externalId: 'Pump',
        properties: {
          runTime: { type: { type: 'float64' } },
          weight: { type: { type: 'float32' } },
          readings: { type: { type: 'float64', list: true } },
          year: { type: { type: 'int32' } },
          name: { type: { type: 'text' } },
        },
      },
    ],
  });
  await ok('/models/views', {
    items: [{ space: 'cl', externalId: 'Pump', version: '1', properties: Object.fromEntries(['runTime', 'weight', 'readings', 'year', 'name'].map((p) => [p, { container: C, containerPropertyIdentifier: p }])) }],
  });
  await ok('/models/instances', {
    items: [
      node('p1', VIEW, { runTime: 165, weight: 2, readings: [1, 2.5], year: 1994, name: 'one' }),
      node('p2', VIEW, { runTime: 142.5, year: 2012, name: 'two' }),
    ],
  });
});
afterAll(() => h.close());

describe('system data models beside the core model', () => {
  it('holds cdf_core:Describable/v1, read-only, and nodes are written and read through it', async () => {
    const { type: _, ...describableId } = DESCRIBABLE;
    const views = await ok('/models/views/byids', { items: [describableId] });
    expect(views.items[0]).toMatchObject({ space: 'cdf_core', externalId: 'Describable', isGlobal: true });
    expect(Object.keys(views.items[0].properties).sort()).toEqual(['description', 'labels', 'title']);
    await ok('/models/instances', { items: [node('d1', DESCRIBABLE, { title: 'first', description: 'a describable', labels: ['a', 'b'] })] });
    const read = await ok('/models/instances/byids', { items: [{ instanceType: 'node', space: 'cl', externalId: 'd1' }], sources: [{ source: DESCRIBABLE }] });
    expect(read.items[0].properties.cdf_core['Describable/v1']).toEqual({ title: 'first', description: 'a describable', labels: ['a', 'b'] });
    const spaces = await ok('/models/spaces/byids', { items: [{ space: 'cdf_core' }, { space: 'cdf_extraction_extensions' }] });
    expect(spaces.items.map((s: { space: string; isGlobal: boolean }) => [s.space, s.isGlobal])).toEqual([['cdf_core', true], ['cdf_extraction_extensions', true]]);
    expect(errorMessage(await h.post('/models/containers', { items: [{ space: 'cdf_core', externalId: 'Describable', properties: { x: { type: { type: 'text' } } } }] }), 400)).toMatch(/cdf_/);
  });

  it('holds the extraction extensions, whose views implement the core model views', async () => {
    const res = await ok('/models/views/byids', {
      items: ['CogniteExtractorData', 'CogniteExtractorFile', 'CogniteExtractorTimeSeries'].map((externalId) => ({ space: 'cdf_extraction_extensions', externalId, version: 'v1' })),
    });
    expect(res.items).toHaveLength(3);
    const ts = res.items.find((v: { externalId: string }) => v.externalId === 'CogniteExtractorTimeSeries');
    expect(ts.implements.map((v: { externalId: string }) => v.externalId)).toEqual(['CogniteTimeSeries', 'CogniteExtractorData']);
    expect(Object.keys(ts.properties)).toEqual(expect.arrayContaining(['extractedData', 'isStep', 'unit']));
  });
});

describe('requests as the clients send them', () => {
  it('takes a node\'s "type": null as no type, and refuses it on an edge', async () => {
    await ok('/models/instances', { items: [node('typed', VIEW, { name: 'x' }, { type: null })] });
    const read = await ok('/models/instances/byids', { items: [{ instanceType: 'node', space: 'cl', externalId: 'typed' }] });
    expect(read.items[0]).not.toHaveProperty('type');
    const edge = { instanceType: 'edge', space: 'cl', externalId: 'e', type: null, startNode: { space: 'cl', externalId: 'p1' }, endNode: { space: 'cl', externalId: 'p2' } };
    expect(errorMessage(await h.post('/models/instances', { items: [edge] }), 400)).toMatch(/^items\[0\]\.type: null is not allowed/);
  });

  it('accepts the clients\' own debug options on list, query and sync, and still checks the known ones', async () => {
    const debug = { emitResults: true, includeTranslatedQuery: false, includePlan: false, includeLlmPrompt: false };
    expect((await ok('/models/instances/list', { sources: [{ source: VIEW }], debug })).items.length).toBeGreaterThan(0);
    const query = { with: { n: { nodes: { filter: { hasData: [VIEW] } } } }, select: { n: {} } };
    expect((await ok('/models/instances/query', { ...query, debug })).items.n.length).toBeGreaterThan(0);
    expect((await ok('/models/instances/sync', { ...query, debug })).items.n.length).toBeGreaterThan(0);
    expect(errorMessage(await h.post('/models/instances/list', { debug: { emitResults: 'yes', includeLlmPrompt: true } }), 400)).toMatch(/^debug\.emitResults/);
  });

  it('answers the statements a list, query and sync ran and their plans when asked, also without the results', async () => {
    const debug = { emitResults: false, includeTranslatedQuery: true, includePlan: true };
    // What the store's planner writes: SQLite's steps (SCAN, SEARCH), PostgreSQL's nodes.
    const planned = h.strata.store.kind === 'sqlite' ? /"detail":"(SCAN|SEARCH) / : /"Node Type":/;
    const explained = (d: any, sets: string[]) => {
      const { statements } = d.translatedQuery.query;
      expect(statements.length).toBeGreaterThan(0);
      expect(statements.every((s: unknown) => typeof s === 'string' && /^\s*(WITH|SELECT)\b/i.test(s))).toBe(true);
      expect(d.translatedQuery.parameters.statements).toHaveLength(statements.length);
      expect(d.plan.fullPlan.statements).toHaveLength(statements.length);
      expect(JSON.stringify(d.plan.fullPlan)).toMatch(planned);
      expect(d.plan.profiled).toBe(false);
      expect(Object.keys(d.plan.byIdentifier)).toEqual(sets);
      expect(Array.isArray(d.notices)).toBe(true);
    };

    const list = await ok('/models/instances/list', { sources: [{ source: VIEW }], filter: { equals: { property: ['cl', 'Pump/1', 'name'], value: 'two' } }, debug });
    expect(list.items).toEqual([]);
    explained(list.debug, ['list']);
    expect(list.debug.translatedQuery.parameters.statements.flat()).toContain('two');
    const emitted = await ok('/models/instances/list', { sources: [{ source: VIEW }], debug: { includeTranslatedQuery: true } });
    expect(emitted.items.length).toBeGreaterThan(0);
    expect(emitted.debug.translatedQuery.query.statements.length).toBeGreaterThan(0);
    expect(emitted.debug).not.toHaveProperty('plan');

    const query = { with: { n: { nodes: { filter: { hasData: [VIEW] } } }, e: { edges: { from: 'n' } } }, select: { n: {}, e: {} } };
    const queried = await ok('/models/instances/query', { ...query, debug });
    expect(queried.items.n).toEqual([]);
    explained(queried.debug, ['n', 'e']);

    // The first sync answers nothing and keeps its cursor at the start: the next one reads every node.
    const synced = await ok('/models/instances/sync', { ...query, debug });
    expect(synced.items.n).toEqual([]);
    explained(synced.debug, ['n', 'e']);
    const next = await ok('/models/instances/sync', { ...query, cursors: synced.nextCursor });
    expect(next.items.n.length).toBeGreaterThan(0);

    const plain = await ok('/models/instances/list', { sources: [{ source: VIEW }], debug: {} });
    expect(Object.keys(plain.debug)).toEqual(['notices']);
    expect(errorMessage(await h.post('/models/instances/list', { debug: { includePlan: 'yes' } }), 400)).toMatch(/^debug\.includePlan/);
  });

  it('takes back the read-only constraintState and state of a container as read, and reports its own', async () => {
    const read = (await ok('/models/containers/byids', { items: [{ space: 'cl', externalId: 'Pump' }] })).items[0];
    const sent = {
      space: 'cl',
      externalId: 'Pump',
      properties: { ...read.properties, added: { type: { type: 'text' }, nullable: true, constraintState: { nullability: 'failed' } } },
      // The pumps have no Describable data, so this constraint fails whatever the client says.
      constraints: { seen: { constraintType: 'requires', require: { type: 'container', space: 'cdf_core', externalId: 'Describable' }, state: 'current' } },
      indexes: { byName: { indexType: 'btree', properties: ['name'], state: 'pending' } },
    };
    expect(read.properties.runTime.constraintState).toEqual({});
    const applied = (await ok('/models/containers', { items: [sent] })).items[0];
    expect(applied.properties.added.constraintState).toEqual({});
    // Checked against the stored instances after the apply.
    expect([applied.constraints.seen.state, applied.indexes.byName.state]).toEqual(['pending', 'pending']);
    await jobsDone(h);
    const checked = (await ok('/models/containers/byids', { items: [{ space: 'cl', externalId: 'Pump' }] })).items[0];
    expect([checked.constraints.seen.state, checked.indexes.byName.state]).toEqual(['failed', 'current']);
    const bad = { ...sent, properties: { name: { type: { type: 'text' }, constraintState: { nullability: 'broken' } } } };
    expect(errorMessage(await h.post('/models/containers', { items: [bad] }), 400)).toMatch(/^items\[0\]\.properties\.name\.constraintState\.nullability/);
  });
});

describe('floats written as JSON floats', () => {
  it('writes float32 and float64 values that hold whole numbers with a fraction, and integers without', async () => {
    const body = await text('/models/instances/byids', { items: [{ instanceType: 'node', space: 'cl', externalId: 'p1' }], sources: [{ source: VIEW }] });
    expect(body).toContain('"runTime":165.0');
    expect(body).toContain('"weight":2.0');
    expect(body).toContain('"readings":[1.0,2.5]');
    expect(body).toContain('"year":1994,');
    expect(JSON.parse(body).items[0].properties.cl['Pump/1'].runTime).toBe(165);
    expect(await text('/models/instances/list', { sources: [{ source: VIEW }], filter: { equals: { property: ['node', 'externalId'], value: 'p1' } } })).toContain('"runTime":165.0');
  });

  it('writes avg, min, max and sum as floats and counts as integers', async () => {
    const body = await text('/models/instances/aggregate', {
      view: VIEW,
      aggregates: [{ max: { property: 'runTime' } }, { sum: { property: 'year' } }, { count: { property: 'runTime' } }],
    });
    expect(body).toContain('{"aggregate":"max","property":"runTime","value":165.0}');
    expect(body).toContain('{"aggregate":"sum","property":"year","value":4006.0}');
    expect(body).toContain('{"aggregate":"count","property":"runTime","value":2}');
  });
});

describe('aggregates over base properties', () => {
  it('counts and groups by externalId and space when the view has no property of that name', async () => {
    const res = await ok('/models/instances/aggregate', {
      view: VIEW,
      groupBy: ['externalId'],
      aggregates: [{ count: { property: 'externalId' } }, { count: { property: 'space' } }],
      filter: { prefix: { property: ['name'], value: 't' } },
    });
    expect(res.items).toEqual([{ instanceType: 'node', group: { externalId: 'p2' }, aggregates: [{ aggregate: 'count', property: 'externalId', value: 1 }, { aggregate: 'count', property: 'space', value: 1 }] }]);
    expect(errorMessage(await h.post('/models/instances/aggregate', { view: VIEW, aggregates: [{ count: { property: 'startNode' } }] }), 400)).toMatch(/^aggregates\[0\]\.count\.property: nodes have no base property "startNode"/);
    expect(errorMessage(await h.post('/models/instances/aggregate', { view: VIEW, groupBy: ['type'] }), 400)).toMatch(/^groupBy\[0\]/);
    expect(errorMessage(await h.post('/models/instances/aggregate', { view: VIEW, aggregates: [{ count: { property: 'nope' } }] }), 400)).toMatch(/Unknown property "nope"/);
  });
});

describe('global unit nodes', () => {
  const units = { space: 'cdf_cdm_units' };
  const inUnits = { equals: { property: ['node', 'space'], value: 'cdf_cdm_units' } };

  it('leaves them out of a list unless its filter asks for their space by equals', async () => {
    expect((await ok('/models/instances/list', { sources: [{ source: UNIT }], limit: 5 })).items).toEqual([]);
    expect((await ok('/models/instances/list', { sources: [{ source: UNIT }], filter: { in: { property: ['node', 'space'], values: ['cdf_cdm_units'] } } })).items).toEqual([]);
    expect((await ok('/models/instances/list', { sources: [{ source: UNIT }], filter: inUnits, limit: 5 })).items).toHaveLength(5);
    const both = { and: [inUnits, { equals: { property: ['node', 'externalId'], value: 'temperature:deg_c' } }] };
    expect((await ok('/models/instances/list', { sources: [{ source: UNIT }], filter: both })).items.map((n: { externalId: string }) => n.externalId)).toEqual(['temperature:deg_c']);
    const all = (await ok('/models/instances/list', { limit: 1000 })).items as Array<{ space: string }>;
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((n) => n.space === 'cl')).toBe(true);
  });

  it('leaves them out of a search and an aggregate the same way, and reads them by id', async () => {
    expect((await ok('/models/instances/search', { view: UNIT, query: 'celsius' })).items).toEqual([]);
    expect((await ok('/models/instances/search', { view: UNIT, query: 'celsius', filter: inUnits })).items.length).toBeGreaterThan(0);
    const count = async (filter?: object) => (await ok('/models/instances/aggregate', { view: UNIT, aggregates: [{ count: {} }], ...(filter ? { filter } : {}) })).items[0].aggregates[0].value;
    expect(await count()).toBe(0);
    expect(await count(inUnits)).toBeGreaterThan(100);
    const byIds = await ok('/models/instances/byids', { items: [{ instanceType: 'node', ...units, externalId: 'temperature:deg_c' }] });
    expect(byIds.items).toHaveLength(1);
  });
});
