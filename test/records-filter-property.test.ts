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
import { C, CONTAINERS, filterOf, P, PUMP, pumpLeaves, random, randomPump, SITE } from './support/pump-world.js';
import { createStream, ok } from './support/records.js';

let h: Harness;

function worldRecords(): DmInstance[] {
  const r = random(7);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const out: DmInstance[] = [];
  for (let i = 0; i < 40; i++) {
    const containers: Record<string, Record<string, unknown>> = {};
    if (r() < 0.85) containers[PUMP] = randomPump(r);
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
  ...pumpLeaves({ externalId: ['externalId'], ids: ['r01', 'r02', 'r30', 'zz'], prefixes: ['r0', 's', 'r1'] }),
  fc.record({ equals: fc.record({ property: fc.constant(['space']), value: fc.constantFrom('sp', 'sq', 'sz') }) }),
  fc.record({ hasData: fc.constantFrom([C('Pump')], [C('Site')], [C('Pump'), C('Site')]) }),
);

const filter = filterOf(leaf);

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

  it('sorts the matches of a filter by a property, records without a value last unless asked for first', async () => {
    await fc.assert(
      fc.asyncProperty(filter, fc.constantFrom('ascending', 'descending'), fc.boolean(), async (f, direction, nullsFirst) => {
        const res = await h.post('/streams/world/records/filter', { filter: f, limit: 1000, sort: [{ property: P('size'), direction, nullsFirst }], sources: [{ source: C('Pump'), properties: ['size'] }] });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const want = dmFilter(world, asInstanceFilter(f)).map((i) => i.externalId).sort();
        expect(res.body.items.map((i: { externalId: string }) => i.externalId).sort()).toEqual(want);
        const sizes = res.body.items.map((i: any) => i.properties.sp?.Pump?.size ?? null);
        const rank = (v: number | null) => (v === null ? (nullsFirst ? -Infinity : Infinity) : direction === 'ascending' ? v : -v);
        for (let i = 1; i < sizes.length; i++) expect(rank(sizes[i - 1]) <= rank(sizes[i]), JSON.stringify(sizes)).toBe(true);
      }),
      { numRuns: 60, seed: 33 },
    );
  });
});
