/**
 * Instance requests checked against the schema: writes (identity, edge ends, values mapped through views
 * to containers, what nodes and edges may hold, required properties and defaults) and the view-relative
 * parts of reads (sources, target units, sorts, searched, grouped and aggregated properties).
 */
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { checkAggregate, checkSearch, checkSort, checkSources } from '../../src/resources/models/instance-reads.js';
import { AggregateInstancesBody, ApplyInstancesBody, SearchInstancesBody } from '../../src/resources/models/instance-schema.js';
import { normalizeInstanceApply, requiredMissing, valuesForNewData, writeSources } from '../../src/resources/models/instance-writes.js';
import { containerRefOf, containers, expectApiError, MemorySchema, viewRefOf, views } from '../support/dm-schema.js';

const C = (x: string) => containerRefOf('sp', x);
const V = (x: string) => viewRefOf('sp', x);
const map = (container: string, property: string) => ({ container: C(container), containerPropertyIdentifier: property });

const CONTAINERS = containers(
  {
    space: 'sp',
    externalId: 'Pump',
    properties: {
      name: { type: { type: 'text' } },
      code: { type: { type: 'text' }, nullable: false },
      pressure: { type: { type: 'float64', unit: { externalId: 'pressure:bar' } } },
      speed: { type: { type: 'float64' } },
      seen: { type: { type: 'timestamp' } },
      tags: { type: { type: 'text', list: true } },
      kind: { type: { type: 'enum', values: { a: {}, b: {} } }, defaultValue: 'a' },
      n: { type: { type: 'int64' }, autoIncrement: true, nullable: false },
      site: { type: { type: 'direct' } },
      meta: { type: { type: 'json' } },
    },
  },
  { space: 'sp', externalId: 'Flow', usedFor: 'edge', properties: { rate: { type: { type: 'float64' } } } },
  { space: 'sp', externalId: 'Any', usedFor: 'all', properties: { note: { type: { type: 'text' } } } },
);
const schema = new MemorySchema(
  CONTAINERS,
  views(
    {
      space: 'sp',
      externalId: 'PumpV',
      version: 'v1',
      properties: {
        title: map('Pump', 'name'),
        code: map('Pump', 'code'),
        pressure: map('Pump', 'pressure'),
        speed: map('Pump', 'speed'),
        seen: map('Pump', 'seen'),
        tags: map('Pump', 'tags'),
        kind: map('Pump', 'kind'),
        site: map('Pump', 'site'),
        meta: map('Pump', 'meta'),
        note: map('Any', 'note'),
        flows: { type: { space: 'sp', externalId: 'flows' }, source: V('PumpV') },
      },
    },
    { space: 'sp', externalId: 'FlowV', version: 'v1', properties: { rate: map('Flow', 'rate') } },
  ),
).resolver();

const validate = compileBodyValidator<never>(ApplyInstancesBody);
const apply = (body: Record<string, unknown>) => normalizeInstanceApply(validate(structuredClone({ items: [], ...body })), schema);
const node = (externalId: string, sources: unknown[] = [], extra: Record<string, unknown> = {}) => ({ instanceType: 'node', space: 'sp', externalId, sources: sources.length ? sources : undefined, ...extra });
const edge = (externalId: string, extra: Record<string, unknown> = {}) => ({
  instanceType: 'edge',
  space: 'sp',
  externalId,
  type: { space: 'sp', externalId: 'flows' },
  startNode: { space: 'sp', externalId: 'a' },
  endNode: { space: 'sp', externalId: 'b' },
  ...extra,
});

describe('instance writes', () => {
  it('maps view properties to container properties and keeps values in stored form', () => {
    const out = apply({ items: [node('p1', [{ source: V('PumpV'), properties: { title: 'P', seen: '2024-01-01T00:00:00+01:00', note: null } }, { source: C('Pump'), properties: { code: 'X' } }], { existingVersion: 2 })] });
    expect(out.items[0]).toEqual({
      instanceType: 'node',
      space: 'sp',
      externalId: 'p1',
      existingVersion: 2,
      data: [
        { container: { space: 'sp', externalId: 'Pump' }, values: { name: 'P', seen: Date.UTC(2023, 11, 31, 23), code: 'X' } },
        { container: { space: 'sp', externalId: 'Any' }, values: { note: null } },
      ],
      reached: [
        { space: 'sp', externalId: 'Pump' },
        { space: 'sp', externalId: 'Any' },
      ],
    });
    expect(out.options).toEqual({ autoCreateDirectRelations: true, autoCreateStartNodes: false, autoCreateEndNodes: false, skipOnVersionConflict: false, replace: false });
    expect(writeSources(validate({ items: [node('p', [{ source: V('PumpV'), properties: {} }, { source: C('Any') }])] }))).toEqual({
      views: [{ space: 'sp', externalId: 'PumpV', version: 'v1' }],
      containers: [{ space: 'sp', externalId: 'Any' }],
    });
  });

  it('gives data in every container of a source sent without properties', () => {
    const out = apply({ items: [node('p1', [{ source: V('PumpV'), properties: {} }])] });
    expect(out.items[0].data.map((d) => d.container.externalId)).toEqual(['Pump', 'Any']);
    expect(out.items[0].data.every((d) => Object.keys(d.values).length === 0)).toBe(true);
  });

  it('refuses values that do not fit, naming the property', () => {
    expectApiError(() => apply({ items: [node('p1', [{ source: V('PumpV'), properties: { title: 3 } }])] }), 400, 'items[0].sources[0].properties.title', 'expected text');
    expectApiError(() => apply({ items: [node('ok'), node('p1', [{ source: V('PumpV'), properties: { code: null } }])] }), 400, 'items[1].sources[0].properties.code', 'not nullable');
    expectApiError(() => apply({ items: [node('p1', [{ source: V('PumpV'), properties: { kind: 'c' } }])] }), 400, 'properties.kind', 'a, b');
    expectApiError(() => apply({ items: [node('p1', [{ source: V('PumpV'), properties: { nope: 1 } }])] }), 400, 'items[0].sources[0].properties.nope', 'no property "nope"');
    expectApiError(() => apply({ items: [node('p1', [{ source: C('Pump'), properties: { title: 1 } }])] }), 400, 'items[0].sources[0].properties.title', 'sp:Pump has no property');
    expectApiError(() => apply({ items: [node('p1', [{ source: V('PumpV'), properties: { flows: [] } }])] }), 400, 'properties.flows', 'connection');
    expectApiError(
      () => apply({ items: [node('p1', [{ source: V('PumpV'), properties: { title: 'a' } }, { source: C('Pump'), properties: { name: 'b' } }])] }),
      400,
      'items[0].sources[1].properties.name',
      'written twice',
    );
    expect(apply({ items: [node('p1', [{ source: V('PumpV'), properties: { title: 'a' } }, { source: C('Pump'), properties: { name: 'a' } }])] }).items[0].data[0].values).toEqual({ name: 'a' });
  });

  it('keeps node data and edge data apart', () => {
    expect(apply({ items: [edge('e1', { sources: [{ source: V('FlowV'), properties: { rate: 1.5 } }, { source: C('Any'), properties: { note: 'x' } }] })] }).items[0]).toMatchObject({
      startNode: { space: 'sp', externalId: 'a' },
      endNode: { space: 'sp', externalId: 'b' },
    });
    expectApiError(() => apply({ items: [node('n', [{ source: V('FlowV'), properties: { rate: 1 } }])] }), 400, 'items[0].sources[0].properties.rate', 'edge data', 'a node');
    expectApiError(() => apply({ items: [edge('e', { sources: [{ source: C('Pump'), properties: { name: 'x' } }] })] }), 400, 'items[0].sources[0].properties.name', 'node data');
    expectApiError(() => apply({ items: [edge('e', { startNode: undefined })] }), 400, 'items[0]', 'startNode');
    expectApiError(() => apply({ items: [node('n', [], { endNode: { space: 'sp', externalId: 'x' } })] }), 400, 'items[0].endNode', 'only edges');
  });

  it('refuses unknown views and containers, repeats, and more than 1000 instances in all', () => {
    const v = expectApiError(() => apply({ items: [node('n', [{ source: viewRefOf('sp', 'Nope'), properties: {} }])] }), 400, 'One or more views do not exist: sp:Nope/v1');
    expect(v.extras.missing).toEqual([viewRefOf('sp', 'Nope')]);
    const c = expectApiError(() => apply({ items: [node('n', [{ source: C('Nope'), properties: {} }])] }), 400, 'containers do not exist');
    expect(c.extras.missing).toEqual([C('Nope')]);
    const d = expectApiError(() => apply({ items: [node('a'), node('a')] }), 400, 'more than once');
    expect(d.extras.duplicated).toEqual([{ instanceType: 'node', space: 'sp', externalId: 'a' }]);
    expect(apply({ items: [node('a'), edge('a')] }).items).toHaveLength(2);
    expectApiError(() => apply({ items: [node('a')], delete: [{ instanceType: 'node', space: 'sp', externalId: 'a' }] }), 400, 'both writes and deletes');
    const many = Array.from({ length: 600 }, (_, i) => node(`n${i}`));
    expectApiError(() => apply({ items: many, delete: many.map((n) => ({ instanceType: 'node', space: 'sp', externalId: `d${n.externalId}` })) }), 400, 'delete: items and delete together', 'at most 1000', 'got 1200');
  });

  it('tells which required properties are missing, and fills defaults for new data', () => {
    const pump = CONTAINERS[0];
    expect(requiredMissing(pump, { name: 'x' })).toEqual(['code']);
    expect(requiredMissing(pump, { code: 'c' })).toEqual([]);
    expect(requiredMissing(pump, { code: null })).toEqual(['code']);
    expect(valuesForNewData(pump, { code: 'c' })).toEqual({ name: null, code: 'c', pressure: null, speed: null, seen: null, tags: null, kind: 'a', site: null, meta: null });
    expect(valuesForNewData(pump, { code: 'c', kind: 'b', n: 7 })).toMatchObject({ kind: 'b', n: 7 });
  });
});

describe('instance reads', () => {
  const options = { schema, instanceType: 'node' as const, view: { space: 'sp', externalId: 'PumpV', version: 'v1' } };
  const pumpV = schema.view(options.view)!;

  it('checks sources and their target units', () => {
    const [read] = checkSources([{ source: V('PumpV'), targetUnits: [{ property: 'pressure', unit: { externalId: 'pressure:psi' } }] }], schema, ['sources']);
    expect(read.units.get('pressure')!.value(1)).toBeCloseTo(14.5038, 3);
    expect(checkSources([{ source: V('PumpV'), targetUnits: [{ property: 'pressure', unit: { unitSystemName: 'Imperial' } }] }], schema, ['sources'])[0].units.get('pressure')!.to.externalId).toBe('pressure:psi');
    expectApiError(() => checkSources([{ source: viewRefOf('sp', 'X') }], schema, ['sources']), 400, 'One or more views do not exist: sp:X/v1');
    expectApiError(() => checkSources([{ source: V('PumpV') }, { source: V('PumpV') }], schema, ['sources']), 400, 'sources[1].source', 'twice');
    const tu = (property: string, unit: Record<string, string>) => () => checkSources([{ source: V('PumpV'), targetUnits: [{ property, unit }] }], schema, ['sources']);
    expectApiError(tu('speed', { externalId: 'pressure:psi' }), 400, 'sources[0].targetUnits[0].property', 'no unit');
    expectApiError(tu('nope', { externalId: 'pressure:psi' }), 400, 'targetUnits[0].property', 'Unknown property');
    expectApiError(tu('pressure', { externalId: 'temperature:deg_c' }), 400, 'targetUnits[0].unit', 'measures Temperature');
    expectApiError(tu('pressure', { externalId: 'nope' }), 400, 'targetUnits[0].unit.externalId');
    expectApiError(tu('pressure', { unitSystemName: 'Klingon' }), 400, 'targetUnits[0].unit.unitSystemName');
    expectApiError(tu('pressure', {}), 400, 'targetUnits[0].unit', 'exactly one');
  });

  it('checks sort keys', () => {
    expect(checkSort([{ property: ['title'], direction: 'descending' }, { property: ['node', 'externalId'], nullsFirst: true }], options, ['sort'])).toMatchObject([
      { direction: 'descending', nullsFirst: false, target: { kind: 'container', property: 'name' } },
      { direction: 'ascending', nullsFirst: true, target: { kind: 'base', field: 'externalId' } },
    ]);
    expectApiError(() => checkSort([{ property: ['tags'] }], options, ['sort']), 400, 'sort[0].property', 'list of text');
    expectApiError(() => checkSort([{ property: ['meta'] }], options, ['sort']), 400, 'sort[0].property', 'json');
    expectApiError(() => checkSort([{ property: ['edge', 'startNode'] }], options, ['sort']), 400, 'sort[0].property', 'nodes');
  });

  it('checks the properties a search searches', () => {
    const check = (body: Record<string, unknown>) => checkSearch(compileBodyValidator<never>(SearchInstancesBody)({ view: V('PumpV'), ...body }), pumpV, options);
    expect(check({}).properties).toEqual(['title', 'code', 'tags', 'note']);
    expect(check({ properties: ['title'], sort: [{ property: ['speed'] }] })).toMatchObject({ properties: ['title'], sort: [{ target: { property: 'speed' } }] });
    expectApiError(() => check({ properties: ['nope'] }), 400, 'properties[0]', 'Unknown property');
    expectApiError(() => check({ properties: ['speed'] }), 400, 'properties[0]', 'only text');
  });

  it('checks groups and aggregates', () => {
    const check = (body: Record<string, unknown>) => checkAggregate(compileBodyValidator<never>(AggregateInstancesBody)({ view: V('PumpV'), ...body }), pumpV, options);
    expect(check({ groupBy: ['kind', 'site'], aggregates: [{ count: {} }, { avg: { property: 'speed' } }, { histogram: { property: 'pressure', interval: 5 } }, { count: { property: 'tags' } }] })).toEqual({
      properties: ['title', 'code', 'tags', 'note'],
      groupBy: ['kind', 'site'],
      aggregates: [{ aggregate: 'count' }, { aggregate: 'avg', property: 'speed' }, { aggregate: 'histogram', property: 'pressure', interval: 5 }, { aggregate: 'count', property: 'tags' }],
    });
    expectApiError(() => check({ groupBy: ['tags'] }), 400, 'groupBy[0]', 'list of text');
    expectApiError(() => check({ groupBy: ['meta'] }), 400, 'groupBy[0]', 'json');
    expectApiError(() => check({ aggregates: [{ sum: { property: 'title' } }] }), 400, 'aggregates[0].sum.property', 'number');
    expectApiError(() => check({ aggregates: [{ min: { property: 'nope' } }] }), 400, 'aggregates[0].min.property', 'Unknown property');
    expectApiError(() => check({ aggregates: [{}] }), 400, 'aggregates[0]', 'exactly one');
    expectApiError(() => check({ aggregates: [{ avg: { property: 'speed' }, max: { property: 'speed' } }] }), 400, 'aggregates[0]', 'avg, max');
  });
});
