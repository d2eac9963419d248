import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let clock = 1_000_000;
/** Asset ids by the number the tests give them: A[1] is the first asset created. */
const A: number[] = [0];
beforeAll(async () => {
  h = await startHarness();
  // Every request sees a later clock, so creation order is visible in createdTime.
  h.strata.services.now = () => ++clock;
  // Events refer only to existing assets; the tests below name them A[1] to A[8].
  const assets = await h.post('/assets', { items: [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ name: `asset ${n}` })) });
  A.push(...assets.body.items.map((a: { id: number }) => a.id));
});
afterAll(() => h.close());

async function create(items: object[]): Promise<any[]> {
  const out: any[] = [];
  for (const item of items) {
    const res = await h.post('/events', { items: [item] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    out.push(res.body.items[0]);
  }
  return out;
}

async function listAll(body: object, limit = 2): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const res = await h.post('/events/list', { ...body, limit, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.body.items);
    cursor = res.body.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('did not finish');
}

const ids = (items: any[]) => items.map((e) => e.externalId);

describe('sorting', () => {
  beforeAll(async () => {
    await create([
      { externalId: 's-1', type: 'sortcase', startTime: 30, source: 'b' },
      { externalId: 's-2', type: 'sortcase', source: 'a' },
      { externalId: 's-3', type: 'sortcase', startTime: 10, source: '' },
      { externalId: 's-4', type: 'sortcase', startTime: 20 },
      { externalId: 's-5', type: 'sortcase', startTime: 10, source: 'a' },
    ]);
  });
  const filter = { type: 'sortcase' };

  it('orders by creation time ascending without a sort', async () => {
    expect(ids(await listAll({ filter }))).toEqual(['s-1', 's-2', 's-3', 's-4', 's-5']);
  });

  it('puts nulls last ascending and first descending with nulls auto', async () => {
    expect(ids(await listAll({ filter, sort: [{ property: ['startTime'] }] }))).toEqual(['s-3', 's-5', 's-4', 's-1', 's-2']);
    expect(ids(await listAll({ filter, sort: [{ property: ['startTime'], order: 'desc' }] }))).toEqual(['s-2', 's-1', 's-4', 's-5', 's-3']);
  });

  it('puts nulls where nulls first/last says, whatever the order', async () => {
    expect(ids(await listAll({ filter, sort: [{ property: ['startTime'], nulls: 'first' }] }))).toEqual(['s-2', 's-3', 's-5', 's-4', 's-1']);
    expect(ids(await listAll({ filter, sort: [{ property: ['startTime'], order: 'desc', nulls: 'last' }] }))).toEqual([
      's-1',
      's-4',
      's-5',
      's-3',
      's-2',
    ]);
  });

  it('does not treat empty strings as nulls, and sorts on two properties', async () => {
    const sorted = await listAll({ filter, sort: [{ property: ['source'] }, { property: ['startTime'], order: 'desc' }] });
    expect(ids(sorted)).toEqual(['s-3', 's-2', 's-5', 's-1', 's-4']);
  });

  it('accepts the older "field:order" sort strings', async () => {
    expect(ids(await listAll({ filter, sort: ['startTime:desc'] }))).toEqual(['s-2', 's-1', 's-4', 's-5', 's-3']);
  });

  it('takes the sort of GET /events repeated or as one JSON array, as the JavaScript client sends arrays', async () => {
    const expected = ['s-2', 's-1', 's-4', 's-5', 's-3'];
    expect(ids((await h.get('/events?type=sortcase&sort=startTime:desc')).body.items)).toEqual(expected);
    expect(ids((await h.get(`/events?type=sortcase&sort=${encodeURIComponent('["startTime:desc"]')}`)).body.items)).toEqual(expected);
    // Two properties: by source, then by start time descending (a missing start time first).
    expect(ids((await h.get('/events?type=sortcase&sort=source&sort=startTime:desc')).body.items)).toEqual(['s-3', 's-2', 's-5', 's-1', 's-4']);
    expect(ids((await h.get(`/events?type=sortcase&sort=${encodeURIComponent('["startTime:asc","source"]')}`)).body.items)).toEqual(['s-3', 's-5', 's-4', 's-1', 's-2']);
    expect(errorMessage(await h.get(`/events?sort=${encodeURIComponent('["startTime"')}`), 400)).toBe(
      'query parameter "sort": expected strings, or a JSON array of strings such as ["a","b"]',
    );
    expect(errorMessage(await h.get(`/events?sort=${encodeURIComponent('[1]')}`), 400)).toMatch(/query parameter "sort"/);
  });

  it('sorts on a metadata key', async () => {
    await create([
      { externalId: 'm-1', type: 'mdsort', metadata: { Rank: 'b' } },
      { externalId: 'm-2', type: 'mdsort', metadata: { rank: 'a' } },
      { externalId: 'm-3', type: 'mdsort' },
    ]);
    expect(ids(await listAll({ filter: { type: 'mdsort' }, sort: [{ property: ['metadata', 'rank'] }] }))).toEqual(['m-2', 'm-1', 'm-3']);
  });
});

describe('relevance', () => {
  beforeAll(async () => {
    await create([
      { externalId: 'r-prefix', type: 'pumpstation', subtype: 'rel', description: 'compressor trip' },
      { externalId: 'r-both', type: 'pump', subtype: 'rel', description: 'pump pump pump failure' },
      { externalId: 'r-none', type: 'valve', subtype: 'rel', description: 'pump failure' },
    ]);
  });

  it('ranks items matching more leaves higher with _score_', async () => {
    const advancedFilter = {
      and: [
        { equals: { property: ['subtype'], value: 'rel' } },
        { or: [{ equals: { property: ['type'], value: 'pump' } }, { prefix: { property: ['type'], value: 'pump' } }] },
      ],
    };
    const res = await h.post('/events/list', { advancedFilter, sort: [{ property: ['_score_'] }] });
    expect(ids(res.body.items)).toEqual(['r-both', 'r-prefix']);
  });

  it('orders a lone search leaf like the search endpoint', async () => {
    const viaList = await h.post('/events/list', { advancedFilter: { search: { property: ['description'], value: 'pump failure' } } });
    const viaSearch = await h.post('/events/search', { search: { description: 'pump failure' } });
    expect(viaSearch.status).toBe(200);
    expect(ids(viaSearch.body.items).slice(0, 2)).toEqual(['r-none', 'r-both'].sort((a, b) => ids(viaList.body.items).indexOf(a) - ids(viaList.body.items).indexOf(b)));
    expect(ids(viaList.body.items)).toEqual(ids(viaSearch.body.items));
    expect(ids(viaList.body.items)).not.toContain('r-prefix');
  });

  it('lets an explicit sort override relevance', async () => {
    const res = await h.post('/events/list', {
      advancedFilter: { search: { property: ['description'], value: 'pump' } },
      sort: [{ property: ['externalId'], order: 'desc' }],
    });
    expect(ids(res.body.items)).toEqual(['r-none', 'r-both']);
  });

  it('finds the words of a text joined by punctuation, on both backends alike', async () => {
    await create([
      { externalId: 'w-file', subtype: 'words', description: 'see notes.txt and /plant/pump-7' },
      { externalId: 'w-mail', subtype: 'words', description: 'ops@north.example: valve_12 <tripped> v1.2.3' },
    ]);
    const found = async (text: string) => ids((await h.post('/events/search', { filter: { subtype: 'words' }, search: { description: text } })).body.items).sort();
    expect(await found('notes')).toEqual(['w-file']);
    expect(await found('txt')).toEqual(['w-file']);
    expect(await found('plant')).toEqual(['w-file']);
    expect(await found('7')).toEqual(['w-file']);
    expect(await found('north')).toEqual(['w-mail']);
    expect(await found('valve')).toEqual(['w-mail']);
    expect(await found('tripped')).toEqual(['w-mail']);
    expect(await found('v1')).toEqual(['w-mail']);
    expect(await found('notes.txt')).toEqual(['w-file']);
    const scored = await h.post('/events/list', { filter: { subtype: 'words' }, advancedFilter: { search: { property: ['description'], value: 'example' } } });
    expect(ids(scored.body.items)).toEqual(['w-mail']);
  });

  it('narrows search by the filter and honours the limit', async () => {
    const res = await h.post('/events/search', { filter: { type: 'valve' }, search: { description: 'pump' } });
    expect(ids(res.body.items)).toEqual(['r-none']);
    expect((await h.post('/events/search', { search: { description: 'pump' }, limit: 1 })).body.items).toHaveLength(1);
  });
});

describe('filters', () => {
  beforeAll(async () => {
    await create([
      { externalId: 'f-open', subtype: 'ftest', startTime: 100 },
      { externalId: 'f-closed', subtype: 'ftest', startTime: 100, endTime: 200 },
      { externalId: 'f-later', subtype: 'ftest', startTime: 300, endTime: 400, metadata: { Plant: 'North', other: 'x' }, assetIds: [A[7], A[8]] },
      { externalId: 'f-nostart', subtype: 'ftest', metadata: { plant: 'SOUTH' }, assetIds: [A[8]] },
    ]);
  });
  const sub = (f: object) => ({ filter: { subtype: 'ftest', ...f } });

  it('finds open events with endTime isNull', async () => {
    expect(ids(await listAll(sub({ endTime: { isNull: true } })))).toEqual(['f-open', 'f-nostart']);
    expect(ids(await listAll(sub({ endTime: { isNull: false } })))).toEqual(['f-closed', 'f-later']);
  });

  it('finds events active at a time', async () => {
    expect(ids(await listAll(sub({ activeAtTime: { min: 150, max: 250 } })))).toEqual(['f-open', 'f-closed']);
    expect(ids(await listAll(sub({ activeAtTime: { min: 250 } })))).toEqual(['f-open', 'f-later']);
    expect(ids(await listAll(sub({ activeAtTime: { max: 99 } })))).toEqual([]);
  });

  it('matches metadata case-insensitively in keys and values', async () => {
    expect(ids(await listAll(sub({ metadata: { plant: 'north' } })))).toEqual(['f-later']);
    const adv = (value: string) => ({ advancedFilter: { equals: { property: ['metadata', 'PLANT'], value } } });
    expect(ids(await listAll(adv('NORTH')))).toEqual(['f-later']);
    expect(ids(await listAll(adv('south')))).toEqual(['f-nostart']);
    expect(ids(await listAll({ advancedFilter: { exists: { property: ['metadata', 'plant'] } } }))).toEqual(['f-later', 'f-nostart']);
    expect(ids(await listAll({ advancedFilter: { prefix: { property: ['metadata', 'plant'], value: 'so' } } }))).toEqual(['f-nostart']);
    expect(ids(await listAll({ advancedFilter: { equals: { property: ['metadata'], value: 'x' } } }))).toEqual(['f-later']);
  });

  it('filters on asset ids', async () => {
    expect(ids(await listAll(sub({ assetIds: [A[7]] })))).toEqual(['f-later']);
    const all = (values: number[]) => ({ advancedFilter: { containsAll: { property: ['assetIds'], values } } });
    expect(ids(await listAll(all([A[8], A[7]])))).toEqual(['f-later']);
    expect(ids(await listAll({ advancedFilter: { containsAny: { property: ['assetIds'], values: [A[8]] } } }))).toEqual(['f-later', 'f-nostart']);
  });

  it('treats a leaf on a missing value as false, also under not', async () => {
    const res = await listAll({
      filter: { subtype: 'ftest' },
      advancedFilter: { not: { range: { property: ['startTime'], gte: 200 } } },
    });
    expect(ids(res)).toEqual(['f-open', 'f-closed', 'f-nostart']);
  });

  it('offers the basic filter as query parameters on GET /events', async () => {
    const res = await h.get('/events?subtype=ftest&minStartTime=100&maxStartTime=150&limit=10');
    expect(ids(res.body.items)).toEqual(['f-open', 'f-closed']);
    const noMeta = await h.get(`/events?subtype=ftest&includeMetadata=false&assetIds=[${A[7]}]`);
    expect(noMeta.body.items[0].metadata).toBeUndefined();
    expect(ids(noMeta.body.items)).toEqual(['f-later']);
    expect(errorMessage(await h.get(`/events?assetIds=${A[7]},${A[8]}`), 400)).toMatch(/assetIds/);
    expect(errorMessage(await h.get('/events?colour=red'), 400)).toMatch(/colour/);
  });
});

describe('pagination and partitions', () => {
  beforeAll(async () => {
    const items = Array.from({ length: 57 }, (_, i) => ({ externalId: `p-${i}`, source: 'paging', startTime: i % 5 === 0 ? undefined : (i * 7) % 13 }));
    expect((await h.post('/events', { items })).status).toBe(201);
  });

  it('returns every item exactly once across pages, for every sort', async () => {
    const sorts = [undefined, [{ property: ['startTime'] }], [{ property: ['startTime'], order: 'desc', nulls: 'last' }], [{ property: ['externalId'], order: 'desc' }]];
    for (const sort of sorts) {
      const all = await listAll({ filter: { source: 'paging' }, ...(sort ? { sort } : {}) }, 1000);
      const paged = await listAll({ filter: { source: 'paging' }, ...(sort ? { sort } : {}) }, 4);
      expect(all).toHaveLength(57);
      expect(ids(paged)).toEqual(ids(all));
    }
  });

  it('splits a result into disjoint partitions that together are all of it', async () => {
    const whole = new Set(ids(await listAll({ filter: { source: 'paging' } }, 1000)));
    for (const n of [1, 3, 10]) {
      const seen: string[] = [];
      const sizes: number[] = [];
      for (let m = 1; m <= n; m++) {
        const part = ids(await listAll({ filter: { source: 'paging' }, partition: `${m}/${n}`, sort: [{ property: ['startTime'] }] }, 3));
        seen.push(...part);
        sizes.push(part.length);
      }
      expect(seen).toHaveLength(whole.size);
      expect(new Set(seen)).toEqual(whole);
      // 57 consecutive ids span at least three runs of 16, so three partitions all get work.
      if (n === 3) expect(sizes.every((size) => size > 0), `partition sizes ${sizes}`).toBe(true);
    }
  });

  it('pages GET /events with its cursor', async () => {
    const first = await h.get('/events?source=paging&limit=50');
    expect(first.body.items).toHaveLength(50);
    const second = await h.get(`/events?source=paging&limit=50&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items).toHaveLength(7);
    expect(second.body.nextCursor).toBeUndefined();
  });
});

describe('aggregate', () => {
  beforeAll(async () => {
    await create([
      { externalId: 'a-1', source: 'agg', type: 'x', metadata: { Color: 'red', size: 'L' }, assetIds: [A[1], A[2]] },
      { externalId: 'a-2', source: 'agg', type: 'x', metadata: { color: 'blue' }, assetIds: [A[2]] },
      { externalId: 'a-3', source: 'agg', type: 'y' },
    ]);
  });
  const agg = (body: object) => h.post('/events/aggregate', { filter: { source: 'agg' }, ...body });

  it('counts with filter and advancedFilter', async () => {
    expect((await agg({})).body).toEqual({ items: [{ count: 3 }] });
    expect((await agg({ aggregate: 'count', advancedFilter: { equals: { property: ['type'], value: 'x' } } })).body.items[0].count).toBe(2);
    expect((await agg({ aggregate: 'count', properties: [{ property: ['metadata', 'color'] }] })).body.items[0].count).toBe(2);
  });

  it('gives unique values and cardinality', async () => {
    expect((await agg({ aggregate: 'uniqueValues', properties: [{ property: ['type'] }] })).body.items).toEqual([
      { count: 2, values: ['x'], value: 'x' },
      { count: 1, values: ['y'], value: 'y' },
    ]);
    expect((await agg({ aggregate: 'uniqueValues', properties: [{ property: ['assetIds'] }] })).body.items).toEqual([
      { count: 2, values: [A[2]], value: A[2] },
      { count: 1, values: [A[1]], value: A[1] },
    ]);
    expect((await agg({ aggregate: 'cardinalityValues', properties: [{ property: ['metadata', 'COLOR'] }] })).body.items).toEqual([{ count: 2 }]);
    const filtered = await agg({ aggregate: 'uniqueValues', properties: [{ property: ['type'] }], aggregateFilter: { prefix: { value: 'y' } } });
    expect(filtered.body.items).toEqual([{ count: 1, values: ['y'], value: 'y' }]);
  });

  it('gives unique metadata keys and their cardinality', async () => {
    expect((await agg({ aggregate: 'uniqueProperties', path: ['metadata'] })).body.items).toEqual([
      { count: 2, values: [{ property: ['metadata', 'color'] }], value: { property: ['metadata', 'color'] } },
      { count: 1, values: [{ property: ['metadata', 'size'] }], value: { property: ['metadata', 'size'] } },
    ]);
    expect((await agg({ aggregate: 'cardinalityProperties', path: ['metadata'] })).body.items).toEqual([{ count: 2 }]);
  });

  it('takes the deprecated "fields" of uniqueValues: a field name, or metadata.<key>', async () => {
    expect((await agg({ aggregate: 'uniqueValues', fields: ['type'] })).body.items).toEqual([
      { count: 2, values: ['x'], value: 'x' },
      { count: 1, values: ['y'], value: 'y' },
    ]);
    expect((await agg({ aggregate: 'uniqueValues', fields: ['metadata.COLOR'] })).body.items).toEqual([
      { count: 1, values: ['blue'], value: 'blue' },
      { count: 1, values: ['red'], value: 'red' },
    ]);
    expect(errorMessage(await agg({ fields: ['type'] }), 400)).toBe('fields: only used by the uniqueValues aggregate');
    expect(errorMessage(await agg({ aggregate: 'uniqueValues', fields: ['type'], properties: [{ property: ['type'] }] }), 400)).toBe(
      'give "properties" or the deprecated "fields", not both',
    );
    expect(errorMessage(await agg({ aggregate: 'uniqueValues', fields: ['type', 'subtype'] }), 400)).toMatch(/fields: must have at most 1 item/);
    expect(errorMessage(await agg({ aggregate: 'uniqueValues', fields: ['startTime'] }), 400)).toMatch(/cannot aggregate events on \["startTime"\]/);
    // The assets' deprecated forms are not the events'.
    expect(errorMessage(await agg({ aggregate: 'metadataKeys' }), 400)).toMatch(/^aggregate: must be one of/);
  });

  it('refuses aggregates without a property or on unsupported properties', async () => {
    expect(errorMessage(await agg({ aggregate: 'uniqueValues' }), 400)).toMatch(/needs "properties"/);
    expect(errorMessage(await agg({ aggregate: 'uniqueValues', properties: [{ property: ['startTime'] }] }), 400)).toMatch(/cannot aggregate/);
    expect(errorMessage(await agg({ aggregate: 'median' }), 400)).toMatch(/aggregate/);
  });
});
