/**
 * `POST /models/instances/sync` over HTTP: the three modes, paging through cursors, changes and tombstones
 * after the backfill, filters (and how tombstones meet them), selected properties, cursor expiry, writes
 * running while a client follows the feed, and the bad input it refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
/** How far the server's clock runs ahead of the real one. */
let ahead = 0;
const VIEW = { type: 'view', space: 'sy', externalId: 'Pump', version: '1' };
const C = { type: 'container', space: 'sy', externalId: 'Pump' };

const node = (externalId: string, properties: Record<string, unknown> = { name: externalId, pressure: 1 }, space = 'sy') => ({
  instanceType: 'node',
  space,
  externalId,
  sources: [{ source: VIEW, properties }],
});

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

type Item = { externalId: string; space: string; version: number; deletedTime?: number; properties?: Record<string, Record<string, Record<string, unknown>>> };

/** One sync request for the set `s`; returns its items and cursor. */
async function sync(set: Record<string, unknown>, cursor?: string, extra: Record<string, unknown> = {}) {
  const body = { with: { s: set }, select: { s: { sources: [{ source: VIEW, properties: ['*'] }] } }, ...(cursor ? { cursors: { s: cursor } } : {}), ...extra };
  const res = await ok('/models/instances/sync', body);
  expect(typeof res.nextCursor.s).toBe('string');
  return { items: res.items.s as Item[], cursor: res.nextCursor.s as string, body: res };
}

/** Follows the cursor until a page comes back empty. */
async function drain(set: Record<string, unknown>, cursor?: string) {
  const all: Item[] = [];
  for (let i = 0; i < 100; i++) {
    const page = await sync(set, cursor);
    cursor = page.cursor;
    if (page.items.length === 0) return { items: all, cursor };
    all.push(...page.items);
  }
  throw new Error('the feed never ran dry');
}

const ids = (items: Item[]) => items.map((i) => i.externalId);

beforeAll(async () => {
  // Cursors expire after a minute here (three days by default), so that the test can pass that age.
  h = await startHarness({}, { STRATA_SYNC_CURSOR_MAX_AGE_MS: '60000' }, { now: () => Date.now() + ahead });
  await ok('/models/spaces', { items: [{ space: 'sy' }, { space: 'sy2' }] });
  await ok('/models/containers', {
    items: [
      {
        space: 'sy',
        externalId: 'Pump',
        usedFor: 'all',
        properties: { name: { type: { type: 'text' } }, pressure: { type: { type: 'float64' } } },
        indexes: { byPressure: { properties: ['pressure'], cursorable: true } },
      },
    ],
  });
  await ok('/models/views', {
    items: [{ space: 'sy', externalId: 'Pump', version: '1', properties: { name: { container: C, containerPropertyIdentifier: 'name' }, pressure: { container: C, containerPropertyIdentifier: 'pressure' } } }],
  });
});
afterAll(() => h.close());

describe('onePhase', () => {
  it('pages through existing instances, then returns each later change once, deletes as tombstones', async () => {
    const set = { nodes: { filter: { equals: { property: ['node', 'space'], value: 'sy' } } }, limit: 2 };
    await ok('/models/instances', { items: ['a1', 'a2', 'a3', 'a4', 'a5'].map((x) => node(x)) });
    const first = await drain(set);
    expect(ids(first.items).sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(first.items[0].properties?.sy['Pump/1']).toEqual({ name: 'a1', pressure: 1 });

    // Nothing new: an empty page, and the cursor still works.
    expect((await sync(set, first.cursor)).items).toEqual([]);

    await ok('/models/instances', { items: [node('a6'), node('a2', { name: 'changed', pressure: 2 })] });
    await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'sy', externalId: 'a4' }] });
    const changes = await drain(set, first.cursor);
    expect(ids(changes.items)).toEqual(['a6', 'a2', 'a4']);
    expect(changes.items[1]).toMatchObject({ version: 2, properties: { sy: { 'Pump/1': { name: 'changed', pressure: 2 } } } });
    expect(changes.items[2].deletedTime).toBeTypeOf('number');
    expect(changes.items[2].properties).toBeUndefined();
    expect(changes.items[0].deletedTime).toBeUndefined();
  });

  it('leaves out instances deleted before the sync began unless skipAlreadyDeleted is false', async () => {
    await ok('/models/instances', { items: [node('d1', { name: 'd', pressure: 1 }, 'sy2'), node('d2', { name: 'd', pressure: 1 }, 'sy2')] });
    await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'sy2', externalId: 'd1' }] });
    const set = { nodes: { filter: { equals: { property: ['node', 'space'], value: 'sy2' } } } };
    expect(ids((await drain(set)).items)).toEqual(['d2']);
    const withDeleted = await drain({ ...set, skipAlreadyDeleted: false });
    expect(ids(withDeleted.items).sort()).toEqual(['d1', 'd2']);
    expect(withDeleted.items.find((i) => i.externalId === 'd1')!.deletedTime).toBeTypeOf('number');
  });

  it('applies the filter to live instances, and to tombstones as far as their base fields tell', async () => {
    const set = { nodes: { filter: { and: [{ equals: { property: ['node', 'space'], value: 'sy' } }, { range: { property: ['sy', 'Pump/1', 'pressure'], gte: 10 } }] } } };
    await ok('/models/instances', { items: [node('f1', { name: 'f', pressure: 20 }), node('f2', { name: 'f', pressure: 5 })] });
    const start = await drain(set);
    expect(ids(start.items)).toEqual(['f1']);
    await ok('/models/instances', { items: [node('f3', { name: 'f', pressure: 50 }), node('f4', { name: 'f', pressure: 1 }), node('g1', { name: 'g', pressure: 50 }, 'sy2')] });
    await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'sy', externalId: 'f2' }, { instanceType: 'node', space: 'sy2', externalId: 'g1' }] });
    const changes = await drain(set, start.cursor);
    // f2's pressure is unknown once deleted, so its tombstone comes; g1 is in another space, so it does not.
    expect(ids(changes.items)).toEqual(['f3', 'f2']);
  });

  it('returns only the selected properties, and follows edges', async () => {
    await ok('/models/instances', {
      items: [
        node('e1'),
        { instanceType: 'edge', space: 'sy', externalId: 'edge1', type: { space: 'sy', externalId: 'link' }, startNode: { space: 'sy', externalId: 'e1' }, endNode: { space: 'sy', externalId: 'a1' } },
      ],
      autoCreateDirectRelations: true,
    });
    const res = await ok('/models/instances/sync', {
      with: { n: { nodes: { filter: { equals: { property: ['node', 'externalId'], value: 'e1' } } } }, e: { edges: { filter: { equals: { property: ['edge', 'type'], value: { space: 'sy', externalId: 'link' } } } } } },
      select: { n: { sources: [{ source: VIEW, properties: ['name'] }] }, e: {} },
      includeTyping: true,
    });
    expect(res.items.n[0].properties).toEqual({ sy: { 'Pump/1': { name: 'e1' } } });
    expect(res.items.e.map((e: Item) => e.externalId)).toEqual(['edge1']);
    expect(res.items.e[0]).toMatchObject({ instanceType: 'edge', startNode: { space: 'sy', externalId: 'e1' } });
    expect(res.typing.n.sy['Pump/1'].name.type.type).toBe('text');
    expect(Object.keys(res.nextCursor).sort()).toEqual(['e', 'n']);
  });

  it('computes sets that are not selected without returning them', async () => {
    const res = await ok('/models/instances/sync', { with: { a: { nodes: {} }, b: { nodes: {} } }, select: { a: {} } });
    expect(Object.keys(res.items)).toEqual(['a']);
    expect(Object.keys(res.nextCursor).sort()).toEqual(['a', 'b']);
  });
});

describe('twoPhase and noBackfill', () => {
  it('backfills in backfillSort order, then follows changes made since the first request', async () => {
    await ok('/models/spaces', { items: [{ space: 'tp' }] });
    await ok('/models/instances', { items: [30, 10, 20, 40].map((p) => node(`t${p}`, { name: 't', pressure: p }, 'tp')) });
    const set = {
      nodes: { filter: { equals: { property: ['node', 'space'], value: 'tp' } } },
      mode: 'twoPhase',
      backfillSort: [{ property: ['sy', 'Pump/1', 'pressure'], direction: 'descending' }],
      limit: 3,
    };
    const p1 = await sync(set);
    expect(ids(p1.items)).toEqual(['t40', 't30', 't20']);
    // A change during the backfill comes after it, from the feed.
    await ok('/models/instances', { items: [node('t25', { name: 't', pressure: 25 }, 'tp'), node('t30', { name: 'moved', pressure: 30 }, 'tp')] });
    const p2 = await sync(set, p1.cursor);
    expect(ids(p2.items)).toEqual(['t10']);
    const rest = await drain(set, p2.cursor);
    expect(ids(rest.items)).toEqual(['t25', 't30']);
  });

  it('answers a notice for a backfillSort that no cursorable index serves, naming the set', async () => {
    const sorted = (property: string) => ({ nodes: {}, mode: 'twoPhase', backfillSort: [{ property: ['sy', 'Pump/1', property] }], limit: 1 });
    const unserved = await ok('/models/instances/sync', { with: { s: sorted('name') }, select: { s: {} }, debug: {} });
    expect(unserved.debug.notices).toEqual([expect.objectContaining({ code: 'sortNotBackedByIndex', resultExpression: 's' })]);
    const served = await ok('/models/instances/sync', { with: { s: sorted('pressure') }, select: { s: {} }, debug: {} });
    expect(served.debug.notices).toEqual([]);
  });

  it('noBackfill returns nothing at first, then what changes', async () => {
    await ok('/models/spaces', { items: [{ space: 'nb' }] });
    await ok('/models/instances', { items: [node('old', undefined, 'nb')] });
    const set = { nodes: { filter: { equals: { property: ['node', 'space'], value: 'nb' } } }, mode: 'noBackfill' };
    const first = await sync(set);
    expect(first.items).toEqual([]);
    await ok('/models/instances', { items: [node('new', undefined, 'nb')] });
    expect(ids((await drain(set, first.cursor)).items)).toEqual(['new']);
  });
});

describe('cursors', () => {
  it('expire after the configured age unless the request accepts missed deletes', async () => {
    const set = { nodes: { filter: { equals: { property: ['node', 'space'], value: 'sy' } } } };
    const { cursor } = await drain(set);
    // Within the age: accepted.
    ahead += 50_000;
    expect((await sync(set, cursor)).items).toEqual([]);
    ahead += 11_000;
    const res = await h.post('/models/instances/sync', { with: { s: set }, select: { s: {} }, cursors: { s: cursor } });
    expect(res.status).toBe(400);
    expect(errorMessage(res, 400)).toMatch(/cursors\.s: the cursor expired/);
    const accepted = await sync(set, cursor, { allowExpiredCursorsAndAcceptMissedDeletes: true });
    expect(accepted.items).toEqual([]);
    // The new cursor is fresh.
    expect((await sync(set, accepted.cursor)).items).toEqual([]);
  });

  it('belong to their set: another filter refuses the cursor', async () => {
    const { cursor } = await sync({ nodes: {} });
    const res = await h.post('/models/instances/sync', { with: { s: { nodes: { filter: { matchAll: {} } } } }, select: { s: {} }, cursors: { s: cursor } });
    expect(res.status).toBe(400);
    expect(errorMessage(res, 400)).toMatch(/cursor/);
  });
});

describe('concurrent writes', () => {
  it('a client following the feed sees every instance at its last version, versions only rising', async () => {
    await ok('/models/spaces', { items: [{ space: 'cw' }] });
    const set = { nodes: { filter: { equals: { property: ['node', 'space'], value: 'cw' } } }, limit: 7 };
    const seen = new Map<string, number[]>();
    const record = (items: Item[]) => {
      for (const i of items) seen.set(i.externalId, [...(seen.get(i.externalId) ?? []), i.deletedTime ? -i.version : i.version]);
    };
    let cursor: string | undefined;
    let writing = true;
    const writers = [0, 1, 2].map(async (w) => {
      for (let r = 0; r < 12; r++) {
        const items = Array.from({ length: 4 }, (_, k) => node(`n${(w * 7 + r * 3 + k) % 15}`, { name: `w${w}r${r}`, pressure: r }, 'cw'));
        await ok('/models/instances', { items });
        if (r % 5 === 4) await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'cw', externalId: `n${(w + r) % 15}` }] });
      }
    });
    const reader = (async () => {
      while (writing) {
        const page = await sync(set, cursor);
        cursor = page.cursor;
        record(page.items);
      }
    })();
    await Promise.all(writers);
    writing = false;
    await reader;
    const rest = await drain(set, cursor);
    record(rest.items);

    const finals = await ok('/models/instances/list', { filter: { equals: { property: ['node', 'space'], value: 'cw' } }, limit: 1000 });
    const live = new Map<string, number>(finals.items.map((i: Item) => [i.externalId, i.version]));
    for (const [id, versions] of seen) {
      const abs = versions.map(Math.abs);
      expect(abs, id).toEqual([...abs].sort((a, b) => a - b));
      expect(new Set(abs).size, id).toBe(abs.length);
      const last = versions.at(-1)!;
      if (live.has(id)) expect(last, id).toBe(live.get(id));
      else expect(last, id).toBeLessThan(0);
    }
    for (const id of live.keys()) expect(seen.has(id), id).toBe(true);
  });
});

describe('bad input', () => {
  it.each([
    ['a chained set', { with: { a: { nodes: {} }, b: { nodes: { from: 'a' } } }, select: { b: {} } }, /with\.b\.nodes\.from/],
    ['backfillSort outside twoPhase', { with: { a: { nodes: {}, backfillSort: [{ property: ['node', 'externalId'] }] } }, select: { a: {} } }, /with\.a\.backfillSort/],
    ['a select of an unknown set', { with: { a: { nodes: {} } }, select: { b: {} } }, /select\.b/],
    ['a cursor of an unknown set', { with: { a: { nodes: {} } }, select: { a: {} }, cursors: { b: 'x' } }, /cursors\.b/],
    ['a limit over 2000', { with: { a: { nodes: {}, limit: 2001 } }, select: { a: {} } }, /limit/],
    ['a filter on an unknown property', { with: { a: { nodes: { filter: { exists: { property: ['sy', 'Pump/1', 'nope'] } } } } }, select: { a: {} } }, /nope/],
    ['a mangled cursor', { with: { a: { nodes: {} } }, select: { a: {} }, cursors: { a: 'abc' } }, /cursor/],
    ['an unknown view in select', { with: { a: { nodes: {} } }, select: { a: { sources: [{ source: { type: 'view', space: 'sy', externalId: 'Nope', version: '1' }, properties: ['*'] }] } } }, /Nope/],
  ])('refuses %s', async (_what, body, message) => {
    const res = await h.post('/models/instances/sync', body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(errorMessage(res, 400)).toMatch(message);
  });
});
