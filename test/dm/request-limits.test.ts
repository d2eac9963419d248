/**
 * The limits that bound the work and the memory of one data modeling request, over HTTP: each answered at
 * its limit and refused with a 400 naming it past it (histogram buckets, instances in a query's sets, the
 * values, filters and depth of a request's filters with the views' filters they bring in, words of a search),
 * and what worked only below an engine's limit works whatever the engine (reads of many views, searches of
 * characters that mean something to SQL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DM_LIMITS } from '../../src/resources/models/limits.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
const C = (externalId: string) => ({ type: 'container', space: 'lim', externalId });
const V = (externalId: string) => ({ type: 'view', space: 'lim', externalId, version: '1' });
const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
/** Values 0..NODES-1 of `n`, so that a histogram of interval 1 has a bucket per node. */
const NODES = DM_LIMITS.histogramBuckets + 1;

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
  return res.body;
}

beforeAll(async () => {
  h = await startHarness();
  await ok('/models/spaces', { items: [{ space: 'lim' }] });
  await ok('/models/containers', { items: [{ space: 'lim', externalId: 'N', properties: { n: { type: { type: 'float64' } }, g: { type: { type: 'text' } } } }] });
  await ok('/models/views', {
    items: [{ space: 'lim', externalId: 'N', version: '1', properties: { n: { container: C('N'), containerPropertyIdentifier: 'n' }, g: { container: C('N'), containerPropertyIdentifier: 'g' } } }],
  });
  for (let at = 0; at < NODES; at += 1000) {
    const items = range(Math.min(1000, NODES - at), (k) => ({
      instanceType: 'node',
      space: 'lim',
      externalId: `n${at + k}`,
      sources: [{ source: V('N'), properties: { n: at + k, g: ['a', 'b', 'c'][(at + k) % 3] } }],
    }));
    await ok('/models/instances', { items });
  }
});
afterAll(() => h.close());

describe('histograms', () => {
  const histogram = (interval: number, extra: Record<string, unknown> = {}) => h.post('/models/instances/aggregate', { view: V('N'), aggregates: [{ histogram: { property: 'n', interval } }], ...extra });

  it('answers up to the bucket limit, each bucket once, and refuses a histogram past it naming the limit', async () => {
    const max = DM_LIMITS.histogramBuckets;
    const atLimit = await histogram(1, { filter: { range: { property: ['lim', 'N/1', 'n'], lt: max } } });
    expect(atLimit.status, JSON.stringify(atLimit.body).slice(0, 300)).toBe(200);
    const buckets = atLimit.body.items[0].aggregates[0].buckets as Array<{ start: number; count: number }>;
    expect(buckets).toHaveLength(max);
    expect(buckets.every((b, i) => b.start === i && b.count === 1)).toBe(true);
    expect(errorMessage(await histogram(1), 400)).toBe(`aggregates[0].histogram: the histogram has more than ${max} buckets; use a larger interval or a narrower filter`);
    // Wider buckets over the same nodes: every node counted once.
    const wide = (await histogram(7)).body.items[0].aggregates[0].buckets as Array<{ start: number; count: number }>;
    expect(wide).toHaveLength(Math.ceil(NODES / 7));
    expect(wide.reduce((n, b) => n + b.count, 0)).toBe(NODES);
  });

  it('counts the buckets of the groups answered, not of the groups past the limit', async () => {
    const res = await histogram(1, { groupBy: ['g'], limit: 1 });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body.items).toHaveLength(1);
    expect(res.body.items[0].group).toEqual({ g: 'a' });
    expect(res.body.items[0].aggregates[0].buckets).toHaveLength(Math.ceil(NODES / 3));
  });

  it('refuses an interval too small for the values instead of failing in the database', async () => {
    expect(errorMessage(await histogram(1e-300), 400)).toMatch(/^aggregates\[0\]\.histogram\.interval: 1e-300 is too small for the values of the property/);
  });
});

describe('queries', () => {
  /** `count` sets of every node (a page of 10000 each), and the union of them, which alone is selected. */
  const sets = (count: number) => ({
    with: { ...Object.fromEntries(range(count, (i) => [`s${i}`, { nodes: { filter: { hasData: [V('N')] } }, limit: DM_LIMITS.querySetLimitMax }])), all: { union: range(count, (i) => `s${i}`), limit: DM_LIMITS.querySetLimitMax } },
    select: { all: {} },
  });

  it('read at most the instance limit in all their sets, selected or not, and refuse past it naming the set', async () => {
    const max = DM_LIMITS.queryInstances;
    const count = max / DM_LIMITS.querySetLimitMax - 1;
    const res = await h.post('/models/instances/query', sets(count));
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body.items.all).toHaveLength(DM_LIMITS.querySetLimitMax);
    expect(errorMessage(await h.post('/models/instances/query', sets(count + 1)), 400)).toBe(
      `with.all: the result sets hold more than ${max} instances in all (this one passes it); lower the sets' limits and page with the cursors`,
    );
  });
});

describe("a request's filters", () => {
  const values = (n: number, prefix: string) => ({ in: { property: ['node', 'externalId'], values: range(n, (i) => `${prefix}${i}`) } });
  const list = (filter: unknown) => h.post('/models/instances/list', { instanceType: 'node', filter, limit: 1 });
  const max = DM_LIMITS.requestFilterValues;
  const per = DM_LIMITS.filterValues;

  it('hold at most the value limit in all, in one filter or across the sets of a query', async () => {
    expect((await list({ or: range(max / per, (k) => values(per, `k${k}-`)) })).status).toBe(200);
    expect(errorMessage(await list({ or: [...range(max / per, (k) => values(per, `k${k}-`)), values(1, 'x')] }), 400)).toMatch(
      new RegExp(`^filter: the request's filters hold more than ${max} values .* at most ${max} are allowed$`),
    );
    // The sets of a query share one budget: a traversal's statement holds its filter, nodeFilter and terminationFilter.
    const query = await h.post('/models/instances/query', {
      with: {
        a: { nodes: { filter: { or: range(max / per - 1, (k) => values(per, `a${k}-`)) } } },
        b: { edges: { from: 'a', filter: { in: { property: ['edge', 'externalId'], values: range(per, (i) => `e${i}`) } }, nodeFilter: values(1, 'n') } },
      },
      select: { b: {} },
    });
    expect(errorMessage(query, 400)).toMatch(new RegExp(`^with\\.b\\.edges\\.nodeFilter: the request's filters hold more than ${max} values`));
  });

  it('count the filters of the views that hasData names, however the views name each other', async () => {
    // Each view's filter names the previous view three times: expanded, they grow threefold a view.
    const chain = (k: number) => ({
      space: 'lim',
      externalId: `Chain${k}`,
      version: '1',
      properties: { n: { container: C('N'), containerPropertyIdentifier: 'n' } },
      filter: k > 0 ? { or: range(3, () => ({ hasData: [V(`Chain${k - 1}`)] })) } : { hasData: [C('N')] },
    });
    const limit = `the request's filters hold more than ${DM_LIMITS.requestFilterClauses} filters in all, with the filters of the views that hasData names; at most ${DM_LIMITS.requestFilterClauses} are allowed`;
    let k = 0;
    for (; ; k++) {
      const res = await h.post('/models/views', { items: [chain(k)] });
      if (res.status !== 200) {
        expect(errorMessage(res, 400)).toBe(`items[0].filter: ${limit}`);
        break;
      }
    }
    expect(k).toBeGreaterThan(3);
    expect((await list({ hasData: [V(`Chain${k - 1}`)] })).status).toBe(200);
    expect(errorMessage(await list({ or: [{ hasData: [V(`Chain${k - 1}`)] }, { hasData: [V(`Chain${k - 1}`)] }] }), 400)).toBe(`filter: ${limit}`);
    // A view's filter naming another view nests as deep as both together.
    const nested = (depth: number, inner: unknown): unknown => (depth === 0 ? inner : { and: [nested(depth - 1, inner)] });
    const deep = (name: string, inner: unknown) => ({
      space: 'lim',
      externalId: name,
      version: '1',
      properties: { n: { container: C('N'), containerPropertyIdentifier: 'n' } },
      filter: nested(DM_LIMITS.filterDepth - 1, inner),
    });
    await ok('/models/views', { items: [deep('Deep0', { hasData: [C('N')] })] });
    await ok('/models/views', { items: [deep('Deep1', { hasData: [V('Deep0')] })] });
    const tooDeep = `with the filters of the views that hasData names, the filter nests deeper than ${DM_LIMITS.expandedFilterDepth} levels`;
    expect(errorMessage(await h.post('/models/views', { items: [deep('Deep2', { hasData: [V('Deep1')] })] }), 400)).toBe(`items[0].filter: ${tooDeep}`);
    expect((await list({ hasData: [V('Deep1')] })).status).toBe(200);
    expect(errorMessage(await list(nested(DM_LIMITS.filterDepth - 1, { hasData: [V('Deep1')] })), 400)).toBe(`filter: ${tooDeep}`);
  });

  it('compile OR lists as long as a filter may hold on every engine, also inside one another', async () => {
    const equals = (i: number) => ({ equals: { property: ['lim', 'N/1', 'n'], value: i } });
    const long = DM_LIMITS.filterClauses - 10;
    const res = await h.post('/models/instances/list', { instanceType: 'node', filter: { or: range(long, equals) }, limit: 1000 });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
    expect(res.body.items).toHaveLength(long);
    // A view's long OR (under a few NOTs) in the first place of the request's: as one chain, over a thousand deep.
    const twice = (f: unknown, times: number): unknown => (times === 0 ? f : twice({ not: { not: f } }, times - 1));
    const inView = DM_LIMITS.filterClauses - 19;
    await ok('/models/views', {
      items: [{ space: 'lim', externalId: 'LongOr', version: '1', properties: { n: { container: C('N'), containerPropertyIdentifier: 'n' } }, filter: twice({ or: range(inView, equals) }, 9) }],
    });
    const inRequest = DM_LIMITS.filterClauses - 2;
    const filter = { or: [{ hasData: [V('LongOr')] }, ...range(inRequest, (i) => equals(inView + i))] };
    const both = await h.post('/models/instances/list', { instanceType: 'node', filter, limit: 1000 });
    expect(both.status, JSON.stringify(both.body).slice(0, 300)).toBe(200);
    expect(both.body.items).toHaveLength(inView + inRequest);
  });
});

describe('search', () => {
  it('takes a query of at most the word limit', async () => {
    const search = (words: number) => h.post('/models/instances/search', { view: V('N'), query: range(words, (i) => `w${i}`).join(' '), operator: 'AND' });
    expect((await search(DM_LIMITS.searchQueryWords)).status).toBe(200);
    expect(errorMessage(await search(DM_LIMITS.searchQueryWords + 1), 400)).toBe(`query: has ${DM_LIMITS.searchQueryWords + 1} words; at most ${DM_LIMITS.searchQueryWords} are allowed`);
  });

  it('treats characters that mean something to SQL as text on every search', async () => {
    await ok('/models/containers', { items: [{ space: 'lim', externalId: 'Named', properties: { name: { type: { type: 'text' } } } }] });
    await ok('/models/views', { items: [{ space: 'lim', externalId: 'Named', version: '1', properties: { name: { container: C('Named'), containerPropertyIdentifier: 'name' } } }] });
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'lim', externalId: 'pct', sources: [{ source: V('Named'), properties: { name: '100% _done_ \\ok' } }] }] });
    expect((await h.post('/events', { items: [{ externalId: 'pct', description: '100% _done_ \\ok' }] })).status).toBe(201);
    expect((await h.post('/assets', { items: [{ externalId: 'pct', name: '100% _done_ \\ok' }] })).status).toBe(201);
    expect((await h.post('/timeseries', { items: [{ externalId: 'pct', name: '100% _done_ \\ok' }] })).status).toBe(201);
    for (const text of ['%', '_', '\\', "'", '"', '%_\\', ':*', '&|!', '()', '100%', "ok'", '"100"&']) {
      const answers = await Promise.all([
        h.post('/events/search', { search: { description: text } }),
        h.post('/assets/search', { search: { name: text } }),
        h.post('/assets/search', { search: { query: text } }),
        h.post('/timeseries/search', { search: { name: text } }),
        h.post('/timeseries/search', { search: { query: text } }),
        h.post('/models/instances/search', { view: V('Named'), query: text }),
      ]);
      expect(answers.map((a) => a.status), text).toEqual(answers.map(() => 200));
      // A word among the characters finds the item (the characters alone are no words to look for).
      if (/[a-z0-9]/.test(text)) expect(answers.map((a) => a.body.items.length > 0), text).toEqual(answers.map(() => true));
    }
  });
});

describe('reads of many views', () => {
  it('read every property of ten views of 300 properties, with their types', async () => {
    const props = Object.fromEntries(range(100, (p) => [`q${p}`, { type: { type: 'text' } }]));
    await ok('/models/containers', { items: range(3, (k) => ({ space: 'lim', externalId: `Wide${k}`, properties: props })) });
    const views = range(10, (v) => ({
      space: 'lim',
      externalId: `Wide${v}`,
      version: '1',
      properties: Object.fromEntries(range(300, (p) => [`p${p}`, { container: C(`Wide${Math.floor(p / 100)}`), containerPropertyIdentifier: `q${(p + v) % 100}` }])),
    }));
    await ok('/models/views', { items: views });
    const values = Object.fromEntries(range(300, (p) => [`p${p}`, `value ${p}`]));
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'lim', externalId: 'wide', sources: [{ source: V('Wide0'), properties: values }] }] });
    const sources = views.map((v) => ({ source: V(v.externalId) }));
    const res = await ok('/models/instances/list', { instanceType: 'node', sources, includeTyping: true, filter: { equals: { property: ['node', 'externalId'], value: 'wide' } } });
    const read = res.items[0].properties.lim;
    // View v maps p to the property Wide0 wrote under p - v (mod 100, in the same container).
    for (let v = 0; v < 10; v++) {
      const expected = Object.fromEntries(range(300, (p) => [`p${p}`, `value ${Math.floor(p / 100) * 100 + ((p + v) % 100)}`]));
      expect(read[`Wide${v}/1`]).toEqual(expected);
      expect(Object.keys(res.typing.lim[`Wide${v}/1`])).toHaveLength(300);
    }
  });

  it('read the properties of more containers than one statement joins', async () => {
    const count = 30;
    await ok('/models/containers', { items: range(count, (k) => ({ space: 'lim', externalId: `Part${k}`, properties: { a: { type: { type: 'int64' } }, b: { type: { type: 'text' } } } })) });
    const properties = Object.fromEntries(range(count, (k) => [[`a${k}`, { container: C(`Part${k}`), containerPropertyIdentifier: 'a' }], [`b${k}`, { container: C(`Part${k}`), containerPropertyIdentifier: 'b' }]]).flat());
    await ok('/models/views', { items: [{ space: 'lim', externalId: 'Parts', version: '1', properties }] });
    const values = Object.fromEntries(range(count, (k) => [[`a${k}`, k], [`b${k}`, `b${k}`]]).flat());
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'lim', externalId: 'parts', sources: [{ source: V('Parts'), properties: values }] }] });
    const byIds = await ok('/models/instances/byids', { items: [{ instanceType: 'node', space: 'lim', externalId: 'parts' }], sources: [{ source: V('Parts') }] });
    expect(byIds.items[0].properties.lim['Parts/1']).toEqual(values);
    const query = await ok('/models/instances/query', {
      with: { p: { nodes: { filter: { equals: { property: ['node', 'externalId'], value: 'parts' } } } } },
      select: { p: { sources: [{ source: V('Parts'), properties: ['*'] }] } },
    });
    expect(query.items.p[0].properties.lim['Parts/1']).toEqual(values);
  });
});
