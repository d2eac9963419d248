/**
 * Instances keep to the caller's spaces (`dataModelInstancesAcl` in `spaceIdScope`), over HTTP: the findings
 * of a probe run as an attacker would, each against the answer of a principal that sees every space.
 * - Reads: a `nested` filter (and one on an edge's end) tests only visible nodes, in list, search, aggregate,
 *   query and sync; a maintained hierarchy's `root` and `path` show no hidden ancestor, in reads, filters,
 *   groups and `through`.
 * - Writes change nothing outside the write scope: a node with edges there is not deleted, a node with
 *   descendants there is not moved or deleted (403 naming only the request's node).
 * - Writes answer the same for a hidden node or space as for one that does not exist, uniqueness conflicts
 *   cannot be used to learn hidden values, and a cycle error names no hidden node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from '../support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from '../support/harness.js';

let h: Harness;
const tokens: Record<string, string> = {};
const ITEM = { type: 'view', space: 'sch', externalId: 'Item', version: '1' };
const ASSET = { type: 'view', space: 'cdf_cdm', externalId: 'CogniteAsset', version: 'v1' };
const P = (p: string) => ['sch', 'Item/1', p];
const A = (p: string) => ['cdf_cdm', 'CogniteAsset/v1', p];
const ref = (space: string, externalId: string) => ({ space, externalId });

type Who = 'admin' | 'reader' | 'writer';
const as = (who: Who, path: string, body: unknown): Promise<Response> => (who === 'admin' ? h.post(path, body) : h.request('POST', path, body, bearer(tokens[who])));

async function ok(path: string, body: unknown, who: Who = 'admin') {
  const res = await as(who, path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const item = (space: string, externalId: string, properties: Record<string, unknown>) => ({ instanceType: 'node', space, externalId, sources: [{ source: ITEM, properties }] });
const asset = (space: string, externalId: string, parent: { space: string; externalId: string } | null) => ({
  instanceType: 'node',
  space,
  externalId,
  sources: [{ source: ASSET, properties: { name: externalId, parent } }],
});
const names = (items: Array<{ space: string; externalId: string }>) => items.map((i) => `${i.space}:${i.externalId}`).sort();

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('reader', 'writer') });
  await ok('/models/spaces', { items: ['sch', 'alpha', 'beta', 'secret'].map((space) => ({ space })) });
  await ok('/models/containers', {
    items: [
      { space: 'sch', externalId: 'Item', properties: { code: { type: { type: 'text' } }, n: { type: { type: 'int32' } }, ref: { type: { type: 'direct' } } } },
      { space: 'sch', externalId: 'Tagged', properties: { tag: { type: { type: 'text' } } }, constraints: { uniqueTag: { constraintType: 'uniqueness', properties: ['tag'] } } },
      { space: 'sch', externalId: 'Pointer', properties: { to: { type: { type: 'direct', container: { type: 'container', space: 'sch', externalId: 'Item' } } } } },
      { space: 'sch', externalId: 'Serial', properties: { no: { type: { type: 'int64' }, autoIncrement: true } }, constraints: { uniqueNo: { constraintType: 'uniqueness', properties: ['no'] } } },
      { space: 'sch', externalId: 'Local', properties: { tag: { type: { type: 'text' } } }, constraints: { uniqueTag: { constraintType: 'uniqueness', properties: ['tag'], bySpace: true } } },
    ],
  });
  const mapped = (c: string, props: string[]) => Object.fromEntries(props.map((p) => [p, { container: { type: 'container', space: 'sch', externalId: c }, containerPropertyIdentifier: p }]));
  await ok('/models/views', { items: [{ space: 'sch', externalId: 'Item', version: '1', properties: mapped('Item', ['code', 'n', 'ref']) }] });
  await ok('/models/instances', {
    items: [
      item('secret', 's1', { code: 'TOP-SECRET', n: 7 }),
      item('alpha', 'a1', { code: 'a1', n: 1, ref: ref('secret', 's1') }),
      item('alpha', 'a2', { code: 'a2', n: 2, ref: ref('alpha', 'a1') }),
      { instanceType: 'edge', space: 'alpha', externalId: 'to-secret', type: ref('alpha', 'a1'), startNode: ref('secret', 's1'), endNode: ref('alpha', 'a2') },
    ],
  });
  const alpha = { spaceIdScope: { spaceIds: ['alpha'] } };
  const schema = capability('dataModelsAcl', ['READ']);
  tokens.reader = await namedClientToken(h, 'reader', [schema, capability('dataModelInstancesAcl', ['READ'], alpha)]);
  tokens.writer = await namedClientToken(h, 'writer', [
    schema,
    capability('dataModelInstancesAcl', ['READ', 'WRITE'], alpha),
    capability('dataModelInstancesAcl', ['READ'], { spaceIdScope: { spaceIds: ['beta'] } }),
  ]);
});
afterAll(() => h?.close());

/** Prefix probing of the hidden node's code through the relation `ref` of alpha:a1. */
const probe = { nested: { scope: P('ref'), filter: { prefix: { property: P('code'), value: 'TOP' } } } };
const nestedAny = { nested: { scope: P('ref'), filter: { matchAll: {} } } };

describe('a nested filter tests only nodes the caller sees', () => {
  it('in list, search and aggregate', async () => {
    for (const [filter, scoped, all] of [
      [probe, [], ['alpha:a1']],
      // The hidden node answers as a node that does not exist: alpha:a1 points at nothing.
      [nestedAny, ['alpha:a2'], ['alpha:a1', 'alpha:a2']],
    ] as const) {
      const list = { instanceType: 'node', filter: { and: [filter, { equals: { property: ['node', 'space'], value: 'alpha' } }] } };
      expect(names((await ok('/models/instances/list', list, 'reader')).items)).toEqual(scoped);
      expect(names((await ok('/models/instances/list', list)).items)).toEqual(all);
      const search = { view: ITEM, filter };
      expect(names((await ok('/models/instances/search', search, 'reader')).items)).toEqual(scoped);
      expect(names((await ok('/models/instances/search', search)).items).filter((n) => n.startsWith('alpha'))).toEqual(all);
      const aggregate = { view: ITEM, filter: { and: [filter, { equals: { property: ['node', 'space'], value: 'alpha' } }] }, aggregates: [{ count: {} }] };
      expect((await ok('/models/instances/aggregate', aggregate, 'reader')).items[0].aggregates[0].value).toBe(scoped.length);
      expect((await ok('/models/instances/aggregate', aggregate)).items[0].aggregates[0].value).toBe(all.length);
    }
  });

  it('in query (also through chained sets and traversals) and sync', async () => {
    const query = {
      with: {
        probed: { nodes: { filter: probe } },
        chained: { nodes: { from: 'probed', through: { source: ITEM, identifier: 'ref' }, direction: 'inwards', filter: nestedAny } },
        edges: { edges: { from: 'all', direction: 'inwards', nodeFilter: probe } },
        all: { nodes: { filter: { equals: { property: ['node', 'space'], value: 'alpha' } } } },
      },
      select: { probed: {}, chained: {}, edges: {} },
    };
    const scoped = await ok('/models/instances/query', query, 'reader');
    expect([scoped.items.probed, scoped.items.chained, scoped.items.edges].map(names)).toEqual([[], [], []]);
    const all = await ok('/models/instances/query', query);
    expect([all.items.probed, all.items.chained].map(names)).toEqual([['alpha:a1'], ['alpha:a2']]);
    const sync = { with: { s: { nodes: { filter: probe } } }, select: { s: {} } };
    expect((await ok('/models/instances/sync', sync, 'reader')).items.s).toEqual([]);
    expect(names((await ok('/models/instances/sync', sync)).items.s)).toEqual(['alpha:a1']);
  });

  it('on an edge end, as on a node that does not exist; the end as stored still filters', async () => {
    const nested = { instanceType: 'edge', filter: { nested: { scope: ['edge', 'startNode'], filter: { matchAll: {} } } } };
    expect((await ok('/models/instances/list', nested, 'reader')).items).toEqual([]);
    expect(names((await ok('/models/instances/list', nested)).items)).toEqual(['alpha:to-secret']);
    // The edge shows its start node as stored, so a filter on that value is no probe.
    const byEnd = { instanceType: 'edge', filter: { equals: { property: ['edge', 'startNode'], value: ref('secret', 's1') } } };
    expect(names((await ok('/models/instances/list', byEnd, 'reader')).items)).toEqual(['alpha:to-secret']);
  });
});

describe('the asset hierarchy as a scoped reader sees it', () => {
  // secret:top <- alpha:mid <- alpha:leaf <- secret:deep <- alpha:under
  beforeAll(async () => {
    await ok('/models/instances', {
      items: [
        asset('secret', 'top', null),
        asset('alpha', 'mid', ref('secret', 'top')),
        asset('alpha', 'leaf', ref('alpha', 'mid')),
        asset('secret', 'deep', ref('alpha', 'leaf')),
        asset('alpha', 'under', ref('secret', 'deep')),
      ],
    });
  });

  const hierarchy = async (who: Who, filter?: unknown) => {
    const body = await ok('/models/instances/list', { sources: [{ source: ASSET }], filter: { and: [{ hasData: [ASSET] }, ...(filter ? [filter] : [])] } }, who);
    return Object.fromEntries(
      body.items.map((i: any) => {
        const p = i.properties.cdf_cdm['CogniteAsset/v1'];
        return [`${i.space}:${i.externalId}`, { root: `${p.root.space}:${p.root.externalId}`, path: p.path.map((r: any) => `${r.space}:${r.externalId}`) }];
      }),
    );
  };

  it('root and path start below the last hidden ancestor', async () => {
    expect(await hierarchy('reader')).toEqual({
      'alpha:mid': { root: 'alpha:mid', path: ['alpha:mid'] },
      'alpha:leaf': { root: 'alpha:mid', path: ['alpha:mid', 'alpha:leaf'] },
      'alpha:under': { root: 'alpha:under', path: ['alpha:under'] },
    });
    expect((await hierarchy('admin'))['alpha:under']).toEqual({ root: 'secret:top', path: ['secret:top', 'alpha:mid', 'alpha:leaf', 'secret:deep', 'alpha:under'] });
  });

  it('filters, groups and through follow what it sees', async () => {
    const matching = async (filter: unknown) => Object.keys(await hierarchy('reader', filter)).sort();
    expect(await matching({ equals: { property: A('root'), value: ref('secret', 'top') } })).toEqual([]);
    expect(await matching({ equals: { property: A('root'), value: ref('alpha', 'mid') } })).toEqual(['alpha:leaf', 'alpha:mid']);
    expect(await matching({ containsAny: { property: A('path'), values: [ref('secret', 'top'), ref('secret', 'deep')] } })).toEqual([]);
    expect(await matching({ containsAny: { property: A('path'), values: [ref('alpha', 'leaf')] } })).toEqual(['alpha:leaf']);
    expect(await matching({ equals: { property: A('path'), value: [ref('alpha', 'mid'), ref('alpha', 'leaf')] } })).toEqual(['alpha:leaf']);
    expect(await matching({ prefix: { property: A('path'), value: [ref('alpha', 'mid')] } })).toEqual(['alpha:leaf', 'alpha:mid']);
    expect(await matching({ nested: { scope: A('root'), filter: { matchAll: {} } } })).toEqual(['alpha:leaf', 'alpha:mid', 'alpha:under']);
    const sorted = await ok('/models/instances/list', { filter: { hasData: [ASSET] }, sort: [{ property: A('root'), direction: 'descending' }, { property: ['node', 'externalId'] }] }, 'reader');
    expect(sorted.items.map((i: any) => i.externalId)).toEqual(['under', 'leaf', 'mid']);

    const groups = await ok('/models/instances/aggregate', { view: ASSET, groupBy: ['root'], aggregates: [{ count: {} }] }, 'reader');
    expect(groups.items.map((g: any) => [`${g.group.root.space}:${g.group.root.externalId}`, g.aggregates[0].value]).sort()).toEqual([
      ['alpha:mid', 2],
      ['alpha:under', 1],
    ]);
    const query = {
      with: {
        leaf: { nodes: { filter: { instanceReferences: [ref('alpha', 'leaf'), ref('alpha', 'under')] } } },
        roots: { nodes: { from: 'leaf', through: { source: ASSET, identifier: 'root' }, direction: 'outwards' } },
        under: { nodes: { from: 'leaf', through: { source: ASSET, identifier: 'path' }, direction: 'inwards' } },
      },
      select: { roots: {}, under: {} },
    };
    const got = await ok('/models/instances/query', query, 'reader');
    expect(names(got.items.roots)).toEqual(['alpha:mid', 'alpha:under']);
    expect(names(got.items.under)).toEqual(['alpha:leaf', 'alpha:under']);
  });

  it('a cycle through hidden nodes is refused without naming them', async () => {
    const res = await as('writer', '/models/instances', { items: [asset('alpha', 'mid', ref('alpha', 'under'))] });
    const message = errorMessage(res, 400);
    expect(message).toMatch(/^items\[0\]: the parent of alpha:mid would make a cycle in the hierarchy of cdf_cdm:CogniteAsset/);
    expect(message).not.toMatch(/secret|deep|top/);
    // The administrator is told the whole cycle.
    expect(errorMessage(await h.post('/models/instances', { items: [asset('alpha', 'mid', ref('alpha', 'under'))] }), 400)).toMatch(/alpha:mid -> alpha:under -> secret:deep -> alpha:leaf -> alpha:mid$/);
  });

  it('moving or deleting a node with descendants outside the write scope is a 403 that changes nothing', async () => {
    const before = await hierarchy('admin');
    const move = await as('writer', '/models/instances', { items: [asset('alpha', 'leaf', null)] });
    expect(errorMessage(move, 403)).toBe(
      'items[0]: the node alpha:leaf has descendants in the hierarchy of cdf_cdm:CogniteAsset in a space outside the scope of dataModelInstancesAcl:WRITE_PROPERTIES (or WRITE) ' +
        '(granted only in spaceIdScope ["alpha"]); this request would change their root and path, and a request changes nothing outside its scope',
    );
    const del = await as('writer', '/models/instances/delete', { items: [{ instanceType: 'node', space: 'alpha', externalId: 'leaf' }] });
    expect(errorMessage(del, 403)).toMatch(/^items\[0\]: the node alpha:leaf has descendants in the hierarchy of cdf_cdm:CogniteAsset in a space outside/);
    expect(await hierarchy('admin')).toEqual(before);
    // A node whose descendants are all in the write scope moves, and they with it.
    const moved = await as('writer', '/models/instances', { items: [asset('alpha', 'under', ref('alpha', 'mid'))] });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await hierarchy('reader'))['alpha:under']).toEqual({ root: 'alpha:mid', path: ['alpha:mid', 'alpha:under'] });
  });
});

describe('a write changes nothing outside the write scope', () => {
  it('a node with edges in another space is not deleted (403), the edges neither', async () => {
    await ok('/models/instances', {
      items: [
        { instanceType: 'node', space: 'alpha', externalId: 'x' },
        { instanceType: 'node', space: 'alpha', externalId: 'y' },
        { instanceType: 'edge', space: 'secret', externalId: 'hidden-edge', type: ref('alpha', 'x'), startNode: ref('alpha', 'x'), endNode: ref('alpha', 'y') },
        { instanceType: 'edge', space: 'beta', externalId: 'seen-edge', type: ref('alpha', 'x'), startNode: ref('alpha', 'y'), endNode: ref('alpha', 'x') },
        { instanceType: 'edge', space: 'alpha', externalId: 'own-edge', type: ref('alpha', 'x'), startNode: ref('alpha', 'x'), endNode: ref('alpha', 'y') },
      ],
    });
    const edges = [
      { instanceType: 'edge', space: 'secret', externalId: 'hidden-edge' },
      { instanceType: 'edge', space: 'beta', externalId: 'seen-edge' },
      { instanceType: 'edge', space: 'alpha', externalId: 'own-edge' },
    ];
    const x = { instanceType: 'node', space: 'alpha', externalId: 'x' };
    const y = { instanceType: 'node', space: 'alpha', externalId: 'y' };
    const expected = (node: string) =>
      `the node alpha:${node} has edges in a space outside the scope of dataModelInstancesAcl:WRITE (granted only in spaceIdScope ["alpha"]); deleting it would delete them, and a request changes nothing outside its scope`;
    expect(errorMessage(await as('writer', '/models/instances/delete', { items: [x] }), 403)).toBe(`items[0]: ${expected('x')}`);
    expect(errorMessage(await as('writer', '/models/instances', { items: [], delete: [y] }), 403)).toBe(`delete[0]: ${expected('y')}`);
    expect(names((await ok('/models/instances/byids', { items: [x, y, ...edges] })).items)).toEqual(['alpha:own-edge', 'alpha:x', 'alpha:y', 'beta:seen-edge', 'secret:hidden-edge']);
    // The administrator deletes a node with its edges, wherever they are.
    expect(names((await ok('/models/instances/delete', { items: [x] })).items)).toEqual(['alpha:x']);
    expect(names((await ok('/models/instances/byids', { items: [x, y, ...edges] })).items)).toEqual(['alpha:y']);
  });
});

describe('writes answer the same for hidden and absent nodes and spaces', () => {
  /** The writer's answer with the name of the node or space the request named replaced. */
  const answer = async (body: unknown, name: string) => {
    const res = await as('writer', '/models/instances', body);
    return { status: res.status, body: JSON.parse(JSON.stringify(res.body).replaceAll(name, 'NAME')) };
  };
  const hidden = ref('secret', 's1');
  const absent = ref('secret', 'nothing');

  it('for a direct relation (also one whose target must have data in a container), a type and an edge end, with and without auto-creation', async () => {
    const requests = (target: { space: string; externalId: string }) => [
      { items: [item('alpha', 'w1', { ref: target })] },
      { items: [item('alpha', 'w1', { ref: target })], autoCreateDirectRelations: false },
      { items: [{ instanceType: 'node', space: 'alpha', externalId: 'w6', sources: [{ source: { type: 'container', space: 'sch', externalId: 'Pointer' }, properties: { to: target } }] }] },
      { items: [{ instanceType: 'node', space: 'alpha', externalId: 'w2', type: target }] },
      { items: [{ instanceType: 'edge', space: 'alpha', externalId: 'w3', type: ref('alpha', 'a1'), startNode: target, endNode: ref('alpha', 'a1') }] },
      { items: [{ instanceType: 'edge', space: 'alpha', externalId: 'w3', type: ref('alpha', 'a1'), startNode: ref('alpha', 'a1'), endNode: target }], autoCreateEndNodes: true },
    ];
    const [ofHidden, ofAbsent] = [requests(hidden), requests(absent)];
    for (let i = 0; i < ofHidden.length; i++) {
      const seen = await answer(ofHidden[i], hidden.externalId);
      expect(seen.status, JSON.stringify(seen.body)).toBeGreaterThanOrEqual(400);
      expect(seen, JSON.stringify(ofHidden[i])).toEqual(await answer(ofAbsent[i], absent.externalId));
    }
  });

  it('for a space that exists and one that does not', async () => {
    for (const body of [
      (space: string) => ({ items: [{ instanceType: 'node', space, externalId: 'n' }] }),
      (space: string) => ({ items: [item('alpha', 'w4', { ref: ref(space, 'n') })] }),
      (space: string) => ({ items: [{ instanceType: 'edge', space: 'alpha', externalId: 'w5', type: ref('alpha', 'a1'), startNode: ref(space, 'n'), endNode: ref('alpha', 'a1') }], autoCreateStartNodes: true }),
    ]) {
      const seen = await answer(body('secret'), 'secret');
      expect(seen.status).toBe(403);
      expect(seen).toEqual(await answer(body('nowhere'), 'nowhere'));
    }
  });
});

describe('uniqueness constraints', () => {
  it('across spaces, a scoped principal may not set their values, taken or not', async () => {
    await ok('/models/instances', { items: [{ instanceType: 'node', space: 'secret', externalId: 't1', sources: [{ source: { type: 'container', space: 'sch', externalId: 'Tagged' }, properties: { tag: 'T-1' } }] }] });
    const tagged = (externalId: string, tag: string | null) => ({
      items: [{ instanceType: 'node', space: 'alpha', externalId, sources: [{ source: { type: 'container', space: 'sch', externalId: 'Tagged' }, properties: { tag } }] }],
    });
    const taken = errorMessage(await as('writer', '/models/instances', tagged('t2', 'T-1')), 403);
    expect(taken).toMatch(/^items\[0\]: the uniqueness constraint "uniqueTag" of the container sch:Tagged holds across all spaces, and this principal sees instances only in spaceIdScope \["alpha","beta"\]/);
    expect(errorMessage(await as('writer', '/models/instances', tagged('t2', 'T-2')), 403)).toBe(taken);
    // No value takes nothing.
    expect((await as('writer', '/models/instances', tagged('t2', null))).status).toBe(200);
    // The administrator is told of the conflict.
    expect(errorMessage(await h.post('/models/instances', tagged('t3', 'T-1')), 409)).toMatch(/uniqueTag/);
  });

  it('the numbers the service gives an auto-incremented property are not the principal’s to choose, and pass', async () => {
    const serial = (externalId: string, properties: Record<string, unknown>) => ({
      items: [{ instanceType: 'node', space: 'alpha', externalId, sources: [{ source: { type: 'container', space: 'sch', externalId: 'Serial' }, properties }] }],
    });
    await ok('/models/instances', { items: [{ ...serial('s', {}).items[0], space: 'secret' }] });
    expect((await as('writer', '/models/instances', { items: [{ instanceType: 'node', space: 'alpha', externalId: 'n1', sources: [{ source: { type: 'container', space: 'sch', externalId: 'Serial' } }] }] })).status).toBe(200);
    expect(errorMessage(await as('writer', '/models/instances', serial('n2', { no: 1 })), 403)).toMatch(/uniqueNo/);
  });

  it('by space, they hold within the caller’s own spaces as usual', async () => {
    const local = (space: string, externalId: string) => ({
      items: [{ instanceType: 'node', space, externalId, sources: [{ source: { type: 'container', space: 'sch', externalId: 'Local' }, properties: { tag: 'L-1' } }] }],
    });
    await ok('/models/instances', local('secret', 'l1'));
    expect((await as('writer', '/models/instances', local('alpha', 'l2'))).status).toBe(200);
    expect(errorMessage(await as('writer', '/models/instances', local('alpha', 'l3')), 409)).toMatch(/uniqueTag/);
  });
});
