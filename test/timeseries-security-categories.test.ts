/**
 * Time series in security categories: a series is visible only to principals that are members
 * (`securityCategoriesAcl:MEMBEROF`) of every category it is in. To any other principal it does not exist:
 * not in lists, filters, search or aggregates, not by id, not for updates or deletes, not for its data
 * points, synthetic queries or subscriptions, and every refusal reads as for an id never used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
let a: number;
let b: number;
const ids: Record<string, number> = {};
/** A category id that names no category of the project. */
const GHOST = 4_000_000_001;
const UNKNOWN_ID = 987654321;
const NAMES = ['ghost', 'in-a', 'in-a-b', 'open'];

type Who = 'none' | 'inA' | 'inAB' | 'memberOfAll' | 'admin';
const tokens = {} as Record<Who, Record<string, string>>;

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

const call = (who: Who, path: string, body?: unknown, method = 'POST') => h.request(method, path, body, tokens[who]);
const xids = (items: Array<{ externalId: string }>) => items.map((s) => s.externalId).sort();

/** A refusal of a hidden series, with its id written as `ID`, to compare with the refusal of an unknown one. */
function asUnknown(res: Response, id: number): { status: number; message: string; missing: unknown } {
  const error = res.body.error;
  return { status: res.status, message: String(error.message).replaceAll(String(id), 'ID'), missing: JSON.stringify(error.missing ?? null).replaceAll(String(id), 'ID') };
}

/** Whether `who` is refused `body` (naming the hidden series `id`) exactly as for an id never used. */
async function refusedAsUnknown(who: Who, path: string, body: (id: number) => unknown, id: number) {
  const hidden = await call(who, path, body(id));
  errorMessage(hidden, 400);
  expect(hidden.body.error.missing).toEqual([{ id }]);
  expect(asUnknown(hidden, id)).toEqual(asUnknown(await call(who, path, body(UNKNOWN_ID)), UNKNOWN_ID));
}

const points = async (externalId: string) =>
  ok(await h.post('/timeseries/data/list', { items: [{ externalId }], start: 0, end: 1000 })).items[0].datapoints.map((p: { timestamp: number }) => p.timestamp);

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('ts-none', 'ts-in-a', 'ts-in-a-b', 'ts-all') });
  [a, b] = ok(await h.post('/securitycategories', { items: [{ name: 'A' }, { name: 'B' }] }), 201).items.map((c: { id: number }) => c.id);
  const items = [
    { externalId: 'open', name: 'pump open' },
    { externalId: 'ghost', name: 'pump ghost', securityCategories: [GHOST] },
    { externalId: 'in-a', name: 'pump in-a', securityCategories: [a] },
    { externalId: 'in-a-b', name: 'pump in-a-b', securityCategories: [a, b] },
  ];
  for (const s of ok(await h.post('/timeseries', { items }), 201).items) ids[s.externalId] = s.id;
  ok(await h.post('/timeseries/data', { items: NAMES.map((externalId) => ({ externalId, datapoints: [{ timestamp: 10, value: 1 }] })) }));
  const rights = [
    capability('timeSeriesAcl', ['READ', 'WRITE']),
    capability('timeSeriesSubscriptionsAcl', ['READ', 'WRITE']),
  ];
  const member = (ids: number[]) => capability('securityCategoriesAcl', ['MEMBEROF'], { idscope: { ids } });
  tokens.none = bearer(await namedClientToken(h, 'ts-none', rights));
  tokens.inA = bearer(await namedClientToken(h, 'ts-in-a', [...rights, member([a])]));
  tokens.inAB = bearer(await namedClientToken(h, 'ts-in-a-b', [...rights, member([a]), member([b])]));
  tokens.memberOfAll = bearer(await namedClientToken(h, 'ts-all', [...rights, capability('securityCategoriesAcl', ['MEMBEROF'])]));
  tokens.admin = { authorization: `Bearer ${h.token}` };
});
afterAll(() => h.close());

/** What each principal sees of the four series. */
const SEES: Record<Who, string[]> = {
  none: ['ghost', 'open'],
  inA: ['ghost', 'in-a', 'open'],
  inAB: NAMES,
  memberOfAll: NAMES,
  admin: NAMES,
};

describe('time series in security categories', () => {
  it('are listed, filtered, searched and counted only for members of all their categories', async () => {
    for (const who of Object.keys(SEES) as Who[]) {
      const seen = SEES[who];
      expect(xids(ok(await call(who, '/timeseries/list', { limit: 100 })).items), who).toEqual(seen);
      expect(xids(ok(await call(who, '/timeseries', undefined, 'GET')).items), who).toEqual(seen);
      const advanced = ok(await call(who, '/timeseries/list', { advancedFilter: { prefix: { property: ['name'], value: 'pump' } } })).items;
      expect(xids(advanced), who).toEqual(seen);
      expect(xids(ok(await call(who, '/timeseries/search', { search: { query: 'pump' } })).items), who).toEqual(seen);
      expect(ok(await call(who, '/timeseries/aggregate', {})).items[0].count, who).toBe(seen.length);
      const names = ok(await call(who, '/timeseries/aggregate', { aggregate: 'uniqueValues', properties: [{ property: ['name'] }] })).items;
      expect(names.map((n: { values: string[] }) => n.values[0].replace('pump ', '')).sort(), who).toEqual(seen);
    }
  });

  it('are found by id only by members, and otherwise are missing as an unknown id is', async () => {
    expect(xids(ok(await call('inA', '/timeseries/byids', { items: [{ id: ids['in-a'] }, { externalId: 'ghost' }] })).items)).toEqual(['ghost', 'in-a']);
    expect(xids(ok(await call('inAB', '/timeseries/byids', { items: [{ id: ids['in-a-b'] }] })).items)).toEqual(['in-a-b']);
    await refusedAsUnknown('inA', '/timeseries/byids', (id) => ({ items: [{ id }] }), ids['in-a-b']);
    await refusedAsUnknown('none', '/timeseries/byids', (id) => ({ items: [{ id }] }), ids['in-a']);
    const dropped = ok(await call('none', '/timeseries/byids', { items: [{ id: ids['in-a'] }, { id: ids.open }], ignoreUnknownIds: true })).items;
    expect(xids(dropped)).toEqual(['open']);
    const byPath = await call('inA', `/timeseries/${ids['in-a-b']}`, undefined, 'GET');
    expect(asUnknown(byPath, ids['in-a-b'])).toEqual(asUnknown(await call('inA', `/timeseries/${UNKNOWN_ID}`, undefined, 'GET'), UNKNOWN_ID));
    expect(byPath.status).toBeGreaterThanOrEqual(400);
  });

  it('cannot be updated or deleted by non-members, and nothing changes', async () => {
    await refusedAsUnknown('inA', '/timeseries/update', (id) => ({ items: [{ id, update: { description: { set: 'x' } } }] }), ids['in-a-b']);
    await refusedAsUnknown('none', '/timeseries/delete', (id) => ({ items: [{ id }] }), ids['in-a']);
    const kept = ok(await h.post('/timeseries/byids', { items: [{ id: ids['in-a-b'] }, { id: ids['in-a'] }] })).items;
    expect(kept.map((s: { description?: string }) => s.description)).toEqual([undefined, undefined]);
    ok(await call('inAB', '/timeseries/update', { items: [{ id: ids['in-a-b'], update: { description: { set: 'seen' } } }] }));
    expect(ok(await h.post('/timeseries/byids', { items: [{ id: ids['in-a-b'] }] })).items[0].description).toBe('seen');
  });

  it('hide their data points from non-members: retrieve, latest, insert and delete answer as for an unknown series', async () => {
    const hidden = ids['in-a-b'];
    expect(ok(await call('inAB', '/timeseries/data/list', { items: [{ id: hidden }], start: 0, end: 1000 })).items[0].datapoints).toHaveLength(1);
    expect(ok(await call('inA', '/timeseries/data/latest', { items: [{ id: ids['in-a'] }] })).items[0].datapoints).toHaveLength(1);
    await refusedAsUnknown('inA', '/timeseries/data/list', (id) => ({ items: [{ id }], start: 0, end: 1000 }), hidden);
    await refusedAsUnknown('inA', '/timeseries/data/latest', (id) => ({ items: [{ id }] }), hidden);
    await refusedAsUnknown('inA', '/timeseries/data', (id) => ({ items: [{ id, datapoints: [{ timestamp: 20, value: 2 }] }] }), hidden);
    await refusedAsUnknown('inA', '/timeseries/data/delete', (id) => ({ items: [{ id, inclusiveBegin: 0, exclusiveEnd: 1000 }] }), hidden);
    const listed = ok(await call('inA', '/timeseries/data/list', { items: [{ id: hidden }, { externalId: 'in-a' }], start: 0, end: 1000, ignoreUnknownIds: true })).items;
    expect(xids(listed)).toEqual(['in-a']);
    const latest = ok(await call('none', '/timeseries/data/latest', { items: [{ id: ids['in-a'] }, { externalId: 'ghost' }], ignoreUnknownIds: true })).items;
    expect(xids(latest)).toEqual(['ghost']);
    expect(await points('in-a-b')).toEqual([10]);
    ok(await call('inAB', '/timeseries/data', { items: [{ id: hidden, datapoints: [{ timestamp: 20, value: 2 }] }] }));
    expect(await points('in-a-b')).toEqual([10, 20]);
  });

  it('are missing from synthetic queries of non-members', async () => {
    const query = (who: Who, expression: string) => call(who, '/timeseries/synthetic/query', { items: [{ expression, start: 0, end: 15 }] });
    expect(ok(await query('inA', "ts{externalId='in-a'} * 2")).items[0].datapoints).toEqual([{ timestamp: 10, value: 2 }]);
    const hidden = await query('inA', "ts{externalId='in-a'} + ts{externalId='in-a-b'}");
    expect(errorMessage(hidden, 400)).toMatch(/not found/);
    expect(hidden.body.error.missing).toEqual([{ externalId: 'in-a-b' }]);
    expect(ok(await query('inAB', "ts{externalId='in-a'} + ts{id=" + ids['in-a-b'] + '}')).items[0].datapoints).toEqual([{ timestamp: 10, value: 2 }]);
  });

  it('are left out of the subscriptions that hold them, for non-members', async () => {
    const subs = [
      { externalId: 'by-filter', partitionCount: 1, filter: { prefix: { property: ['name'], value: 'pump' } } },
      { externalId: 'by-list', partitionCount: 1, timeSeriesIds: NAMES },
    ];
    for (const sub of subs) ok(await h.post('/timeseries/subscriptions', { items: [sub] }), 201);
    ok(await h.post('/timeseries/data', { items: NAMES.map((externalId) => ({ externalId, datapoints: [{ timestamp: 30, value: 3 }] })) }));
    // A filter subscription never holds a series with categories, whoever asks.
    const held = ok(await h.get('/timeseries/subscriptions/members?externalId=by-filter')).items;
    expect(xids(held)).toEqual(['open']);
    for (const who of ['none', 'inA', 'inAB'] as const) {
      const listed = ok(await call(who, '/timeseries/subscriptions/members?externalId=by-list', undefined, 'GET')).items;
      expect(xids(listed.filter((m: { id?: number }) => m.id !== undefined)), who).toEqual(SEES[who]);
      const page = ok(await call(who, '/timeseries/subscriptions/data/list', { externalId: 'by-list', partitions: [{ index: 0 }], pollTimeoutSeconds: 0, limit: 1000 }));
      expect(xids(page.subscriptionChanges.added), who).toEqual(SEES[who]);
      expect(xids(page.updates.map((u: { timeSeries: { externalId: string } }) => u.timeSeries)), who).toEqual(SEES[who]);
    }
  });

  it('in a subscription, hide the changes made while the series was in them', async () => {
    ok(await h.post('/timeseries', { items: [{ externalId: 'moved' }] }), 201);
    ok(await h.post('/timeseries/subscriptions', { items: [{ externalId: 'moving', partitionCount: 1, timeSeriesIds: ['moved'] }] }), 201);
    const write = async (timestamp: number) => ok(await h.post('/timeseries/data', { items: [{ externalId: 'moved', datapoints: [{ timestamp, value: 1 }] }] }));
    await write(40);
    ok(await h.post('/timeseries/update', { items: [{ externalId: 'moved', update: { securityCategories: { set: [a] } } }] }));
    await write(50);
    const read = async (who: Who) => {
      const page = ok(await call(who, '/timeseries/subscriptions/data/list', { externalId: 'moving', partitions: [{ index: 0 }], pollTimeoutSeconds: 0, limit: 1000 }));
      return page.updates.flatMap((u: { upserts: Array<{ timestamp: number }> }) => u.upserts.map((p) => p.timestamp));
    };
    expect(await read('none')).toEqual([40]);
    expect(await read('inA')).toEqual([40, 50]);
    expect(ok(await call('none', '/timeseries/subscriptions/members?externalId=moving', undefined, 'GET')).items).toEqual([{ externalId: 'moved' }]);
  });

  it('restrict nothing once their category is deleted', async () => {
    ok(await h.post('/securitycategories/delete', { items: [b] }));
    expect(xids(ok(await call('inA', '/timeseries/list', { limit: 100 })).items)).toEqual([...NAMES, 'moved'].sort());
    expect(xids(ok(await call('none', '/timeseries/list', { limit: 100 })).items)).toEqual(['ghost', 'open']);
  });
});
