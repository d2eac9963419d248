/**
 * `/models/instances/query` over HTTP: result set expressions of nodes and edges chained by `from`,
 * `through` and traversals, set operations, `select` (sources, properties, sort, limit), cursors per set,
 * parameters, typing and debug notices, space scope, and the bad input it refuses (400 naming the place).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from '../support/auth.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let scopedToken: string;
const CLIENTS = [{ clientId: 'q-a', clientSecret: 'q-a-secret', groups: ['q-a'] }];
const C = (externalId: string) => ({ type: 'container', space: 'q', externalId });
const ASSET = { type: 'view', space: 'q', externalId: 'Asset', version: '1' };
const LINK = { type: 'view', space: 'q', externalId: 'Link', version: '1' };
const TYPE = { space: 'q', externalId: 'flows' };

const node = (externalId: string, properties: Record<string, unknown>, space = 'q') => ({ instanceType: 'node', space, externalId, sources: [{ source: ASSET, properties }] });
const edge = (externalId: string, start: string, end: string, weight: number, space = 'q') => ({
  instanceType: 'edge',
  space,
  externalId,
  type: TYPE,
  startNode: { space: start.includes(':') ? start.split(':')[0] : 'q', externalId: start.includes(':') ? start.split(':')[1] : start },
  endNode: { space: end.includes(':') ? end.split(':')[0] : 'q', externalId: end.includes(':') ? end.split(':')[1] : end },
  sources: [{ source: LINK, properties: { weight } }],
});
const ref = (externalId: string, space = 'q') => ({ space, externalId });

async function query(body: unknown, token?: string) {
  const res = token ? await h.request('POST', '/models/instances/query', body, bearer(token)) : await h.post('/models/instances/query', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
const ids = (items: Array<{ externalId: string }>) => items.map((i) => i.externalId);
const sorted = (items: Array<{ externalId: string }>) => ids(items).sort();
const byName = (p: string) => ({ equals: { property: ['q', 'Asset/1', 'name'], value: p } });

/*
 * root -> a, b (parent relations); a -> a1; edges: root -e1-> a -e2-> a1 -e3-> x, root -e4-> b, b -e5-> root (a cycle),
 * and in space "hidden": h1 (node, parent root) and root -e6-> h1.
 */
beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  const post = async (path: string, body: unknown) => {
    const res = await h.post(path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  await post('/models/spaces', { items: [{ space: 'q' }, { space: 'hidden' }] });
  await post('/models/containers', {
    items: [
      {
        space: 'q',
        externalId: 'Asset',
        properties: { name: { type: { type: 'text' } }, size: { type: { type: 'int32' } }, parent: { type: { type: 'direct' } }, links: { type: { type: 'direct', list: true } } },
        indexes: { bySize: { properties: ['size'], cursorable: true } },
      },
      { space: 'q', externalId: 'Link', usedFor: 'edge', properties: { weight: { type: { type: 'float64' } } } },
    ],
  });
  await post('/models/views', {
    items: [
      {
        space: 'q',
        externalId: 'Asset',
        version: '1',
        properties: Object.fromEntries(['name', 'size', 'parent', 'links'].map((p) => [p, { container: C('Asset'), containerPropertyIdentifier: p }])),
      },
      { space: 'q', externalId: 'Link', version: '1', properties: { weight: { container: C('Link'), containerPropertyIdentifier: 'weight' } } },
    ],
  });
  await post('/models/instances', {
    items: [
      node('root', { name: 'root', size: 10, links: [ref('a1'), ref('x')] }),
      node('a', { name: 'a', size: 5, parent: ref('root') }),
      node('b', { name: 'b', size: 7, parent: ref('root') }),
      node('a1', { name: 'a1', size: 1, parent: ref('a') }),
      node('x', { name: 'x', size: 3 }),
      node('h1', { name: 'h1', size: 2, parent: ref('root') }, 'hidden'),
      { instanceType: 'node', space: 'q', externalId: 'flows' },
    ],
  });
  await post('/models/instances', {
    items: [edge('e1', 'root', 'a', 1), edge('e2', 'a', 'a1', 2), edge('e3', 'a1', 'x', 3), edge('e4', 'root', 'b', 4), edge('e5', 'b', 'root', 5), edge('e6', 'root', 'hidden:h1', 6, 'q')],
  });
  const scope = { spaceIdScope: { spaceIds: ['q'] } };
  await createGroup(h, {
    name: 'Space q',
    sourceId: 'q-a',
    capabilities: [capability('dataModelsAcl', ['READ'], scope), capability('dataModelInstancesAcl', ['READ'], scope)],
  });
  scopedToken = await clientToken(h, 'q-a', 'q-a-secret');
});
afterAll(() => h.close());

describe('result set expressions', () => {
  it('answers the selected sets only, with properties of the selected views', async () => {
    const res = await query({
      with: {
        roots: { nodes: { filter: byName('root') }, limit: 1 },
        children: { nodes: { from: 'roots', through: { source: ASSET, identifier: 'parent' }, direction: 'inwards' } },
      },
      select: { children: { sources: [{ source: ASSET, properties: ['name'] }] } },
    });
    expect(Object.keys(res.items)).toEqual(['children']);
    expect(sorted(res.items.children)).toEqual(['a', 'b', 'h1']);
    expect(res.items.children.find((i: any) => i.externalId === 'a').properties).toEqual({ q: { 'Asset/1': { name: 'a' } } });
    expect(res.nextCursor).toEqual({});
  });

  it('follows a direct relation outwards, single and list, through a view or its container', async () => {
    const res = await query({
      with: {
        kids: { nodes: { filter: { in: { property: ['node', 'externalId'], values: ['a1', 'b'] } } } },
        parents: { nodes: { from: 'kids', through: { source: { type: 'container', space: 'q', externalId: 'Asset' }, identifier: 'parent' }, direction: 'outwards' } },
        root: { nodes: { filter: byName('root') } },
        linked: { nodes: { from: 'root', through: { view: ASSET, identifier: 'links' }, direction: 'outwards' } },
        linkers: { nodes: { from: 'linked', through: { source: ASSET, identifier: 'links' } } },
      },
      select: { parents: {}, linked: {}, linkers: {} },
    });
    expect(sorted(res.items.parents)).toEqual(['a', 'root']);
    expect(sorted(res.items.linked)).toEqual(['a1', 'x']);
    expect(sorted(res.items.linkers)).toEqual(['root']);
    expect(res.items.parents[0].properties).toBeUndefined();
  });

  it('traverses edges outwards and inwards, with maxDistance, and chains nodes from their ends', async () => {
    const res = await query({
      with: {
        root: { nodes: { filter: byName('root') } },
        out1: { edges: { from: 'root', maxDistance: 1 } },
        all: { edges: { from: 'root' } },
        ends: { nodes: { from: 'out1' } },
        starts: { nodes: { from: 'out1', chainTo: 'source' } },
        into: { edges: { from: 'root', direction: 'inwards', maxDistance: 1 } },
        intoStarts: { nodes: { from: 'into' } },
      },
      select: { out1: {}, all: {}, ends: {}, starts: {}, into: {}, intoStarts: {} },
    });
    expect(sorted(res.items.out1)).toEqual(['e1', 'e4', 'e6']);
    expect(sorted(res.items.all)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    expect(sorted(res.items.ends)).toEqual(['a', 'b', 'h1']);
    expect(sorted(res.items.starts)).toEqual(['root']);
    expect(sorted(res.items.into)).toEqual(['e5']);
    expect(sorted(res.items.intoStarts)).toEqual(['b']);
    expect(res.items.out1[0]).toMatchObject({ instanceType: 'edge', type: TYPE, startNode: ref('root') });
  });

  it('applies filter, nodeFilter and terminationFilter to a traversal, and limitEach per start node', async () => {
    const res = await query({
      with: {
        root: { nodes: { filter: byName('root') } },
        heavy: { edges: { from: 'root', filter: { range: { property: ['q', 'Link/1', 'weight'], gte: 2 } } } },
        toA: { edges: { from: 'root', nodeFilter: { not: byName('b') } } },
        stopAtA: { edges: { from: 'root', terminationFilter: byName('a') } },
        starts: { nodes: { filter: { in: { property: ['node', 'externalId'], values: ['root', 'a'] } } } },
        each: { edges: { from: 'starts', maxDistance: 1, limitEach: 1 }, sort: [{ property: ['q', 'Link/1', 'weight'], direction: 'descending' }] },
      },
      select: { heavy: {}, toA: {}, stopAtA: {}, each: {} },
    });
    expect(sorted(res.items.heavy)).toEqual(['e4', 'e5', 'e6']);
    expect(sorted(res.items.toA)).toEqual(['e1', 'e2', 'e3', 'e6']);
    expect(sorted(res.items.stopAtA)).toEqual(['e1', 'e4', 'e5', 'e6']);
    expect(ids(res.items.each)).toEqual(['e6', 'e2']);
    const post = await query({
      with: {
        starts: { nodes: { filter: { in: { property: ['node', 'externalId'], values: ['root', 'a'] } } } },
        each: {
          edges: { from: 'starts', maxDistance: 1, limitEach: 1 },
          sort: [{ property: ['q', 'Link/1', 'weight'], direction: 'descending' }],
          postSort: [{ property: ['edge', 'externalId'] }],
        },
      },
      select: { each: {} },
    });
    expect(ids(post.items.each)).toEqual(['e2', 'e6']);
  });

  it('combines sets with union, intersection and except', async () => {
    const inIds = (values: string[]) => ({ nodes: { filter: { in: { property: ['node', 'externalId'], values } } } });
    const res = await query({
      with: {
        p: inIds(['a', 'b', 'x']),
        r: inIds(['b', 'x', 'root']),
        s: inIds(['x']),
        u: { union: ['p', 'r'], except: ['s'] },
        ua: { unionAll: ['p', { intersection: ['r', 's'] }] },
        i: { intersection: ['p', 'r'] },
        fromSet: { nodes: { from: 'i', through: { source: ASSET, identifier: 'parent' }, direction: 'outwards' } },
      },
      select: { u: {}, ua: {}, i: {}, fromSet: {} },
    });
    expect(sorted(res.items.u)).toEqual(['a', 'b', 'root']);
    expect(sorted(res.items.ua)).toEqual(['a', 'b', 'x']);
    expect(sorted(res.items.i)).toEqual(['b', 'x']);
    expect(sorted(res.items.fromSet)).toEqual(['root']);
    const ordered = await query({
      with: { p: inIds(['a', 'b', 'x']), r: inIds(['root']), u: { union: [{ union: ['p'], limit: 2 }, 'r'], sort: [{ property: ['node', 'externalId'], direction: 'descending' }] } },
      select: { u: {} },
    });
    expect(ids(ordered.items.u)).toEqual(['root', 'b', 'a']);
  });

  it('sorts and limits per set (select overrides the expression), pages each set with its cursor', async () => {
    const body = {
      with: {
        assets: { nodes: { filter: { exists: { property: ['q', 'Asset/1', 'size'] } } }, limit: 2, sort: [{ property: ['q', 'Asset/1', 'size'] }] },
        kids: { nodes: { from: 'assets', through: { source: ASSET, identifier: 'parent' } } },
      },
      select: { assets: { sort: [{ property: ['q', 'Asset/1', 'size'], direction: 'descending' }] }, kids: {} },
    };
    const first = await query(body);
    expect(ids(first.items.assets)).toEqual(['root', 'b']);
    expect(sorted(first.items.kids)).toEqual(['a', 'b', 'h1']);
    expect(Object.keys(first.nextCursor)).toEqual(['assets']);
    const second = await query({ ...body, cursors: { assets: first.nextCursor.assets } });
    expect(ids(second.items.assets)).toEqual(['a', 'x']);
    expect(sorted(second.items.kids)).toEqual(['a1']);
    const third = await query({ ...body, cursors: { assets: second.nextCursor.assets } });
    expect(ids(third.items.assets)).toEqual(['h1', 'a1']);
    expect(third.nextCursor).toEqual({});
  });

  it('fills parameters into filters, answers typing of the selected views, and debug notices', async () => {
    const res = await query({
      with: { one: { nodes: { filter: { equals: { property: ['q', 'Asset/1', 'name'], value: { parameter: 'who' } } } } } },
      select: { one: { sources: [{ source: ASSET, properties: ['*'] }] } },
      parameters: { who: 'a' },
      includeTyping: true,
      debug: { emitResults: true },
    });
    expect(ids(res.items.one)).toEqual(['a']);
    expect(res.items.one[0].properties.q['Asset/1']).toEqual({ name: 'a', size: 5, parent: ref('root') });
    expect(Object.keys(res.typing.one.q['Asset/1']).sort()).toEqual(['links', 'name', 'parent', 'size']);
    expect(res.debug).toEqual({ notices: [] });
    const sortedBy = await query({
      with: { s: { nodes: {}, sort: [{ property: ['q', 'Asset/1', 'name'] }] } },
      select: { s: { sources: [{ source: ASSET, properties: ['name'] }] } },
      includeTyping: true,
      debug: { emitResults: false },
    });
    expect(sortedBy.items).toEqual({ s: [] });
    expect(sortedBy.typing.s.q['Asset/1']).toEqual({ name: expect.objectContaining({ type: expect.objectContaining({ type: 'text' }), nullable: true, constraintState: {} }) });
    expect(sortedBy.debug.notices).toEqual([expect.objectContaining({ code: 'sortNotBackedByIndex', resultExpression: 's' })]);
  });

  it('sees only the spaces the principal may read, also inside traversals', async () => {
    const body = {
      with: {
        root: { nodes: { filter: byName('root') } },
        kids: { nodes: { from: 'root', through: { source: ASSET, identifier: 'parent' } } },
        out: { edges: { from: 'root', maxDistance: 1 } },
        ends: { nodes: { from: 'out' } },
        everything: { nodes: {} },
      },
      select: { kids: {}, out: {}, ends: {}, everything: {} },
    };
    const res = await query(body, scopedToken);
    expect(sorted(res.items.kids)).toEqual(['a', 'b']);
    expect(sorted(res.items.out)).toEqual(['e1', 'e4']);
    expect(sorted(res.items.ends)).toEqual(['a', 'b']);
    expect(ids(res.items.everything)).not.toContain('h1');
  });
});

describe('bad input', () => {
  const bad = async (body: unknown) => {
    const before = await h.post('/models/instances/list', { limit: 1000 });
    const res = await h.post('/models/instances/query', body);
    const message = errorMessage(res, 400);
    const after = await h.post('/models/instances/list', { limit: 1000 });
    expect(after.body).toEqual(before.body);
    return message;
  };
  const nodes = { nodes: {} };

  it('refuses references to unknown sets, cycles, and sets of the wrong kind', async () => {
    expect(await bad({ with: { a: { nodes: { from: 'nope' } } }, select: { a: {} } })).toMatch(/^with\.a\.nodes\.from: there is no result set expression "nope"/);
    expect(await bad({ with: { a: nodes }, select: { b: {} } })).toMatch(/^select\.b: there is no result set expression "b"/);
    expect(await bad({ with: { a: nodes }, select: { a: {} }, cursors: { zz: 'x' } })).toMatch(/^cursors\.zz: there is no result set/);
    expect(await bad({ with: { a: { nodes: { from: 'b' } }, b: { edges: { from: 'a' } } }, select: { a: {} } })).toMatch(/cycle: a -> b -> a/);
    expect(await bad({ with: { a: { nodes: { from: 'a' } } }, select: { a: {} } })).toMatch(/^with\.a\.nodes\.from: the result sets form a cycle: a -> a/);
    expect(await bad({ with: { a: nodes, b: { union: ['a', { intersection: ['c'] }] } }, select: { a: {} } })).toMatch(/^with\.b\.union\[1\]\.intersection\[0\]: there is no result set expression "c"/);
    expect(await bad({ with: { a: nodes, e: { edges: {} }, u: { union: ['a', 'e'] } }, select: { u: {} } })).toMatch(/^with\.u\.union: a set operation combines sets of one kind/);
    expect(await bad({ with: { a: { nodes: {}, edges: {} } }, select: { a: {} } })).toMatch(/^with\.a: expected exactly one of nodes, edges/);
    expect(await bad({ with: { a: nodes, u: { union: [{ union: ['a'], nodes: {} }] } }, select: { u: {} } })).toMatch(/^with\.u\.union\[0\]\.nodes: a nested set operation takes/);
    expect(await bad({ with: { a: nodes, u: { union: ['a'], postSort: [] } }, select: { u: {} } })).toMatch(/^with\.u\.postSort: /);
    expect(await bad({ with: { a: { nodes: {}, postSort: [] } }, select: { a: {} } })).toMatch(/^with\.a\.postSort: postSort orders edge traversals/);
    expect(await bad({ with: { a: { nodes: {}, except: ['a'] } }, select: { a: {} } })).toMatch(/^with\.a\.except: except belongs to set operations/);
    expect(await bad({ with: { e: { edges: {} }, a: { nodes: { from: 'e', through: { source: ASSET, identifier: 'parent' } } } }, select: { a: {} } })).toMatch(/^with\.a\.nodes\.through: through follows direct relations of nodes/);
    expect(await bad({ with: { r: nodes, a: { nodes: { from: 'r', through: { source: ASSET, identifier: 'name' } } } }, select: { a: {} } })).toMatch(/^with\.a\.nodes\.through\.identifier: "name" is not a direct relation/);
  });

  it('refuses limits over the maxima and too many sets', async () => {
    expect(await bad({ with: { a: { nodes: {}, limit: 10_001 } }, select: { a: {} } })).toMatch(/with\.a\.limit/);
    expect(await bad({ with: { a: nodes }, select: { a: { limit: 10_001 } } })).toMatch(/select\.a\.limit/);
    expect(await bad({ with: { a: { edges: { limitEach: 2001 } } }, select: { a: {} } })).toMatch(/with\.a\.edges\.limitEach/);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`s${i}`, nodes]));
    expect(await bad({ with: many, select: { s0: {} } })).toMatch(/^with/);
  });

  it('refuses filters and sorts on unknown properties, unknown parameters, unknown selected properties', async () => {
    expect(await bad({ with: { a: { nodes: { filter: { equals: { property: ['q', 'Asset/1', 'nope'], value: 1 } } } } }, select: { a: {} } })).toMatch(
      /^with\.a\.nodes\.filter\.equals\.property: the view q:Asset\/1 has no property "nope"/,
    );
    expect(await bad({ with: { a: { edges: { nodeFilter: { exists: { property: ['edge', 'startNode'] } } } } }, select: { a: {} } })).toMatch(/^with\.a\.edges\.nodeFilter\.exists\.property/);
    expect(await bad({ with: { a: { nodes: {}, sort: [{ property: ['q', 'Asset/1', 'nope'] }] } }, select: { a: {} } })).toMatch(/^with\.a\.sort\[0\]\.property/);
    expect(await bad({ with: { a: { nodes: { filter: { equals: { property: ['node', 'externalId'], value: { parameter: 'p' } } } } } }, select: { a: {} } })).toMatch(/the parameter "p" is not given/);
    expect(await bad({ with: { a: nodes }, select: { a: { sources: [{ source: ASSET, properties: ['nope'] }] } } })).toMatch(/^select\.a\.sources\[0\]\.properties\[0\]: the view q:Asset\/1 has no property "nope"/);
  });

  it('refuses bad cursors and cursors of another query', async () => {
    expect(await bad({ with: { a: nodes }, select: { a: {} }, cursors: { a: 'garbage' } })).toMatch(/^cursors\.a: not a cursor issued by this server/);
    expect(await bad({ with: { a: nodes, b: nodes }, select: { a: {} }, cursors: { b: 'garbage' } })).toMatch(/^cursors\.b: not a cursor issued by this server/);
    const page = await query({ with: { a: { nodes: {}, limit: 1 } }, select: { a: {} } });
    expect(await bad({ with: { a: { nodes: {}, limit: 2 } }, select: { a: {} }, cursors: { a: page.nextCursor.a } })).toMatch(/^cursors\.a: this cursor does not belong to this query/);
  });
});
