/**
 * The data modeling filter language: the AST each filter gives, every property reference form, values
 * typed by their property, parameters and property operands, `hasData` and `nested`, the limits, and a 400
 * naming the place for every refusal; malformed filters of any shape give a 400, never anything else.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { filterSources, parseFilter, type FilterOptions } from '../../src/resources/models/filter.js';
import { containerRefOf, containers, expectApiError, MemorySchema, viewRefOf, views } from '../support/dm-schema.js';

const C = (x: string) => containerRefOf('sp', x);
const map = (container: string, property: string, extra: Record<string, unknown> = {}) => ({ container: C(container), containerPropertyIdentifier: property, ...extra });

const schema = new MemorySchema(
  containers(
    {
      space: 'sp',
      externalId: 'Pump',
      properties: {
        name: { type: { type: 'text' } },
        size: { type: { type: 'int32' } },
        weight: { type: { type: 'float64' } },
        on: { type: { type: 'boolean' } },
        seen: { type: { type: 'timestamp' } },
        until: { type: { type: 'timestamp' } },
        day: { type: { type: 'date' } },
        tags: { type: { type: 'text', list: true } },
        sizes: { type: { type: 'int32', list: true } },
        site: { type: { type: 'direct' } },
        sites: { type: { type: 'direct', list: true } },
        meta: { type: { type: 'json' } },
        kind: { type: { type: 'enum', values: { a: {}, b: {} }, unknownValue: 'b' } },
        ts: { type: { type: 'timeseries' } },
      },
    },
    { space: 'sp', externalId: 'Site', properties: { city: { type: { type: 'text' } } } },
  ),
  views(
    { space: 'sp', externalId: 'PumpV', version: 'v1', properties: { title: map('Pump', 'name'), size: map('Pump', 'size'), site: map('Pump', 'site', { source: viewRefOf('sp', 'SiteV') }), flows: { type: { space: 'sp', externalId: 'f' }, source: viewRefOf('sp', 'PumpV') } } },
    { space: 'sp', externalId: 'SiteV', version: 'v1', properties: { city: map('Site', 'city') } },
    { space: 'sp', externalId: 'Big', version: 'v1', properties: { size: map('Pump', 'size') }, filter: { and: [{ range: { property: ['size'], gte: 10 } }, { hasData: [viewRefOf('sp', 'Big')] }] } },
  ),
).resolver();

const opts: FilterOptions = { schema, instanceType: 'node' };
const parse = (filter: unknown, o: Partial<FilterOptions> = {}) => parseFilter(filter, { ...opts, ...o });
const P = (prop: string) => ['sp', 'Pump', prop];

describe('filter AST', () => {
  it('resolves every form of property reference', () => {
    expect(parse({ exists: { property: ['node', 'externalId'] } })).toEqual({ op: 'exists', target: { kind: 'base', instanceType: 'node', field: 'externalId', type: { type: 'text', list: false, collation: 'ucs_basic' } } });
    expect(parse({ exists: { property: P('size') } })).toMatchObject({ target: { kind: 'container', container: { space: 'sp', externalId: 'Pump' }, property: 'size' } });
    expect(parse({ exists: { property: ['sp', 'PumpV/v1', 'title'] } })).toMatchObject({ target: { kind: 'container', property: 'name', view: { id: { externalId: 'PumpV' }, property: 'title' } } });
    expect(parse({ exists: { property: ['title'] } }, { view: { space: 'sp', externalId: 'PumpV', version: 'v1' } })).toMatchObject({ target: { property: 'name' } });
  });

  it('refuses references that name nothing, naming the place', () => {
    expectApiError(() => parse({ exists: { property: ['title'] } }), 400, 'filter.exists.property', 'one element');
    expectApiError(() => parse({ exists: { property: 'title' } }), 400, 'filter.exists.property', 'property reference');
    expectApiError(() => parse({ exists: { property: ['node', 'startNode'] } }), 400, 'filter.exists.property', 'nodes have no base property "startNode"');
    expectApiError(() => parse({ exists: { property: ['edge', 'space'] } }), 400, 'filter.exists.property', 'about nodes');
    expectApiError(() => parse({ exists: { property: ['thing', 'space'] } }), 400, 'filter.exists.property', 'base property');
    expectApiError(() => parse({ exists: { property: P('nope') } }), 400, 'filter.exists.property', 'sp:Pump has no property "nope"');
    expectApiError(() => parse({ exists: { property: ['sp', 'PumpV/v1', 'nope'] } }), 400, 'filter.exists.property', 'sp:PumpV/v1 has no property');
    expectApiError(() => parse({ exists: { property: ['sp', 'PumpV/v1', 'flows'] } }), 400, 'filter.exists.property', 'connection');
    const v = expectApiError(() => parse({ exists: { property: ['sp', 'Nope/v1', 'x'] } }), 400, 'One or more views do not exist: sp:Nope/v1');
    expect(v.extras.missing).toEqual([viewRefOf('sp', 'Nope')]);
    const c = expectApiError(() => parse({ exists: { property: ['sp', 'Nope', 'x'] } }), 400, 'containers do not exist');
    expect(c.extras.missing).toEqual([C('Nope')]);
    expect(parse({ exists: { property: ['edge', 'startNode'] } }, { instanceType: undefined })).toMatchObject({ target: { field: 'startNode' } });
  });

  it('types values by their property, in stored form', () => {
    expect(parse({ equals: { property: P('seen'), value: '2024-01-01T01:00:00+01:00' } })).toMatchObject({ value: { kind: 'value', value: Date.UTC(2024, 0, 1) } });
    expect(parse({ range: { property: ['node', 'createdTime'], gte: 1000, lt: '1970-01-01T00:00:02Z' } })).toMatchObject({ gte: { value: 1000 }, lt: { value: 2000 } });
    expect(parse({ equals: { property: ['node', 'type'], value: { space: 'sp', externalId: 't' } } })).toMatchObject({ value: { value: { space: 'sp', externalId: 't' } } });
    expect(parse({ in: { property: P('kind'), values: ['a', 'b'] } })).toMatchObject({ values: { value: ['a', 'b'] } });
    expect(parse({ equals: { property: P('tags'), value: ['x', 'y'] } })).toMatchObject({ value: { value: ['x', 'y'] } });
    expect(parse({ in: { property: P('tags'), values: ['x'] } })).toMatchObject({ op: 'in', values: { value: ['x'] } });
    expectApiError(() => parse({ equals: { property: P('size'), value: 'big' } }), 400, 'filter.equals.value', 'integer');
    expectApiError(() => parse({ equals: { property: P('size'), value: 2 ** 31 } }), 400, 'filter.equals.value', 'int32');
    expectApiError(() => parse({ equals: { property: P('on'), value: 'true' } }), 400, 'filter.equals.value', 'true or false');
    expectApiError(() => parse({ equals: { property: P('seen'), value: 'tuesday' } }), 400, 'filter.equals.value', 'timestamp');
    expectApiError(() => parse({ in: { property: P('kind'), values: ['a', 'c'] } }), 400, 'filter.in.values[1]', 'a, b');
    expectApiError(() => parse({ equals: { property: P('tags'), value: 'x' } }), 400, 'filter.equals.value', 'expected a list');
    expectApiError(() => parse({ equals: { property: P('site'), value: 'sp:x' } }), 400, 'filter.equals.value', 'direct relation');
    expectApiError(() => parse({ equals: { property: P('name'), value: null } }), 400, 'filter.equals.value', 'null');
    expectApiError(() => parse({ in: { property: P('name'), values: 'x' } }), 400, 'filter.in.values', 'list of values');
    expectApiError(() => parse({ in: { property: P('name'), values: ['x', null] } }), 400, 'filter.in.values[1]', 'null');
    expectApiError(() => parse({ in: { property: P('name'), values: Array.from({ length: 1001 }, (_, i) => `${i}`) } }), 400, 'filter.in.values', 'at most 1000');
  });

  it('applies each leaf only where it makes sense', () => {
    expectApiError(() => parse({ equals: { property: P('meta'), value: {} } }), 400, 'filter.equals', 'json');
    expect(parse({ exists: { property: P('meta') } })).toMatchObject({ op: 'exists' });
    expectApiError(() => parse({ containsAny: { property: P('name'), values: ['x'] } }), 400, 'filter.containsAny', 'list properties');
    expect(parse({ containsAll: { property: P('sizes'), values: [1, 2] } })).toMatchObject({ op: 'containsAll', values: { value: [1, 2] } });
    expectApiError(() => parse({ range: { property: P('tags'), gt: 'a' } }), 400, 'filter.range', 'list property');
    expectApiError(() => parse({ range: { property: P('on'), gt: false } }), 400, 'filter.range', 'boolean');
    expectApiError(() => parse({ range: { property: P('site'), gt: 'a' } }), 400, 'filter.range', 'direct relation');
    expect(parse({ range: { property: P('kind'), gte: 'aa' } })).toMatchObject({ gte: { value: 'aa' } });
    expect(parse({ prefix: { property: P('ts'), value: '' } })).toMatchObject({ value: { value: '' } });
    expect(parse({ prefix: { property: P('sizes'), value: [1, 2] } })).toMatchObject({ value: { value: [1, 2] } });
    expectApiError(() => parse({ prefix: { property: P('size'), value: '1' } }), 400, 'filter.prefix', 'text properties and lists');
  });

  it('checks range and overlaps bounds', () => {
    expectApiError(() => parse({ range: { property: P('size') } }), 400, 'filter.range', 'at least one');
    expectApiError(() => parse({ range: { property: P('size'), gt: 1, gte: 2 } }), 400, 'filter.range', 'gt and gte');
    expectApiError(() => parse({ range: { property: P('size'), lt: 1, lte: 2 } }), 400, 'filter.range', 'lt and lte');
    expectApiError(() => parse({ range: { property: P('size'), gt: null } }), 400, 'filter.range.gt', 'null');
    expectApiError(() => parse({ range: { property: P('size'), between: 1 } }), 400, 'filter.range', 'unknown property "between"');
    expect(parse({ overlaps: { startProperty: P('seen'), endProperty: P('until'), gt: '2024-01-01T00:00:00Z' } })).toMatchObject({ op: 'overlaps', gt: { value: Date.UTC(2024, 0, 1) } });
    expectApiError(() => parse({ overlaps: { startProperty: P('seen'), endProperty: P('size'), gt: 1 } }), 400, 'filter.overlaps', 'same kind');
    expectApiError(() => parse({ overlaps: { startProperty: P('name'), endProperty: P('name'), gt: 'a' } }), 400, 'filter.overlaps.startProperty');
    expectApiError(() => parse({ overlaps: { startProperty: P('seen'), endProperty: P('until'), lt: 1 } }, { purpose: 'search' }), 400, 'filter.overlaps', 'search');
  });

  it('compares with other properties and takes parameters where given', () => {
    expect(parse({ range: { property: P('seen'), lt: { property: P('until') } } })).toMatchObject({ lt: { kind: 'property', target: { property: 'until' } } });
    expect(parse({ in: { property: P('size'), values: { property: P('sizes') } } })).toMatchObject({ values: { kind: 'property', target: { property: 'sizes' } } });
    expectApiError(() => parse({ equals: { property: P('size'), value: { property: P('name') } } }), 400, 'filter.equals.value', 'cannot be compared');
    expectApiError(() => parse({ in: { property: P('size'), values: { property: P('weight') } } }), 400, 'filter.in.values', 'must be a list');
    expect(parse({ equals: { property: P('size'), value: { parameter: 'n' } } }, { parameters: { n: 4 } })).toMatchObject({ value: { kind: 'value', value: 4 } });
    expectApiError(() => parse({ equals: { property: P('size'), value: { parameter: 'n' } } }), 400, 'filter.equals.value', 'only be used in query and sync');
    expectApiError(() => parse({ equals: { property: P('size'), value: { parameter: 'm' } } }, { parameters: { n: 4 } }), 400, 'filter.equals.value', '"m" is not given');
    expectApiError(() => parse({ equals: { property: P('size'), value: { parameter: 'n' } } }, { parameters: { n: 'four' } }), 400, 'filter.equals.value', 'integer');
  });

  it('expands hasData on a view into its filter or its containers', () => {
    expect(parse({ hasData: [C('Pump'), viewRefOf('sp', 'PumpV')] })).toEqual({
      op: 'hasData',
      sources: [
        { type: 'container', container: { space: 'sp', externalId: 'Pump' } },
        { type: 'view', view: { space: 'sp', externalId: 'PumpV', version: 'v1' }, containers: [{ space: 'sp', externalId: 'Pump' }] },
      ],
    });
    const big = parse({ hasData: [viewRefOf('sp', 'Big')] }) as { sources: Array<{ filter?: unknown }> };
    // The view's own hasData inside its filter means its containers, not the filter again.
    expect(big.sources[0].filter).toMatchObject({
      op: 'and',
      args: [{ op: 'range', target: { property: 'size' } }, { op: 'hasData', sources: [{ type: 'view', containers: [{ externalId: 'Pump' }] }] }],
    });
    expect((big.sources[0].filter as { args: Array<{ sources?: Array<{ filter?: unknown }> }> }).args[1].sources![0].filter).toBeUndefined();
    const missing = expectApiError(() => parse({ hasData: [viewRefOf('sp', 'X'), viewRefOf('sp', 'Y')] }), 400, 'sp:X/v1, sp:Y/v1');
    expect(missing.extras.missing).toEqual([viewRefOf('sp', 'X'), viewRefOf('sp', 'Y')]);
    expectApiError(() => parse({ hasData: [{ type: 'view', space: 'sp', externalId: 'PumpV' }] }), 400, 'filter.hasData[0]', 'version');
    expectApiError(() => parse({ hasData: Array.from({ length: 11 }, () => C('Pump')) }), 400, 'filter.hasData', 'at most 10');
  });

  it('filters through a direct relation with nested, relative to its source view', () => {
    expect(parse({ nested: { scope: ['sp', 'PumpV/v1', 'site'], filter: { equals: { property: ['city'], value: 'Oslo' } } } })).toMatchObject({
      op: 'nested',
      scope: { property: 'site' },
      filter: { op: 'equals', target: { container: { externalId: 'Site' }, property: 'city' } },
    });
    expect(parse({ nested: { scope: ['edge', 'startNode'], filter: { equals: { property: ['node', 'space'], value: 'sp' } } } }, { instanceType: 'edge' })).toMatchObject({ op: 'nested' });
    expectApiError(() => parse({ nested: { scope: P('sites'), filter: { matchAll: {} } } }), 400, 'filter.nested.scope', 'single direct relation');
    expectApiError(() => parse({ nested: { scope: P('name'), filter: { matchAll: {} } } }), 400, 'filter.nested.scope');
    expectApiError(() => parse({ nested: { scope: P('site'), filter: { equals: { property: ['edge', 'space'], value: 'sp' } } } }), 400, 'filter.nested.filter.equals.property', 'nodes');
  });

  it('matches instance references', () => {
    expect(parse({ instanceReferences: [{ space: 'sp', externalId: 'a' }] })).toEqual({ op: 'instanceReferences', refs: [{ space: 'sp', externalId: 'a' }] });
    expectApiError(() => parse({ instanceReferences: [{ space: 'sp' }] }), 400, 'filter.instanceReferences[0]');
  });

  it('checks the shape of boolean nodes and the limits', () => {
    expect(parse({ and: [{ matchAll: {} }, { not: { or: [{ matchAll: {} }] } }] })).toEqual({ op: 'and', args: [{ op: 'matchAll' }, { op: 'not', arg: { op: 'or', args: [{ op: 'matchAll' }] } }] });
    expectApiError(() => parse({ and: [] }), 400, 'filter.and', 'at least 1');
    expectApiError(() => parse({ and: {} }), 400, 'filter.and', 'array');
    expectApiError(() => parse({ matchAll: {}, exists: {} }), 400, 'filter', 'exactly one');
    expectApiError(() => parse({ search: {} }), 400, 'filter', 'unknown filter "search"');
    expectApiError(() => parse({ matchAll: { x: 1 } }), 400, 'filter.matchAll', 'unknown property "x"');
    expectApiError(() => parse({ and: [{ equals: { property: P('size') } }] }), 400, 'filter.and[0].equals', 'missing required property "value"');
    let deep: unknown = { matchAll: {} };
    for (let i = 0; i < 20; i++) deep = { not: deep };
    expectApiError(() => parse(deep), 400, 'deeper than 20');
    expectApiError(() => parse({ or: Array.from({ length: 500 }, () => ({ matchAll: {} })) }), 400, 'filter', '501 clauses', 'at most 500');
  });

  it('lists the views and containers a filter names, for loading before parsing', () => {
    expect(filterSources({ and: [{ equals: { property: ['sp', 'A/v1', 'x'], value: 1 } }, { nested: { scope: ['sp', 'C', 'r'], filter: { hasData: [viewRefOf('sp', 'B'), C('D')] } } }, { not: 'junk' }] })).toEqual({
      views: [
        { space: 'sp', externalId: 'A', version: 'v1' },
        { space: 'sp', externalId: 'B', version: 'v1' },
      ],
      containers: [
        { space: 'sp', externalId: 'C' },
        { space: 'sp', externalId: 'D' },
      ],
    });
  });

  it('answers any malformed filter with a 400', () => {
    const junk = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom<unknown>(null, 1, 'x', [], {}, ['node', 'space'], P('size'), P('tags'), ['sp', 'PumpV/v1', 'site'], { property: P('size') }, { parameter: 'p' }, C('Pump'), viewRefOf('sp', 'Big')),
        fc.dictionary(fc.constantFrom('and', 'or', 'not', 'equals', 'in', 'range', 'prefix', 'exists', 'containsAny', 'nested', 'overlaps', 'hasData', 'instanceReferences', 'matchAll', 'property', 'value', 'values', 'gt', 'lte', 'scope', 'filter', 'startProperty', 'endProperty'), tie('node'), { maxKeys: 3 }),
        fc.array(tie('node'), { maxLength: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(junk, (raw) => {
        try {
          parse(raw, { view: { space: 'sp', externalId: 'PumpV', version: 'v1' } });
        } catch (e) {
          if (!(e instanceof ApiError) || e.status !== 400) throw e;
        }
      }),
      { numRuns: 2000, seed: 11 },
    );
  });
});
