/**
 * Data point subscriptions over HTTP, on both backends: subscriptions listing their time series by external
 * id and instance id or selecting them by a filter (series joining and leaving as they are created, changed
 * and deleted), their members and counts, the data listing (inserts, deleted ranges and membership changes
 * in commit order, partitions, status options, limits and cursor chains, `initializeCursors`), what a scoped
 * principal sees of them, cursors that outlive the server, and the requests they refuse.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, builtInSigner, capability, createGroup } from './support/auth.js';
import { startCustomHarness } from './support/custom-harness.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import { ManualClock } from './support/manual-clock.js';
import { openTestStore } from './support/test-store.js';

const MINUTE = 60_000;
const clock = new ManualClock(Date.now());
let h: Harness;

beforeAll(async () => {
  h = await startCustomHarness({ build: { clock } });
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function series(items: Array<Record<string, unknown>>): Promise<number[]> {
  return ok(await h.post('/timeseries', { items }), 201).items.map((s: { id: number }) => s.id);
}

async function subscribe(item: Record<string, unknown>, headers?: Record<string, string>): Promise<any> {
  return ok(await h.request('POST', '/timeseries/subscriptions', { items: [{ partitionCount: 1, ...item }] }, headers), 201).items[0];
}

const insert = async (items: unknown[]) => ok(await h.post('/timeseries/data', { items }));

interface Read {
  updates: any[];
  added: any[];
  removed: any[];
  cursors: Array<{ index: number; cursor: string }>;
  pages: number;
}

/** Follows the chain of cursors from `partitions` until nothing more is there. */
async function readAll(externalId: string, partitions: Array<{ index: number; cursor?: string }>, extra: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<Read> {
  const out: Read = { updates: [], added: [], removed: [], cursors: [], pages: 0 };
  let current = partitions;
  for (;;) {
    const body = ok(await h.request('POST', '/timeseries/subscriptions/data/list', { externalId, partitions: current, pollTimeoutSeconds: 0, ...extra }, headers));
    out.pages++;
    out.updates.push(...body.updates);
    out.added.push(...body.subscriptionChanges.added);
    out.removed.push(...body.subscriptionChanges.removed);
    current = body.partitions.map((p: { index: number; nextCursor: string }) => ({ index: p.index, cursor: p.nextCursor }));
    if (!body.hasNext) {
      out.cursors = current as Read['cursors'];
      return out;
    }
  }
}

const xids = (list: Array<{ externalId?: string }>) => list.map((s) => s.externalId);

describe('subscriptions listing their time series', () => {
  let a: number;
  let b: number;
  let dm: number;
  beforeAll(async () => {
    [a, b, dm] = await series([{ externalId: 'ls-a' }, { externalId: 'ls-b', isString: true }, { externalId: 'ls-dm', instanceId: { space: 'sp', externalId: 'ls-dm' } }]);
  });

  it('are created by external id and instance id, answered without an internal id and with their count', async () => {
    const created = await subscribe({ externalId: 'ls', name: 'Listed', description: 'd', partitionCount: 2, timeSeriesIds: ['ls-a', 'ls-b', 'ls-later'], instanceIds: [{ space: 'sp', externalId: 'ls-dm' }] });
    expect(created).toEqual({
      externalId: 'ls',
      name: 'Listed',
      description: 'd',
      partitionCount: 2,
      timeSeriesCount: 4,
      createdTime: clock.now(),
      lastUpdatedTime: clock.now(),
    });
    expect(ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId: 'ls' }] })).items).toEqual([created]);
    expect(ok(await h.get('/timeseries/subscriptions')).items).toContainEqual(created);
  });

  it('list their members as given, each with the series it names now', async () => {
    const members = ok(await h.get('/timeseries/subscriptions/members?externalId=ls')).items;
    expect(members).toEqual([
      { externalId: 'ls-a', id: a },
      { externalId: 'ls-b', id: b },
      { externalId: 'ls-later' },
      { instanceId: { space: 'sp', externalId: 'ls-dm' }, id: dm },
    ]);
    const first = ok(await h.get('/timeseries/subscriptions/members?externalId=ls&limit=3'));
    expect(first.items).toHaveLength(3);
    const rest = ok(await h.get(`/timeseries/subscriptions/members?externalId=ls&limit=3&cursor=${first.nextCursor}`));
    expect(rest).toEqual({ items: [members[3]] });
  });

  it('deliver the series they started with as added, each in the partition its id gives it', async () => {
    const read = await readAll('ls', [{ index: 0 }, { index: 1 }]);
    expect(read.added.map((s: { id: number }) => s.id).sort()).toEqual([a, b, dm].sort());
    expect(read.added.find((s: { id: number }) => s.id === b)).toEqual({ id: b, externalId: 'ls-b', isString: true, type: 'string' });
    expect(read.added.find((s: { id: number }) => s.id === dm)).toEqual({ id: dm, externalId: 'ls-dm', instanceId: { space: 'sp', externalId: 'ls-dm' }, isString: false, type: 'numeric' });
    for (const index of [0, 1]) {
      const one = await readAll('ls', [{ index }]);
      expect(one.added.map((s: { id: number }) => s.id).sort()).toEqual([a, b, dm].filter((id) => id % 2 === index).sort());
    }
  });

  it('take a series that takes a referenced external id, and let go of one that gives it up or is deleted', async () => {
    const start = await readAll('ls', [{ index: 0 }, { index: 1 }]);
    const [later] = await series([{ externalId: 'ls-later' }]);
    ok(await h.post('/timeseries/update', { items: [{ id: a, update: { externalId: { set: 'ls-a-renamed' } } }] }));
    ok(await h.post('/timeseries/delete', { items: [{ id: b }] }));
    const read = await readAll('ls', start.cursors);
    expect(read.added).toEqual([{ id: later, externalId: 'ls-later', isString: false, type: 'numeric' }]);
    expect(read.removed).toEqual([
      { id: a, externalId: 'ls-a-renamed', isString: false, type: 'numeric' },
      { id: b, externalId: 'ls-b', isString: true, type: 'string' },
    ]);
    const members = ok(await h.get('/timeseries/subscriptions/members?externalId=ls')).items;
    expect(members.slice(0, 3)).toEqual([{ externalId: 'ls-a' }, { externalId: 'ls-b' }, { externalId: 'ls-later', id: later }]);
  });

  it('are updated: fields, and members added, removed or replaced, each change delivered', async () => {
    const [c] = await series([{ externalId: 'ls-c' }]);
    const ds = ok(await h.post('/datasets', { items: [{ externalId: 'ls-ds' }] })).items[0].id;
    const start = await readAll('ls', [{ index: 0 }, { index: 1 }]);
    const updated = ok(
      await h.post('/timeseries/subscriptions/update', {
        items: [{ externalId: 'ls', update: { name: { set: 'Renamed' }, description: { setNull: true }, dataSetId: { set: ds }, timeSeriesIds: { add: ['ls-c'], remove: ['ls-later'] } } }],
      }),
    ).items[0];
    expect(updated).toMatchObject({ externalId: 'ls', name: 'Renamed', dataSetId: ds, partitionCount: 2, timeSeriesCount: 4 });
    expect(updated).not.toHaveProperty('description');
    const read = await readAll('ls', start.cursors);
    expect(xids(read.added)).toEqual(['ls-c']);
    expect(xids(read.removed)).toEqual(['ls-later']);
    ok(await h.post('/timeseries/subscriptions/update', { items: [{ externalId: 'ls', update: { timeSeriesIds: { set: ['ls-c'] }, instanceIds: { set: [{ space: 'sp', externalId: 'ls-dm' }] } } }] }));
    expect(ok(await h.get('/timeseries/subscriptions/members?externalId=ls')).items).toEqual([
      { externalId: 'ls-c', id: c },
      { instanceId: { space: 'sp', externalId: 'ls-dm' }, id: dm },
    ]);
  });
});

describe('filter subscriptions', () => {
  it('hold the series the filter matches as they are created, changed and deleted, and never one with security categories', async () => {
    const [hot] = await series([{ externalId: 'f-hot', metadata: { kind: 'temp' } }, { externalId: 'f-cold', metadata: { kind: 'flow' } }]);
    const sub = await subscribe({ externalId: 'f', filter: { equals: { property: ['metadata', 'kind'], value: 'temp' } } });
    expect(sub).toMatchObject({ filter: { equals: { property: ['metadata', 'kind'], value: 'temp' } }, timeSeriesCount: 1 });
    const first = await readAll('f', [{ index: 0 }]);
    expect(xids(first.added)).toEqual(['f-hot']);
    const [joined] = await series([{ externalId: 'f-new', metadata: { kind: 'temp' } }, { externalId: 'f-secret', metadata: { kind: 'temp' }, securityCategories: [7] }]);
    ok(await h.post('/timeseries/update', { items: [{ externalId: 'f-cold', update: { metadata: { set: { kind: 'temp' } } } }, { id: hot, update: { metadata: { set: { kind: 'gone' } } } }] }));
    ok(await h.post('/timeseries/delete', { items: [{ id: joined }] }));
    const read = await readAll('f', first.cursors);
    expect(xids(read.added)).toEqual(['f-new', 'f-cold']);
    expect(xids(read.removed)).toEqual(['f-hot', 'f-new']);
    expect(ok(await h.get('/timeseries/subscriptions/members?externalId=f')).items.map((m: { externalId: string }) => m.externalId)).toEqual(['f-cold']);
    expect(ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId: 'f' }] })).items[0].timeSeriesCount).toBe(1);
  });

  it('take in thousands of series at once', async () => {
    for (let k = 0; k < 9; k++) await series(Array.from({ length: 1000 }, (_, i) => ({ externalId: `f-big-${k}-${i}` })));
    const sub = await subscribe({ externalId: 'f-big', partitionCount: 3, filter: { prefix: { property: ['externalId'], value: 'f-big-' } } });
    expect(sub.timeSeriesCount).toBe(9000);
    const read = await readAll('f-big', [{ index: 0 }, { index: 1 }, { index: 2 }], { limit: 100_000 });
    expect(new Set(read.added.map((s: { id: number }) => s.id)).size).toBe(9000);
    ok(await h.post('/timeseries/subscriptions/update', { items: [{ externalId: 'f-big', update: { filter: { set: { equals: { property: ['externalId'], value: 'f-big-0-0' } } } } }] }));
    expect((await readAll('f-big', read.cursors, { limit: 100_000 })).removed).toHaveLength(8999);
  });

  it('change their filter, and the series they hold with it', async () => {
    const start = await readAll('f', [{ index: 0 }]);
    ok(await h.post('/timeseries/subscriptions/update', { items: [{ externalId: 'f', update: { filter: { set: { prefix: { property: ['externalId'], value: 'f-h' } } } } }] }));
    expect(ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId: 'f' }] })).items[0].filter).toEqual({ prefix: { property: ['externalId'], value: 'f-h' } });
    const read = await readAll('f', start.cursors);
    expect(xids(read.added)).toEqual(['f-hot']);
    expect(xids(read.removed)).toEqual(['f-cold']);
  });
});

describe('the data of a subscription', () => {
  let p: number;
  let q: number;
  beforeAll(async () => {
    [p, q] = await series([{ externalId: 'd-p' }, { externalId: 'd-q', isString: true }]);
    await subscribe({ externalId: 'd', partitionCount: 3, timeSeriesIds: ['d-p', 'd-q'] });
  });
  const all = () => [{ index: 0 }, { index: 1 }, { index: 2 }];

  it('is every insert and deleted range of its series, in the order they were committed, with the series as they were', async () => {
    const start = await readAll('d', all());
    await insert([{ id: p, datapoints: [{ timestamp: 2000, value: 2 }, { timestamp: 1000, value: 1 }] }, { id: q, datapoints: [{ timestamp: 1000, value: 'one' }] }]);
    ok(await h.post('/timeseries/data/delete', { items: [{ id: p, inclusiveBegin: 1500 }, { id: p, inclusiveBegin: 0, exclusiveEnd: 1200 }] }));
    await insert([{ id: p, datapoints: [{ timestamp: 1000, value: 10 }] }]);
    ok(await h.post('/timeseries/update', { items: [{ id: p, update: { externalId: { set: 'd-p2' } } }] }));
    const read = await readAll('d', start.cursors);
    const pd = { id: p, externalId: 'd-p', isString: false, type: 'numeric' };
    expect(read.updates).toEqual([
      { timeSeries: pd, upserts: [{ timestamp: 1000, value: 1 }, { timestamp: 2000, value: 2 }], deletes: [] },
      { timeSeries: { id: q, externalId: 'd-q', isString: true, type: 'string' }, upserts: [{ timestamp: 1000, value: 'one' }], deletes: [] },
      { timeSeries: pd, upserts: [], deletes: [{ inclusiveBegin: 1500, exclusiveEnd: 1501 }, { inclusiveBegin: 0, exclusiveEnd: 1200 }] },
      { timeSeries: pd, upserts: [{ timestamp: 1000, value: 10 }], deletes: [] },
    ]);
    // The series left the subscription when it gave up the external id it was listed by.
    expect(read.removed.map((s: { id: number }) => s.id)).toEqual([p]);
  });

  it('shows statuses and bad points as asked', async () => {
    const [s] = await series([{ externalId: 'd-status' }]);
    await subscribe({ externalId: 'd-status', timeSeriesIds: ['d-status'] });
    const start = await readAll('d-status', [{ index: 0 }]);
    await insert([
      {
        id: s,
        datapoints: [
          { timestamp: 1, status: { symbol: 'Bad' } },
          { timestamp: 2, value: 'NaN', status: { symbol: 'Bad' } },
          { timestamp: 3, value: 3, status: { symbol: 'Uncertain' } },
          { timestamp: 4, value: 4 },
        ],
      },
    ]);
    const upserts = async (options: Record<string, unknown>) => (await readAll('d-status', start.cursors, options)).updates.flatMap((u) => u.upserts);
    expect(await upserts({})).toEqual([{ timestamp: 4, value: 4 }]);
    expect(await upserts({ treatUncertainAsBad: false, includeStatus: true })).toEqual([{ timestamp: 3, value: 3, status: { code: 1073741824, symbol: 'Uncertain' } }, { timestamp: 4, value: 4 }]);
    expect(await upserts({ ignoreBadDataPoints: false })).toEqual([{ timestamp: 1 }, { timestamp: 2, value: 'NaN' }, { timestamp: 3, value: 3 }, { timestamp: 4, value: 4 }]);
  });

  it('comes in pages of whole writes that fit in `limit`, a larger one alone, the cursors chaining to the end', async () => {
    const [s] = await series([{ externalId: 'd-pages' }]);
    await subscribe({ externalId: 'd-pages', timeSeriesIds: ['d-pages'] });
    const start = await readAll('d-pages', [{ index: 0 }]);
    for (let w = 0; w < 4; w++) await insert([{ id: s, datapoints: Array.from({ length: 2 }, (_, k) => ({ timestamp: w * 10 + k, value: w })) }]);
    await insert([{ id: s, datapoints: Array.from({ length: 20 }, (_, k) => ({ timestamp: 100 + k, value: 9 })) }]);
    const first = ok(await h.post('/timeseries/subscriptions/data/list', { externalId: 'd-pages', partitions: start.cursors, limit: 5, pollTimeoutSeconds: 0 }));
    expect(first.hasNext).toBe(true);
    expect(first.updates.map((u: { upserts: unknown[] }) => u.upserts.length)).toEqual([2, 2]);
    const rest = await readAll('d-pages', first.partitions.map((x: { index: number; nextCursor: string }) => ({ index: x.index, cursor: x.nextCursor })), { limit: 5 });
    expect(rest.updates.map((u: { upserts: unknown[] }) => u.upserts.length)).toEqual([2, 2, 20]);
    expect(rest.pages).toBe(2);
    const end = ok(await h.post('/timeseries/subscriptions/data/list', { externalId: 'd-pages', partitions: rest.cursors, pollTimeoutSeconds: 0 }));
    expect(end).toEqual({ updates: [], subscriptionChanges: { added: [], removed: [] }, partitions: rest.cursors.map((c) => ({ index: c.index, nextCursor: c.cursor })), hasNext: false });
  });

  it('starts where initializeCursors says: now, or the changes of a recent time', async () => {
    const [s] = await series([{ externalId: 'd-init' }]);
    await subscribe({ externalId: 'd-init', timeSeriesIds: ['d-init'] });
    await insert([{ id: s, datapoints: [{ timestamp: 1, value: 1 }] }]);
    clock.advance(20 * MINUTE);
    await insert([{ id: s, datapoints: [{ timestamp: 2, value: 2 }] }]);
    const now = await readAll('d-init', [{ index: 0 }], { initializeCursors: 'now' });
    expect(now.updates).toEqual([]);
    const recent = await readAll('d-init', [{ index: 0 }], { initializeCursors: '10m-ago' });
    expect(recent.added).toEqual([]);
    expect(recent.updates.flatMap((u) => u.upserts)).toEqual([{ timestamp: 2, value: 2 }]);
    const everything = await readAll('d-init', [{ index: 0 }]);
    expect(everything.updates.flatMap((u) => u.upserts)).toHaveLength(2);
    // A cursor wins over initializeCursors.
    expect((await readAll('d-init', recent.cursors, { initializeCursors: '1h-ago' })).updates).toEqual([]);
  });
});

describe('what a scoped principal sees', () => {
  let signer: Awaited<ReturnType<typeof builtInSigner>>;
  let ds1: number;
  let ds2: number;
  let seen: number;
  beforeAll(async () => {
    signer = await builtInSigner(h);
    [ds1, ds2] = ok(await h.post('/datasets', { items: [{ externalId: 'sc-1' }, { externalId: 'sc-2' }] })).items.map((d: { id: number }) => d.id);
    [seen] = await series([{ externalId: 'sc-seen', dataSetId: ds1 }, { externalId: 'sc-hidden', dataSetId: ds2 }]);
    await subscribe({ externalId: 'sc-filter', filter: { prefix: { property: ['externalId'], value: 'sc-' } } });
    await subscribe({ externalId: 'sc-list', timeSeriesIds: ['sc-seen', 'sc-hidden'] });
    await subscribe({ externalId: 'sc-in-2', timeSeriesIds: ['sc-seen'], dataSetId: ds2 });
  });

  async function token(name: string, capabilities: unknown[]) {
    await createGroup(h, { name, members: [name], capabilities });
    // Valid on the server's clock, which tests move.
    return bearer(await signer.sign({ sub: name }, { exp: Math.floor(clock.now() / 1000) + 600 }));
  }

  it('gets the members, counts and data of the series it may read only', async () => {
    const reader = await token('sc reader', [capability('timeSeriesSubscriptionsAcl', ['READ']), capability('timeSeriesAcl', ['READ'], { datasetScope: { ids: [ds1] } })]);
    await insert([{ externalId: 'sc-seen', datapoints: [{ timestamp: 1, value: 1 }] }, { externalId: 'sc-hidden', datapoints: [{ timestamp: 1, value: 2 }] }]);
    expect(ok(await h.request('GET', '/timeseries/subscriptions/members?externalId=sc-filter', undefined, reader)).items).toEqual([{ id: seen, externalId: 'sc-seen' }]);
    expect(ok(await h.request('GET', '/timeseries/subscriptions/members?externalId=sc-list', undefined, reader)).items).toEqual([
      { externalId: 'sc-seen', id: seen },
      { externalId: 'sc-hidden' },
    ]);
    const counts = ok(await h.request('GET', '/timeseries/subscriptions', undefined, reader)).items;
    expect(counts.find((s: { externalId: string }) => s.externalId === 'sc-filter').timeSeriesCount).toBe(1);
    for (const sub of ['sc-filter', 'sc-list']) {
      const read = await readAll(sub, [{ index: 0 }], {}, reader);
      expect(xids(read.added)).toEqual(['sc-seen']);
      expect(read.updates.map((u) => u.timeSeries.externalId)).toEqual(['sc-seen']);
    }
  });

  it('finds a subscription outside its subscriptions scope as it finds one that does not exist', async () => {
    const scoped = await token('sc data set', [capability('timeSeriesSubscriptionsAcl', ['READ'], { datasetScope: { ids: [ds1] } }), capability('timeSeriesAcl', ['READ'])]);
    const listed = ok(await h.request('GET', '/timeseries/subscriptions', undefined, scoped)).items;
    expect(listed).toEqual([]);
    for (const externalId of ['sc-in-2', 'sc-nowhere']) {
      const byIds = await h.request('POST', '/timeseries/subscriptions/byids', { items: [{ externalId }] }, scoped);
      expect(errorMessage(byIds, 400)).toMatch(/not found/);
      expect(byIds.body.error.missing).toEqual([{ externalId }]);
      const data = await h.request('POST', '/timeseries/subscriptions/data/list', { externalId, partitions: [{ index: 0 }] }, scoped);
      expect(data.body.error.missing).toEqual([{ externalId }]);
    }
  });
});

describe('refusals', () => {
  beforeAll(async () => {
    await series([{ externalId: 'r-a' }]);
    await subscribe({ externalId: 'r', partitionCount: 2, timeSeriesIds: ['r-a'] });
    await subscribe({ externalId: 'r-filter', filter: { equals: { property: ['externalId'], value: 'r-a' } } });
  });

  const create = (item: Record<string, unknown>) => h.post('/timeseries/subscriptions', { items: [{ externalId: 'r-new', partitionCount: 1, ...item }] });
  const update = (externalId: string, change: Record<string, unknown>) => h.post('/timeseries/subscriptions/update', { items: [{ externalId, update: change }] });
  const data = (body: Record<string, unknown>) => h.post('/timeseries/subscriptions/data/list', { externalId: 'r', partitions: [{ index: 0 }], pollTimeoutSeconds: 0, ...body });
  const ids = Array.from({ length: 100 }, (_, i) => `r-many-${i}`);

  it.each([
    ['no time series', {}, /items\[0\]: give the time series/],
    ['both a filter and a list', { timeSeriesIds: ['r-a'], filter: { exists: { property: ['name'] } } }, /items\[0\]\.filter: a subscription has either a filter or a list/],
    ['more than 100 time series', { timeSeriesIds: [...ids, 'one-more'] }, /items\/0\/timeSeriesIds|items\[0\]\.timeSeriesIds/],
    ['101 partitions', { partitionCount: 101, timeSeriesIds: ['r-a'] }, /items\[0\]\.partitionCount/],
    ['a search filter', { filter: { search: { property: ['name'], value: 'x' } } }, /items\[0\]\.filter: a subscription's filter cannot use the search filter/],
    ['an unknown property', { filter: { equals: { property: ['colour'], value: 'x' } } }, /items\[0\]\.filter\.equals\.property/],
    ['an unknown data set', { timeSeriesIds: ['r-a'], dataSetId: 123 }, /123/],
  ])('a create with %s, creating nothing', async (_name, item, message) => {
    expect(errorMessage(await create(item), 400)).toMatch(message);
    expect(errorMessage(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId: 'r-new' }] }), 400)).toMatch(/not found/);
  });

  it('a create of an external id taken, and of more than one at once', async () => {
    expect(errorMessage(await create({ externalId: 'r', timeSeriesIds: ['r-a'] }), 409)).toMatch(/"r"/);
    expect((await h.post('/timeseries/subscriptions', { items: [{ externalId: 'x1', partitionCount: 1, timeSeriesIds: ['r-a'] }, { externalId: 'x2', partitionCount: 1, timeSeriesIds: ['r-a'] }] })).status).toBe(400);
  });

  it.each([
    ['a filter of a listed subscription', 'r', { filter: { set: { exists: { property: ['name'] } } } }, /items\[0\]\.update\.filter: this subscription lists its time series/],
    ['members of a filter subscription', 'r-filter', { timeSeriesIds: { add: ['r-a'] } }, /items\[0\]\.update\.timeSeriesIds: this subscription selects its time series by a filter/],
    ['set with add', 'r', { timeSeriesIds: { set: ['r-a'], add: ['r-b'] } }, /items\[0\]\.update\.timeSeriesIds: give either set, or add and remove/],
    ['set of one kind and add of the other', 'r', { timeSeriesIds: { set: ['r-a'] }, instanceIds: { add: [{ space: 's', externalId: 'x' }] } }, /must both be set, or both be added to/],
    ['the partition count', 'r', { partitionCount: { set: 3 } }, /partitionCount is fixed/],
    ['a search filter', 'r-filter', { filter: { set: { search: { property: ['name'], value: 'x' } } } }, /filter: a subscription's filter cannot use the search filter/],
  ])('an update of %s, changing nothing', async (_name, externalId, change, message) => {
    const before = ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId }] })).items[0];
    expect(errorMessage(await update(externalId, change), 400)).toMatch(message);
    expect(ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId }] })).items[0]).toEqual(before);
  });

  it('members past the limit of 10000, naming it, and the update adding them changes nothing', async () => {
    // 'r' lists one series already.
    for (let k = 0; k < 100; k++) {
      ok(await update('r', { timeSeriesIds: { add: Array.from({ length: k === 99 ? 99 : 100 }, (_, i) => `r-limit-${k}-${i}`) } }));
    }
    const before = ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId: 'r' }] })).items[0];
    expect(before.timeSeriesCount).toBe(10_000);
    expect(errorMessage(await update('r', { name: { set: 'too many' }, timeSeriesIds: { add: ['r-limit-extra'] } }), 400)).toMatch(
      /items\[0\]\.update\.timeSeriesIds\.add: the subscription would list 10001 time series; a subscription lists at most 10000/,
    );
    expect(ok(await h.post('/timeseries/subscriptions/byids', { items: [{ externalId: 'r' }] })).items[0]).toEqual(before);
  });

  it.each([
    ['a poll timeout past 5 seconds', { pollTimeoutSeconds: 6 }, /pollTimeoutSeconds/],
    ['a negative poll timeout', { pollTimeoutSeconds: -1 }, /pollTimeoutSeconds/],
    ['a limit past 100000', { limit: 100_001 }, /limit/],
    ['a partition it does not have', { partitions: [{ index: 2 }] }, /partitions\[0\]\.index: the subscription has 2 partitions, numbered from 0; got 2/],
    ['a partition twice', { partitions: [{ index: 1 }, { index: 1 }] }, /partitions\[1\]\.index: partition 1 is asked for twice/],
    ['a malformed initializeCursors', { initializeCursors: 'yesterday' }, /initializeCursors: "yesterday" is not a time/],
    ['a cursor not of this server', { partitions: [{ index: 0, cursor: 'abc' }] }, /partitions\[0\]\.cursor: not a cursor issued by this server/],
    ['an unknown subscription', { externalId: 'r-nowhere' }, /not found/],
  ])('a data listing with %s', async (_name, body, message) => {
    expect(errorMessage(await data(body), 400)).toMatch(message);
  });

  it('a cursor of another partition or subscription', async () => {
    const cursor = ok(await data({ partitions: [{ index: 1 }] })).partitions[0].nextCursor;
    expect(errorMessage(await data({ partitions: [{ index: 0, cursor }] }), 400)).toMatch(/partitions\[0\]\.cursor: .*another query.*|partitions\[0\]\.cursor: /);
    expect(errorMessage(await data({ externalId: 'r-filter', partitions: [{ index: 0, cursor }] }), 400)).toMatch(/partitions\[0\]\.cursor/);
  });

  it('a filter subscription past the project limit of 100', async () => {
    const other = (path: string, body: unknown) => h.request('POST', `/api/v1/projects/other${path}`, body);
    for (let i = 0; i < 100; i++) {
      ok(await other('/timeseries/subscriptions', { items: [{ externalId: `lim-${i}`, partitionCount: 1, filter: { exists: { property: ['name'] } } }] }), 201);
    }
    const refused = await other('/timeseries/subscriptions', { items: [{ externalId: 'lim-100', partitionCount: 1, filter: { exists: { property: ['name'] } } }] });
    expect(errorMessage(refused, 400)).toMatch(/items: a project holds at most 100 filter subscriptions, and this one holds 100/);
    ok(await other('/timeseries/subscriptions', { items: [{ externalId: 'lim-listed', partitionCount: 1, timeSeriesIds: ['x'] }] }), 201);
  });
});

describe('deleting a subscription', () => {
  it('takes its members and data with it; unknown ones are missing unless ignored', async () => {
    await series([{ externalId: 'del-a' }]);
    await subscribe({ externalId: 'del', timeSeriesIds: ['del-a'] });
    ok(await h.post('/timeseries/subscriptions/delete', { items: [{ externalId: 'del' }] }));
    expect(errorMessage(await h.post('/timeseries/subscriptions/data/list', { externalId: 'del', partitions: [{ index: 0 }] }), 400)).toMatch(/not found/);
    const missing = await h.post('/timeseries/subscriptions/delete', { items: [{ externalId: 'del' }] });
    expect(missing.body.error.missing).toEqual([{ externalId: 'del' }]);
    ok(await h.post('/timeseries/subscriptions/delete', { items: [{ externalId: 'del' }], ignoreUnknownIds: true }));
    // Created again, it starts afresh.
    await subscribe({ externalId: 'del', timeSeriesIds: ['del-a'] });
    expect((await readAll('del', [{ index: 0 }])).added).toHaveLength(1);
  });
});

describe('cursors', () => {
  it('continue the stream after the server is restarted on the same database', async () => {
    const store = await openTestStore();
    try {
      const first = await startHarness({}, {}, { store });
      ok(await first.post('/timeseries', { items: [{ externalId: 'rs' }] }), 201);
      ok(await first.post('/timeseries/subscriptions', { items: [{ externalId: 'rs', partitionCount: 1, timeSeriesIds: ['rs'] }] }), 201);
      const page = ok(await first.post('/timeseries/subscriptions/data/list', { externalId: 'rs', partitions: [{ index: 0 }], pollTimeoutSeconds: 0 }));
      await first.close();
      const second = await startHarness({}, {}, { store });
      try {
        ok(await second.post('/timeseries/data', { items: [{ externalId: 'rs', datapoints: [{ timestamp: 5, value: 5 }] }] }));
        const next = ok(await second.post('/timeseries/subscriptions/data/list', { externalId: 'rs', partitions: [{ index: 0, cursor: page.partitions[0].nextCursor }], pollTimeoutSeconds: 0 }));
        expect(next.subscriptionChanges.added).toEqual([]);
        expect(next.updates.map((u: { upserts: unknown[] }) => u.upserts)).toEqual([[{ timestamp: 5, value: 5 }]]);
      } finally {
        await second.close();
      }
    } finally {
      await store.close();
    }
  });
});
