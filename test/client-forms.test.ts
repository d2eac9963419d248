/**
 * Requests in the forms the official clients send them: a trailing slash before the query string or at the
 * end of the path, fixed query values in another letter case, booleans spelled `True`/`False`, an unknown
 * operation answered 404 whatever its body, metadata values sent as numbers or booleans, a search without
 * text sent as `null`, and filters on id 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  expect((await h.post('/events', { items: [{ externalId: 'e1' }, { externalId: 'e2' }] })).status).toBe(201);
});
afterAll(() => h.close());

describe('paths', () => {
  it('takes a trailing slash at the end of the path or before the query string as the same operation', async () => {
    const plain = await h.get('/events?limit=1');
    for (const path of ['/events/?limit=1', '/events/?limit=1&']) {
      const res = await h.get(path);
      expect(res.status, path).toBe(200);
      expect(res.body.items, path).toEqual(plain.body.items);
    }
    const listed = await h.post('/events/list/', { limit: 5 });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['e1', 'e2']);
    const [first] = plain.body.items;
    expect((await h.get(`/events/${first.id}/`)).body.externalId).toBe(first.externalId);
  });

  it('answers an unknown operation 404 whatever its body, before reading it', async () => {
    const unknown = '/api/v1/projects/dev/no-such-thing/list';
    for (const [body, type] of [
      ['{"not json', 'application/json'],
      ['<x/>', 'application/xml'],
      [JSON.stringify({ items: [] }), 'application/json'],
    ]) {
      const res = await h.request('POST', unknown, body, { 'content-type': type });
      expect(errorMessage(res, 404), type).toBe('No operation POST /api/v1/projects/dev/no-such-thing/list');
    }
  });
});

describe('query values', () => {
  it('matches fixed values in any letter case', async () => {
    const lower = await h.get('/sessions?status=ready');
    expect(lower.status).toBe(200);
    for (const status of ['READY', 'Ready']) {
      const res = await h.get(`/sessions/?status=${status}`);
      expect(res.status, status).toBe(200);
      expect(res.body).toEqual(lower.body);
    }
    expect(errorMessage(await h.get('/sessions?status=REDY'), 400)).toMatch(/query parameter "status": must be one of "ready", .*got "REDY"/);
  });

  it('takes booleans as True and False', async () => {
    const all = await h.get('/groups?all=true');
    expect(all.status).toBe(200);
    expect((await h.get('/groups/?all=True')).body).toEqual(all.body);
    expect((await h.get('/groups?all=FALSE')).body).toEqual((await h.get('/groups?all=false')).body);
    expect(errorMessage(await h.get('/groups?all=yes'), 400)).toMatch(/query parameter "all": expected boolean/);
  });
});

/** Every resource that has metadata: where it is created, updated and read back. */
const METADATA_RESOURCES = [
  { resource: 'events', item: {}, created: 201 },
  { resource: 'assets', item: { name: 'pump' }, created: 201 },
  { resource: 'timeseries', item: {}, created: 201 },
  { resource: 'datasets', item: {}, created: 200 },
] as const;

describe('metadata values sent as numbers or booleans', () => {
  for (const { resource, item, created: createdStatus } of METADATA_RESOURCES) {
    it(`are stored as their text on ${resource}, on create and on update`, async () => {
      const created = await h.post(`/${resource}`, {
        items: [{ ...item, externalId: `md-${resource}`, metadata: { level: 3, ratio: 0.25, big: -12345678901, on: true, off: false, name: 'x' } }],
      });
      expect(created.status, JSON.stringify(created.body)).toBe(createdStatus);
      const text = { level: '3', ratio: '0.25', big: '-12345678901', on: 'true', off: 'false', name: 'x' };
      expect(created.body.items[0].metadata).toEqual(text);
      const read = await h.post(`/${resource}/byids`, { items: [{ externalId: `md-${resource}` }] });
      expect(read.body.items[0].metadata).toEqual(text);

      const added = await h.post(`/${resource}/update`, { items: [{ externalId: `md-${resource}`, update: { metadata: { add: { level: 4, flag: true } } } }] });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body.items[0].metadata).toMatchObject({ level: '4', flag: 'true', name: 'x' });
      const set = await h.post(`/${resource}/update`, { items: [{ externalId: `md-${resource}`, update: { metadata: { set: { n: 7 } } } }] });
      expect(set.body.items[0].metadata).toEqual({ n: '7' });
      // A filter on metadata takes the same forms and matches the text.
      const listed = await h.post(`/${resource}/list`, { filter: { metadata: { n: 7 } } });
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      expect(listed.body.items.map((i: { externalId: string }) => i.externalId)).toEqual([`md-${resource}`]);
    });
  }

  it('still refuses objects, arrays and nulls as values, naming the place, and creates nothing', async () => {
    for (const [value, what] of [
      [{ b: 1 }, 'expected string, got an object'],
      [[1], 'expected string, got an array'],
      [null, 'null is not allowed'],
    ] as const) {
      for (const { resource, item } of METADATA_RESOURCES) {
        const res = await h.post(`/${resource}`, { items: [{ ...item, externalId: 'md-refused' }, { ...item, metadata: { ok: 1, bad: value } }] });
        expect(errorMessage(res, 400), `${resource} ${JSON.stringify(value)}`).toBe(`items[1].metadata.bad: ${what}`);
        const update = await h.post(`/${resource}/update`, { items: [{ externalId: `md-${resource}`, update: { metadata: { add: { bad: value } } } }] });
        expect(errorMessage(update, 400), `${resource} ${JSON.stringify(value)}`).toBe(`items[0].update.metadata.add.bad: ${what}`);
      }
    }
    for (const { resource } of METADATA_RESOURCES) {
      expect((await h.post(`/${resource}/byids`, { items: [{ externalId: 'md-refused' }], ignoreUnknownIds: true })).body.items).toEqual([]);
    }
  });

  it('checks the limits on the text: a map whose text is too large is refused', async () => {
    // Assets allow 10,240 bytes of keys and values together: 100 keys of 90 characters leave room for values of
    // one character each, not for values of 13.
    const keys = Array.from({ length: 100 }, (_, i) => `k${String(i).padStart(89, '0')}`);
    const small = Object.fromEntries(keys.map((k) => [k, 1]));
    const large = Object.fromEntries(keys.map((k) => [k, 1234567890123]));
    expect((await h.post('/assets', { items: [{ name: 'small', metadata: small }] })).status).toBe(201);
    expect(errorMessage(await h.post('/assets', { items: [{ name: 'large', metadata: large }] }), 400)).toBe(
      'items[0].metadata: keys and values total 10300 bytes; at most 10240 are allowed',
    );
    // Event metadata values hold at most 128,000 characters each: the text of a number is what counts.
    const long = 'x'.repeat(127_999);
    expect((await h.post('/events', { items: [{ metadata: { a: long + '1' } }] })).status).toBe(201);
    expect(errorMessage(await h.post('/events', { items: [{ metadata: { a: long + '12' } }] }), 400)).toMatch(/items\[0\]\.metadata\.a: must be at most 128000 characters/);
  });
});

describe('search without text', () => {
  it('takes "description": null in an events search as no text search: the filter alone decides', async () => {
    await h.post('/events', { items: [{ externalId: 'nt-1', type: 'nulltext', description: 'pump failure' }, { externalId: 'nt-2', type: 'nulltext' }] });
    for (const search of [{ description: null }, {}]) {
      const res = await h.post('/events/search', { search, filter: { type: 'nulltext' }, limit: 25 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['nt-1', 'nt-2']);
    }
    const text = await h.post('/events/search', { search: { description: 'failure' }, filter: { type: 'nulltext' } });
    expect(text.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['nt-1']);
    // Null is no text only where text is asked for.
    expect(errorMessage(await h.post('/events/search', { search: { description: null }, filter: { type: null } }), 400)).toBe('filter.type: null is not allowed');
    expect(errorMessage(await h.post('/events/search', { search: null }), 400)).toBe('search: null is not allowed');
  });
});

describe('filters on id 0', () => {
  let assetId: number;
  let dataSetId: number;
  beforeAll(async () => {
    dataSetId = (await h.post('/datasets', { items: [{ externalId: 'zero-ds' }] })).body.items[0].id;
    assetId = (await h.post('/assets', { items: [{ externalId: 'zero-root', name: 'root', dataSetId }] })).body.items[0].id;
    await h.post('/assets', { items: [{ externalId: 'zero-child', name: 'child', parentId: assetId, dataSetId }] });
    await h.post('/events', { items: [{ externalId: 'zero-e', assetIds: [assetId], dataSetId }] });
    await h.post('/timeseries', { items: [{ externalId: 'zero-t', assetId, dataSetId }] });
  });

  const externalIds = (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.items.map((i: { externalId: string }) => i.externalId).sort();
  };

  it('match nothing, alone, and add nothing next to other ids', async () => {
    const cases: Array<[string, (id: number) => object, string[]]> = [
      ['/events/list', (id) => ({ assetIds: [id] }), ['zero-e']],
      ['/events/list', (id) => ({ dataSetIds: [{ id }] }), ['zero-e']],
      ['/events/list', (id) => ({ assetSubtreeIds: [{ id }] }), ['zero-e']],
      ['/assets/list', (id) => ({ parentIds: [id] }), ['zero-child']],
      ['/assets/list', (id) => ({ rootIds: [{ id }], externalIdPrefix: 'zero-' }), ['zero-child', 'zero-root']],
      ['/assets/list', (id) => ({ dataSetIds: [{ id }] }), ['zero-child', 'zero-root']],
      ['/assets/list', (id) => ({ assetSubtreeIds: [{ id }] }), ['zero-child', 'zero-root']],
      ['/timeseries/list', (id) => ({ assetIds: [id] }), ['zero-t']],
      ['/timeseries/list', (id) => ({ dataSetIds: [{ id }] }), ['zero-t']],
      ['/timeseries/list', (id) => ({ assetSubtreeIds: [{ id }] }), ['zero-t']],
    ];
    for (const [path, filter, found] of cases) {
      const real = JSON.stringify(filter(1)).includes('dataSetIds') ? dataSetId : assetId;
      expect(externalIds(await h.post(path, { filter: filter(0) })), `${path} ${JSON.stringify(filter(0))}`).toEqual([]);
      const both = filter(real) as Record<string, unknown[]>;
      const withZero = Object.fromEntries(Object.entries(both).map(([k, v]) => [k, Array.isArray(v) ? [...filter(0)[k as never] as unknown[], ...v] : v]));
      expect(externalIds(await h.post(path, { filter: withZero })), `${path} ${JSON.stringify(withZero)}`).toEqual(found);
    }
    expect((await h.post('/events/aggregate', { filter: { dataSetIds: [{ id: 0 }] } })).body).toEqual({ items: [{ count: 0 }] });
    expect(externalIds(await h.post('/events/search', { filter: { assetIds: [0] } }))).toEqual([]);
  });

  it('match nothing in the query parameters of the GET lists', async () => {
    expect(externalIds(await h.get('/events?assetIds=[0]'))).toEqual([]);
    expect(externalIds(await h.get(`/events?assetIds=[0,${assetId}]`))).toEqual(['zero-e']);
    expect(externalIds(await h.get('/assets?parentIds=[0]'))).toEqual([]);
    expect(externalIds(await h.get('/assets?rootIds=[0]'))).toEqual([]);
    expect(externalIds(await h.get('/timeseries?assetIds=[0]'))).toEqual([]);
  });

  it('still refuses negative ids, and unknown ids other than 0', async () => {
    expect(errorMessage(await h.post('/events/list', { filter: { assetIds: [-1] } }), 400)).toMatch(/filter\.assetIds\[0\]: must be >= 0/);
    expect(errorMessage(await h.get('/events?assetIds=[-1]'), 400)).toMatch(/query parameter "assetIds"/);
    const missing = await h.post('/events/list', { filter: { dataSetIds: [{ id: 0 }, { id: 987654321 }] } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.missing).toEqual([{ id: 987654321 }]);
  });

  it('is not an id elsewhere: references to items start at 1', async () => {
    expect(errorMessage(await h.post('/events/byids', { items: [{ id: 0 }] }), 400)).toMatch(/items\[0\]\.id: must be >= 1/);
    expect(errorMessage(await h.post('/events', { items: [{ dataSetId: 0 }] }), 400)).toMatch(/items\[0\]\.dataSetId: must be >= 1/);
  });
});
