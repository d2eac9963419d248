/**
 * The records filter on the server against the in-memory evaluator of the filter language
 * (test/support/dm-evaluator.ts): random filters over a fixed set of records with random values, written
 * over HTTP; `/records/filter` must return exactly the records the evaluator selects, and a sort on a
 * property must order them, on each store. Records are the evaluator's instances with their fields
 * (`["externalId"]`) read as an instance's (`["node", "externalId"]`).
 */
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dmFilter, type DmInstance, type DmWorld, type Filter } from './support/dm-evaluator.js';
import { startHarness, type Harness } from './support/harness.js';
import { createStream, ok } from './support/records.js';

let h: Harness;

const PUMP = 'sp:Pump';
const SITE = 'sp:Site';
const CONTAINERS = {
  [PUMP]: {
    name: { type: 'text' },
    size: { type: 'int32' },
    weight: { type: 'float64' },
    on: { type: 'boolean' },
    seen: { type: 'timestamp' },
    day: { type: 'date' },
    tags: { type: 'text', list: true },
    sizes: { type: 'int32', list: true },
    site: { type: 'direct' },
  },
  [SITE]: { city: { type: 'text' } },
} as const;
const C = (externalId: string) => ({ type: 'container', space: 'sp', externalId });
const P = (p: string) => ['sp', 'Pump', p];

/** A small deterministic generator, so a failure names a fixed data set. */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

function worldRecords(): DmInstance[] {
  const r = random(7);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const maybe = <T,>(v: T): T | undefined => (r() < 0.2 ? undefined : v);
  const out: DmInstance[] = [];
  for (let i = 0; i < 40; i++) {
    const containers: Record<string, Record<string, unknown>> = {};
    if (r() < 0.85) {
      const pump: Record<string, unknown> = {
        name: maybe(pick(['alpha', 'alp', 'beta', 'Alpha', '', 'al\u00e9'])),
        size: maybe(Math.floor(r() * 21)),
        weight: maybe(pick([0.5, 1.25, -3, 10])),
        on: maybe(r() < 0.5),
        seen: maybe(new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 10) * 86_400_000).toISOString()),
        day: maybe(pick(['2024-01-01', '2024-02-15', '2023-12-31'])),
        tags: maybe(Array.from({ length: Math.floor(r() * 3) }, () => pick(['x', 'y', 'z']))),
        sizes: maybe(Array.from({ length: Math.floor(r() * 3) }, () => Math.floor(r() * 5))),
        site: maybe({ space: 'sp', externalId: `s${Math.floor(r() * 4)}` }),
      };
      for (const k of Object.keys(pump)) if (pump[k] === undefined) delete pump[k];
      containers[PUMP] = pump;
    }
    if (r() < 0.3 || Object.keys(containers).length === 0) containers[SITE] = { city: pick(['Oslo', 'Bergen']) };
    out.push({ instanceType: 'node', space: pick(['sp', 'sq']), externalId: `r${String(i).padStart(2, '0')}`, version: 1, createdTime: 0, lastUpdatedTime: 0, containers });
  }
  return out;
}

const records = worldRecords();
const world: DmWorld = { containers: CONTAINERS as unknown as DmWorld['containers'], views: {}, instances: records };

beforeAll(async () => {
  h = await startHarness();
  await ok(h, '/models/spaces', { items: [{ space: 'sp' }, { space: 'sq' }] });
  await ok(h, '/models/containers', {
    items: [
      { space: 'sp', externalId: 'Pump', usedFor: 'record', properties: Object.fromEntries(Object.entries(CONTAINERS[PUMP]).map(([k, t]) => [k, { type: t }])) },
      { space: 'sp', externalId: 'Site', usedFor: 'record', properties: { city: { type: { type: 'text' } } } },
    ],
  });
  await createStream(h, 'world', 'BasicLiveData');
  await ok(
    h,
    '/streams/world/records',
    { items: records.map((i) => ({ space: i.space, externalId: i.externalId, sources: Object.entries(i.containers).map(([key, properties]) => ({ source: C(key.split(':')[1]), properties })) })) },
    202,
  );
});
afterAll(() => h.close());

const leaf: Arbitrary<Filter> = fc.oneof(
  fc.record({ equals: fc.record({ property: fc.constant(P('name')), value: fc.constantFrom('alpha', 'beta', 'Alpha', '', 'al\u00e9') }) }),
  fc.record({ equals: fc.record({ property: fc.constant(P('size')), value: fc.integer({ min: 0, max: 20 }) }) }),
  fc.record({ equals: fc.record({ property: fc.constant(P('on')), value: fc.boolean() }) }),
  fc.record({ equals: fc.record({ property: fc.constant(P('tags')), value: fc.constantFrom([], ['x'], ['x', 'y']) }) }),
  fc.record({ equals: fc.record({ property: fc.constant(P('site')), value: fc.constantFrom({ space: 'sp', externalId: 's1' }, { space: 'sp', externalId: 's9' }) }) }),
  fc.record({ equals: fc.record({ property: fc.constant(['space']), value: fc.constantFrom('sp', 'sq', 'sz') }) }),
  fc.record({ in: fc.record({ property: fc.constant(P('size')), values: fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 4 }) }) }),
  fc.record({ in: fc.record({ property: fc.constant(P('sizes')), values: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }) }) }),
  fc.record({ in: fc.record({ property: fc.constant(['externalId']), values: fc.array(fc.constantFrom('r01', 'r02', 'r30', 'zz'), { minLength: 1, maxLength: 3 }) }) }),
  fc
    .record({ range: fc.record({ property: fc.constant(P('size')), gte: fc.integer({ min: 0, max: 20 }), lt: fc.integer({ min: 0, max: 20 }) }, { requiredKeys: ['property'] }) })
    .filter((f) => Object.keys(f.range).length > 1),
  fc.record({ range: fc.record({ property: fc.constant(P('weight')), gt: fc.constantFrom(-5, 0, 1.25, 3) }) }),
  fc.record({ range: fc.record({ property: fc.constant(P('seen')), lte: fc.constantFrom('2024-01-03T00:00:00Z', '2024-01-08T12:00:00+01:00') }) }),
  fc.record({ range: fc.record({ property: fc.constant(P('day')), gt: fc.constantFrom('2024-01-01', '2023-01-01') }) }),
  fc.record({ range: fc.record({ property: fc.constant(P('name')), gte: fc.constantFrom('alp', 'b', 'A') }) }),
  fc.record({ prefix: fc.record({ property: fc.constant(P('name')), value: fc.constantFrom('a', 'al', 'b', 'A', '', 'al\u00e9') }) }),
  fc.record({ prefix: fc.record({ property: fc.constant(P('tags')), value: fc.constantFrom([], ['x'], ['x', 'y'], ['z']) }) }),
  fc.record({ prefix: fc.record({ property: fc.constant(['externalId']), value: fc.constantFrom('r0', 's', 'r1') }) }),
  fc.record({ exists: fc.record({ property: fc.constantFrom(P('size'), P('tags'), P('seen'), P('site'), ['sp', 'Site', 'city']) }) }),
  fc.record({ containsAny: fc.record({ property: fc.constant(P('tags')), values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { minLength: 1, maxLength: 2 }) }) }),
  fc.record({ containsAll: fc.record({ property: fc.constantFrom(P('tags')), values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z'), { minLength: 1, maxLength: 2 }) }) }),
  fc.record({ containsAll: fc.record({ property: fc.constant(P('sizes')), values: fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 2 }) }) }),
  fc.record({ hasData: fc.constantFrom([C('Pump')], [C('Site')], [C('Pump'), C('Site')]) }),
  fc.constant({ matchAll: {} }),
);

const filter: Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ and: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('f'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('f') }),
  ),
})).f;

/** The filter as the evaluator reads it: a record's own fields as an instance's. */
function asInstanceFilter(f: Filter): Filter {
  return JSON.parse(JSON.stringify(f), (key, value) => (key === 'property' && Array.isArray(value) && value.length === 1 ? ['node', value[0]] : value));
}

describe('the records filter on the server agrees with the evaluator', () => {
  it('on random filters over random records', async () => {
    await fc.assert(
      fc.asyncProperty(filter, async (f) => {
        const res = await h.post('/streams/world/records/filter', { filter: f, limit: 1000 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const got = res.body.items.map((i: { externalId: string }) => i.externalId).sort();
        const want = dmFilter(world, asInstanceFilter(f)).map((i) => i.externalId).sort();
        expect(got, JSON.stringify(f)).toEqual(want);
      }),
      { numRuns: 300, seed: 32 },
    );
  });

  it('sorts the matches of a filter by a property, records without a value last', async () => {
    await fc.assert(
      fc.asyncProperty(filter, fc.constantFrom('ascending', 'descending'), async (f, direction) => {
        const res = await h.post('/streams/world/records/filter', { filter: f, limit: 1000, sort: [{ property: P('size'), direction }], sources: [{ source: C('Pump'), properties: ['size'] }] });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const want = dmFilter(world, asInstanceFilter(f)).map((i) => i.externalId).sort();
        expect(res.body.items.map((i: { externalId: string }) => i.externalId).sort()).toEqual(want);
        const sizes = res.body.items.map((i: any) => i.properties.sp?.Pump?.size ?? null);
        const rank = (v: number | null) => (v === null ? Infinity : direction === 'ascending' ? v : -v);
        for (let i = 1; i < sizes.length; i++) expect(rank(sizes[i - 1]) <= rank(sizes[i]), JSON.stringify(sizes)).toBe(true);
      }),
      { numRuns: 60, seed: 33 },
    );
  });
});
