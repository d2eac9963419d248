/**
 * Instances over HTTP: apply (create, patch, replace, versions, references, constraints), by ids, delete,
 * list (filter, sort, cursor, notices), inspect, search, aggregate and statistics, with the bad input each
 * refuses in the spec's error shape, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_BATCH } from '../../src/resources/models/instance-search.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
const C = (externalId: string) => ({ type: 'container', space: 'inst', externalId });
const VIEW = { type: 'view', space: 'inst', externalId: 'Pump', version: '1' };
const map = (container: string, p: string) => ({ container: C(container), containerPropertyIdentifier: p });
const node = (externalId: string, properties?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  instanceType: 'node',
  space: 'inst',
  externalId,
  ...(properties ? { sources: [{ source: VIEW, properties }] } : {}),
  ...extra,
});
const ref = (externalId: string) => ({ instanceType: 'node', space: 'inst', externalId });

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function read(externalId: string, instanceType = 'node') {
  const res = await ok('/models/instances/byids', { items: [{ instanceType, space: 'inst', externalId }], sources: [{ source: VIEW }] });
  return res.items[0];
}

beforeAll(async () => {
  h = await startHarness();
  await ok('/models/spaces', { items: [{ space: 'inst' }, { space: 'other' }] });
  await ok('/models/containers', {
    items: [
      {
        space: 'inst',
        externalId: 'Pump',
        properties: {
          name: { type: { type: 'text', maxTextSize: 20 } },
          pressure: { type: { type: 'float64' }, nullable: false },
          serial: { type: { type: 'int64' }, immutable: true },
          tags: { type: { type: 'text', list: true, maxListSize: 3 } },
          status: { type: { type: 'enum', values: { on: {}, off: {} } }, defaultValue: 'off' },
          parent: { type: { type: 'direct' } },
          at: { type: { type: 'timestamp' } },
          code: { type: { type: 'text' } },
        },
        indexes: { byPressure: { properties: ['pressure'], cursorable: true } },
        constraints: { uniqueCode: { constraintType: 'uniqueness', properties: ['code'] } },
      },
      { space: 'inst', externalId: 'Motor', properties: { power: { type: { type: 'int32' } } }, constraints: { pump: { constraintType: 'requires', require: C('Pump') } } },
      { space: 'inst', externalId: 'Flow', usedFor: 'edge', properties: { rate: { type: { type: 'float64' } } } },
    ],
  });
  await ok('/models/views', {
    items: [
      {
        space: 'inst',
        externalId: 'Pump',
        version: '1',
        properties: Object.fromEntries(['name', 'pressure', 'serial', 'tags', 'status', 'parent', 'at', 'code'].map((p) => [p, map('Pump', p)])),
      },
    ],
  });
});
afterAll(() => h.close());

describe('apply', () => {
  it('creates nodes with typed values and reads them back through the view, with typing', async () => {
    const res = await ok('/models/instances', {
      items: [node('a', { name: 'Alpha', pressure: 1.5, serial: 7, tags: ['x', 'y'], parent: { space: 'inst', externalId: 'root' }, at: '2024-05-01T12:00:00+02:00' })],
    });
    expect(res.items[0]).toMatchObject({ instanceType: 'node', space: 'inst', externalId: 'a', version: 1, wasModified: true });
    const byIds = await ok('/models/instances/byids', { items: [ref('a'), ref('unknown')], sources: [{ source: VIEW }], includeTyping: true });
    expect(byIds.items).toHaveLength(1);
    expect(byIds.items[0].properties.inst['Pump/1']).toEqual({
      name: 'Alpha',
      pressure: 1.5,
      serial: 7,
      tags: ['x', 'y'],
      status: 'off',
      parent: { space: 'inst', externalId: 'root' },
      at: '2024-05-01T10:00:00.000+00:00',
    });
    expect(byIds.typing.inst['Pump/1'].pressure).toMatchObject({ type: { type: 'float64', list: false }, nullable: false });
    // The direct relation's target was created (autoCreateDirectRelations defaults to true).
    expect((await ok('/models/instances/byids', { items: [ref('root')] })).items).toHaveLength(1);
  });

  it('patches only the properties given; an identical write changes nothing', async () => {
    await ok('/models/instances', { items: [node('patch', { name: 'P', pressure: 1 })] });
    const [p1] = (await ok('/models/instances', { items: [node('patch', { pressure: 2 })] })).items;
    expect(p1).toMatchObject({ version: 2, wasModified: true });
    expect((await read('patch')).properties.inst['Pump/1']).toMatchObject({ name: 'P', pressure: 2 });
    const [same] = (await ok('/models/instances', { items: [node('patch', { pressure: 2 })] })).items;
    expect(same).toMatchObject({ version: 2, wasModified: false, lastUpdatedTime: p1.lastUpdatedTime });
  });

  it('replace rewrites the containers reached: omitted properties become their default or null', async () => {
    await ok('/models/instances', { items: [node('rep', { name: 'R', pressure: 1, status: 'on', tags: ['a'] })] });
    await ok('/models/instances', { replace: true, items: [node('rep', { pressure: 5 })] });
    expect((await read('rep')).properties.inst['Pump/1']).toEqual({ pressure: 5, status: 'off' });
    const missing = await h.post('/models/instances', { replace: true, items: [node('rep', { name: 'no pressure' })] });
    expect(errorMessage(missing, 400)).toMatch(/items\[0\]: the container inst:Pump needs values for "pressure"/);
  });

  it('refuses values of the wrong type, over their limits, or missing when required, writing nothing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ pressure: 'high' }, /items\[1\]\.sources\[0\]\.properties\.pressure: expected a number/],
      [{ pressure: 1, name: 'x'.repeat(21) }, /properties\.name: text of 21 bytes is longer than the property's limit of 20/],
      [{ pressure: 1, tags: ['a', 'b', 'c', 'd'] }, /properties\.tags: a list of 4 values is longer than the property's limit of 3/],
      [{ pressure: 1, status: 'broken' }, /properties\.status: expected one of the enum's values/],
      [{ pressure: 1, at: 'yesterday' }, /properties\.at: expected a timestamp/],
      [{ pressure: 1, nope: 1 }, /properties\.nope: the view inst:Pump\/1 has no property "nope"/],
      [{ name: 'no pressure' }, /needs values for "pressure"/],
      [{ pressure: null }, /properties\.pressure: the property is not nullable/],
    ];
    for (const [properties, message] of cases) {
      const res = await h.post('/models/instances', { items: [node('fresh-ok', { pressure: 1 }), node('bad', properties)] });
      expect(errorMessage(res, 400), JSON.stringify(properties)).toMatch(message);
    }
    expect((await ok('/models/instances/byids', { items: [ref('fresh-ok'), ref('bad')] })).items).toEqual([]);
  });

  it('refuses more than 1000 items, the same instance twice, and malformed identifiers', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => node(`m${i}`));
    expect(errorMessage(await h.post('/models/instances', { items: many }), 400)).toMatch(/1000/);
    const twice = await h.post('/models/instances', { items: [node('twice'), node('twice')] });
    expect(errorMessage(twice, 400)).toBeTruthy();
    expect(twice.body.error.duplicated).toEqual([ref('twice')]);
    expect(errorMessage(await h.post('/models/instances', { items: [{ ...node('x'), space: '-bad' }] }), 400)).toMatch(/space/);
    expect(errorMessage(await h.post('/models/instances', { items: [node('nospace', undefined, { space: 'ghost' })] }), 400)).toMatch(/spaces do not exist: ghost/);
  });

  it('existingVersion: a newer stored version is a 409 (or skipped), 0 means the instance must not exist', async () => {
    await ok('/models/instances', { items: [node('ver', { pressure: 1 })] });
    await ok('/models/instances', { items: [node('ver', { pressure: 2 })] });
    const stale = await h.post('/models/instances', { items: [node('ver', { pressure: 3 }, { existingVersion: 1 })] });
    expect(errorMessage(stale, 409)).toMatch(/is at version 2, and the request expects version 1/);
    expect((await ok('/models/instances', { items: [node('ver', { pressure: 3 }, { existingVersion: 2 })] })).items[0].version).toBe(3);
    expect(errorMessage(await h.post('/models/instances', { items: [node('ver', { pressure: 4 }, { existingVersion: 0 })] }), 409)).toMatch(/version 3/);
    const skipped = await ok('/models/instances', { skipOnVersionConflict: true, items: [node('ver', { pressure: 9 }, { existingVersion: 1 }), node('ver-new', { pressure: 1 })] });
    expect(skipped.items.map((i: any) => i.externalId)).toEqual(['ver-new']);
    expect((await read('ver')).properties.inst['Pump/1'].pressure).toBe(3);
  });

  it('a reference to a missing node with auto-creation off is a 400 naming it; edges need their end nodes', async () => {
    const direct = await h.post('/models/instances', { autoCreateDirectRelations: false, items: [node('dr', { pressure: 1, parent: { space: 'inst', externalId: 'ghost-parent' } })] });
    expect(errorMessage(direct, 400)).toMatch(/inst:ghost-parent/);
    expect(direct.body.error.missing).toEqual([ref('ghost-parent')]);
    const edge = { instanceType: 'edge', space: 'inst', externalId: 'e1', type: { space: 'inst', externalId: 'flows' }, startNode: { space: 'inst', externalId: 'a' }, endNode: { space: 'inst', externalId: 'ghost-end' } };
    const refused = await h.post('/models/instances', { items: [edge] });
    expect(errorMessage(refused, 400)).toMatch(/end nodes inst:ghost-end do/);
    expect(refused.body.error.missing).toEqual([ref('ghost-end')]);
    expect((await ok('/models/instances/byids', { items: [{ ...ref('e1'), instanceType: 'edge' }, ref('ghost-end'), ref('dr')] })).items).toEqual([]);
    const created = await ok('/models/instances', { autoCreateEndNodes: true, items: [{ ...edge, sources: [{ source: C('Flow'), properties: { rate: 2.5 } }] }] });
    expect(created.items[0]).toMatchObject({ instanceType: 'edge', version: 1 });
    const [e] = (await ok('/models/instances/byids', { items: [{ ...ref('e1'), instanceType: 'edge' }] })).items;
    expect(e).toMatchObject({ type: { space: 'inst', externalId: 'flows' }, startNode: { space: 'inst', externalId: 'a' }, endNode: { space: 'inst', externalId: 'ghost-end' } });
    const wrongKind = await h.post('/models/instances', { items: [{ ...node('n-flow'), sources: [{ source: C('Flow'), properties: { rate: 1 } }] }] });
    expect(errorMessage(wrongKind, 400)).toMatch(/holds edge data, and this is a node/);
  });

  it('immutable properties keep their first value', async () => {
    await ok('/models/instances', { items: [node('imm', { pressure: 1, serial: 10 })] });
    await ok('/models/instances', { items: [node('imm', { serial: 10 })] });
    expect(errorMessage(await h.post('/models/instances', { items: [node('imm', { serial: 11 })] }), 400)).toMatch(/"serial" of the container inst:Pump is immutable/);
  });

  it('uniqueness constraints are 409 and requires constraints 400, and the request writes nothing', async () => {
    await ok('/models/instances', { items: [node('u1', { pressure: 1, code: 'A-1' })] });
    const dup = await h.post('/models/instances', { items: [node('u-new', { pressure: 1 }), node('u2', { pressure: 1, code: 'A-1' })] });
    expect(errorMessage(dup, 409)).toMatch(/uniqueCode/);
    expect((await ok('/models/instances/byids', { items: [ref('u-new'), ref('u2')] })).items).toEqual([]);
    const motorOnly = await h.post('/models/instances', { items: [{ ...node('motor'), sources: [{ source: C('Motor'), properties: { power: 5 } }] }] });
    expect(errorMessage(motorOnly, 400)).toMatch(/requires data in inst:Pump/);
    await ok('/models/instances', {
      items: [{ ...node('motor'), sources: [{ source: C('Motor'), properties: { power: 5 } }, { source: C('Pump'), properties: { pressure: 1 } }] }],
    });
  });
});

describe('delete, inspect and statistics', () => {
  it('deletes nodes with their edges; unknown ones are skipped; deleted instances are gone from reads', async () => {
    await ok('/models/instances', {
      autoCreateStartNodes: true,
      autoCreateEndNodes: true,
      items: [{ instanceType: 'edge', space: 'inst', externalId: 'link', type: { space: 'inst', externalId: 't' }, startNode: { space: 'inst', externalId: 's' }, endNode: { space: 'inst', externalId: 'd' } }],
    });
    const before = (await h.get('/models/statistics')).body.instances;
    const res = await ok('/models/instances/delete', { items: [ref('s'), ref('never')] });
    expect(res.items).toEqual([ref('s')]);
    expect((await ok('/models/instances/byids', { items: [ref('s'), { ...ref('link'), instanceType: 'edge' }, ref('d')] })).items.map((i: any) => i.externalId)).toEqual(['d']);
    const after = (await h.get('/models/statistics')).body.instances;
    expect(after.softDeletedNodes - before.softDeletedNodes).toBe(1);
    expect(after.softDeletedEdges - before.softDeletedEdges).toBe(1);
    const spaces = (await ok('/models/statistics/spaces/byids', { items: [{ space: 'inst' }, { space: 'nope' }] })).items;
    expect(spaces).toHaveLength(1);
    expect(spaces[0].nodes).toBe(after.nodes);
  });

  it('inspect names the containers an instance has data in and the views that map them', async () => {
    const res = await ok('/models/instances/inspect', { inspectionOperations: { involvedContainers: {}, involvedViews: {} }, items: [ref('a'), ref('root')] });
    const byId = Object.fromEntries(res.items.map((i: any) => [i.externalId, i.inspectionResults]));
    expect(byId.a).toEqual({ involvedContainers: [C('Pump')], involvedViews: [VIEW] });
    expect(byId.root).toEqual({ involvedContainers: [], involvedViews: [] });
    expect(errorMessage(await h.post('/models/instances/inspect', { inspectionOperations: {}, items: [ref('a')] }), 400)).toMatch(/involvedViews/);
  });
});

describe('list', () => {
  beforeAll(async () => {
    await ok('/models/instances', {
      items: Array.from({ length: 30 }, (_, i) => node(`l${String(i).padStart(2, '0')}`, { pressure: i % 7, name: i % 3 === 0 ? `big ${i}` : `small ${i}`, tags: [i % 2 ? 'odd' : 'even'] })),
    });
  });

  it('filters, sorts and pages with a cursor, each instance once', async () => {
    const body = {
      sources: [{ source: VIEW }],
      filter: { and: [{ prefix: { property: ['node', 'externalId'], value: 'l' } }, { not: { equals: { property: ['inst', 'Pump/1', 'pressure'], value: 0 } } }] },
      sort: [{ property: ['inst', 'Pump/1', 'pressure'], direction: 'descending' }],
      limit: 7,
    };
    const seen: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok('/models/instances/list', { ...body, cursor });
      seen.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    const pressures = seen.map((i) => i.properties.inst['Pump/1'].pressure);
    expect(seen).toHaveLength(30 - 5);
    expect(new Set(seen.map((i) => i.externalId)).size).toBe(seen.length);
    expect(pressures).toEqual([...pressures].sort((a, b) => b - a));
    expect(pressures).not.toContain(0);
  });

  it('refuses a cursor with other parameters, a filter on an unknown property, and sorts on lists', async () => {
    const first = await ok('/models/instances/list', { limit: 1 });
    expect(errorMessage(await h.post('/models/instances/list', { limit: 1, cursor: first.nextCursor, instanceType: 'edge' }), 400)).toMatch(/cursor/);
    const unknown = await h.post('/models/instances/list', { filter: { equals: { property: ['inst', 'Pump/1', 'nope'], value: 1 } } });
    expect(errorMessage(unknown, 400)).toMatch(/filter\.equals\.property: the view inst:Pump\/1 has no property "nope"/);
    const wrongType = await h.post('/models/instances/list', { filter: { range: { property: ['inst', 'Pump', 'pressure'], gt: 'x' } } });
    expect(errorMessage(wrongType, 400)).toMatch(/filter\.range\.gt/);
    expect(errorMessage(await h.post('/models/instances/list', { sort: [{ property: ['inst', 'Pump', 'tags'] }] }), 400)).toMatch(/sort\[0\]\.property/);
  });

  it('debug answers notices: a sort no cursorable index serves is named, one the index serves is not', async () => {
    const unbacked = await ok('/models/instances/list', { debug: {}, sort: [{ property: ['inst', 'Pump', 'name'] }], limit: 1 });
    expect(unbacked.debug.notices).toEqual([expect.objectContaining({ code: 'sortNotBackedByIndex', resultExpression: 'list', sort: [{ property: ['inst', 'Pump', 'name'] }] })]);
    const backed = await ok('/models/instances/list', { debug: {}, sort: [{ property: ['inst', 'Pump', 'pressure'] }], limit: 1 });
    expect(backed.debug.notices).toEqual([]);
    const silent = await ok('/models/instances/list', { debug: { emitResults: false }, limit: 1 });
    expect(silent.items).toEqual([]);
  });

  it('lists edges apart from nodes', async () => {
    const edges = await ok('/models/instances/list', { instanceType: 'edge', limit: 1000 });
    expect(edges.items.every((e: any) => e.instanceType === 'edge')).toBe(true);
    expect(edges.items.map((e: any) => e.externalId)).toContain('e1');
  });
});

describe('search and aggregate', () => {
  it('searches text properties of a view, with a filter, ranked by tokens matched', async () => {
    const res = await ok('/models/instances/search', { view: VIEW, query: 'big', filter: { range: { property: ['pressure'], gte: 3 } }, limit: 100 });
    const names = res.items.map((i: any) => i.properties.inst['Pump/1'].name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((n: string) => n.startsWith('big'))).toBe(true);
    expect(errorMessage(await h.post('/models/instances/search', { view: VIEW, query: 'x', properties: ['nope'] }), 400)).toMatch(/Unknown property/);
    const unknownView = await h.post('/models/instances/search', { view: { ...VIEW, version: '9' } });
    expect(errorMessage(unknownView, 400)).toMatch(/views do not exist: inst:Pump\/9/);
  });

  it('aggregates counts, averages and histograms per group', async () => {
    const res = await ok('/models/instances/aggregate', {
      view: VIEW,
      filter: { prefix: { property: ['node', 'externalId'], value: 'l' } },
      aggregates: [{ count: {} }, { max: { property: 'pressure' } }, { histogram: { property: 'pressure', interval: 5 } }],
    });
    const [all] = res.items;
    expect(all.aggregates[0]).toEqual({ aggregate: 'count', value: 30 });
    expect(all.aggregates[1]).toEqual({ aggregate: 'max', property: 'pressure', value: 6 });
    expect(all.aggregates[2].buckets).toEqual([
      { start: 0, count: 22 },
      { start: 5, count: 8 },
    ]);
    const grouped = await ok('/models/instances/aggregate', { view: VIEW, filter: { prefix: { property: ['node', 'externalId'], value: 'l0' } }, groupBy: ['status'], aggregates: [{ count: {} }] });
    expect(grouped.items).toEqual([{ instanceType: 'node', group: { status: 'off' }, aggregates: [{ aggregate: 'count', value: 10 }] }]);
    expect(errorMessage(await h.post('/models/instances/aggregate', { view: VIEW, aggregates: [{ avg: { property: 'name' } }] }), 400)).toMatch(/avg needs a number property/);
  });

  it('searches a view of more instances than one batch, holding one batch of candidates at a time, and ranks as over all of them', async () => {
    await ok('/models/spaces', { items: [{ space: 'many' }] });
    const word = { type: 'container', space: 'many', externalId: 'Word' };
    await ok('/models/containers', { items: [{ space: 'many', externalId: 'Word', properties: { text: { type: { type: 'text' } }, rank: { type: { type: 'int64' } } } }] });
    const WORDS = { type: 'view', space: 'many', externalId: 'Word', version: '1' };
    await ok('/models/views', {
      items: [{ space: 'many', externalId: 'Word', version: '1', properties: { text: { container: word, containerPropertyIdentifier: 'text' }, rank: { container: word, containerPropertyIdentifier: 'rank' } } }],
    });
    const n = SEARCH_BATCH * 2 + SEARCH_BATCH / 2;
    // Every instance has "alpha"; every 3rd "beta", every 7th "gamma"; ranks descend as they were written.
    const text = (i: number) => ['alpha', ...(i % 3 === 0 ? ['beta'] : []), ...(i % 7 === 0 ? ['gamma'] : [])].join(' ');
    for (let at = 0; at < n; at += 1000) {
      const items = Array.from({ length: Math.min(1000, n - at) }, (_, k) => at + k).map((i) => ({
        instanceType: 'node',
        space: 'many',
        externalId: `w${i}`,
        sources: [{ source: WORDS, properties: { text: text(i), rank: n - i } }],
      }));
      await ok('/models/instances', { items });
    }
    // The most rows any one read answers while the searches run.
    let most = 0;
    const reads = h.strata.services.reads;
    h.strata.services.reads = {
      all: async <T,>(query: Parameters<typeof reads.all>[0], options?: Parameters<typeof reads.all>[1]) => {
        const rows = await reads.all<T>(query, options);
        most = Math.max(most, rows.length);
        return rows;
      },
    };
    try {
      const ids = async (body: Record<string, unknown>) => (await ok('/models/instances/search', { view: WORDS, ...body })).items.map((i: any) => i.externalId);
      const all = Array.from({ length: n }, (_, i) => i);
      // Of "beta gamma": the words each matches; most first, then in the order written.
      const score = (i: number) => Number(i % 3 === 0) + Number(i % 7 === 0);
      const ranked = all.filter((i) => score(i) > 0).sort((a, b) => score(b) - score(a) || a - b);
      expect(await ids({ query: 'beta gamma', limit: 30 })).toEqual(ranked.slice(0, 30).map((i) => `w${i}`));
      const gamma = all.filter((i) => i % 7 === 0);
      expect(await ids({ query: 'gamma', limit: 20, sort: [{ property: ['rank'], direction: 'ascending' }] })).toEqual(gamma.reverse().slice(0, 20).map((i) => `w${i}`));
      const counted = await ok('/models/instances/aggregate', { view: WORDS, query: 'beta', aggregates: [{ count: {} }] });
      expect(counted.items[0].aggregates[0].value).toBe(all.filter((i) => i % 3 === 0).length);
      expect(most).toBeLessThanOrEqual(SEARCH_BATCH);
    } finally {
      h.strata.services.reads = reads;
    }
  });
});
