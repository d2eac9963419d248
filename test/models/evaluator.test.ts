/**
 * The in-memory evaluator of the filter language (test/support/dm-evaluator.ts) against answers computed by
 * hand, and the laws of the language on random filters, each of which the server's parser must accept.
 */
import fc, { type Arbitrary } from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFilter } from '../../src/resources/models/filter.js';
import { dmFilter, dmMatches, type DmInstance, type DmWorld, type Filter } from '../support/dm-evaluator.js';
import { containerRefOf, containers, MemorySchema, viewRefOf, views } from '../support/dm-schema.js';
import { CONTAINERS as WORLD_CONTAINERS, PUMP, SITE } from '../support/pump-world.js';

/** The same schema for the server's parser. */
const schema = new MemorySchema(
  containers(
    { space: 'sp', externalId: 'Pump', properties: Object.fromEntries(Object.entries(WORLD_CONTAINERS[PUMP]).map(([k, t]) => [k, { type: t }])) },
    { space: 'sp', externalId: 'Site', properties: { city: { type: { type: 'text' } } } },
  ),
  views(
    {
      space: 'sp',
      externalId: 'PumpV',
      version: 'v1',
      properties: { title: { container: containerRefOf('sp', 'Pump'), containerPropertyIdentifier: 'name' }, size: { container: containerRefOf('sp', 'Pump'), containerPropertyIdentifier: 'size' } },
    },
    { space: 'sp', externalId: 'Large', version: 'v1', properties: { size: { container: containerRefOf('sp', 'Pump'), containerPropertyIdentifier: 'size' } }, filter: { range: { property: ['size'], gte: 10 } } },
  ),
).resolver();

const node = (externalId: string, pump: Record<string, unknown> | undefined, extra: Partial<DmInstance> = {}): DmInstance => ({
  instanceType: 'node',
  space: 'sp',
  externalId,
  version: 1,
  createdTime: 1000,
  lastUpdatedTime: 1000,
  containers: pump ? { [PUMP]: pump } : {},
  ...extra,
});

const INSTANCES: DmInstance[] = [
  node('a', { name: 'alpha', size: 5, on: true, seen: '2024-01-01T00:00:00Z', until: '2024-01-10T00:00:00Z', day: '2024-01-01', tags: ['x', 'y'], sizes: [1, 2, 3], site: { space: 'sp', externalId: 's1' } }, { createdTime: 100 }),
  node('b', { name: 'beta', size: 15, on: false, seen: '2024-02-01T00:00:00+01:00', tags: [], sizes: [2], site: { space: 'sp', externalId: 's2' } }, { createdTime: 200, type: { space: 'sp', externalId: 'pump' } }),
  node('c', { name: 'Alpha', size: null, until: '2023-12-01T00:00:00Z', tags: ['y'], sizes: [1, 2] }, { createdTime: 300 }),
  node('d', undefined, { createdTime: 400, type: { space: 'sp', externalId: 'pump' } }),
  node('s1', undefined, { containers: { [SITE]: { city: 'Oslo' } } }),
  node('s2', undefined, { containers: { [SITE]: { city: 'Bergen' } } }),
  { ...node('e1', undefined), instanceType: 'edge', space: 'other', startNode: { space: 'sp', externalId: 'a' }, endNode: { space: 'sp', externalId: 'b' } },
];

const world: DmWorld = {
  containers: WORLD_CONTAINERS as unknown as DmWorld['containers'],
  views: {
    'sp:PumpV/v1': { properties: { title: [PUMP, 'name'], size: [PUMP, 'size'] } },
    'sp:Large/v1': { properties: { size: [PUMP, 'size'] }, filter: { range: { property: ['size'], gte: 10 } } },
  },
  instances: INSTANCES,
};

const P = (p: string) => ['sp', 'Pump', p];
const ids = (filter: Filter, opts = {}) => dmFilter(world, filter, opts).map((i) => i.externalId);

describe('the evaluator, by hand', () => {
  const cases: Array<[string, Filter, string[], Record<string, unknown>?]> = [
    ['equals on text is exact', { equals: { property: P('name'), value: 'alpha' } }, ['a']],
    ['not includes missing values', { not: { equals: { property: P('name'), value: 'alpha' } } }, ['b', 'c', 'd', 's1', 's2', 'e1']],
    ['range on a number', { range: { property: P('size'), gt: 5, lte: 15 } }, ['b']],
    ['range ignores nulls', { range: { property: P('size'), gte: 0 } }, ['a', 'b']],
    ['timestamps compare as instants', { range: { property: P('seen'), lt: '2024-01-31T23:30:00Z' } }, ['a', 'b']],
    ['base times take epoch ms', { range: { property: ['node', 'createdTime'], gte: 200, lt: '1970-01-01T00:00:00.400Z' } }, ['b', 'c']],
    ['dates compare as text', { range: { property: P('day'), gte: '2024-01-01' } }, ['a']],
    ['prefix is by code point, case-sensitive', { prefix: { property: P('name'), value: 'al' } }, ['a']],
    ['prefix on a list starts the list', { prefix: { property: P('sizes'), value: [1, 2] } }, ['a', 'c']],
    ['in on a scalar', { in: { property: P('size'), values: [5, 99] } }, ['a']],
    ['in on a list matches any element', { in: { property: P('tags'), values: ['y'] } }, ['a', 'c']],
    ['containsAll', { containsAll: { property: P('sizes'), values: [2, 1] } }, ['a', 'c']],
    ['containsAny', { containsAny: { property: P('sizes'), values: [3, 9] } }, ['a']],
    ['equals on a list compares lists', { equals: { property: P('sizes'), value: [1, 2] } }, ['c']],
    ['exists counts an empty list', { exists: { property: P('tags') } }, ['a', 'b', 'c']],
    ['exists on null is false', { exists: { property: P('size') } }, ['a', 'b']],
    ['direct relations by space and external id', { equals: { property: ['node', 'type'], value: { space: 'sp', externalId: 'pump' } } }, ['b', 'd']],
    ['hasData on a container', { hasData: [containerRefOf('sp', 'Pump')] }, ['a', 'b', 'c']],
    ['hasData on a view uses its filter', { hasData: [viewRefOf('sp', 'Large')] }, ['b']],
    ['hasData on a view without filter uses its containers', { hasData: [viewRefOf('sp', 'PumpV')] }, ['a', 'b', 'c']],
    ['nested reads the node pointed at', { nested: { scope: P('site'), filter: { equals: { property: ['sp', 'Site', 'city'], value: 'Oslo' } } } }, ['a']],
    ['instance references', { instanceReferences: [{ space: 'sp', externalId: 'c' }, { space: 'sp', externalId: 'zz' }] }, ['c']],
    ['overlaps with open ends', { overlaps: { startProperty: P('seen'), endProperty: P('until'), gte: '2024-01-05T00:00:00Z', lt: '2024-03-01T00:00:00Z' } }, ['a', 'b']],
    ['overlaps never matches two missing ends', { overlaps: { startProperty: P('seen'), endProperty: P('until'), lt: '2030-01-01T00:00:00Z' } }, ['a', 'b', 'c']],
    ['property operands', { range: { property: P('seen'), lt: { property: P('until') } } }, ['a']],
    ['parameters', { equals: { property: P('size'), value: { parameter: 'n' } } }, ['b'], { parameters: { n: 15 } }],
    ['one-element properties name the view', { equals: { property: ['title'], value: 'beta' } }, ['b'], { view: 'sp:PumpV/v1' }],
    ['base fields of edges', { equals: { property: ['edge', 'startNode'], value: { space: 'sp', externalId: 'a' } } }, ['e1']],
    ['matchAll', { matchAll: {} }, ['a', 'b', 'c', 'd', 's1', 's2', 'e1']],
    ['and, or', { or: [{ and: [{ exists: { property: P('name') } }, { equals: { property: P('on'), value: true } }] }, { equals: { property: ['node', 'space'], value: 'other' } }] }, ['a', 'e1']],
  ];
  for (const [name, filter, expected, opts] of cases) it(name, () => expect(ids(filter, opts)).toEqual(expected));

  it('applies the search differences', () => {
    expect(ids({ exists: { property: P('tags') } }, { purpose: 'search' })).toEqual(['a', 'c']);
    expect(ids({ prefix: { property: P('tags'), value: 'y' } }, { purpose: 'search' })).toEqual(['a', 'c']);
  });

  it('takes every hand-computed filter through the server parser too', () => {
    for (const [name, filter, , opts] of cases) {
      const instanceType = name === 'base fields of edges' ? 'edge' : name.includes('and, or') ? undefined : 'node';
      expect(() => parseFilter(filter, { schema, instanceType, view: opts?.view ? { space: 'sp', externalId: 'PumpV', version: 'v1' } : undefined, parameters: opts?.parameters as Record<string, unknown> }), name).not.toThrow();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Laws on random filters over the same schema and instances

const leafArb: Arbitrary<Filter> = fc.oneof(
  fc.record({ equals: fc.record({ property: fc.constant(P('name')), value: fc.constantFrom('alpha', 'beta', 'Alpha', '') }) }),
  fc.record({ equals: fc.record({ property: fc.constant(P('size')), value: fc.integer({ min: 0, max: 20 }) }) }),
  fc.record({ in: fc.record({ property: fc.constant(P('sizes')), values: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }) }) }),
  fc.record({ range: fc.record({ property: fc.constant(P('size')), gte: fc.integer({ min: 0, max: 20 }), lt: fc.integer({ min: 0, max: 20 }) }, { requiredKeys: ['property'] }) }).filter((f) => Object.keys(f.range).length > 1),
  fc.record({ range: fc.record({ property: fc.constant(['node', 'createdTime']), gt: fc.integer({ min: 0, max: 500 }) }) }),
  fc.record({ prefix: fc.record({ property: fc.constant(P('name')), value: fc.constantFrom('a', 'al', 'b', 'A', '') }) }),
  fc.record({ exists: fc.record({ property: fc.constantFrom(P('size'), P('tags'), P('until'), ['node', 'type']) }) }),
  fc.record({ containsAll: fc.record({ property: fc.constant(P('tags')), values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { maxLength: 2 }) }) }),
  fc.record({ hasData: fc.constantFrom([containerRefOf('sp', 'Pump')], [viewRefOf('sp', 'Large')], [containerRefOf('sp', 'Site')]) }),
  fc.record({ instanceReferences: fc.constantFrom([{ space: 'sp', externalId: 'a' }], [{ space: 'sp', externalId: 'd' }, { space: 'sp', externalId: 's1' }]) }),
  fc.record({ nested: fc.record({ scope: fc.constant(P('site')), filter: fc.constantFrom({ equals: { property: ['sp', 'Site', 'city'], value: 'Oslo' } }, { matchAll: {} }) }) }),
);
const filterArb: Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc.record({ and: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('f') }),
  ),
})).f;

const nodes = INSTANCES.filter((i) => i.instanceType === 'node');
const holds = (f: Filter) => nodes.map((i) => dmMatches(world, i, f));

describe('laws of the filter language', () => {
  it('every random filter parses on the server', () => {
    fc.assert(fc.property(filterArb, (f) => void parseFilter(f, { schema, instanceType: 'node' })), { numRuns: 300, seed: 5 });
  });

  it('not is an involution, and De Morgan holds', () => {
    fc.assert(
      fc.property(filterArb, filterArb, (f, g) => {
        expect(holds({ not: { not: f } })).toEqual(holds(f));
        expect(holds({ not: { and: [f, g] } })).toEqual(holds({ or: [{ not: f }, { not: g }] }));
        expect(holds({ and: [f] })).toEqual(holds(f));
        expect(holds({ or: [f, { not: f }] }).every(Boolean)).toBe(true);
      }),
      { numRuns: 300, seed: 6 },
    );
  });

  it('in with one value is equals, and a closed range of one value is equals', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), (v) => {
        expect(holds({ in: { property: P('size'), values: [v] } })).toEqual(holds({ equals: { property: P('size'), value: v } }));
        expect(holds({ range: { property: P('size'), gte: v, lte: v } })).toEqual(holds({ equals: { property: P('size'), value: v } }));
        expect(holds({ or: [{ range: { property: P('size'), lt: v } }, { range: { property: P('size'), gte: v } }] })).toEqual(holds({ exists: { property: P('size') } }));
      }),
    );
  });

  it('containsAll of one value is containsAny of it; containsAll of more implies containsAny', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }), (values) => {
        const all = holds({ containsAll: { property: P('sizes'), values } });
        const any = holds({ containsAny: { property: P('sizes'), values } });
        all.forEach((a, i) => expect(!a || any[i]).toBe(true));
        if (values.length === 1) expect(all).toEqual(any);
      }),
    );
  });
});
