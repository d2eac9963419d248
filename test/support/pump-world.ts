/**
 * The world the property tests of the filter language share (test/dm/filter-property.test.ts for instances,
 * test/records-filter-property.test.ts for records): a `Pump` container with a property of each kind and a
 * `Site` container, random pump values from a fixed seed, and random filter leaves over them.
 */
import fc, { type Arbitrary } from 'fast-check';
import type { Filter } from './dm-evaluator.js';

export const PUMP = 'sp:Pump';
export const SITE = 'sp:Site';
export const CONTAINERS = {
  [PUMP]: {
    name: { type: 'text' },
    size: { type: 'int32' },
    weight: { type: 'float64' },
    on: { type: 'boolean' },
    seen: { type: 'timestamp' },
    until: { type: 'timestamp' },
    day: { type: 'date' },
    tags: { type: 'text', list: true },
    sizes: { type: 'int32', list: true },
    site: { type: 'direct' },
  },
  [SITE]: { city: { type: 'text' } },
} as const;
export const C = (externalId: string) => ({ type: 'container', space: 'sp', externalId });
export const P = (p: string) => ['sp', 'Pump', p];

/** A small deterministic generator, so a failure names a fixed data set. */
export function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** Random values of a pump, some left out. */
export function randomPump(r: () => number): Record<string, unknown> {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const maybe = <T,>(v: T): T | undefined => (r() < 0.2 ? undefined : v);
  const pump: Record<string, unknown> = {
    name: maybe(pick(['alpha', 'alp', 'beta', 'Alpha', '', 'al\u00e9'])),
    size: maybe(Math.floor(r() * 21)),
    weight: maybe(pick([0.5, 1.25, -3, 10])),
    on: maybe(r() < 0.5),
    seen: maybe(new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 10) * 86_400_000).toISOString()),
    until: maybe(new Date(Date.UTC(2024, 0, 5) + Math.floor(r() * 10) * 86_400_000).toISOString()),
    day: maybe(pick(['2024-01-01', '2024-02-15', '2023-12-31'])),
    tags: maybe(Array.from({ length: Math.floor(r() * 3) }, () => pick(['x', 'y', 'z']))),
    sizes: maybe(Array.from({ length: Math.floor(r() * 3) }, () => Math.floor(r() * 5))),
    site: maybe({ space: 'sp', externalId: `s${Math.floor(r() * 4)}` }),
  };
  for (const k of Object.keys(pump)) if (pump[k] === undefined) delete pump[k];
  return pump;
}

/**
 * Leaves on the pump's properties and on the external id, named as the language being tested names it
 * (`externalId`), with external ids and prefixes of the world's items.
 */
export function pumpLeaves(world: { externalId: string[]; ids: string[]; prefixes: string[] }): Array<Arbitrary<Filter>> {
  return [
    fc.record({ equals: fc.record({ property: fc.constant(P('name')), value: fc.constantFrom('alpha', 'beta', 'Alpha', '', 'al\u00e9') }) }),
    fc.record({ equals: fc.record({ property: fc.constant(P('size')), value: fc.integer({ min: 0, max: 20 }) }) }),
    fc.record({ equals: fc.record({ property: fc.constant(P('on')), value: fc.boolean() }) }),
    fc.record({ equals: fc.record({ property: fc.constant(P('tags')), value: fc.constantFrom([], ['x'], ['x', 'y']) }) }),
    fc.record({ equals: fc.record({ property: fc.constant(P('site')), value: fc.constantFrom({ space: 'sp', externalId: 's1' }, { space: 'sp', externalId: 's9' }) }) }),
    fc.record({ in: fc.record({ property: fc.constant(P('size')), values: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 4 }) }) }),
    fc.record({ in: fc.record({ property: fc.constant(P('sizes')), values: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }) }) }),
    fc.record({ in: fc.record({ property: fc.constant(world.externalId), values: fc.array(fc.constantFrom(...world.ids), { minLength: 1, maxLength: 3 }) }) }),
    fc
      .record({ range: fc.record({ property: fc.constant(P('size')), gte: fc.integer({ min: 0, max: 20 }), lt: fc.integer({ min: 0, max: 20 }) }, { requiredKeys: ['property'] }) })
      .filter((f) => Object.keys(f.range).length > 1),
    fc.record({ range: fc.record({ property: fc.constant(P('weight')), gt: fc.constantFrom(-5, 0, 1.25, 3) }) }),
    fc.record({ range: fc.record({ property: fc.constant(P('seen')), lte: fc.constantFrom('2024-01-03T00:00:00Z', '2024-01-08T12:00:00+01:00') }) }),
    fc.record({ range: fc.record({ property: fc.constant(P('day')), gt: fc.constantFrom('2024-01-01', '2023-01-01') }) }),
    fc.record({ range: fc.record({ property: fc.constant(P('name')), gte: fc.constantFrom('alp', 'b', 'A') }) }),
    fc.record({ prefix: fc.record({ property: fc.constant(P('name')), value: fc.constantFrom('a', 'al', 'b', 'A', '', 'al\u00e9') }) }),
    fc.record({ prefix: fc.record({ property: fc.constant(P('tags')), value: fc.constantFrom([], ['x'], ['x', 'y'], ['z']) }) }),
    fc.record({ prefix: fc.record({ property: fc.constant(world.externalId), value: fc.constantFrom(...world.prefixes) }) }),
    fc.record({ exists: fc.record({ property: fc.constantFrom(P('size'), P('tags'), P('until'), P('site'), ['sp', 'Site', 'city']) }) }),
    fc.record({ containsAny: fc.record({ property: fc.constant(P('tags')), values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { minLength: 1, maxLength: 2 }) }) }),
    fc.record({ containsAll: fc.record({ property: fc.constantFrom(P('tags')), values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { minLength: 1, maxLength: 2 }) }) }),
    fc.record({ containsAll: fc.record({ property: fc.constant(P('sizes')), values: fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 2 }) }) }),
    fc.constant({ matchAll: {} }),
  ];
}

/** Filters of `and`, `or` and `not` over the leaves. */
export function filterOf(leaf: Arbitrary<Filter>): Arbitrary<Filter> {
  return fc.letrec<{ f: Filter }>((tie) => ({
    f: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.record({ and: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ or: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }),
      fc.record({ not: tie('f') }),
    ),
  })).f;
}
