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

  it('belong to their parameters: other parameter values refuse the cursor', async () => {
    const body = (value: string) => ({
      with: { s: { nodes: { filter: { equals: { property: ['node', 'externalId'], value: { parameter: 'x' } } } } } },
      select: { s: {} },
      parameters: { x: value },
    });
    const first = await h.post('/models/instances/sync', body('a'));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const same = await h.post('/models/instances/sync', { ...body('a'), cursors: { s: first.body.nextCursor.s } });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    const other = await h.post('/models/instances/sync', { ...body('b'), cursors: { s: first.body.nextCursor.s } });
    expect(other.status).toBe(400);
    expect(errorMessage(other, 400)).toMatch(/cursor/);
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

describe('chained sets', () => {
  const ref = (externalId: string, space = 'ch') => ({ space, externalId });
  const edge = (externalId: string, from: string, to: string, type = 'feeds') => ({ instanceType: 'edge', space: 'ch', externalId, type: ref(type), startNode: ref(from), endNode: ref(to) });
  const inCh = { equals: { property: ['node', 'space'], value: 'ch' } };
  const del = (instanceType: 'node' | 'edge', ...externalIds: string[]) => ok('/models/instances/delete', { items: externalIds.map((externalId) => ({ instanceType, space: 'ch', externalId })) });

  /** One sync request over several sets, every set selected; items and cursors by set. */
  async function syncSets(sets: Record<string, unknown>, cursors: Record<string, string> = {}) {
    const res = await ok('/models/instances/sync', { with: sets, select: Object.fromEntries(Object.keys(sets).map((n) => [n, {}])), ...(Object.keys(cursors).length ? { cursors } : {}) });
    return { items: res.items as Record<string, Item[]>, cursors: res.nextCursor as Record<string, string> };
  }

  /** Follows every set's cursor until a request returns nothing; what each set returned, in order. */
  async function drainSets(sets: Record<string, unknown>, cursors: Record<string, string> = {}) {
    const all: Record<string, string[]> = Object.fromEntries(Object.keys(sets).map((n) => [n, []]));
    const tombstones = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const page = await syncSets(sets, cursors);
      cursors = page.cursors;
      const got = Object.entries(page.items).flatMap(([n, items]) => items.map((item) => [n, item] as const));
      if (got.length === 0) return { ids: all, cursors, tombstones };
      for (const [n, item] of got) {
        all[n].push(item.externalId);
        if (item.deletedTime !== undefined) tombstones.add(item.externalId);
      }
    }
    throw new Error('the feeds never ran dry');
  }

  const sorted = (xs: string[]) => [...xs].sort();

  // Work orders w1, w2 feed pumps p1..p3 (and w1 p4 through an edge of another type); x1 is no work order
  // and feeds p4; p1 feeds p5, two levels from a work order.
  const chain = {
    wo: { nodes: { filter: { and: [inCh, { prefix: { property: ['node', 'externalId'], value: 'w' } }] } } },
    feeds: { edges: { from: 'wo', direction: 'outwards', maxDistance: 1, filter: { equals: { property: ['edge', 'type'], value: ref('feeds') } } } },
    pumps: { nodes: { from: 'feeds', chainTo: 'destination', filter: inCh } },
  };

  beforeAll(async () => {
    await ok('/models/spaces', { items: [{ space: 'ch' }] });
    // Orders point to a pump by a direct relation.
    await ok('/models/containers', { items: [{ space: 'sy', externalId: 'Order', properties: { pump: { type: { type: 'direct' } } } }] });
    await ok('/models/views', {
      items: [{ space: 'sy', externalId: 'Order', version: '1', properties: { pump: { container: { type: 'container', space: 'sy', externalId: 'Order' }, containerPropertyIdentifier: 'pump' } } }],
    });
    await ok('/models/instances', {
      items: [
        ...['w1', 'w2', 'x1', 'p1', 'p2', 'p3', 'p4', 'p5'].map((x) => node(x, { name: x, pressure: 1 }, 'ch')),
        edge('w1p1', 'w1', 'p1'),
        edge('w1p2', 'w1', 'p2'),
        edge('w2p3', 'w2', 'p3'),
        edge('w1p4', 'w1', 'p4', 'other'),
        edge('x1p4', 'x1', 'p4'),
        edge('p1p5', 'p1', 'p5'),
      ],
      autoCreateDirectRelations: true,
    });
  });

  it('a node -> edge -> node chain returns exactly the instances reached, then only the changes of those still reached', async () => {
    const start = await drainSets(chain);
    expect(sorted(start.ids.wo)).toEqual(['w1', 'w2']);
    expect(sorted(start.ids.feeds)).toEqual(['w1p1', 'w1p2', 'w2p3']);
    expect(sorted(start.ids.pumps)).toEqual(['p1', 'p2', 'p3']);

    // Changes to reached pumps come; to unreached nodes (x1, p4, p5, one level too far) they do not.
    await ok('/models/instances', { items: ['p2', 'x1', 'p4', 'p5', 'p1'].map((x) => node(x, { name: x, pressure: 2 }, 'ch')) });
    const changed = await drainSets(chain, start.cursors);
    expect(changed.ids).toEqual({ wo: [], feeds: [], pumps: ['p2', 'p1'] });

    // p2 stops being reached (its edge is deleted): the edge's tombstone comes in feeds, and p2's later
    // changes no longer come in pumps. p3 is deleted (with its edge): its tombstone comes in pumps.
    await del('edge', 'w1p2');
    await ok('/models/instances', { items: [node('p2', { name: 'p2', pressure: 3 }, 'ch')] });
    await del('node', 'p3');
    const left = await drainSets(chain, changed.cursors);
    expect(left.ids).toEqual({ wo: [], feeds: ['w1p2', 'w2p3'], pumps: ['p3'] });
    expect([...left.tombstones].sort()).toEqual(['p3', 'w1p2', 'w2p3']);

    // A node that becomes reachable is returned when it next changes; the new edge comes at once.
    await ok('/models/instances', { items: [edge('w2p4', 'w2', 'p4')] });
    const joined = await drainSets(chain, left.cursors);
    expect(joined.ids).toEqual({ wo: [], feeds: ['w2p4'], pumps: [] });
    await ok('/models/instances', { items: [node('p4', { name: 'p4', pressure: 3 }, 'ch')] });
    expect((await drainSets(chain, joined.cursors)).ids).toEqual({ wo: [], feeds: [], pumps: ['p4'] });
  });

  it('reports tombstones to a chained set as its own filter could have matched them', async () => {
    const { cursors } = await drainSets(chain);
    await ok('/models/instances', { items: [node('gone1', undefined, 'ch'), node('gone2', undefined, 'sy2')] });
    // gone1 was never reached, but once deleted its edges cannot tell: its tombstone comes (the set's filter
    // holds for it); gone2 is in another space, which the filter rules out.
    await del('node', 'gone1');
    await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'sy2', externalId: 'gone2' }] });
    const after = await drainSets(chain, cursors);
    expect(after.ids.pumps).toEqual(['gone1']);
    expect(after.ids.wo).toEqual([]);
    expect(after.tombstones).toEqual(new Set(['gone1']));
  });

  it('follows traversals: direction, chainTo, nodeFilter, terminationFilter', async () => {
    // s -> t1 -> t2 -> t3 -> t4, and s -> u1 -> u2 (u1 fails nodeFilter)
    await ok('/models/instances', {
      items: [
        ...['s', 't1', 't2', 't3', 't4', 'u1', 'u2'].map((x) => node(x, { name: x, pressure: x === 'u1' ? 9 : 1 }, 'ch')),
        ...[['s', 't1'], ['t1', 't2'], ['t2', 't3'], ['t3', 't4'], ['s', 'u1'], ['u1', 'u2']].map(([a, b]) => edge(`${a}_${b}`, a, b, 'next')),
      ],
    });
    const sets = {
      root: { nodes: { filter: { and: [inCh, { equals: { property: ['node', 'externalId'], value: 's' } }] } } },
      path: {
        edges: {
          from: 'root',
          filter: { equals: { property: ['edge', 'type'], value: ref('next') } },
          nodeFilter: { range: { property: ['sy', 'Pump/1', 'pressure'], lt: 5 } },
          terminationFilter: { equals: { property: ['node', 'externalId'], value: 't3' } },
        },
      },
      starts: { nodes: { from: 'path', chainTo: 'source' } },
      back: { edges: { from: 'starts', direction: 'inwards', maxDistance: 1, filter: { equals: { property: ['edge', 'type'], value: ref('next') } } } },
      backEnds: { nodes: { from: 'back', chainTo: 'destination' } },
    };
    const { ids, cursors } = await drainSets(sets);
    expect(sorted(ids.path)).toEqual(['s_t1', 't1_t2', 't2_t3']);
    expect(sorted(ids.starts)).toEqual(['s', 't1', 't2']);
    // Inwards from s, t1, t2: the edges reaching t1 and t2; their destination, followed inwards, is their start.
    expect(sorted(ids.back)).toEqual(['s_t1', 't1_t2']);
    expect(sorted(ids.backEnds)).toEqual(['s', 't1']);
    // u1 now passes nodeFilter, so the traversal goes on through it: u1 is a start from now on, and a new
    // edge beyond it is reached. The edges s_u1 and u1_u2 join the set without changing: not returned.
    await ok('/models/instances', { items: [node('u1', { name: 'u1', pressure: 1 }, 'ch')] });
    await ok('/models/instances', { items: [node('u3', undefined, 'ch'), edge('u2_u3', 'u2', 'u3', 'next'), node('t4', { name: 't4', pressure: 2 }, 'ch')] });
    const next = await drainSets(sets, cursors);
    expect(next.ids.path).toEqual(['u2_u3']);
    expect(next.ids.starts).toEqual(['u1']);
    expect(next.ids.backEnds).toEqual(['u1']);
  });

  it('follows direct relations outwards and inwards', async () => {
    const order = (externalId: string, pump: string) => ({ instanceType: 'node', space: 'ch', externalId, sources: [{ source: { type: 'view', space: 'sy', externalId: 'Order', version: '1' }, properties: { pump: ref(pump) } }] });
    await ok('/models/instances', { items: [...['r1', 'r2', 'r3', 'r4'].map((x) => node(x, undefined, 'ch')), order('o1', 'r1'), order('o2', 'r2')] });
    const through = { source: { type: 'view', space: 'sy', externalId: 'Order', version: '1' }, identifier: 'pump' };
    const sets = {
      orders: { nodes: { filter: { and: [inCh, { prefix: { property: ['node', 'externalId'], value: 'o' } }] } } },
      ordered: { nodes: { from: 'orders', through, direction: 'outwards' } },
      r1: { nodes: { filter: { and: [inCh, { equals: { property: ['node', 'externalId'], value: 'r1' } }] } } },
      ordersOfR1: { nodes: { from: 'r1', through, direction: 'inwards' } },
    };
    const { ids, cursors } = await drainSets(sets);
    expect(sorted(ids.ordered)).toEqual(['r1', 'r2']);
    expect(ids.ordersOfR1).toEqual(['o1']);
    await ok('/models/instances', { items: ['r4', 'r3', 'r2', 'r1'].map((x) => node(x, { name: x, pressure: 5 }, 'ch')) });
    await ok('/models/instances', { items: [order('o3', 'r3')] });
    const next = await drainSets(sets, cursors);
    // Reached as the graph stands now: o3 points to r3, so r3's change comes; no order points to r4.
    expect(next.ids.ordered).toEqual(['r3', 'r2', 'r1']);
    // o1 did not change; o3 points elsewhere than r1.
    expect(next.ids.ordersOfR1).toEqual([]);
    expect(next.ids.orders).toEqual(['o3']);
  });

  it('follows a direct relation inwards from a set of more nodes than a filter may list values', async () => {
    await ok('/models/spaces', { items: [{ space: 'big' }] });
    for (let at = 0; at < 1200; at += 600) {
      await ok('/models/instances', { items: Array.from({ length: 600 }, (_, k) => node(`m${at + k}`, undefined, 'big')) });
    }
    const order = (externalId: string, pump: string) => ({ instanceType: 'node', space: 'ch', externalId, sources: [{ source: { type: 'view', space: 'sy', externalId: 'Order', version: '1' }, properties: { pump: { space: 'big', externalId: pump } } }] });
    await ok('/models/instances', { items: [order('ob1', 'm1199'), order('ob2', 'm0')] });
    const sets = {
      big: { nodes: { filter: { equals: { property: ['node', 'space'], value: 'big' } } } },
      orders: { nodes: { from: 'big', through: { source: { type: 'view', space: 'sy', externalId: 'Order', version: '1' }, identifier: 'pump' } } },
    };
    const res = await ok('/models/instances/sync', { with: sets, select: { orders: {} } });
    expect(sorted(res.items.orders.map((i: Item) => i.externalId))).toEqual(['ob1', 'ob2']);
  });

  it('keeps a cursor and a mode per set, and binds a chained set\'s cursor to the sets it reads from', async () => {
    const sets = { ...chain, pumps: { ...chain.pumps, mode: 'twoPhase', limit: 1 }, wo: { ...chain.wo, mode: 'noBackfill' } };
    const first = await syncSets(sets);
    expect(first.items.wo).toEqual([]);
    expect(first.items.pumps).toHaveLength(1);
    // The pumps' cursor alone, the other sets starting afresh.
    const second = await syncSets(sets, { pumps: first.cursors.pumps });
    expect(second.items.pumps).toHaveLength(1);
    expect(second.items.pumps[0].externalId).not.toBe(first.items.pumps[0].externalId);
    // Another work order filter would change what the pumps are: the cursor is refused.
    const res = await h.post('/models/instances/sync', {
      with: { ...sets, wo: { nodes: { filter: inCh } } },
      select: { pumps: {} },
      cursors: { pumps: second.cursors.pumps },
    });
    expect(errorMessage(res, 400)).toMatch(/^cursors\.pumps: this cursor does not belong/);
    // The same request, again later, continues.
    const rest = await drainSets(sets, second.cursors);
    expect(sorted([...first.items.pumps, ...second.items.pumps].map((i) => i.externalId).concat(rest.ids.pumps))).toEqual(['p1', 'p4']);
  });

  it('accepts what the Python client sends: direction and chainTo without from, and null cursors', async () => {
    const res = await ok('/models/instances/sync', {
      with: { s: { nodes: { filter: inCh, direction: 'outwards', chainTo: 'destination' }, mode: 'twoPhase' }, e: { edges: { direction: 'outwards', chainTo: 'destination', filter: { equals: { property: ['edge', 'space'], value: 'ch' } } }, mode: 'twoPhase' } },
      select: { s: {}, e: {} },
      cursors: { s: null, e: null },
    });
    expect(res.items.s.length).toBeGreaterThan(0);
    expect(res.items.e.length).toBeGreaterThan(0);
  });
});

describe('bad input', () => {
  it.each([
    ['limitEach', { with: { a: { nodes: {} }, b: { edges: { from: 'a', maxDistance: 1, limitEach: 2 } } }, select: { b: {} } }, /with\.b\.edges\.limitEach: sync does not take limitEach/],
    ['a chain from an unknown set', { with: { a: { nodes: {} }, b: { nodes: { from: 'c' } } }, select: { b: {} } }, /with\.b\.nodes\.from: there is no result set expression "c"/],
    ['sets chained in a cycle', { with: { a: { nodes: { from: 'b' } }, b: { edges: { from: 'a' } } }, select: { b: {} } }, /the result sets form a cycle/],
    ['through from a set of edges', { with: { a: { edges: {} }, b: { nodes: { from: 'a', through: { source: VIEW, identifier: 'name' } } } }, select: { b: {} } }, /with\.b\.nodes\.through/],
    ['through a property that is no direct relation', { with: { a: { nodes: {} }, b: { nodes: { from: 'a', through: { source: VIEW, identifier: 'name' } } } }, select: { b: {} } }, /not a direct relation/],
    ['sort in a sync set', { with: { a: { nodes: {}, sort: [{ property: ['node', 'externalId'] }] } }, select: { a: {} } }, /sort/],
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
