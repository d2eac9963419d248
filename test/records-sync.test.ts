/**
 * `POST /streams/{id}/records/sync` over HTTP: starting from a time, paging with cursors and `hasNext`,
 * created, updated and deleted records (tombstones) in the order they were written, filters (which
 * tombstones meet with their record's last properties), selected properties, a cursor bound to its stream, its filter and its caller's
 * spaces, cursor expiry, and
 * a follower that reads while records are ingested concurrently, each record exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { ALL_READINGS, createStream, ok, reading, setUpSchema, SPACE } from './support/records.js';

let h: Harness;
/** How far the server's clock runs ahead of the real one. */
let ahead = 0;
const P = (p: string) => [SPACE, 'Reading', p];

type Item = { externalId: string; status: string; lastUpdatedTime: number; properties?: any };

beforeAll(async () => {
  // Tombstones (and cursors) last a minute here, three days by default.
  h = await startHarness({}, { STRATA_RECORD_TOMBSTONE_RETENTION_MS: '60000', STRATA_CLIENTS: namedClients('reader-2', 'reader-all') }, { now: () => Date.now() + ahead });
  await setUpSchema(h);
});
afterAll(() => h.close());

const sync = (stream: string, body: Record<string, unknown>) => ok(h, `/streams/${stream}/records/sync`, body);

/** Follows the feed from `body` until it says there is no more; every item, and the last cursor. */
async function drain(stream: string, body: Record<string, unknown>) {
  const items: Item[] = [];
  let page = await sync(stream, body);
  for (let i = 0; i < 1000; i++) {
    items.push(...page.items);
    if (!page.hasNext) return { items, cursor: page.nextCursor as string };
    page = await sync(stream, { ...body, initializeCursor: undefined, cursor: page.nextCursor });
  }
  throw new Error('the feed never ran dry');
}

const seen = (items: Item[]) => items.map((i) => `${i.externalId}:${i.status}`);

describe('following a stream', () => {
  it('returns records from a time on, in the order written, in pages, then what changes next, deletes as tombstones', async () => {
    await createStream(h, 'feed', 'BasicLiveData');
    await ok(h, '/streams/feed/records', { items: ['a', 'b', 'c', 'd', 'e'].map((x, i) => reading(x, { value: i })) }, 202);
    const first = await sync('feed', { initializeCursor: '1d-ago', limit: 2, sources: ALL_READINGS });
    expect(seen(first.items)).toEqual(['a:created', 'b:created']);
    expect(first.hasNext).toBe(true);
    expect(first.items[0].properties[SPACE].Reading).toEqual({ tag: 'a', value: 0, site: 'north' });
    const rest = await drain('feed', { cursor: first.nextCursor, limit: 2 });
    expect(seen(rest.items)).toEqual(['c:created', 'd:created', 'e:created']);

    const nothing = await sync('feed', { cursor: rest.cursor });
    expect(nothing).toMatchObject({ items: [], hasNext: false });
    await ok(h, '/streams/feed/records/upsert', { items: [reading('b', { value: 10 }), reading('f', {})] }, 202);
    await ok(h, '/streams/feed/records/delete', { items: [{ space: SPACE, externalId: 'a' }] });
    const changes = await drain('feed', { cursor: nothing.nextCursor, sources: ALL_READINGS });
    expect(seen(changes.items)).toEqual(['b:updated', 'f:created', 'a:deleted']);
    expect(changes.items[0].properties[SPACE].Reading.value).toBe(10);
    expect(changes.items[2]).toEqual({ space: SPACE, externalId: 'a', createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number), status: 'deleted' });
    // A record deleted and ingested again is created anew.
    await ok(h, '/streams/feed/records', { items: [reading('a', {})] }, 202);
    expect(seen((await drain('feed', { cursor: changes.cursor })).items)).toEqual(['a:created']);
  });

  it('starts where initializeCursor says: nothing older, and at the end of the feed when nothing is newer', async () => {
    await createStream(h, 'timed', 'BasicLiveData');
    await ok(h, '/streams/timed/records', { items: [reading('early', {})] }, 202);
    ahead = 10 * 60_000;
    await ok(h, '/streams/timed/records', { items: [reading('late', {})] }, 202);
    expect(seen((await drain('timed', { initializeCursor: '5m-ago' })).items)).toEqual(['late:created']);
    ahead = 20 * 60_000;
    const empty = await sync('timed', { initializeCursor: '1m-ago' });
    expect(empty).toMatchObject({ items: [], hasNext: false });
    await ok(h, '/streams/timed/records', { items: [reading('later', {})] }, 202);
    expect(seen((await drain('timed', { cursor: empty.nextCursor })).items)).toEqual(['later:created']);
    ahead = 0;
  });

  it('filters the feed; a tombstone comes to the filters its record met when it was deleted', async () => {
    await createStream(h, 'filtered', 'BasicLiveData');
    const f = { and: [{ range: { property: P('value'), gte: 5 } }, { prefix: { property: ['externalId'], value: 'k' } }] };
    await ok(h, '/streams/filtered/records', { items: [reading('k1', { value: 1 }), reading('k2', { value: 7 }), reading('x1', { value: 9 })] }, 202);
    const start = await drain('filtered', { initializeCursor: '1d-ago', filter: f });
    expect(seen(start.items)).toEqual(['k2:created']);
    await ok(h, '/streams/filtered/records/delete', { items: ['k1', 'k2', 'x1'].map((externalId) => ({ space: SPACE, externalId })) });
    // k1's value and x1's external id rule their tombstones out.
    expect(seen((await drain('filtered', { cursor: start.cursor, filter: f })).items)).toEqual(['k2:deleted']);
  });

  it('refuses a cursor given with another filter or stream, a start that is neither, and an expired cursor', async () => {
    await createStream(h, 'strict', 'BasicLiveData');
    await createStream(h, 'other', 'BasicLiveData');
    const page = await sync('strict', { initializeCursor: '1h-ago', filter: { matchAll: {} } });
    expect(errorMessage(await h.post('/streams/strict/records/sync', { cursor: page.nextCursor }), 400)).toContain('cursor');
    expect(errorMessage(await h.post('/streams/other/records/sync', { cursor: page.nextCursor, filter: { matchAll: {} } }), 400)).toContain('cursor');
    expect(errorMessage(await h.post('/streams/strict/records/sync', {}), 400)).toBe('cursor: give a cursor from an earlier answer, or initializeCursor (such as "2d-ago") to start');
    expect(errorMessage(await h.post('/streams/strict/records/sync', { initializeCursor: 'yesterday' }), 400)).toContain('initializeCursor: expected a time such as "2d-ago"');
    // A cursor lives as long as tombstones (a minute here): past that, deletes may have been missed.
    expect((await h.post('/streams/strict/records/sync', { cursor: page.nextCursor, filter: { matchAll: {} } })).status).toBe(200);
    ahead = 61_000;
    const expired = await h.post('/streams/strict/records/sync', { cursor: page.nextCursor, filter: { matchAll: {} } });
    expect(errorMessage(expired, 400)).toBe('cursor: the cursor expired (it is older than 60000 ms, after which deletes may have been missed); start again with initializeCursor');
    ahead = 0;
  });

  it('refuses a cursor given by a principal that reads other spaces than the one it was issued to', async () => {
    await createStream(h, 'scoped', 'BasicLiveData');
    await ok(h, '/streams/scoped/records', { items: [reading('in-2', {}, undefined, `${SPACE}2`), reading('in-1', {})] }, 202);
    const read = (id: string, scope: Record<string, unknown>) =>
      namedClientToken(h, id, [capability('streamRecordsAcl', ['READ'], scope), capability('dataModelsAcl', ['READ'])]);
    const narrow = bearer(await read('reader-2', { spaceIdScope: { spaceIds: [`${SPACE}2`] } }));
    const wide = bearer(await read('reader-all', { all: {} }));
    const first = await h.request('POST', '/streams/scoped/records/sync', { initializeCursor: '1h-ago', limit: 1 }, narrow);
    expect(first.body.items.map((i: Item) => i.externalId)).toEqual(['in-2']);
    const next = { cursor: first.body.nextCursor, limit: 1 };
    expect((await h.request('POST', '/streams/scoped/records/sync', next, narrow)).status).toBe(200);
    // Under a wider scope the cursor would have stepped past in-1 unseen.
    expect(errorMessage(await h.request('POST', '/streams/scoped/records/sync', next, wide), 400)).toContain('cursor');
    expect(errorMessage(await h.post('/streams/scoped/records/sync', next), 400)).toContain('cursor');
  });
});

describe('sync while records are ingested', () => {
  it('returns every record ingested concurrently exactly once, to each of several followers', async () => {
    await createStream(h, 'busy', 'ImmutableTestStream');
    const batches = 40;
    const per = 10;
    let writing = true;
    const follow = async () => {
      const first = await sync('busy', { initializeCursor: '1m-ago', limit: 7 });
      const got: string[] = first.items.map((i: Item) => i.externalId);
      let cursor = first.nextCursor as string;
      // Follow the feed while the writes run, and to its end once they are done: a page asked for after the
      // last write was acknowledged, with nothing more after it.
      for (;;) {
        const done = !writing;
        const page = await sync('busy', { cursor, limit: 7 });
        got.push(...page.items.map((i: Item) => i.externalId));
        cursor = page.nextCursor;
        if (done && !page.hasNext) return got;
      }
    };
    const followers = [follow(), follow(), follow()];
    await Promise.all(
      Array.from({ length: batches }, (_, b) => ok(h, '/streams/busy/records', { items: Array.from({ length: per }, (_, i) => reading(`b${b}-${i}`, { count: i })) }, 202)),
    ).finally(() => {
      writing = false;
    });
    for (const got of await Promise.all(followers)) {
      expect(got).toHaveLength(batches * per);
      expect(new Set(got).size).toBe(batches * per);
    }
  });
});
