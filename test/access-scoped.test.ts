/**
 * Data-set scoped capabilities: a principal scoped to data set A sees only A's items in every read path
 * (lists, search, aggregates, by ids, get by id, cursors, partitions) and cannot write outside A. Items
 * outside the scope read as unknown, so their existence is not revealed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
let dsA: number;
let dsB: number;
let token: string;
let both: string;
let readOnly: string;
const events: Record<string, { id: number; externalId: string; dataSetId?: number }> = {};

const CLIENTS = [
  { clientId: 'scoped', clientSecret: 'scoped-secret', groups: ['scoped-a'] },
  { clientId: 'both', clientSecret: 'both-secret', groups: ['scoped-a', 'scoped-b'] },
  { clientId: 'read-only', clientSecret: 'read-only-secret', groups: ['read-a'] },
];

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  [dsA, dsB] = (await h.post('/datasets', { items: [{ externalId: 'ds-a' }, { externalId: 'ds-b' }] })).body.items.map((d: { id: number }) => d.id);
  const items = [];
  for (const [ds, name] of [
    [dsA, 'a'],
    [dsB, 'b'],
    [undefined, 'none'],
  ] as const) {
    for (let i = 0; i < 4; i++) {
      items.push({ externalId: `${name}-${i}`, description: `pump ${name} ${i}`, type: `type-${name}`, ...(ds ? { dataSetId: ds } : {}) });
    }
  }
  for (const e of (await h.post('/events', { items })).body.items) events[e.externalId] = e;
  await h.post('/timeseries', {
    items: [
      { externalId: 'ts-a', name: 'pump a', dataSetId: dsA },
      { externalId: 'ts-b', name: 'pump b', dataSetId: dsB },
    ],
  });
  const scopeA = { datasetScope: { ids: [dsA] } };
  await createGroup(h, {
    name: 'Scoped to A',
    sourceId: 'scoped-a',
    capabilities: [
      capability('eventsAcl', ['READ', 'WRITE'], scopeA),
      capability('timeSeriesAcl', ['READ', 'WRITE'], scopeA),
      capability('datasetsAcl', ['READ'], { idscope: { ids: [dsA] } }),
    ],
  });
  await createGroup(h, { name: 'Scoped to B', sourceId: 'scoped-b', capabilities: [capability('eventsAcl', ['READ'], { datasetScope: { ids: [dsB] } })] });
  await createGroup(h, { name: 'Read A', sourceId: 'read-a', capabilities: [capability('eventsAcl', ['READ'], scopeA)] });
  token = await clientToken(h, 'scoped', 'scoped-secret');
  both = await clientToken(h, 'both', 'both-secret');
  readOnly = await clientToken(h, 'read-only', 'read-only-secret');
});
afterAll(() => h.close());

const as = (t: string, method: string, path: string, body?: unknown): Promise<Response> => h.request(method, path, body, bearer(t));
const scoped = (method: string, path: string, body?: unknown) => as(token, method, path, body);
const xids = (res: Response) => (res.body.items as Array<{ externalId: string }>).map((e) => e.externalId).sort();
const A = ['a-0', 'a-1', 'a-2', 'a-3'];

describe('reads in a data set scope', () => {
  it('lists only the items in scope, with GET and POST', async () => {
    expect(xids(await scoped('GET', '/events'))).toEqual(A);
    expect(xids(await scoped('POST', '/events/list', {}))).toEqual(A);
    expect(xids(await scoped('POST', '/events/list', { filter: { type: 'type-b' } }))).toEqual([]);
    expect(xids(await scoped('POST', '/events/list', { advancedFilter: { in: { property: ['externalId'], values: ['a-1', 'b-1', 'none-1'] } } }))).toEqual(['a-1']);
  });

  it('pages with cursors and partitions over the scope only', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await scoped('POST', '/events/list', { limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...xids(res));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual(A);
    const parts = await Promise.all([1, 2, 3].map((m) => scoped('POST', '/events/list', { partition: `${m}/3` })));
    expect(parts.flatMap(xids).sort()).toEqual(A);
  });

  it('searches and aggregates over the scope only', async () => {
    expect(xids(await scoped('POST', '/events/search', { search: { description: 'pump' } }))).toEqual(A);
    expect((await scoped('POST', '/events/aggregate', {})).body.items).toEqual([{ count: 4 }]);
    const unique = await scoped('POST', '/events/aggregate', { aggregate: 'uniqueValues', properties: [{ property: ['dataSetId'] }] });
    expect(unique.body.items).toEqual([{ count: 4, values: [dsA], value: dsA }]);
    expect((await scoped('POST', '/timeseries/aggregate', {})).body.items).toEqual([{ count: 1 }]);
    expect((await scoped('POST', '/datasets/aggregate', {})).body.items).toEqual([{ count: 1 }]);
  });

  it('treats items outside the scope as unknown in by-id reads', async () => {
    expect((await scoped('GET', `/events/${events['a-0'].id}`)).status).toBe(200);
    expect((await scoped('GET', `/events/${events['b-0'].id}`)).body.error.missing).toEqual([{ id: events['b-0'].id }]);
    const mixed = await scoped('POST', '/events/byids', { items: [{ id: events['a-1'].id }, { externalId: 'b-1' }, { id: events['none-1'].id }] });
    errorMessage(mixed, 400);
    expect(mixed.body.error.missing).toEqual([{ externalId: 'b-1' }, { id: events['none-1'].id }]);
    const ignoring = await scoped('POST', '/events/byids', { items: [{ id: events['a-1'].id }, { externalId: 'b-1' }], ignoreUnknownIds: true });
    expect(xids(ignoring)).toEqual(['a-1']);
    expect(errorMessage(await scoped('POST', '/timeseries/byids', { items: [{ externalId: 'ts-b' }] }), 400)).toMatch(/not found/);
    expect(xids(await scoped('POST', '/timeseries/byids', { items: [{ externalId: 'ts-a' }] }))).toEqual(['ts-a']);
    expect((await scoped('POST', '/datasets/byids', { items: [{ id: dsB }] })).body.error.missing).toEqual([{ id: dsB }]);
    expect(xids(await scoped('POST', '/datasets/list', {}))).toEqual(['ds-a']);
  });

  it('gives the union of the scopes of several groups', async () => {
    expect(xids(await as(both, 'GET', '/events'))).toEqual([...A, 'b-0', 'b-1', 'b-2', 'b-3']);
  });
});

describe('writes in a data set scope', () => {
  const count = async () => (await h.post('/events/aggregate', {})).body.items[0].count as number;

  it('creates only in the scope, and refuses the whole request otherwise', async () => {
    const before = await count();
    expect((await scoped('POST', '/events', { items: [{ externalId: 'new-a', dataSetId: dsA }] })).status).toBe(201);
    const outside = await scoped('POST', '/events', { items: [{ externalId: 'new-a2', dataSetId: dsA }, { externalId: 'new-b', dataSetId: dsB }] });
    expect(errorMessage(outside, 403)).toMatch(new RegExp(`items\\[1\\]: eventsAcl:WRITE is granted only in datasetScope \\[${dsA}\\], and the new event is in data set ${dsB}`));
    expect(errorMessage(await scoped('POST', '/events', { items: [{ externalId: 'no-set' }] }), 403)).toMatch(/is in no data set/);
    expect(await count()).toBe(before + 1);
  });

  it('refuses to change, move out or delete items outside the scope', async () => {
    const a = events['a-2'];
    const b = events['b-2'];
    expect((await scoped('POST', '/events/update', { items: [{ id: a.id, update: { description: { set: 'changed' } } }] })).status).toBe(200);
    expect(errorMessage(await scoped('POST', '/events/update', { items: [{ id: a.id, update: { dataSetId: { set: dsB } } }] }), 403)).toMatch(
      /items\[0\]\.update: .*event \d+ is in data set/,
    );
    // An item the principal cannot see at all is unknown; one it can read but not write is refused.
    const unseen = await scoped('POST', '/events/update', { items: [{ id: b.id, update: { description: { set: 'x' } } }] });
    expect(unseen.status).toBe(400);
    expect(unseen.body.error.missing).toEqual([{ id: b.id }]);
    expect((await scoped('POST', '/events/delete', { items: [{ id: b.id }] })).body.error.missing).toEqual([{ id: b.id }]);
    expect(errorMessage(await as(both, 'POST', '/events/update', { items: [{ id: b.id, update: { description: { set: 'x' } } }] }), 403)).toMatch(
      /items\[0\]: eventsAcl:WRITE is granted only in datasetScope .*event \d+ is in data set/,
    );
    expect(errorMessage(await as(both, 'POST', '/events/delete', { items: [{ id: b.id }] }), 403)).toMatch(/eventsAcl:WRITE/);
    expect((await h.get(`/events/${b.id}`)).body.description).toBe('pump b 2');
    expect((await scoped('POST', '/events/delete', { items: [{ id: events['a-3'].id }] })).status).toBe(200);
    expect(errorMessage(await scoped('POST', '/timeseries', { items: [{ externalId: 'ts-new', dataSetId: dsB }] }), 403)).toMatch(/timeSeriesAcl:WRITE/);
  });

  it('needs the write action itself: reading in a scope does not allow writing there', async () => {
    expect(errorMessage(await as(readOnly, 'POST', '/events', { items: [{ dataSetId: dsA }] }), 403)).toMatch(/Missing capability eventsAcl:WRITE/);
    expect(errorMessage(await scoped('POST', '/datasets', { items: [{ externalId: 'x' }] }), 403)).toMatch(/datasetsAcl:WRITE/);
  });
});
