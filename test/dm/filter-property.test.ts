/**
 * The data modeling filter language on the server against the in-memory evaluator (test/support/dm-evaluator.ts):
 * random filters over a fixed set of instances with random values, written over HTTP; `/models/instances/list`
 * must return exactly the instances the evaluator selects, on each store.
 */
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dmFilter, type DmInstance, type DmWorld, type Filter } from '../support/dm-evaluator.js';
import { startHarness, type Harness } from '../support/harness.js';
import { C, CONTAINERS, filterOf, P, PUMP, pumpLeaves, random, randomPump, SITE } from '../support/pump-world.js';

let h: Harness;

const LARGE = { type: 'view', space: 'sp', externalId: 'Large', version: 'v1' };

function worldInstances(): DmInstance[] {
  const r = random(42);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const out: DmInstance[] = [];
  for (let i = 0; i < 4; i++) {
    out.push({ instanceType: 'node', space: 'sp', externalId: `s${i}`, version: 1, createdTime: 0, lastUpdatedTime: 0, containers: { [SITE]: { city: pick(['Oslo', 'Bergen', 'oslo']) } } });
  }
  for (let i = 0; i < 36; i++) {
    const containers: Record<string, Record<string, unknown>> = {};
    if (r() < 0.85) containers[PUMP] = randomPump(r);
    if (r() < 0.15) containers[SITE] = { city: pick(['Oslo', 'Bergen']) };
    out.push({ instanceType: 'node', space: 'sp', externalId: `n${String(i).padStart(2, '0')}`, version: 1, createdTime: 0, lastUpdatedTime: 0, containers });
  }
  return out;
}

const instances = worldInstances();
const world: DmWorld = {
  containers: CONTAINERS as unknown as DmWorld['containers'],
  views: {
    'sp:Large/v1': { properties: { size: [PUMP, 'size'] }, filter: { range: { property: ['size'], gte: 10 } } },
    'sp:PumpV/v1': { properties: { title: [PUMP, 'name'], size: [PUMP, 'size'] } },
  },
  instances,
};

beforeAll(async () => {
  h = await startHarness();
  const post = async (path: string, body: unknown) => {
    const res = await h.post(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
  };
  await post('/models/spaces', { items: [{ space: 'sp' }] });
  await post('/models/containers', {
    items: [
      { space: 'sp', externalId: 'Pump', properties: Object.fromEntries(Object.entries(CONTAINERS[PUMP]).map(([k, t]) => [k, { type: t }])), indexes: { bySize: { properties: ['size'] } } },
      { space: 'sp', externalId: 'Site', properties: { city: { type: { type: 'text' } } } },
    ],
  });
  await post('/models/views', {
    items: [
      { space: 'sp', externalId: 'PumpV', version: 'v1', properties: { title: { container: C('Pump'), containerPropertyIdentifier: 'name' }, size: { container: C('Pump'), containerPropertyIdentifier: 'size' } } },
      { space: 'sp', externalId: 'Large', version: 'v1', properties: { size: { container: C('Pump'), containerPropertyIdentifier: 'size' } }, filter: { range: { property: ['size'], gte: 10 } } },
    ],
  });
  await post('/models/instances', {
    autoCreateDirectRelations: false,
    items: instances.map((i) => ({
      instanceType: 'node',
      space: i.space,
      externalId: i.externalId,
      ...(Object.keys(i.containers).length ? { sources: Object.entries(i.containers).map(([key, properties]) => ({ source: C(key.split(':')[1]), properties })) } : {}),
    })),
  });
});
afterAll(() => h.close());

const leaf: Arbitrary<Filter> = fc.oneof(
  ...pumpLeaves({ externalId: ['node', 'externalId'], ids: ['n01', 'n02', 's1', 'zz'], prefixes: ['n0', 's', 'n1'] }),
  fc.record({ overlaps: fc.record({ startProperty: fc.constant(P('seen')), endProperty: fc.constant(P('until')), gte: fc.constantFrom('2024-01-04T00:00:00Z', '2024-01-12T00:00:00Z'), lt: fc.constantFrom('2024-01-06T00:00:00Z', '2024-01-20T00:00:00Z') }) }),
  fc.record({ hasData: fc.constantFrom([C('Pump')], [LARGE], [C('Site')], [C('Pump'), C('Site')]) }),
  fc.record({ instanceReferences: fc.constantFrom([{ space: 'sp', externalId: 'n03' }], [{ space: 'sp', externalId: 'n04' }, { space: 'sp', externalId: 's1' }]) }),
  fc.record({ nested: fc.record({ scope: fc.constant(P('site')), filter: fc.constantFrom({ equals: { property: ['sp', 'Site', 'city'], value: 'Oslo' } }, { matchAll: {} }, { prefix: { property: ['node', 'externalId'], value: 's1' } }) }) }),
);

const filter = filterOf(leaf);

describe('the filter language on the server agrees with the evaluator', () => {
  it('on random filters over random instances', async () => {
    await fc.assert(
      fc.asyncProperty(filter, async (f) => {
        // The project's unit nodes (cdf_cdm_units) are not in the evaluator's world: the list keeps to the space that is.
        const res = await h.post('/models/instances/list', { filter: { and: [f, { equals: { property: ['node', 'space'], value: 'sp' } }] }, limit: 1000 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const got = res.body.items.map((i: { externalId: string }) => i.externalId).sort();
        const want = dmFilter(world, f).map((i) => i.externalId).sort();
        expect(got, JSON.stringify(f)).toEqual(want);
      }),
      { numRuns: 300, seed: 20 },
    );
  });

  it('sorted pages of a filter are the evaluator’s matches, each once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(filter, fc.constantFrom('ascending', 'descending'), fc.boolean(), fc.integer({ min: 1, max: 7 }), async (f, direction, nullsFirst, limit) => {
        const seen: Array<{ externalId: string; properties?: any }> = [];
        let cursor: string | undefined;
        const sort = [{ property: P('size'), direction, nullsFirst }];
        do {
          const res = await h.post('/models/instances/list', { filter: f, sort, limit, cursor, sources: [{ source: { type: 'view', space: 'sp', externalId: 'PumpV', version: 'v1' } }] });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          seen.push(...res.body.items);
          cursor = res.body.nextCursor;
        } while (cursor);
        const want = dmFilter(world, { and: [f, { hasData: [C('Pump')] }] });
        expect(seen.map((i) => i.externalId).sort()).toEqual(want.map((i) => i.externalId).sort());
        const sizes = seen.map((i) => i.properties.sp['PumpV/v1'].size ?? null);
        const rank = (v: number | null) => (v === null ? (nullsFirst ? -Infinity : Infinity) : direction === 'ascending' ? v : -v);
        for (let i = 1; i < sizes.length; i++) expect(rank(sizes[i - 1]) <= rank(sizes[i]), JSON.stringify(sizes)).toBe(true);
      }),
      { numRuns: 60, seed: 21 },
    );
  });
});
