/**
 * Property-based test: `POST /events/list` (SQL) against the in-memory evaluator of the filter language, on
 * random events and random queries (advanced filter, basic filter, sort with order and nulls, partitions,
 * cursor paging with small limits).
 *
 * Deterministic: the data and the queries come from fixed seeds and the server's clock is a test value.
 * STRATA_FC_SEED and STRATA_FC_RUNS override the query seed and run count for exploration.
 */
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  evaluate,
  eventMatchesBasicFilter,
  eventModel,
  type EventBasicFilter,
  type Filter,
  type Item,
  type Primitive,
  type SortSpec,
  type TimeRange,
} from './support/evaluator.js';
import { filterArbitrary, prefixesOf, sortArbitrary, type Domains } from './support/filter-arbitraries.js';
import { expectListing, expectPartitions } from './support/listing.js';
import { startHarness, type Harness } from './support/harness.js';

const DATA_SEED = 7;
const QUERY_SEED = Number(process.env.STRATA_FC_SEED ?? 20250101);
const RUNS = Number(process.env.STRATA_FC_RUNS ?? 300);

// ---------------------------------------------------------------------------------------------------------
// Value domains: small, with case variants, empty strings, code points outside the BMP and after U+FFFF's
// UTF-16 neighbours (code point order differs from UTF-16 order), and metadata values too long to filter.

const TYPES = ['alarm', 'Alarm', 'alarm-high', 'fault', '', 'é', 'Z', '\uFF21', '\u{1D518}'];
const SUBTYPES = ['a', 'A', 'ab', 'b', ''];
const SOURCES = ['scada', 'SCADA', 'sap', 'scad', 's'];
const WORDS = ['pump', 'Pump', 'valve', 'leak', 'pressure', 'high', 'LOW', 'and', 'or', 'NOT', 'near', '7', 'pump7'];
const SEPARATORS = [' ', ' ', '-', ', ', '. '];
const META_KEYS = ['site', 'Site', 'SITE', 'unit', 'Unit', 'level', 'k'];
const LONG_VALUES = ['oslo'.repeat(70), 'Bergen'.repeat(50)];
const SHORT_META_VALUES = ['oslo', 'Oslo', 'OSLO', 'oslo-north', 'bergen', 'Bergen', '', 'a', 'B', 'ø', 'Ø', '\uFF21', '\u{1D518}'];
const EXTERNAL_ID_STEMS = ['pump-', 'Pump-', 'PUMP', 'valve/', 'v', 'é-', '\u{1D518}', ''];
const DATA_SETS = ['ds-a', 'ds-b', 'ds-c'];
const CLOCKS = [1000, 2000, 3000];
/** The largest timestamp of the spec's data points, and the largest accepted one. */
const BIG_TIMES = [4102444799999, Number.MAX_SAFE_INTEGER];
const UPDATE_CLOCKS = [3000, 4000];

const QUERY_KEYS = [...META_KEYS, 'SiTe', 'LEVEL', 'K', 'missing'];
const QUERY_META_VALUES = [...SHORT_META_VALUES, 'OSLO-NORTH', 'osl', 'oslo-', 'BERGEN', 'c', 'ª', 'ａ'];

/** `arb` with the given probability, otherwise undefined. */
const sometimes = <T>(arb: Arbitrary<T>, probability: number) =>
  fc.oneof(
    { arbitrary: fc.constant(undefined), weight: Math.round((1 - probability) * 100) },
    { arbitrary: arb, weight: Math.round(probability * 100) },
  );

const descriptionArb = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { maxLength: 5 })
  .map((parts) => parts.map(([w, s], i) => (i === parts.length - 1 ? w : w + s)).join(''));
const metadataArb = fc.dictionary(fc.constantFrom(...META_KEYS), fc.oneof(
  { arbitrary: fc.constantFrom(...SHORT_META_VALUES), weight: 8 },
  { arbitrary: fc.constantFrom(...LONG_VALUES), weight: 1 },
), { maxKeys: 4 });
const assetIdsArb = fc.uniqueArray(fc.integer({ min: 1, max: 6 }), { maxLength: 3 });

interface GeneratedEvent {
  stem?: string;
  dataSet?: string;
  dataSetId?: number;
  startTime?: number;
  span?: number;
  type?: string;
  subtype?: string;
  description?: string;
  metadata?: Record<string, string>;
  assetIds?: number[];
  source?: string;
}

const eventArb: Arbitrary<GeneratedEvent> = fc.record({
  stem: sometimes(fc.constantFrom(...EXTERNAL_ID_STEMS), 0.75),
  dataSet: sometimes(fc.constantFrom(...DATA_SETS), 0.5),
  startTime: sometimes(fc.oneof({ arbitrary: fc.integer({ min: 0, max: 20 }), weight: 19 }, { arbitrary: fc.constantFrom(...BIG_TIMES), weight: 1 }), 0.75),
  span: sometimes(fc.integer({ min: 0, max: 10 }), 0.5),
  type: sometimes(fc.constantFrom(...TYPES), 0.75),
  subtype: sometimes(fc.constantFrom(...SUBTYPES), 0.5),
  description: sometimes(descriptionArb, 0.75),
  metadata: sometimes(metadataArb, 0.75),
  assetIds: sometimes(assetIdsArb, 0.5),
  source: sometimes(fc.constantFrom(...SOURCES), 0.5),
});

function toCreate(g: GeneratedEvent, externalId: string | undefined): Record<string, unknown> {
  const endTime = g.span === undefined ? undefined : Math.min((g.startTime ?? 10) + g.span, Number.MAX_SAFE_INTEGER);
  const e: Record<string, unknown> = {
    externalId,
    dataSetId: g.dataSetId,
    startTime: g.startTime,
    endTime,
    type: g.type,
    subtype: g.subtype,
    description: g.description,
    metadata: g.metadata,
    assetIds: g.assetIds,
    source: g.source,
  };
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
  return e;
}

const nullable = <T>(arb: Arbitrary<T>) => fc.oneof(arb.map((set) => ({ set })), fc.constant({ setNull: true }));
const patchArb = fc
  .record(
    {
      type: nullable(fc.constantFrom(...TYPES)),
      description: nullable(descriptionArb),
      source: nullable(fc.constantFrom(...SOURCES)),
      startTime: fc.constant({ setNull: true }),
      endTime: fc.constant({ setNull: true }),
      metadata: fc.oneof(
        metadataArb.map((set) => ({ set })),
        fc.record({ add: metadataArb, remove: fc.uniqueArray(fc.constantFrom(...META_KEYS), { maxLength: 3 }) }),
      ),
      assetIds: fc.oneof(
        assetIdsArb.map((set) => ({ set })),
        fc.record({ add: assetIdsArb, remove: assetIdsArb }),
      ),
    },
    { requiredKeys: [] },
  )
  .filter((p) => Object.keys(p).length > 0);

const datasetArb = fc.record({
  events: fc.array(eventArb, { minLength: 90, maxLength: 90 }),
  batches: fc.array(fc.tuple(fc.integer({ min: 1, max: 25 }), fc.constantFrom(...CLOCKS)), { minLength: 30, maxLength: 30 }),
  updates: fc.array(fc.tuple(fc.nat(89), patchArb, fc.constantFrom(...UPDATE_CLOCKS)), { minLength: 15, maxLength: 15 }),
  deletes: fc.uniqueArray(fc.nat(89), { minLength: 5, maxLength: 5 }),
  decoys: fc.array(eventArb, { minLength: 15, maxLength: 15 }),
});

// ---------------------------------------------------------------------------------------------------------
// Server

let h: Harness;
let clock = 0;
/** Every event of the project, as the API returns it: the evaluator's data. */
let events: Item[] = [];
/** Data set external id -> id. */
let dataSets = new Map<string, number>();
/** The ids of the assets the generators number 1 to 7. */
let assetPool: number[] = [];
/** The id of the asset numbered `n` by the generators; 0 stays 0 (no asset has it). */
const assetId = (n: number): number => (n === 0 ? 0 : assetPool[n - 1]);

function ok(res: { status: number; body: any }, what: string) {
  if (res.status < 200 || res.status > 299) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

beforeAll(async () => {
  h = await startHarness();
  h.strata.services.now = () => clock;
  // Events refer only to existing assets. The generators number assets 1 to 6 (filters up to 7), which
  // assetId turns into the ids of assets created here; the other project's decoys get assets of their own.
  assetPool = ok(await h.post('/assets', { items: [1, 2, 3, 4, 5, 6, 7].map((n) => ({ name: `asset ${n}` })) }), 'create assets').items.map(
    (a: { id: number }) => a.id,
  );
  const otherPool = ok(
    await h.request('POST', '/api/v1/projects/other/assets', { items: [1, 2, 3, 4, 5, 6].map((n) => ({ name: `decoy asset ${n}` })) }),
    'create decoy assets',
  ).items.map((a: { id: number }) => a.id);
  const data = fc.sample(datasetArb, { seed: DATA_SEED, numRuns: 1 })[0];
  const sets = ok(await h.post('/datasets', { items: DATA_SETS.map((externalId) => ({ externalId })) }), 'create data sets').items;
  dataSets = new Map(sets.map((s: { id: number; externalId: string }) => [s.externalId, s.id]));

  const creates = data.events.map((g, i) =>
    toCreate({ ...g, assetIds: g.assetIds?.map(assetId), dataSetId: g.dataSet === undefined ? undefined : dataSets.get(g.dataSet) }, g.stem === undefined ? undefined : `${g.stem}${i}`),
  );
  creates[0].externalId = '';
  let next = 0;
  for (const [size, at] of data.batches) {
    if (next >= creates.length) break;
    clock = at;
    ok(await h.post('/events', { items: creates.slice(next, next + size) }), 'create');
    next += size;
  }
  clock = 1000;
  // The same kind of events in another project: no query here may see them.
  const decoys = data.decoys.map((g, i) => toCreate({ ...g, assetIds: g.assetIds?.map((n) => otherPool[n - 1]) }, `pump-${i}`));
  ok(await h.request('POST', '/api/v1/projects/other/events', { items: decoys }), 'create decoys');

  const created = ok(await h.post('/events/list', { limit: 1000 }), 'list').items as Item[];
  const ids = created.map((e) => e.id).sort((a, b) => a - b);
  for (const [index, update, at] of data.updates) {
    clock = at;
    const { assetIds, ...rest } = update;
    const mapped = assetIds && Object.fromEntries(Object.entries(assetIds).map(([op, ns]) => [op, (ns as number[]).map(assetId)]));
    ok(await h.post('/events/update', { items: [{ id: ids[index], update: { ...rest, ...(mapped ? { assetIds: mapped } : {}) } }] }), 'update');
  }
  ok(await h.post('/events/delete', { items: data.deletes.map((i) => ({ id: ids[i] })) }), 'delete');

  events = ok(await h.post('/events/list', { limit: 1000 }), 'list').items;
  expect(events.length).toBe(85);
});

afterAll(() => h?.close());

// ---------------------------------------------------------------------------------------------------------
// Queries

function domains(): Domains {
  const externalIds = events.map((e) => e.externalId).filter((x): x is string => typeof x === 'string');
  const descriptions = events.map((e) => e.description).filter((x): x is string => typeof x === 'string');
  const strings: Record<string, string[]> = {
    externalId: [...externalIds, 'pump', 'PUMP1', 'x', ''],
    type: [...TYPES, 'ALARM', 'alarm-', 'al', 'zz'],
    subtype: [...SUBTYPES, 'B', 'abc'],
    source: [...SOURCES, 'Scada', 'sa'],
    description: [...descriptions, ...WORDS, ''],
  };
  const times = fc.oneof(
    { arbitrary: fc.integer({ min: -1, max: 31 }), weight: 19 },
    { arbitrary: fc.constantFrom(...BIG_TIMES.flatMap((t) => [t - 1, t, t + 1])), weight: 1 },
  );
  const integers: Record<string, Arbitrary<number>> = {
    id: fc.constantFrom(0, ...events.flatMap((e) => [e.id - 1, e.id, e.id + 1])),
    dataSetId: fc.constantFrom(0, ...[...dataSets.values()].flatMap((id) => [id - 1, id, id + 1])),
    startTime: times,
    endTime: times,
    createdTime: fc.constantFrom(0, ...CLOCKS.flatMap((c) => [c - 1, c, c + 1])),
    lastUpdatedTime: fc.constantFrom(0, ...[...CLOCKS, ...UPDATE_CLOCKS].flatMap((c) => [c - 1, c, c + 1])),
  };
  const withHalves = (arb: Arbitrary<number>) =>
    fc.oneof({ arbitrary: arb, weight: 9 }, { arbitrary: arb.map((n) => n + 0.5), weight: 1 });
  const shortPrefixes = (values: string[]) => prefixesOf(values.filter((v) => v.length <= 64));
  return {
    value: (path) => {
      if (path[0] === 'metadata') return fc.constantFrom(...QUERY_META_VALUES);
      if (path[0] in integers) return withHalves(integers[path[0]]) as Arbitrary<Primitive>;
      return fc.oneof({ arbitrary: fc.constantFrom(...strings[path[0]]), weight: 9 }, { arbitrary: fc.string({ maxLength: 3 }), weight: 1 });
    },
    prefix: (path) =>
      fc.constantFrom(...shortPrefixes(path[0] === 'metadata' ? [...QUERY_META_VALUES, LONG_VALUES[0].slice(0, 9)] : strings[path[0]])),
    element: () => fc.integer({ min: 0, max: 7 }).map(assetId),
    searchText: fc.oneof(
      { arbitrary: fc.array(fc.constantFrom(...WORDS, 'PUMP', 'absent'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')), weight: 9 },
      { arbitrary: fc.constantFrom('pump-7', 'Valve, LEAK!', '!?', '"'), weight: 1 },
    ),
    metadataKey: fc.constantFrom(...QUERY_KEYS),
  };
}

function basicFilterArbitrary(d: Domains): Arbitrary<EventBasicFilter> {
  const range = (values: Arbitrary<number>): Arbitrary<TimeRange> =>
    fc.record({ min: values, max: values }, { requiredKeys: [] });
  const times = fc.integer({ min: 0, max: 31 });
  const clocks = fc.constantFrom(0, ...CLOCKS, ...UPDATE_CLOCKS, 2500);
  const full = fc.record({
    startTime: range(times),
    endTime: fc.oneof(range(times), fc.record({ isNull: fc.boolean() })),
    activeAtTime: range(times),
    metadata: fc.dictionary(
      fc.constantFrom(...META_KEYS, 'SiTe', 'missing'),
      fc.oneof({ arbitrary: fc.constantFrom(...SHORT_META_VALUES, 'OSLO-NORTH'), weight: 9 }, { arbitrary: fc.constantFrom(...LONG_VALUES), weight: 1 }),
      { minKeys: 1, maxKeys: 2 },
    ),
    assetIds: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 3 }).map((ns) => ns.map(assetId)),
    source: fc.constantFrom(...SOURCES, 'Scada'),
    type: fc.constantFrom(...TYPES, 'ALARM'),
    subtype: fc.constantFrom(...SUBTYPES),
    createdTime: range(clocks),
    lastUpdatedTime: range(clocks),
    externalIdPrefix: d.prefix(['externalId']),
    dataSetIds: fc.uniqueArray(
      fc.constantFrom(...DATA_SETS).chain((x) => fc.constantFrom<{ id: number } | { externalId: string }>({ externalId: x }, { id: dataSets.get(x)! })),
      { minLength: 1, maxLength: 2, selector: (r) => JSON.stringify(r) },
    ),
  });
  return fc
    .tuple(full, fc.subarray([...FILTER_KEYS], { minLength: 1, maxLength: 2 }))
    .map(([f, chosen]) => Object.fromEntries(chosen.map((k) => [k, f[k]])) as EventBasicFilter);
}

const FILTER_KEYS = [
  'startTime',
  'endTime',
  'activeAtTime',
  'metadata',
  'assetIds',
  'source',
  'type',
  'subtype',
  'createdTime',
  'lastUpdatedTime',
  'externalIdPrefix',
  'dataSetIds',
] as const;

interface GeneratedQuery {
  filter?: EventBasicFilter;
  advancedFilter?: Filter;
  sort?: SortSpec[];
  partitions?: number;
  /** Send the sort specifications without `nulls` in the older `"property:order"` string form. */
  sortAsStrings?: boolean;
  limit: number;
}

function sortForm(spec: SortSpec): SortSpec | string {
  return spec.nulls === undefined ? `${spec.property.join('.')}${spec.order ? `:${spec.order}` : ''}` : spec;
}

async function listAll(body: Record<string, unknown>): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page > 500) throw new Error('cursor paging does not end');
    const res = await h.post('/events/list', cursor === undefined ? body : { ...body, cursor });
    const got = ok(res, `POST /events/list ${JSON.stringify(body)}`);
    const items = got.items as Item[];
    expect(items.length).toBeLessThanOrEqual(body.limit as number);
    if (got.nextCursor !== undefined) expect(items.length).toBe(body.limit);
    out.push(...items);
    cursor = got.nextCursor;
    if (cursor === undefined) return out;
  }
}


describe('events: SQL filter path agrees with the in-memory evaluator', () => {
  it('on random advanced and basic filters, sorts, partitions and cursor paging', async () => {
    const d = domains();
    const byId = new Map(events.map((e) => [e.id, e]));
    const references = {
      dataSetId: (ref: { id: number } | { externalId: string }) => ('id' in ref ? ref.id : dataSets.get(ref.externalId)!),
    };
    const query: Arbitrary<GeneratedQuery> = fc.record(
      {
        filter: sometimes(basicFilterArbitrary(d), 0.45),
        advancedFilter: sometimes(filterArbitrary(eventModel, d, { maxBooleanDepth: 3 }), 0.85),
        sort: sometimes(sortArbitrary(eventModel, d), 0.6),
        partitions: sometimes(fc.integer({ min: 1, max: 10 }), 0.35),
        sortAsStrings: fc.boolean(),
        limit: fc.integer({ min: 1, max: 7 }),
      },
      { requiredKeys: ['limit'] },
    );

    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const body: Record<string, unknown> = { limit: q.limit };
        if (q.filter !== undefined) body.filter = q.filter;
        if (q.advancedFilter !== undefined) body.advancedFilter = q.advancedFilter;
        if (q.sort !== undefined) body.sort = q.sortAsStrings ? q.sort.map(sortForm) : q.sort;
        const where = q.filter === undefined ? undefined : (e: Item) => eventMatchesBasicFilter(e, q.filter!, references);
        const got = await listAll(body);
        const expected = evaluate(eventModel, events, { where, advancedFilter: q.advancedFilter, sort: q.sort });
        expectListing(eventModel, q, got, expected);
        expect(got, 'items as stored').toEqual(got.map((e) => byId.get(e.id)));

        if (q.partitions !== undefined) {
          await expectPartitions(
            eventModel,
            q,
            q.partitions,
            (partition) => listAll({ ...body, partition }),
            (partition) => evaluate(eventModel, events, { where, advancedFilter: q.advancedFilter, sort: q.sort, partition }),
            got,
          );
        }
      }),
      { seed: QUERY_SEED, numRuns: RUNS },
    );
  });
});
