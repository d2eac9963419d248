/**
 * Filters that name assets (`assetSubtreeIds`, `assetExternalIds`) on events and on assets themselves,
 * checked against an in-memory model of a random asset forest that random moves keep reshaping; and the
 * rule that events refer only to assets that exist.
 *
 * Deterministic: the forest, the events and the queries come from fixed seeds.
 */
import { sql } from '../src/storage/sql.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subtreeAssetIds } from '../src/query/assets-scope.js';
import { evaluate, type Item, type Primitive, type ResourceModel } from './support/evaluator.js';
import { expectListing } from './support/listing.js';
import { filterArbitrary, prefixesOf, sortArbitrary, type Domains } from './support/filter-arbitraries.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const DATA_SEED = 11;
const QUERY_SEED = Number(process.env.STRATA_FC_SEED ?? 20250303);
const RUNS = Number(process.env.STRATA_FC_RUNS ?? 60);
const ASSETS = 40;
const EVENTS = 60;

let h: Harness;

function ok(res: { status: number; body: any }, what: string) {
  if (res.status < 200 || res.status > 299) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The forest as the test believes it is: asset id -> parent id (null for a root). */
const parentOf = new Map<number, number | null>();
const idOf = new Map<string, number>();
const externalIdOf = new Map<number, string>();
let events: Array<{ id: number; assetIds: number[] }> = [];

function childrenOf(id: number): number[] {
  return [...parentOf].filter(([, p]) => p === id).map(([c]) => c);
}

/** The asset and all its descendants, by walking the model. */
function descendants(id: number): Set<number> {
  const out = new Set<number>([id]);
  const queue = [id];
  while (queue.length) for (const c of childrenOf(queue.shift()!)) if (!out.has(c)) (out.add(c), queue.push(c));
  return out;
}

function pathTo(id: number): number[] {
  const path = [id];
  for (let p = parentOf.get(id)!; p !== null; p = parentOf.get(p)!) path.unshift(p);
  return path;
}

interface ForestPlan {
  /** For asset k: the index of its parent (always a smaller index), or null for a root. */
  parents: Array<number | null>;
  /** Sizes of the create requests, in index order; each request lists its items shuffled. */
  batches: number[];
  shuffles: number[][];
  byId: boolean[];
  eventAssets: number[][];
}

const planArb: fc.Arbitrary<ForestPlan> = fc.record({
  parents: fc.tuple(
    ...Array.from({ length: ASSETS }, (_, k) =>
      k === 0 ? fc.constant(null) : fc.oneof({ arbitrary: fc.constant(null), weight: 1 }, { arbitrary: fc.nat(k - 1), weight: 5 }),
    ),
  ),
  batches: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: ASSETS, maxLength: ASSETS }),
  shuffles: fc.array(fc.array(fc.nat(), { minLength: 12, maxLength: 12 }), { minLength: ASSETS, maxLength: ASSETS }),
  byId: fc.array(fc.boolean(), { minLength: ASSETS, maxLength: ASSETS }),
  eventAssets: fc.array(fc.uniqueArray(fc.nat(ASSETS - 1), { maxLength: 3 }), { minLength: EVENTS, maxLength: EVENTS }),
});

const NAMES = ['Pump', 'pump', 'Feed pump', 'Valve', 'valve inlet', 'Motor', 'é', '\u{1D518} sensor'];
const SOURCES = ['sap', 'SAP', 'pi', 's'];
const META_KEYS = ['kind', 'Kind', 'area'];
const META_VALUES = ['north', 'North', 'south', '', 'ø'];
const WORDS = ['pump', 'Pump', 'inlet', 'crude', 'oil', 'high', 'pressure'];
const LABELS = ['critical', 'Critical', 'rotating', '42'];

/** Deterministic field values of asset k, from small domains so that filters hit. */
function fieldsOf(k: number): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: NAMES[k % NAMES.length] };
  if (k % 3 !== 0) fields.description = [WORDS[k % WORDS.length], WORDS[(k * 3 + 1) % WORDS.length]].join(' ');
  if (k % 4 !== 3) fields.source = SOURCES[k % SOURCES.length];
  if (k % 5 !== 4) fields.metadata = { [META_KEYS[k % META_KEYS.length]]: META_VALUES[k % META_VALUES.length] };
  if (k % 3 !== 1) fields.labels = [...new Set([LABELS[k % LABELS.length], LABELS[(k * 7) % LABELS.length]])].map((externalId) => ({ externalId }));
  return fields;
}

beforeAll(async () => {
  h = await startHarness();
  const plan = fc.sample(planArb, { seed: DATA_SEED, numRuns: 1 })[0];
  const xid = (k: number) => `h-${k}`;
  let next = 0;
  for (let b = 0; next < ASSETS; b++) {
    const indexes = Array.from({ length: Math.min(plan.batches[b], ASSETS - next) }, (_, i) => next + i);
    // Children may come before their parents within a request; parents from earlier requests may be named by id.
    const shuffled = indexes.map((k, i) => ({ k, key: plan.shuffles[b][i] })).sort((x, y) => x.key - y.key).map((x) => x.k);
    const items = shuffled.map((k) => {
      const p = plan.parents[k];
      const parent = p === null ? {} : plan.byId[k] && idOf.has(xid(p)) ? { parentId: idOf.get(xid(p)) } : { parentExternalId: xid(p) };
      return { externalId: xid(k), ...fieldsOf(k), ...parent };
    });
    for (const a of ok(await h.post('/assets', { items }), 'create assets').items) {
      idOf.set(a.externalId, a.id);
      externalIdOf.set(a.id, a.externalId);
    }
    next += indexes.length;
  }
  for (let k = 0; k < ASSETS; k++) {
    const p = plan.parents[k];
    parentOf.set(idOf.get(xid(k))!, p === null ? null : idOf.get(xid(p))!);
  }
  const items = plan.eventAssets.map((ks, i) => ({ externalId: `he-${i}`, assetIds: ks.map((k) => idOf.get(xid(k))!) }));
  events = ok(await h.post('/events', { items }), 'create events').items.map((e: any) => ({ id: e.id, assetIds: e.assetIds ?? [] }));
});

afterAll(() => h?.close());

async function listAll(path: string, body: Record<string, unknown>): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const got = ok(await h.post(path, { ...body, limit: 1000, ...(cursor ? { cursor } : {}) }), `POST ${path} ${JSON.stringify(body)}`);
    out.push(...got.items);
    cursor = got.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('paging did not end');
}

const sorted = (xs: Iterable<number>) => [...xs].sort((a, b) => a - b);

/** A move the model allows: a non-root asset under another asset of its hierarchy outside its own subtree. */
function validMove(pick: number, target: number, taken: ReadonlySet<number>): { id: number; parentId: number } | undefined {
  const movable = sorted([...parentOf].filter(([id, p]) => p !== null && !taken.has(id)).map(([id]) => id));
  if (movable.length === 0) return undefined;
  const id = movable[pick % movable.length];
  const below = descendants(id);
  const root = pathTo(id)[0];
  const targets = sorted([...descendants(root)].filter((t) => !below.has(t)));
  return { id, parentId: targets[target % targets.length] };
}

describe('assetSubtreeIds over a random hierarchy that moves', () => {
  it('selects exactly the events and assets under the given roots, after every move', async () => {
    const refArb = fc.tuple(fc.nat(ASSETS - 1), fc.boolean());
    const step = fc.record({
      moves: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.boolean()), { maxLength: 3 }),
      reverse: fc.boolean(),
      refusedMove: fc.option(fc.tuple(fc.nat(), fc.nat()), { nil: undefined, freq: 3 }),
      roots: fc.uniqueArray(refArb, { minLength: 1, maxLength: 3, selector: ([k]) => k }),
      externalIds: fc.uniqueArray(fc.nat(ASSETS - 1), { minLength: 1, maxLength: 3 }),
    });

    await fc.assert(
      fc.asyncProperty(step, async ({ moves, reverse, refusedMove, roots, externalIds }) => {
        // Moves that are valid one after the other, sent in one request (in that order or reversed): the
        // server must judge them by the hierarchy they make together.
        const items: object[] = [];
        const taken = new Set<number>();
        for (const [pick, target, byId] of moves) {
          const m = validMove(pick, target, taken);
          if (!m) continue;
          taken.add(m.id);
          items.push({ id: m.id, update: byId ? { parentId: { set: m.parentId } } : { parentExternalId: { set: externalIdOf.get(m.parentId)! } } });
          parentOf.set(m.id, m.parentId);
        }
        if (items.length) ok(await h.post('/assets/update', { items: reverse ? items.reverse() : items }), `moves ${JSON.stringify(items)}`);
        if (refusedMove) {
          // Under itself or one of its descendants: a cycle, refused.
          const movable = sorted([...parentOf].filter(([, p]) => p !== null).map(([id]) => id));
          const id = movable[refusedMove[0] % movable.length];
          const below = sorted(descendants(id));
          const res = await h.post('/assets/update', { items: [{ id, update: { parentId: { set: below[refusedMove[1] % below.length] } } }] });
          expect(errorMessage(res, 400)).toMatch(/cycle/);
        }

        // Every asset's stored placement matches the model.
        const assets = await listAll('/assets/list', { filter: { externalIdPrefix: 'h-' }, aggregatedProperties: ['path', 'depth'] });
        for (const a of assets) {
          const path = pathTo(a.id);
          expect({ id: a.id, parentId: a.parentId ?? null, rootId: a.rootId, path: a.aggregates.path.map((p: any) => p.id), depth: a.aggregates.depth }).toEqual({
            id: a.id,
            parentId: parentOf.get(a.id),
            rootId: path[0],
            path,
            depth: path.length - 1,
          });
        }

        const refs = roots.map(([k, byId]) => (byId ? { id: idOf.get(`h-${k}`)! } : { externalId: `h-${k}` }));
        const under = new Set(roots.flatMap(([k]) => [...descendants(idOf.get(`h-${k}`)!)]));
        const gotAssets = await listAll('/assets/list', { filter: { assetSubtreeIds: refs } });
        expect(sorted(gotAssets.map((a) => a.id)), 'assets in the subtrees').toEqual(sorted(under));
        const gotEvents = await listAll('/events/list', { filter: { assetSubtreeIds: refs } });
        const wantEvents = events.filter((e) => e.assetIds.some((a) => under.has(a))).map((e) => e.id);
        expect(sorted(gotEvents.map((e) => e.id)), 'events in the subtrees').toEqual(sorted(wantEvents));
        const counted = ok(await h.post('/events/aggregate', { filter: { assetSubtreeIds: refs } }), 'count').items[0].count;
        expect(counted).toBe(wantEvents.length);

        const named = new Set(externalIds.map((k) => idOf.get(`h-${k}`)!));
        const byExternal = await listAll('/events/list', { filter: { assetExternalIds: externalIds.map((k) => `h-${k}`) } });
        expect(sorted(byExternal.map((e) => e.id)), 'events by asset external ids').toEqual(
          sorted(events.filter((e) => e.assetIds.some((a) => named.has(a))).map((e) => e.id)),
        );
      }),
      { seed: QUERY_SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

describe('asset filters on events', () => {
  it('takes the query-parameter forms on GET /events', async () => {
    const root = [...parentOf].find(([, p]) => p === null)![0];
    const under = descendants(root);
    const want = sorted(events.filter((e) => e.assetIds.some((a) => under.has(a))).map((e) => e.id));
    const viaIds = ok(await h.get(`/events?limit=1000&assetSubtreeIds=[${root}]`), 'GET ids').items;
    expect(sorted(viaIds.map((e: any) => e.id))).toEqual(want);
    const viaExternal = ok(await h.get(`/events?limit=1000&assetSubtreeExternalIds=${encodeURIComponent(JSON.stringify([externalIdOf.get(root)]))}`), 'GET xids')
      .items;
    expect(sorted(viaExternal.map((e: any) => e.id))).toEqual(want);
    const named = ok(await h.get(`/events?limit=1000&assetExternalIds=${encodeURIComponent(JSON.stringify([externalIdOf.get(root)]))}`), 'GET named').items;
    expect(sorted(named.map((e: any) => e.id))).toEqual(sorted(events.filter((e) => e.assetIds.includes(root)).map((e) => e.id)));
    expect(errorMessage(await h.get('/events?assetSubtreeIds=["x"]'), 400)).toMatch(/query parameter "assetSubtreeIds"/);
    expect(errorMessage(await h.get('/events?assetExternalIds=nope'), 400)).toMatch(/query parameter "assetExternalIds"/);
  });

  it('refuses unknown assets in filters with missing', async () => {
    const sub = await h.post('/events/list', { filter: { assetSubtreeIds: [{ externalId: 'h-none' }, { id: 987654321 }] } });
    expect(errorMessage(sub, 400)).toBeTruthy();
    expect(sub.body.error.missing).toEqual([{ externalId: 'h-none' }, { id: 987654321 }]);
    const both = await h.post('/events/list', { filter: { assetSubtreeIds: [{ id: 1, externalId: 'h-0' }] } });
    expect(errorMessage(both, 400)).toMatch(/filter\.assetSubtreeIds\[0\]: give exactly one of "id" and "externalId"/);
  });

  it('match nothing for asset external ids that name no asset, as the reference does, on events and time series', async () => {
    const some = await listAll('/events/list', { filter: { assetExternalIds: ['h-0'] } });
    expect(some.length).toBeGreaterThan(0);
    expect(await listAll('/events/list', { filter: { assetExternalIds: ['h-0', 'h-none'] } })).toEqual(some);
    // The official Python SDK's own test: external ids and ids no project holds, and nothing found.
    expect(await listAll('/events/list', { filter: { assetExternalIds: ['a', 'b'], assetIds: [0, 1] } })).toEqual([]);
    expect(ok(await h.get(`/events?assetExternalIds=${encodeURIComponent('["h-none"]')}`), 'GET').items).toEqual([]);
    expect(ok(await h.post('/events/search', { filter: { assetExternalIds: ['h-none'] } }), 'search').items).toEqual([]);
    expect(ok(await h.post('/events/aggregate', { filter: { assetExternalIds: ['h-none'] } }), 'aggregate').items).toEqual([{ count: 0 }]);
    expect(ok(await h.post('/timeseries/list', { filter: { assetExternalIds: ['h-none'] } }), 'time series').items).toEqual([]);
    expect(ok(await h.post('/assets/list', { filter: { parentExternalIds: ['h-none'] } }), 'assets').items).toEqual([]);
  });

  it('refuses subtrees larger than the limit', async () => {
    const EVERY_ASSET = { table: 'assets', noun: 'asset' };
    const root = [...parentOf].find(([, p]) => p === null)![0];
    const size = descendants(root).size;
    const project = (await h.strata.services.db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!;
    await expect(subtreeAssetIds(h.strata.services.db, EVERY_ASSET, project.id, [{ id: root }], ['filter', 'assetSubtreeIds'], size)).resolves.toBeDefined();
    await expect(subtreeAssetIds(h.strata.services.db, EVERY_ASSET, project.id, [{ id: root }], ['filter', 'assetSubtreeIds'], size - 1)).rejects.toThrow(
      /filter\.assetSubtreeIds: the given subtrees hold more than \d+ assets/,
    );
  });

  it('refuses events that refer to assets that do not exist, on create and update', async () => {
    const known = idOf.get('h-0')!;
    const created = await h.post('/events', { items: [{ externalId: 'bad-ok' }, { externalId: 'bad-1', assetIds: [known, 987654321, 987654322] }] });
    expect(errorMessage(created, 400)).toMatch(/items\[1\]\.assetIds: no asset with id 987654321 \(1 more asset id is unknown too\)/);
    expect(created.body.error.missing).toEqual([{ id: 987654321 }, { id: 987654322 }]);
    expect((await h.post('/events/byids', { items: [{ externalId: 'bad-ok' }], ignoreUnknownIds: true })).body.items).toEqual([]);
    const updated = await h.post('/events/update', { items: [{ externalId: 'he-0', update: { assetIds: { add: [987654321] } } }] });
    expect(errorMessage(updated, 400)).toMatch(/items\[0\]\.assetIds: no asset with id 987654321/);
    expect(updated.body.error.missing).toEqual([{ id: 987654321 }]);
  });
});

/** Assets as the filter language sees them: the catalog's properties, labels as their external ids. */
const assetModel: ResourceModel = {
  properties: [
    { name: 'labels', kind: 'stringArray' },
    { name: 'id', kind: 'integer' },
    { name: 'externalId', kind: 'string', sortable: true },
    { name: 'name', kind: 'string', searchable: true, sortable: true },
    { name: 'description', kind: 'string', searchable: true, sortable: true },
    { name: 'source', kind: 'string', sortable: true },
    { name: 'dataSetId', kind: 'integer', sortable: true },
    { name: 'parentId', kind: 'integer' },
    { name: 'rootId', kind: 'integer' },
    { name: 'createdTime', kind: 'integer', sortable: true },
    { name: 'lastUpdatedTime', kind: 'integer', sortable: true },
    { name: 'metadata', kind: 'metadata', sortable: true },
  ],
  maxFilterableMetadataLength: 256,
  defaultSort: [{ property: ['createdTime'], order: 'asc' }],
};

describe('assets: SQL filter path agrees with the in-memory evaluator', () => {
  /** An asset as the model sees it: labels `[{externalId}]` as `[externalId]`. */
  const modelled = (items: Item[]) => items.map((a) => (a.labels ? { ...a, labels: (a.labels as Array<{ externalId: string }>).map((l) => l.externalId) } : a));

  it('on random advanced filters (hierarchy properties and labels included) and sorts', async () => {
    const assets = modelled((await listAll('/assets/list', { filter: { externalIdPrefix: 'h-' } })) as Item[]);
    const ids = assets.map((a) => a.id);
    const column = (name: string) => [...new Set(assets.map((a) => a[name]).filter((v) => v !== undefined))] as Primitive[];
    const strings: Record<string, string[]> = {
      externalId: [...(column('externalId') as string[]), 'h-', 'h-1', 'x'],
      name: [...NAMES, 'PUMP', 'Feed'],
      description: [...(column('description') as string[]), ...WORDS],
      source: [...SOURCES, 'Sap'],
    };
    const numbers: Record<string, Primitive[]> = {
      id: [...ids, 0],
      dataSetId: [1, 2],
      parentId: [...ids, 0],
      rootId: [...ids, 0],
      createdTime: column('createdTime'),
      lastUpdatedTime: column('lastUpdatedTime'),
    };
    const d: Domains = {
      value: (path) =>
        path[0] === 'metadata' ? fc.constantFrom(...META_VALUES, 'NORTH') : path[0] in numbers ? fc.constantFrom(...numbers[path[0]]) : fc.constantFrom(...strings[path[0]]),
      prefix: (path) => fc.constantFrom(...prefixesOf(path[0] === 'metadata' ? META_VALUES : strings[path[0]])),
      element: () => fc.constantFrom(...LABELS, 'CRITICAL', 'none'),
      searchText: fc.array(fc.constantFrom(...WORDS, 'valve', 'motor', 'absent'), { minLength: 1, maxLength: 2 }).map((w) => w.join(' ')),
      metadataKey: fc.constantFrom(...META_KEYS, 'KIND', 'missing'),
    };
    const query = fc.record({
      advancedFilter: fc.option(filterArbitrary(assetModel, d, { maxBooleanDepth: 2 }), { nil: undefined, freq: 8 }),
      sort: fc.option(sortArbitrary(assetModel, d), { nil: undefined, freq: 2 }),
    });
    await fc.assert(
      fc.asyncProperty(query, async ({ advancedFilter, sort }) => {
        const body = { filter: { externalIdPrefix: 'h-' }, ...(advancedFilter ? { advancedFilter } : {}), ...(sort ? { sort } : {}) };
        const got = modelled((await listAll('/assets/list', body)) as Item[]);
        const expected = evaluate(assetModel, assets, { advancedFilter, sort });
        expectListing(assetModel, { advancedFilter, sort }, got, expected);
      }),
      { seed: QUERY_SEED, numRuns: RUNS * 2 },
    );
  });
});
