/**
 * Container definitions: every rule of an apply request, each refusal naming its place, the canonical form
 * and the read form, and a round trip of random definitions through the read form.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileBodyValidator } from '../../src/http/validation.js';
import { ApplyContainersBody, ContainerRead } from '../../src/resources/models/container-schema.js';
import { containerDependencies, containerReadForm, normalizeContainers, requireContainers } from '../../src/resources/models/containers.js';
import { containers, expectApiError } from '../support/dm-schema.js';

const META = { createdTime: 1, lastUpdatedTime: 2, isGlobal: false };
const validateBody = compileBodyValidator<unknown>(ApplyContainersBody);
const validateRead = compileBodyValidator<unknown>(ContainerRead);

const container = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ space: 'sp', externalId: 'Pump', properties, ...extra });
const one = (type: Record<string, unknown>, flags: Record<string, unknown> = {}) => container({ p: { type, ...flags } });

describe('container definitions', () => {
  it('fills in the defaults of a minimal definition', () => {
    const [c] = containers(container({ name: { type: { type: 'text' } }, n: { type: { type: 'int64', list: true } } }));
    expect(c).toEqual({
      space: 'sp',
      externalId: 'Pump',
      usedFor: 'node',
      properties: {
        name: { type: { type: 'text', list: false, collation: 'ucs_basic' }, nullable: true, immutable: false, autoIncrement: false },
        n: { type: { type: 'int64', list: true }, nullable: true, immutable: false, autoIncrement: false },
      },
      constraints: {},
      indexes: {},
    });
  });

  it('takes every property type the reference lists', () => {
    const types = {
      t: { type: 'text', collation: 'en-US', maxTextSize: 100, list: true, maxListSize: 5 },
      b: { type: 'boolean' },
      f32: { type: 'float32', unit: { externalId: 'temperature:deg_c', sourceUnit: 'C' } },
      f64: { type: 'float64', list: true },
      i32: { type: 'int32' },
      i64: { type: 'int64' },
      ts: { type: 'timestamp' },
      d: { type: 'date' },
      j: { type: 'json' },
      ts_ref: { type: 'timeseries' },
      f_ref: { type: 'file', list: true },
      s_ref: { type: 'sequence' },
      dr: { type: 'direct', container: { type: 'container', space: 'sp', externalId: 'Other' } },
      e: { type: 'enum', values: { open: { name: 'Open' }, closed: {} }, unknownValue: 'open' },
    };
    const [c] = containers(container(Object.fromEntries(Object.entries(types).map(([k, type]) => [k, { type }]))));
    expect(Object.keys(c.properties)).toEqual(Object.keys(types));
    expect(c.properties.dr.type).toEqual({ type: 'direct', list: false, container: { space: 'sp', externalId: 'Other' } });
    expect(c.properties.e.type).toEqual({ type: 'enum', values: { open: { name: 'Open' }, closed: {} }, unknownValue: 'open' });
    expect(containerDependencies(c)).toEqual([{ space: 'sp', externalId: 'Other' }]);
  });

  it('refuses what the request schema does not allow, naming the place', () => {
    expectApiError(() => containers({ ...container({ p: { type: { type: 'text' } } }), externalId: '1bad' }), 400, 'items[0].externalId');
    expectApiError(() => containers(container({ 'bad id!': { type: { type: 'text' } } })), 400, 'items[0].properties', 'bad id!');
    expectApiError(() => containers(container({})), 400, 'items[0].properties');
    expectApiError(() => containers(one({ type: 'texts' })), 400, 'items[0].properties.p.type.type');
    expectApiError(() => containers({ ...one({ type: 'text' }), extra: 1 }), 400, 'unknown property "extra"');
    expectApiError(() => validateBody({ items: Array.from({ length: 101 }, (_, i) => ({ ...one({ type: 'text' }), externalId: `C${i}` })) }), 400, 'items', 'at most 100');
    expectApiError(() => containers({ ...one({ type: 'text' }), space: 'a'.repeat(44) }), 400, 'items[0].space');
  });

  it('refuses reserved identifiers, and what record containers do not take', () => {
    expectApiError(() => containers({ ...one({ type: 'text' }), externalId: 'Timestamp' }), 400, 'items[0].externalId', 'reserved');
    for (const id of ['space', 'externalId', 'createdTime', 'node_id', 'extensions', 'startNode']) {
      expectApiError(() => containers(container({ [id]: { type: { type: 'text' } } })), 400, `items[0].properties.${id}`, 'reserved');
    }
    expect(containers(container({ version: { type: { type: 'text' } } }))[0].properties.version).toBeDefined();
    expect(containers({ ...one({ type: 'text' }), usedFor: 'record' })[0].usedFor).toBe('record');
    expectApiError(() => containers({ ...one({ type: 'text' }), usedFor: 'record', indexes: { i: { properties: ['p'] } } }), 400, 'items[0].indexes', 'record container');
  });

  it('holds at most 100 properties', () => {
    const props = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, { type: { type: 'text' } }]));
    expectApiError(() => containers(container(props)), 400, 'items[0].properties', 'at most 100');
  });

  it('refuses type fields that do not belong to the type', () => {
    expectApiError(() => containers(one({ type: 'int32', maxTextSize: 10 })), 400, 'items[0].properties.p.type.maxTextSize', 'not allowed for int32');
    expectApiError(() => containers(one({ type: 'int32', collation: 'en' })), 400, 'type.collation');
    expectApiError(() => containers(one({ type: 'int32', unit: { externalId: 'temperature:deg_c' } })), 400, 'type.unit', 'float32 and float64');
    expectApiError(() => containers(one({ type: 'text', container: { type: 'container', space: 'sp', externalId: 'X' } })), 400, 'type.container');
    expectApiError(() => containers(one({ type: 'enum', values: { a: {} }, list: true })), 400, 'type.list');
    expectApiError(() => containers(one({ type: 'text', values: { a: {} } })), 400, 'type.values');
  });

  it('checks list sizes, text sizes, collations and units', () => {
    expectApiError(() => containers(one({ type: 'text', maxListSize: 5 })), 400, 'type.maxListSize', 'only allowed when list is true');
    expectApiError(() => containers(one({ type: 'text', list: true, maxListSize: 0 })), 400, 'type.maxListSize', 'between 1 and 2000');
    expectApiError(() => containers(one({ type: 'text', list: true, maxListSize: 2001 })), 400, 'type.maxListSize');
    expect(containers(one({ type: 'int32', list: true, maxListSize: 2000 }))[0].properties.p.type).toEqual({ type: 'int32', list: true, maxListSize: 2000 });
    expectApiError(() => containers(one({ type: 'text', maxTextSize: 0 })), 400, 'type.maxTextSize');
    expectApiError(() => containers(one({ type: 'text', maxTextSize: 128_001 })), 400, 'type.maxTextSize', '128000');
    expectApiError(() => containers(one({ type: 'text', collation: 'klingon' })), 400, 'items[0].properties.p.type.collation', 'unknown collation');
    expectApiError(() => containers(one({ type: 'float64', unit: { externalId: 'no:such-unit' } })), 400, 'type.unit.externalId', 'units catalog');
  });

  it('checks enum values', () => {
    expectApiError(() => containers(one({ type: 'enum' })), 400, 'items[0].properties.p.type', '"values"');
    expectApiError(() => containers(one({ type: 'enum', values: {} })), 400, 'type.values', 'between 1 and 32');
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`v${i}`, {}]));
    expectApiError(() => containers(one({ type: 'enum', values: many })), 400, 'type.values', 'got 33');
    expectApiError(() => containers(one({ type: 'enum', values: { '1a': {} } })), 400, 'type.values', '"1a"');
    expectApiError(() => containers(one({ type: 'enum', values: { null: {} } })), 400, 'type.values', 'reserved');
    expectApiError(() => containers(one({ type: 'enum', values: { a: {} }, unknownValue: 'b' })), 400, 'type.unknownValue', '"b"');
  });

  it('lets only single integers auto-increment', () => {
    expect(containers(one({ type: 'int64' }, { autoIncrement: true }))[0].properties.p.autoIncrement).toBe(true);
    expectApiError(() => containers(one({ type: 'text' }, { autoIncrement: true })), 400, 'items[0].properties.p.autoIncrement');
    expectApiError(() => containers(one({ type: 'int32', list: true }, { autoIncrement: true })), 400, 'autoIncrement', 'lists');
  });

  it('checks default values against the type', () => {
    expect(containers(one({ type: 'boolean' }, { defaultValue: false }))[0].properties.p.defaultValue).toBe(false);
    const [ts] = containers(one({ type: 'timestamp' }, { defaultValue: '2024-01-01T01:00:00+01:00' }));
    expect(ts.properties.p.defaultValue).toBe(Date.UTC(2024, 0, 1));
    expect(containerReadForm(ts, META).properties.p.defaultValue).toBe('2024-01-01T00:00:00.000+00:00');
    expectApiError(() => containers(one({ type: 'int32' }, { defaultValue: 'x' })), 400, 'items[0].properties.p.defaultValue', 'integer');
    expectApiError(() => containers(one({ type: 'int32' }, { defaultValue: null })), 400, 'defaultValue', 'null');
    expectApiError(() => containers(one({ type: 'text', list: true }, { defaultValue: ['a'] })), 400, 'defaultValue', 'list properties');
    expectApiError(() => containers(one({ type: 'int32' }, { defaultValue: 1, autoIncrement: true })), 400, 'defaultValue', 'auto-incremented');
    expectApiError(() => containers(one({ type: 'enum', values: { a: {}, u: {} }, unknownValue: 'u' }, { defaultValue: 'u' })), 400, 'defaultValue', 'unknown value');
  });

  it('checks uniqueness and requires constraints', () => {
    const props = { a: { type: { type: 'text' } }, b: { type: { type: 'int32' } }, l: { type: { type: 'text', list: true } } };
    const [c] = containers(container(props, { constraints: { u: { properties: ['a', 'b'] }, r: { require: { type: 'container', space: 'sp', externalId: 'Base' } } } }));
    expect(c.constraints).toEqual({
      u: { constraintType: 'uniqueness', properties: ['a', 'b'], bySpace: false },
      r: { constraintType: 'requires', require: { space: 'sp', externalId: 'Base' } },
    });
    expect(containerDependencies(c)).toEqual([{ space: 'sp', externalId: 'Base' }]);
    expectApiError(() => containers(container(props, { constraints: { u: { properties: ['zz'] } } })), 400, 'items[0].constraints.u.properties[0]', '"zz"');
    expectApiError(() => containers(container(props, { constraints: { u: { properties: ['a', 'a'] } } })), 400, 'constraints.u.properties[1]', 'twice');
    expectApiError(() => containers(container(props, { constraints: { u: { properties: [] } } })), 400, 'constraints.u.properties', 'at least one');
    expectApiError(() => containers(container(props, { constraints: { u: { properties: ['l'] } } })), 400, 'constraints.u.properties[0]', 'list');
    expectApiError(() => containers(container(props, { constraints: { r: { require: { type: 'container', space: 'sp', externalId: 'Pump' } } } })), 400, 'constraints.r.require', 'itself');
    expectApiError(() => containers(container(props, { constraints: { r: { constraintType: 'requires', properties: ['a'] } } })), 400, 'constraints.r', 'requires');
    expectApiError(() => containers(container(props, { constraints: { u: { constraintType: 'uniqueness', require: { type: 'container', space: 'sp', externalId: 'B' } } } })), 400, 'constraints.u');
    const uniques = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`u${i}`, { properties: ['a'] }]));
    expectApiError(() => containers(container(props, { constraints: uniques })), 400, 'items[0].constraints', 'at most 10 uniqueness');
    const requires = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`r${i}`, { require: { type: 'container', space: 'sp', externalId: `C${i}` } }]));
    expectApiError(() => containers(container(props, { constraints: requires })), 400, 'items[0].constraints', 'at most 25 requires');
    expectApiError(() => containers(container(props, { constraints: { ['x'.repeat(44)]: { properties: ['a'] } } })), 400, 'items[0].constraints');
  });

  it('checks indexes', () => {
    const props = {
      a: { type: { type: 'text' } },
      j: { type: { type: 'json' } },
      l: { type: { type: 'text', list: true } },
      bounded: { type: { type: 'text', list: true, maxListSize: 10 } },
      i32: { type: { type: 'int32', list: true, maxListSize: 601 } },
      i64: { type: { type: 'int64', list: true, maxListSize: 301 } },
    };
    const [c] = containers(container(props, { indexes: { x: { properties: ['a'], cursorable: true }, y: { indexType: 'inverted', properties: ['l'] }, z: { properties: ['bounded'] } } }));
    expect(c.indexes).toEqual({
      x: { indexType: 'btree', properties: ['a'], cursorable: true, bySpace: false },
      y: { indexType: 'inverted', properties: ['l'] },
      z: { indexType: 'btree', properties: ['bounded'], cursorable: false, bySpace: false },
    });
    const idx = (indexes: unknown) => () => containers(container(props, { indexes }));
    expectApiError(idx({ x: { properties: ['nope'] } }), 400, 'items[0].indexes.x.properties[0]', '"nope"');
    expectApiError(idx({ x: { properties: ['j'] } }), 400, 'indexes.x.properties[0]', 'json');
    expectApiError(idx({ x: { properties: ['l'] } }), 400, 'indexes.x.properties[0]', 'maxListSize');
    expectApiError(idx({ x: { properties: ['i32'] } }), 400, 'indexes.x.properties[0]', 'at most 600');
    expectApiError(idx({ x: { properties: ['i64'] } }), 400, 'indexes.x.properties[0]', 'at most 300');
    expectApiError(idx({ x: { properties: ['bounded'], cursorable: true } }), 400, 'indexes.x.properties[0]', 'cursorable');
    expectApiError(idx({ x: { indexType: 'inverted', properties: ['a'] } }), 400, 'indexes.x.properties[0]', 'not a list');
    expectApiError(idx({ x: { indexType: 'inverted', properties: ['l'], cursorable: false } }), 400, 'items[0].indexes.x', 'btree indexes only');
    expectApiError(idx(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`i${i}`, { properties: ['a'] }]))), 400, 'items[0].indexes', 'at most 10');
  });

  it('refuses the same container twice in a request, listing it', () => {
    const error = expectApiError(() => containers(one({ type: 'text' }), one({ type: 'int32' })), 400, 'more than once');
    expect(error.extras.duplicated).toEqual([{ space: 'sp', externalId: 'Pump' }]);
  });

  it('names the containers that do not exist', () => {
    const error = expectApiError(() => requireContainers([{ space: 'sp', externalId: 'A' }, { space: 'sp', externalId: 'B' }], (c) => c.externalId === 'A'), 400, 'sp:B');
    expect(error.extras.missing).toEqual([{ type: 'container', space: 'sp', externalId: 'B' }]);
  });

  it('reads back with constraint states for the bounds it declares', () => {
    const [c] = containers(
      container(
        {
          a: { type: { type: 'text', maxTextSize: 10 }, nullable: false },
          l: { type: { type: 'int32', list: true, maxListSize: 3 } },
          plain: { type: { type: 'boolean' } },
        },
        { constraints: { u: { properties: ['a'], bySpace: true } }, indexes: { i: { properties: ['a'] } }, usedFor: 'all', name: 'P' },
      ),
    );
    const read = containerReadForm(c, META, { properties: { a: { nullability: 'failed' } }, indexes: { i: 'pending' } });
    expect(read.properties.a.constraintState).toEqual({ nullability: 'failed', maxTextSize: 'current' });
    expect(read.properties.l.constraintState).toEqual({ maxListSize: 'current' });
    expect(read.properties.plain.constraintState).toEqual({});
    expect(read.properties.plain.type).toEqual({ type: 'boolean', list: false });
    expect(read.properties.a.type).toEqual({ type: 'text', list: false, maxTextSize: 10, collation: 'ucs_basic' });
    expect(read.constraints.u).toEqual({ constraintType: 'uniqueness', properties: ['a'], bySpace: true, state: 'current' });
    expect(read.indexes.i).toEqual({ indexType: 'btree', properties: ['a'], cursorable: false, state: 'pending' });
    expect(read).toMatchObject({ usedFor: 'all', name: 'P', createdTime: 1, lastUpdatedTime: 2, isGlobal: false });
    validateRead(read);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Round trip: any definition the rules accept reads back in the read schema, and applying the read form
// again (without its read-only fields) gives the same definition.

const propertyId = fc.constantFrom('a', 'b', 'c_1', 'd-2', '9z');
/** An optional field, present about one time in `n`. */
const rarely = <T>(arb: fc.Arbitrary<T>, n = 4): fc.Arbitrary<T | undefined> => fc.oneof({ arbitrary: fc.constant(undefined), weight: n - 1 }, { arbitrary: arb, weight: 1 });
const withoutUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const typeArb = fc.oneof(
  fc.record({ type: fc.constant('text'), list: fc.boolean(), collation: rarely(fc.constantFrom('ucs_basic', 'nb-NO', 'en')), maxTextSize: rarely(fc.integer({ min: 1, max: 3000 })) }),
  fc
    .record({ type: fc.constantFrom('boolean', 'int32', 'int64', 'timestamp', 'date', 'json', 'timeseries', 'file', 'sequence'), list: fc.boolean() })
    .chain((t) => fc.record({ type: fc.constant(t.type), list: fc.constant(t.list), maxListSize: t.list ? rarely(fc.integer({ min: 1, max: 700 }), 2) : fc.constant(undefined) })),
  fc.record({ type: fc.constantFrom('float32', 'float64'), unit: rarely(fc.constant({ externalId: 'pressure:bar', sourceUnit: 'bar' }), 2) }),
  fc.record({ type: fc.constant('direct'), list: fc.boolean(), container: rarely(fc.constant({ type: 'container', space: 'sp', externalId: 'T' }), 2) }),
  fc.record({ type: fc.constant('enum'), values: fc.constant({ on: {}, off: { name: 'Off' } }), unknownValue: rarely(fc.constant('off'), 2) }),
).map(withoutUndefined);
const propertyArb = fc
  .record({
    type: typeArb,
    nullable: rarely(fc.boolean(), 2),
    immutable: rarely(fc.boolean(), 2),
    autoIncrement: rarely(fc.boolean(), 8),
    defaultValue: rarely(fc.constantFrom<unknown>(1, 'on', true, '2024-02-03', { k: 1 }, { space: 'sp', externalId: 'n' }), 8),
    name: rarely(fc.string({ maxLength: 5 })),
  })
  .map(withoutUndefined);
const containerArb = fc.dictionary(propertyId, propertyArb, { minKeys: 1, maxKeys: 4 }).chain((properties) => {
  const ids = fc.uniqueArray(fc.constantFrom(...Object.keys(properties)), { minLength: 1, maxLength: 2 });
  return fc
    .record({
      usedFor: rarely(fc.constantFrom('node', 'edge', 'all'), 2),
      constraints: rarely(fc.dictionary(fc.constantFrom('u1', 'u2'), fc.record({ properties: ids, bySpace: rarely(fc.boolean(), 2) }).map(withoutUndefined)), 2),
      indexes: rarely(
        fc.dictionary(fc.constantFrom('i1', 'i2'), fc.record({ indexType: rarely(fc.constantFrom('btree', 'inverted'), 2), properties: ids, cursorable: rarely(fc.boolean(), 3) }).map(withoutUndefined)),
        2,
      ),
    })
    .map((extra) => withoutUndefined({ space: 'sp', externalId: 'Box', properties, ...extra }));
});

/** The read form without what only reads carry: the create form of the same container. */
function asCreate(read: Record<string, unknown>): unknown {
  const { createdTime: _c, lastUpdatedTime: _l, isGlobal: _g, ...rest } = read;
  const strip = (m: Record<string, Record<string, unknown>>) => Object.fromEntries(Object.entries(m).map(([k, { state: _s, constraintState: _cs, ...v }]) => [k, v]));
  return {
    ...rest,
    properties: strip(rest.properties as Record<string, Record<string, unknown>>),
    constraints: strip(rest.constraints as Record<string, Record<string, unknown>>),
    indexes: strip(rest.indexes as Record<string, Record<string, unknown>>),
  };
}

describe('container round trip', () => {
  it('reads back every accepted definition, and re-applying the read form changes nothing', () => {
    let accepted = 0;
    fc.assert(
      fc.property(containerArb, (raw) => {
        let body;
        try {
          body = validateBody({ items: [raw] }) as { items: never[] };
          body = normalizeContainers(body.items);
        } catch {
          return;
        }
        accepted++;
        const read = containerReadForm(body[0], META) as unknown as Record<string, unknown>;
        validateRead(structuredClone(read));
        const again = containers(asCreate(read));
        expect(again[0]).toEqual(body[0]);
      }),
      { numRuns: 400, seed: 7 },
    );
    expect(accepted).toBeGreaterThan(40);
  });
});
