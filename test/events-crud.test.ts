import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
/** Asset ids by the number the tests give them: A[1] is the first asset created. */
const A: number[] = [0];
beforeAll(async () => {
  h = await startHarness();
  // Events refer only to existing assets; the tests below name them A[1] to A[4].
  const assets = await h.post('/assets', { items: [1, 2, 3, 4].map((n) => ({ name: `asset ${n}` })) });
  A.push(...assets.body.items.map((a: { id: number }) => a.id));
});
afterAll(() => h.close());

async function create(items: object[]) {
  const res = await h.post('/events', { items });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.items as any[];
}

async function count(): Promise<number> {
  const res = await h.post('/events/aggregate', {});
  return res.body.items[0].count;
}

describe('create', () => {
  it('creates events and returns them with ids and timestamps', async () => {
    const [a, b] = await create([
      { externalId: 'crud-1', type: 'alarm', startTime: 10, endTime: 20, metadata: { Site: 'Oslo' }, assetIds: [A[3], A[4]] },
      { description: 'no external id' },
    ]);
    expect(a).toMatchObject({ externalId: 'crud-1', type: 'alarm', startTime: 10, endTime: 20, metadata: { Site: 'Oslo' }, assetIds: [A[3], A[4]] });
    expect(Number.isSafeInteger(a.id) && a.id > 0).toBe(true);
    expect(a.createdTime).toBe(a.lastUpdatedTime);
    expect(b.externalId).toBeUndefined();
    const got = await h.get(`/events/${a.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a);
  });

  it('accepts 1000 items and refuses 1001 or none', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({ externalId: `bulk-${i}` }));
    expect((await h.post('/events', { items })).status).toBe(201);
    const before = await count();
    const over = await h.post('/events', { items: Array.from({ length: 1001 }, () => ({})) });
    expect(errorMessage(over, 400)).toMatch(/items: must have at most 1000 items/);
    expect(errorMessage(await h.post('/events', { items: [] }), 400)).toMatch(/at least 1 item/);
    expect(await count()).toBe(before);
  });

  it('refuses an externalId that already exists with 409 and creates nothing', async () => {
    await create([{ externalId: 'dup-existing' }]);
    const before = await count();
    const res = await h.post('/events', { items: [{ externalId: 'fresh-1' }, { externalId: 'dup-existing' }] });
    expect(errorMessage(res, 409)).toMatch(/dup-existing/);
    expect(res.body.error.duplicated).toEqual([{ externalId: 'dup-existing' }]);
    expect(await count()).toBe(before);
    expect((await h.post('/events/byids', { items: [{ externalId: 'fresh-1' }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });

  it('refuses the same externalId twice in one request with 409', async () => {
    const before = await count();
    const res = await h.post('/events', { items: [{ externalId: 'twice' }, { externalId: 'twice' }] });
    expect(errorMessage(res, 409)).toMatch(/twice/);
    expect(res.body.error.duplicated).toEqual([{ externalId: 'twice' }]);
    expect(await count()).toBe(before);
  });

  it('refuses bad field values, naming the field', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ startTime: -1 }, /items\[0\]\.startTime: must be >= 0/],
      [{ startTime: 1.5 }, /items\[0\]\.startTime: expected integer/],
      [{ startTime: '10' }, /items\[0\]\.startTime: expected integer, got a string/],
      [{ dataSetId: 2 ** 53 }, /items\[0\]\.dataSetId: must be <= 9007199254740991/],
      [{ assetIds: [0] }, /items\[0\]\.assetIds\[0\]: must be >= 1/],
      [{ assetIds: [1, 1] }, /items\[0\]\.assetIds: must not contain duplicates/],
      [{ type: 'x'.repeat(65) }, /items\[0\]\.type: must be at most 64 characters/],
      [{ description: null }, /items\[0\]\.description: null is not allowed/],
      [{ colour: 'red' }, /items\[0\]: unknown property "colour"/],
      [{ metadata: { k: { v: 1 } } }, /items\[0\]\.metadata\.k: expected string, got an object/],
      [{ metadata: { ['k'.repeat(129)]: 'v' } }, /items\[0\]\.metadata: key "k+\.\.\." is longer than 128 characters/],
      [{ startTime: 10, endTime: 5 }, /items\[0\]: endTime \(5\) must not be before startTime \(10\)/],
      [{ metadata: Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`k${i}`, 'v'.repeat(100_000)])) }, /at most 200000/],
    ];
    const before = await count();
    for (const [item, message] of cases) {
      expect(errorMessage(await h.post('/events', { items: [{ externalId: 'never' }, item] }), 400).replace('items[1]', 'items[0]')).toMatch(message);
    }
    expect(await count()).toBe(before);
  });
});

describe('retrieve', () => {
  it('returns events by id and externalId in request order', async () => {
    const [a, b] = await create([{ externalId: 'r-a' }, { externalId: 'r-b' }]);
    const res = await h.post('/events/byids', { items: [{ externalId: 'r-b' }, { id: a.id }] });
    expect(res.status).toBe(200);
    expect(res.body.items.map((e: any) => e.id)).toEqual([b.id, a.id]);
  });

  it('refuses unknown ids with 400 listing them in missing, unless ignoreUnknownIds', async () => {
    const [a] = await create([{ externalId: 'r-c' }]);
    const res = await h.post('/events/byids', { items: [{ id: a.id }, { id: 987654321 }, { externalId: 'nope' }] });
    expect(errorMessage(res, 400)).toMatch(/not found/);
    expect(res.body.error.missing).toEqual([{ id: 987654321 }, { externalId: 'nope' }]);
    const ignored = await h.post('/events/byids', { items: [{ id: a.id }, { id: 987654321 }], ignoreUnknownIds: true });
    expect(ignored.body.items.map((e: any) => e.id)).toEqual([a.id]);
  });

  it('refuses a reference with both or neither of id and externalId, and duplicates', async () => {
    expect(errorMessage(await h.post('/events/byids', { items: [{ id: 1, externalId: 'x' }] }), 400)).toMatch(/items\[0\]: give exactly one/);
    expect(errorMessage(await h.post('/events/byids', { items: [{}] }), 400)).toMatch(/items\[0\]: give exactly one/);
    const dup = await h.post('/events/byids', { items: [{ id: 5 }, { id: 5 }] });
    expect(errorMessage(dup, 400)).toMatch(/more than once/);
    expect(dup.body.error.duplicated).toEqual([{ id: 5 }]);
  });

  it('answers 400 with missing for an unknown id (the reference lists no 404) and 400 for a malformed one', async () => {
    const unknown = await h.get('/events/123456789');
    expect(errorMessage(unknown, 400)).toMatch(/123456789/);
    expect(unknown.body.error.missing).toEqual([{ id: 123456789 }]);
    expect(errorMessage(await h.get('/events/abc'), 400)).toMatch(/path parameter "id"/);
    expect(errorMessage(await h.get(`/events/${2 ** 53}`), 400)).toMatch(/path parameter "id"/);
    expect(errorMessage(await h.get('/events/0'), 400)).toMatch(/path parameter "id"/);
  });
});

describe('update', () => {
  it('applies set, setNull, metadata and assetIds patches and moves lastUpdatedTime', async () => {
    const [e] = await create([
      { externalId: 'u-1', type: 't', subtype: 's', startTime: 1, metadata: { a: '1', b: '2' }, assetIds: [A[1], A[2]] },
    ]);
    await new Promise((r) => setImmediate(r));
    const res = await h.post('/events/update', {
      items: [
        {
          externalId: 'u-1',
          update: {
            type: { set: 'T2' },
            subtype: { setNull: true },
            description: { set: 'now described' },
            metadata: { add: { c: '3' }, remove: ['a'] },
            assetIds: { add: [A[3]], remove: [A[1]] },
          },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const u = res.body.items[0];
    expect(u).toMatchObject({ id: e.id, type: 'T2', description: 'now described', metadata: { b: '2', c: '3' }, assetIds: [A[2], A[3]] });
    expect(u.subtype).toBeUndefined();
    expect(u.lastUpdatedTime).toBeGreaterThanOrEqual(e.lastUpdatedTime);
    expect(u.createdTime).toBe(e.createdTime);

    const set = await h.post('/events/update', { items: [{ id: e.id, update: { metadata: { set: { z: '9' } }, assetIds: { set: [] } } }] });
    expect(set.body.items[0].metadata).toEqual({ z: '9' });
    // An emptied list is absent, as every absent field.
    expect(Object.keys(set.body.items[0])).not.toContain('assetIds');
    expect(Object.keys((await h.get(`/events/${e.id}`)).body)).not.toContain('assetIds');
  });

  it('applies all items or none', async () => {
    const [a, b] = await create([{ externalId: 'u-all-a', type: 'before' }, { externalId: 'u-all-b', startTime: 10 }]);
    const res = await h.post('/events/update', {
      items: [
        { id: a.id, update: { type: { set: 'after' } } },
        { id: b.id, update: { endTime: { set: 5 } } },
      ],
    });
    expect(errorMessage(res, 400)).toMatch(/items\[1\]: endTime \(5\) must not be before startTime/);
    expect((await h.get(`/events/${a.id}`)).body.type).toBe('before');
    const missing = await h.post('/events/update', {
      items: [
        { id: a.id, update: { type: { set: 'after' } } },
        { id: 99999999, update: { type: { set: 'x' } } },
      ],
    });
    expect(missing.body.error.missing).toEqual([{ id: 99999999 }]);
    expect((await h.get(`/events/${a.id}`)).body.type).toBe('before');
  });

  it('keeps externalId unique: 409 on a taken one, swaps within a request are fine', async () => {
    const [a, b] = await create([{ externalId: 'swap-a' }, { externalId: 'swap-b' }]);
    const taken = await h.post('/events/update', { items: [{ id: a.id, update: { externalId: { set: 'swap-b' } } }] });
    expect(errorMessage(taken, 409)).toMatch(/swap-b/);
    expect(taken.body.error.duplicated).toEqual([{ externalId: 'swap-b' }]);
    const swap = await h.post('/events/update', {
      items: [
        { id: a.id, update: { externalId: { set: 'swap-b' } } },
        { id: b.id, update: { externalId: { set: 'swap-a' } } },
      ],
    });
    expect(swap.status, JSON.stringify(swap.body)).toBe(200);
    expect((await h.get(`/events/${a.id}`)).body.externalId).toBe('swap-b');
  });

  it('refuses an update that gives two items the same externalId, changing neither', async () => {
    const [a, b] = await create([{ externalId: 'same-a' }, { externalId: 'same-b' }]);
    const res = await h.post('/events/update', {
      items: [
        { id: a.id, update: { externalId: { set: 'same-new' } } },
        { id: b.id, update: { externalId: { set: 'same-new' } } },
      ],
    });
    expect(errorMessage(res, 409)).toMatch(/same-new/);
    expect(res.body.error.duplicated).toEqual([{ externalId: 'same-new' }]);
    expect((await h.get(`/events/${a.id}`)).body.externalId).toBe('same-a');
    expect((await h.get(`/events/${b.id}`)).body.externalId).toBe('same-b');
  });

  it('refuses malformed patches', async () => {
    const [e] = await create([{ externalId: 'u-bad' }]);
    const bad: Array<[object, RegExp]> = [
      [{ type: { set: 'a', setNull: true } }, /update\.type: give exactly one of "set" and "setNull"/],
      [{ type: {} }, /update\.type: give exactly one/],
      [{ type: { setNull: false } }, /update\.type\.setNull: must be true/],
      [{ metadata: { set: {}, add: {} } }, /update\.metadata: "set" cannot be combined/],
      [{ assetIds: { set: [1], remove: [1] } }, /update\.assetIds: "set" cannot be combined/],
      [{ colour: { set: 'red' } }, /update: unknown property "colour"/],
      [{ startTime: { set: -5 } }, /update\.startTime\.set: must be >= 0/],
    ];
    for (const [update, message] of bad) {
      expect(errorMessage(await h.post('/events/update', { items: [{ id: e.id, update }] }), 400)).toMatch(message);
    }
  });
});

describe('delete', () => {
  it('deletes by id and externalId; unknown ids are 400 unless ignoreUnknownIds', async () => {
    const [a, b] = await create([{ externalId: 'd-a', description: 'pump gone' }, { externalId: 'd-b' }]);
    const res = await h.post('/events/delete', { items: [{ id: a.id }, { externalId: 'nope' }] });
    expect(res.body.error.missing).toEqual([{ externalId: 'nope' }]);
    expect((await h.get(`/events/${a.id}`)).status).toBe(200);
    expect((await h.post('/events/delete', { items: [{ id: a.id }, { externalId: 'd-b' }, { externalId: 'nope' }], ignoreUnknownIds: true })).status).toBe(200);
    expect((await h.get(`/events/${a.id}`)).body.error.missing).toEqual([{ id: a.id }]);
    expect((await h.get(`/events/${b.id}`)).body.error.missing).toEqual([{ id: b.id }]);
    // Its metadata, asset links and text index entries go with it.
    const search = await h.post('/events/search', { search: { description: 'gone' } });
    expect(search.body.items.map((e: any) => e.id)).not.toContain(a.id);
  });
});

describe('projects', () => {
  it('keeps each project to its own events', async () => {
    await create([{ externalId: 'only-in-dev' }]);
    const other = await h.request('POST', '/api/v1/projects/other/events/byids', { items: [{ externalId: 'only-in-dev' }] });
    expect(other.body.error.missing).toEqual([{ externalId: 'only-in-dev' }]);
    const created = await h.request('POST', '/api/v1/projects/other/events', { items: [{ externalId: 'only-in-dev' }] });
    expect(created.status).toBe(201);
  });
});
