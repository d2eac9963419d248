/**
 * Property-based test: `POST /timeseries/list` (SQL) against the in-memory evaluator of the filter language, on
 * random time series and random queries (advanced filter with booleans, nested instance id paths, the search-only
 * `["query"]`, security categories, metadata and the derived `unitQuantity`; basic filter incl. the asset
 * filters; sort; partitions; cursor paging with small limits), plus `POST /timeseries/aggregate` counts.
 *
 * Deterministic: the data and the queries come from fixed seeds and the server's clock is a test value.
 * STRATA_FC_SEED and STRATA_FC_RUNS override the query seed and run count for exploration.
 */
import { sql } from '../src/storage/sql.js';
import { readFileSync } from 'node:fs';
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  evaluate,
  leafMatches,
  type Filter,
  type Item,
  type ResourceModel,
  type SortSpec,
  type TimeRange,
} from './support/evaluator.js';
import { filterArbitrary, prefixesOf, sortArbitrary, type Domains } from './support/filter-arbitraries.js';
import { expectListing, expectPartitions } from './support/listing.js';
import { startHarness, type Harness } from './support/harness.js';

const DATA_SEED = 13;
const QUERY_SEED = Number(process.env.STRATA_FC_SEED ?? 20250404);
/** Per generator (three of them). */
const RUNS = Number(process.env.STRATA_FC_RUNS ?? 150);
const SERIES = 70;

/** Time series as the filter language sees them (the catalog's properties). */
const timeSeriesModel: ResourceModel = {
  properties: [
    { name: 'id', kind: 'integer' },
    { name: 'externalId', kind: 'string', sortable: true },
    { name: 'name', kind: 'string', searchable: true, sortable: true },
    { name: 'description', kind: 'string', searchable: true, sortable: true },
    { name: 'query', kind: 'string', searchable: true, searchOnly: true, searchOver: ['name', 'description'] },
    { name: 'unit', kind: 'string' },
    { name: 'unitExternalId', kind: 'string' },
    { name: 'unitQuantity', kind: 'string' },
    { name: 'type', kind: 'string' },
    { name: 'isStep', kind: 'boolean' },
    { name: 'isString', kind: 'boolean' },
    { name: 'assetId', kind: 'integer', sortable: true },
    { name: 'dataSetId', kind: 'integer', sortable: true },
    { name: 'createdTime', kind: 'integer', sortable: true },
    { name: 'lastUpdatedTime', kind: 'integer', sortable: true },
    { name: 'instanceId.space', kind: 'string', sortable: true },
    { name: 'instanceId.externalId', kind: 'string', sortable: true },
    { name: 'securityCategories', kind: 'integerArray' },
    { name: 'metadata', kind: 'metadata', sortable: true },
  ],
  maxFilterableMetadataLength: 256,
  defaultSort: [{ property: ['createdTime'], order: 'asc' }],
};

// Small domains with case variants, empty strings and code points beyond the BMP. Searchable text avoids
// diacritics (the full-text tokenizer folds them; the evaluator's word rule does not).
const NAMES = ['pump', 'Pump', 'pump flow', 'Valve temp', 'valve', '', 'Z', '\uFF21', '\u{1D518} level'];
const WORDS = ['pump', 'Pump', 'flow', 'temp', 'level', 'HIGH', 'low', '7', 'pump7'];
const UNITS = ['m', 'M', 'bar', 'degC', ''];
const UNIT_XIDS = ['pressure:bar', 'temperature:deg_c', 'temperature:deg_f'];
/** Stored on one series behind the API's back: a unit the catalog lacks (the series has no unit quantity). */
const LEGACY_UNIT = 'pressure:';
const QUANTITY_OF = new Map(
  (JSON.parse(readFileSync(new URL('../catalog/units/units.json', import.meta.url), 'utf8')) as Array<{ externalId: string; quantity: string }>).map((u) => [
    u.externalId,
    u.quantity,
  ]),
);
/** Query values of unitQuantity: the quantities stored, another one, other cases, prefixes and range bounds. */
const QUANTITIES = ['Pressure', 'Temperature', 'temperature', 'Length', 'P', 'Tem', 'Q', ''];
const META_KEYS = ['site', 'Site', 'unit', 'k'];
const LONG_VALUES = ['oslo'.repeat(70)];
const SHORT_META_VALUES = ['oslo', 'Oslo', 'oslo-north', 'bergen', '', 'ø', 'Ø', '\u{1D518}'];
const META_VALUES = [...SHORT_META_VALUES, ...LONG_VALUES];
const EXTERNAL_ID_STEMS = ['ts-', 'TS-', 'ts/', 'é-', '\u{1D518}', ''];
const SPACES = ['sp', 'Sp', 'sp2', '\u{1D518}'];
const DATA_SETS = ['ds-a', 'ds-b', 'ds-c'];
/** Asset hierarchy: index -> parent index. */
const ASSET_PARENTS: Array<number | null> = [null, 0, 0, 1, null, 4];
const CLOCKS = [1000, 2000, 3000];
const UPDATE_CLOCKS = [4000, 5000];
const QUERY_KEYS = [...META_KEYS, 'SITE', 'K', 'missing'];
const QUERY_META_VALUES = [...SHORT_META_VALUES, 'OSLO-NORTH', 'osl', 'BERGEN', 'c'];

const sometimes = <T>(arb: Arbitrary<T>, probability: number) =>
  fc.oneof(
    { arbitrary: fc.constant(undefined), weight: Math.round((1 - probability) * 100) },
    { arbitrary: arb, weight: Math.round(probability * 100) },
  );

let h: Harness;
let clock = 0;
let series: Item[] = [];
/** The series as the filter language sees them: with `unitQuantity`, which responses do not carry. */
let modelSeries: Item[] = [];
const dataSets = new Map<string, number>();
/** Asset index -> id, and id -> { parentId, rootId, externalId }. */
const assetIds: number[] = [];
const assets = new Map<number, { parentId?: number; rootId: number; externalId: string }>();

function ok(res: { status: number; body: any }, what: string) {
  if (res.status < 200 || res.status > 299) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

interface Generated {
  externalId?: string;
  name?: string;
  description?: string;
  unit?: string;
  unitExternalId?: string;
  isString?: boolean;
  isStep?: boolean;
  metadata?: Record<string, string>;
  asset?: number;
  dataSet?: string;
  securityCategories?: number[];
  instanceId?: { space: string; externalId: string };
}

const seriesArb: Arbitrary<Generated> = fc.record(
  {
    externalId: fc.constantFrom(...EXTERNAL_ID_STEMS),
    name: fc.constantFrom(...NAMES),
    description: fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 3 }).map((w) => w.join(' ')),
    unit: fc.constantFrom(...UNITS),
    unitExternalId: fc.constantFrom(...UNIT_XIDS),
    isString: fc.boolean(),
    isStep: fc.boolean(),
    metadata: fc.dictionary(fc.constantFrom(...META_KEYS), fc.constantFrom(...META_VALUES), { minKeys: 0, maxKeys: 3 }),
    asset: fc.nat(ASSET_PARENTS.length - 1),
    dataSet: fc.constantFrom(...DATA_SETS),
    securityCategories: fc.uniqueArray(fc.integer({ min: 1, max: 6 }), { maxLength: 3 }),
    instanceId: fc.record({ space: fc.constantFrom(...SPACES), externalId: fc.constantFrom('a', 'B', 'a1', '') }),
  },
  { requiredKeys: [] },
);

const dataArb = fc.record({
  series: fc.array(seriesArb, { minLength: SERIES, maxLength: SERIES }),
  batches: fc.array(fc.tuple(fc.integer({ min: 1, max: 25 }), fc.constantFrom(...CLOCKS)), { minLength: SERIES, maxLength: SERIES }),
  updates: fc.array(fc.tuple(fc.nat(SERIES - 1), fc.constantFrom(...DATA_SETS), fc.constantFrom(...UPDATE_CLOCKS)), { maxLength: 10 }),
});

function toCreate(g: Generated, i: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (g.externalId !== undefined) out.externalId = `${g.externalId}${i}`;
  if (g.name !== undefined) out.name = g.name;
  if (g.description !== undefined) out.description = g.description;
  if (g.unit !== undefined) out.unit = g.unit;
  if (g.isString !== undefined) out.isString = g.isString;
  if (g.unitExternalId !== undefined && !g.isString) out.unitExternalId = g.unitExternalId;
  if (g.isStep !== undefined) out.isStep = g.isStep;
  if (g.metadata !== undefined) out.metadata = g.metadata;
  if (g.asset !== undefined) out.assetId = assetIds[g.asset];
  if (g.dataSet !== undefined) out.dataSetId = dataSets.get(g.dataSet);
  if (g.securityCategories !== undefined) out.securityCategories = g.securityCategories;
  // Unique per series: the generated external id part is suffixed with the index.
  if (g.instanceId !== undefined) out.instanceId = { space: g.instanceId.space, externalId: `${g.instanceId.externalId}${i}` };
  return out;
}

beforeAll(async () => {
  h = await startHarness();
  h.strata.services.now = () => clock;
  clock = 500;
  for (const ds of ok(await h.post('/datasets', { items: DATA_SETS.map((externalId) => ({ externalId })) }), 'data sets').items) {
    dataSets.set(ds.externalId, ds.id);
  }
  const created = ok(
    await h.post('/assets', {
      items: ASSET_PARENTS.map((p, k) => ({ externalId: `ta-${k}`, name: `asset ${k}`, ...(p === null ? {} : { parentExternalId: `ta-${p}` }) })),
    }),
    'assets',
  ).items;
  for (let k = 0; k < ASSET_PARENTS.length; k++) {
    const a = created.find((x: any) => x.externalId === `ta-${k}`);
    assetIds[k] = a.id;
    assets.set(a.id, { parentId: a.parentId, rootId: a.rootId, externalId: a.externalId });
  }

  const data = fc.sample(dataArb, { seed: DATA_SEED, numRuns: 1 })[0];
  const creates = data.series.map(toCreate);
  let next = 0;
  for (const [size, at] of data.batches) {
    if (next >= creates.length) break;
    clock = at;
    ok(await h.post('/timeseries', { items: creates.slice(next, next + size) }), 'create');
    next += size;
  }
  // Decoys in another project: no query here may see them.
  ok(await h.request('POST', '/api/v1/projects/other/timeseries', { items: [{ name: 'pump', externalId: 'ts-0' }] }), 'decoys');
  const listed = ok(await h.post('/timeseries/list', { limit: 1000 }), 'list').items as Item[];
  const ids = listed.map((s) => s.id).sort((a, b) => a - b);
  for (const [index, ds, at] of data.updates) {
    clock = at;
    ok(await h.post('/timeseries/update', { items: [{ id: ids[index], update: { dataSetId: { set: dataSets.get(ds) } } }] }), 'update');
  }
  const withBar = listed.find((s) => s.unitExternalId === 'pressure:bar')!;
  await h.strata.services.db.run(sql`UPDATE timeseries SET unit_external_id = ${LEGACY_UNIT} WHERE id = ${withBar.id}`);
  series = ok(await h.post('/timeseries/list', { limit: 1000 }), 'list').items;
  expect(series.length).toBe(SERIES);
  modelSeries = series.map((s) => {
    const quantity = QUANTITY_OF.get(s.unitExternalId as string);
    return quantity === undefined ? s : { ...s, unitQuantity: quantity };
  });
  expect(modelSeries.filter((s) => s.unitQuantity === 'Temperature').length).toBeGreaterThan(5);
});

afterAll(() => h?.close());

// ---------------------------------------------------------------------------------------------------------
// Basic filter and its evaluator

type Ref = { id: number } | { externalId: string };
interface BasicFilter {
  name?: string;
  unit?: string;
  unitExternalId?: string;
  unitQuantity?: string;
  isString?: boolean;
  isStep?: boolean;
  metadata?: Record<string, string>;
  assetIds?: number[];
  assetExternalIds?: string[];
  rootAssetIds?: number[];
  assetSubtreeIds?: Ref[];
  dataSetIds?: Ref[];
  externalIdPrefix?: string;
  createdTime?: TimeRange;
  lastUpdatedTime?: TimeRange;
}
const BASIC_KEYS = [
  'name',
  'unit',
  'unitExternalId',
  'unitQuantity',
  'isString',
  'isStep',
  'metadata',
  'assetIds',
  'assetExternalIds',
  'rootAssetIds',
  'assetSubtreeIds',
  'dataSetIds',
  'externalIdPrefix',
  'createdTime',
  'lastUpdatedTime',
] as const;

const inRange = (v: unknown, r: TimeRange) => typeof v === 'number' && (r.min === undefined || v >= r.min) && (r.max === undefined || v <= r.max);
const assetRef = (ref: Ref) => ('id' in ref ? ref.id : [...assets].find(([, a]) => a.externalId === ref.externalId)![0]);
function inSubtree(id: number, root: number): boolean {
  for (let a: number | undefined = id; a !== undefined; a = assets.get(a)?.parentId) if (a === root) return true;
  return false;
}

function matchesBasic(s: Item, f: BasicFilter): boolean {
  for (const k of ['name', 'unit', 'unitExternalId', 'unitQuantity', 'isString', 'isStep'] as const) if (f[k] !== undefined && s[k] !== f[k]) return false;
  for (const [key, value] of Object.entries(f.metadata ?? {})) {
    if (!leafMatches(timeSeriesModel, s, 'equals', { property: ['metadata', key], value })) return false;
  }
  const asset = s.assetId as number | undefined;
  if (f.assetIds && !f.assetIds.includes(asset!)) return false;
  if (f.assetExternalIds && !(asset !== undefined && f.assetExternalIds.includes(assets.get(asset)!.externalId))) return false;
  if (f.rootAssetIds && !(asset !== undefined && f.rootAssetIds.includes(assets.get(asset)!.rootId))) return false;
  if (f.assetSubtreeIds && !(asset !== undefined && f.assetSubtreeIds.some((r) => inSubtree(asset, assetRef(r))))) return false;
  if (f.dataSetIds && !f.dataSetIds.some((r) => s.dataSetId === ('id' in r ? r.id : dataSets.get(r.externalId)))) return false;
  if (f.externalIdPrefix !== undefined && !(typeof s.externalId === 'string' && s.externalId.startsWith(f.externalIdPrefix))) return false;
  if (f.createdTime && !inRange(s.createdTime, f.createdTime)) return false;
  if (f.lastUpdatedTime && !inRange(s.lastUpdatedTime, f.lastUpdatedTime)) return false;
  return true;
}

function basicFilterArbitrary(d: Domains): Arbitrary<BasicFilter> {
  const clocks = fc.constantFrom(0, ...CLOCKS, ...UPDATE_CLOCKS, 2500);
  const range = fc.record({ min: clocks, max: clocks }, { requiredKeys: [] });
  const assetPick = fc.uniqueArray(fc.nat(ASSET_PARENTS.length - 1), { minLength: 1, maxLength: 2 });
  const full = fc.record({
    name: fc.constantFrom(...NAMES, 'PUMP'),
    unit: fc.constantFrom(...UNITS),
    unitExternalId: fc.constantFrom(...UNIT_XIDS, LEGACY_UNIT),
    unitQuantity: fc.constantFrom(...QUANTITIES),
    isString: fc.boolean(),
    isStep: fc.boolean(),
    metadata: fc.dictionary(fc.constantFrom(...QUERY_KEYS), fc.constantFrom(...META_VALUES, 'OSLO'), { minKeys: 1, maxKeys: 2 }),
    assetIds: assetPick.map((ks) => ks.map((k) => assetIds[k])),
    assetExternalIds: assetPick.map((ks) => ks.map((k) => `ta-${k}`)),
    rootAssetIds: fc.uniqueArray(fc.constantFrom(...ASSET_PARENTS.flatMap((p, k) => (p === null ? [k] : []))), { minLength: 1 }).map((ks) =>
      ks.map((k) => assetIds[k]),
    ),
    assetSubtreeIds: fc
      .tuple(assetPick, fc.boolean())
      .map(([ks, byId]) => ks.map((k): Ref => (byId ? { id: assetIds[k] } : { externalId: `ta-${k}` }))),
    dataSetIds: fc.uniqueArray(
      fc.constantFrom(...DATA_SETS).chain((x) => fc.constantFrom<Ref>({ externalId: x }, { id: dataSets.get(x)! })),
      { minLength: 1, maxLength: 2, selector: (r) => JSON.stringify(r) },
    ),
    externalIdPrefix: d.prefix(['externalId']),
    createdTime: range,
    lastUpdatedTime: range,
  });
  return fc
    .tuple(full, fc.subarray([...BASIC_KEYS], { minLength: 1, maxLength: 2 }))
    .map(([f, chosen]) => Object.fromEntries(chosen.map((k) => [k, f[k]])) as BasicFilter);
}

// ---------------------------------------------------------------------------------------------------------
// Queries

function domains(): Domains {
  const column = (name: string) => series.map((s) => s[name]).filter((x): x is string => typeof x === 'string');
  const nested = (name: string) =>
    series.map((s) => (s.instanceId as Record<string, string> | undefined)?.[name]).filter((x): x is string => typeof x === 'string');
  const strings: Record<string, string[]> = {
    externalId: [...column('externalId'), 'ts', 'TS-1', 'x', ''],
    name: [...NAMES, 'PUMP', 'pum'],
    description: [...column('description'), ...WORDS, ''],
    unit: [...UNITS, 'BAR'],
    unitExternalId: [...UNIT_XIDS, LEGACY_UNIT, 'pressure'],
    unitQuantity: QUANTITIES,
    type: ['numeric', 'string', 'Numeric', 'num'],
    'instanceId.space': [...SPACES, 'SP', 's'],
    'instanceId.externalId': [...nested('externalId'), 'a', 'b', 'B1'],
  };
  const maxId = Math.max(...series.map((s) => s.id));
  const integers: Record<string, Arbitrary<number>> = {
    id: fc.integer({ min: 0, max: maxId + 1 }),
    assetId: fc.constantFrom(0, ...assetIds, Math.max(...assetIds) + 1),
    dataSetId: fc.constantFrom(0, ...dataSets.values(), Math.max(...dataSets.values()) + 1),
    createdTime: fc.constantFrom(0, ...CLOCKS.flatMap((c) => [c - 1, c, c + 1])),
    lastUpdatedTime: fc.constantFrom(0, ...[...CLOCKS, ...UPDATE_CLOCKS].flatMap((c) => [c - 1, c, c + 1])),
  };
  const booleans = new Set(['isStep', 'isString']);
  return {
    value: (path) => {
      const name = path.join('.');
      if (path[0] === 'metadata') return fc.constantFrom(...QUERY_META_VALUES);
      if (booleans.has(name)) return fc.boolean();
      if (name in integers) return fc.oneof({ arbitrary: integers[name], weight: 9 }, { arbitrary: integers[name].map((n) => n + 0.5), weight: 1 });
      return fc.oneof({ arbitrary: fc.constantFrom(...strings[name]), weight: 9 }, { arbitrary: fc.string({ maxLength: 3 }), weight: 1 });
    },
    prefix: (path) =>
      fc.constantFrom(...prefixesOf(path[0] === 'metadata' ? [...QUERY_META_VALUES, LONG_VALUES[0].slice(0, 9)] : strings[path.join('.')]).filter((p) => p.length <= 64)),
    element: () => fc.integer({ min: 0, max: 7 }),
    searchText: fc.oneof(
      { arbitrary: fc.array(fc.constantFrom(...WORDS, 'VALVE', 'absent'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')), weight: 9 },
      { arbitrary: fc.constantFrom('pump-7', 'Valve, TEMP!', '!?', '"'), weight: 1 },
    ),
    metadataKey: fc.constantFrom(...QUERY_KEYS),
  };
}

interface GeneratedQuery {
  filter?: BasicFilter;
  advancedFilter?: Filter;
  sort?: SortSpec[];
  partitions?: number;
  limit: number;
  aggregate: boolean;
}

async function listAll(body: Record<string, unknown>): Promise<Item[]> {
  const out: Item[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page > 500) throw new Error('cursor paging does not end');
    const got = ok(await h.post('/timeseries/list', cursor === undefined ? body : { ...body, cursor }), `POST /timeseries/list ${JSON.stringify(body)}`);
    const items = got.items as Item[];
    expect(items.length).toBeLessThanOrEqual(body.limit as number);
    if (got.nextCursor !== undefined) expect(items.length).toBe(body.limit);
    out.push(...items);
    cursor = got.nextCursor;
    if (cursor === undefined) return out;
  }
}


/**
 * The whole model, or (to reach the resource's own properties more often than metadata, which otherwise takes
 * most leaves) its properties without metadata, or the unit properties alone (the derived unitQuantity with
 * the column it follows from): filters from a reduced model are valid for the full one and are evaluated with it.
 */
const GENERATORS: Array<[string, ResourceModel]> = [
  ['all properties', timeSeriesModel],
  ['properties other than metadata', { ...timeSeriesModel, properties: timeSeriesModel.properties.filter((p) => p.kind !== 'metadata') }],
  ['unit properties', { ...timeSeriesModel, properties: timeSeriesModel.properties.filter((p) => ['name', 'unitExternalId', 'unitQuantity'].includes(p.name)) }],
];

describe.each(GENERATORS)('time series: SQL filter path agrees with the in-memory evaluator (%s)', (_, generator) => {
  it('on random advanced and basic filters, sorts, partitions, cursor paging and counts', async () => {
    const d = domains();
    const byId = new Map(series.map((s) => [s.id, s]));
    // What the evaluator judges (relevance counts leaves on unitQuantity too): the model's form of each item listed.
    const modelById = new Map(modelSeries.map((s) => [s.id, s]));
    const asModel = (items: Item[]) => items.map((s) => modelById.get(s.id)!);
    const model = timeSeriesModel;
    const query: Arbitrary<GeneratedQuery> = fc.record(
      {
        filter: sometimes(basicFilterArbitrary(d), 0.35),
        advancedFilter: sometimes(filterArbitrary(generator, d, { maxBooleanDepth: 3 }), 0.85),
        sort: sometimes(sortArbitrary(generator, d), 0.6),
        partitions: sometimes(fc.integer({ min: 1, max: 10 }), 0.3),
        limit: fc.integer({ min: 1, max: 9 }),
        aggregate: fc.boolean(),
      },
      { requiredKeys: ['limit', 'aggregate'] },
    );

    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const body: Record<string, unknown> = { limit: q.limit };
        if (q.filter !== undefined) body.filter = q.filter;
        if (q.advancedFilter !== undefined) body.advancedFilter = q.advancedFilter;
        if (q.sort !== undefined) body.sort = q.sort;
        const where = q.filter === undefined ? undefined : (s: Item) => matchesBasic(s, q.filter!);
        const got = await listAll(body);
        const expected = evaluate(model, modelSeries, { where, advancedFilter: q.advancedFilter, sort: q.sort });
        expectListing(model, q, asModel(got), expected);
        expect(got, 'items as stored').toEqual(got.map((s) => byId.get(s.id)));

        if (q.aggregate) {
          const aggBody: Record<string, unknown> = {};
          if (q.filter !== undefined) aggBody.filter = q.filter;
          if (q.advancedFilter !== undefined) aggBody.advancedFilter = q.advancedFilter;
          const counted = ok(await h.post('/timeseries/aggregate', aggBody), `POST /timeseries/aggregate ${JSON.stringify(aggBody)}`);
          expect(counted.items, 'count').toEqual([{ count: expected.length }]);
        }

        if (q.partitions !== undefined) {
          await expectPartitions(
            model,
            q,
            q.partitions,
            async (partition) => asModel(await listAll({ ...body, partition })),
            (partition) => evaluate(model, modelSeries, { where, advancedFilter: q.advancedFilter, sort: q.sort, partition }),
            got,
          );
        }
      }),
      { seed: QUERY_SEED, numRuns: RUNS },
    );
  });
});
