/**
 * A principal that reads instances in one space gets, from a store holding two, exactly the answers a store
 * of its space alone would give: random graphs of nodes and edges spread over the spaces "pa" (in its scope)
 * and "ph" (hidden), with direct relations and edges crossing between them, and random filters (`nested`
 * through the relations and the edges' ends, `hasData`, `instanceReferences`, values). Every answer of list,
 * by ids, search, aggregate (count and grouped values), query (chained sets and traversals) and sync must be
 * what the in-memory evaluators (test/support/dm-evaluator.ts, graph-evaluator.ts) give for the instances of
 * "pa" alone; the same requests by a principal that sees both spaces must give what they give for all of them.
 */
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from '../support/auth.js';
import { dmFilter, type DmInstance, type DmWorld, type Filter } from '../support/dm-evaluator.js';
import { evaluateSets } from '../support/graph-evaluator.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let scoped: string;
const S = 'ps';
const NV = { type: 'view', space: S, externalId: 'N', version: '1' };
const EV = { type: 'view', space: S, externalId: 'E', version: '1' };
const MC = { type: 'container', space: S, externalId: 'M' };
const NC = { type: 'container', space: S, externalId: 'N' };
const N = (p: string) => [S, 'N/1', p];
const W = [S, 'E/1', 'w'];
const SPACES = ['pa', 'ph'];
const IN_SPACES = (kind: 'node' | 'edge') => ({ in: { property: [kind, 'space'], values: SPACES } });

async function ok(path: string, body: unknown, token?: string) {
  const res = token ? await h.request('POST', path, body, bearer(token)) : await h.post(path, body);
  expect(res.status, `${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('pa-reader') });
  await ok('/models/spaces', { items: [S, ...SPACES].map((space) => ({ space })) });
  await ok('/models/containers', {
    items: [
      { space: S, externalId: 'N', properties: { val: { type: { type: 'int32' } }, code: { type: { type: 'text' } }, next: { type: { type: 'direct' } }, refs: { type: { type: 'direct', list: true } } } },
      { space: S, externalId: 'M', properties: { flag: { type: { type: 'boolean' } } } },
      { space: S, externalId: 'E', usedFor: 'edge', properties: { w: { type: { type: 'int32' } } } },
    ],
  });
  const mapped = (c: string, props: string[]) => Object.fromEntries(props.map((p) => [p, { container: { type: 'container', space: S, externalId: c }, containerPropertyIdentifier: p }]));
  await ok('/models/views', {
    items: [
      { space: S, externalId: 'N', version: '1', properties: mapped('N', ['val', 'code', 'next', 'refs']) },
      { space: S, externalId: 'E', version: '1', properties: mapped('E', ['w']) },
    ],
  });
  // The edges' type, in a space neither principal's answers are about.
  await ok('/models/instances', { items: [{ instanceType: 'node', space: S, externalId: 'type' }] });
  scoped = await namedClientToken(h, 'pa-reader', [capability('dataModelsAcl', ['READ']), capability('dataModelInstancesAcl', ['READ'], { spaceIdScope: { spaceIds: ['pa'] } })]);
});
afterAll(() => h?.close());

interface Graph {
  nodes: Array<{ hidden: boolean; val: number | null; code: string | null; next: number | null; refs: number[]; flag: boolean | null }>;
  edges: Array<{ hidden: boolean; s: number; t: number; w: number | null }>;
}

const graphArb: Arbitrary<Graph> = fc.integer({ min: 2, max: 7 }).chain((n) =>
  fc.record({
    nodes: fc.array(
      fc.record({
        hidden: fc.boolean(),
        val: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
        code: fc.option(fc.constantFrom('TOP-1', 'TOP-2', 'low', 'x'), { nil: null }),
        next: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: null }),
        refs: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: 2 }),
        flag: fc.option(fc.boolean(), { nil: null }),
      }),
      { minLength: n, maxLength: n },
    ),
    edges: fc.array(fc.record({ hidden: fc.boolean(), s: fc.integer({ min: 0, max: n - 1 }), t: fc.integer({ min: 0, max: n - 1 }), w: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }) }), {
      maxLength: 8,
    }),
  }),
);

const someNode = fc.record({ space: fc.constantFrom(...SPACES), externalId: fc.constantFrom('n0', 'n1', 'n2', 'n3', 'n9') });

/** Filters on nodes: values, relations (also `nested` through them, to any depth the size allows), hasData, references. */
const nodeFilter: Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(
      fc.record({ range: fc.record({ property: fc.constant(N('val')), gte: fc.integer({ min: 0, max: 4 }) }) }),
      fc.record({ in: fc.record({ property: fc.constant(N('val')), values: fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 3 }) }) }),
      fc.record({ prefix: fc.record({ property: fc.constant(N('code')), value: fc.constantFrom('TOP', 'TOP-1', 'l', '') }) }),
      fc.record({ exists: fc.record({ property: fc.constantFrom(N('next'), N('code'), [S, 'M', 'flag']) }) }),
      fc.record({ equals: fc.record({ property: fc.constant(N('next')), value: someNode }) }),
      fc.record({ containsAny: fc.record({ property: fc.constant(N('refs')), values: fc.array(someNode, { minLength: 1, maxLength: 2 }) }) }),
      fc.record({ hasData: fc.constantFrom([NC], [MC], [NV], [NC, MC]) }),
      fc.record({ instanceReferences: fc.array(someNode, { minLength: 1, maxLength: 3 }) }),
    ),
    fc.record({ nested: fc.record({ scope: fc.constant(N('next')), filter: tie('f') }) }),
    fc.record({ and: fc.array(tie('f'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ or: fc.array(tie('f'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ not: tie('f') }),
  ),
})).f;

/** Filters on edges: their weight, references, and `nested` through their ends. */
const edgeFilter: Arbitrary<Filter> = fc.oneof(
  fc.record({ range: fc.record({ property: fc.constant(W), gte: fc.integer({ min: 0, max: 4 }) }) }),
  fc.record({ nested: fc.record({ scope: fc.constantFrom(['edge', 'startNode'], ['edge', 'endNode']), filter: nodeFilter }) }),
  fc.record({ instanceReferences: fc.array(fc.record({ space: fc.constantFrom(...SPACES), externalId: fc.constantFrom('e0', 'e1', 'e2') }), { minLength: 1, maxLength: 2 }) }),
  fc.record({ not: fc.record({ nested: fc.record({ scope: fc.constant(['edge', 'endNode']), filter: nodeFilter }) }) }),
);

const caseArb = fc.record({
  graph: graphArb,
  nodes: nodeFilter,
  inner: nodeFilter,
  edges: edgeFilter,
  through: fc.constantFrom('outwards' as const, 'inwards' as const),
  direction: fc.constantFrom('outwards' as const, 'inwards' as const),
  maxDistance: fc.integer({ min: 1, max: 3 }),
  chainTo: fc.constantFrom('source' as const, 'destination' as const),
});

/** The graph as apply items, and as the evaluators' world. */
function worldOf(g: Graph): { world: DmWorld; items: Array<Record<string, unknown>> } {
  const spaceOf = (hidden: boolean) => (hidden ? 'ph' : 'pa');
  const ref = (i: number) => ({ space: spaceOf(g.nodes[i].hidden), externalId: `n${i}` });
  const base = { version: 1, createdTime: 0, lastUpdatedTime: 0 };
  const instances: DmInstance[] = [];
  const items: Array<Record<string, unknown>> = [];
  g.nodes.forEach((n, i) => {
    const props: Record<string, unknown> = {};
    if (n.val !== null) props.val = n.val;
    if (n.code !== null) props.code = n.code;
    if (n.next !== null) props.next = ref(n.next);
    if (n.refs.length) props.refs = n.refs.map(ref);
    const containers: Record<string, Record<string, unknown>> = {};
    const sources: unknown[] = [];
    if (Object.keys(props).length) {
      containers[`${S}:N`] = props;
      sources.push({ source: NV, properties: props });
    }
    if (n.flag !== null) {
      containers[`${S}:M`] = { flag: n.flag };
      sources.push({ source: MC, properties: { flag: n.flag } });
    }
    const id = { space: spaceOf(n.hidden), externalId: `n${i}` };
    instances.push({ ...base, ...id, instanceType: 'node', containers });
    items.push({ instanceType: 'node', ...id, ...(sources.length ? { sources } : {}) });
  });
  g.edges.forEach((e, i) => {
    const id = { space: spaceOf(e.hidden), externalId: `e${i}` };
    const ends = { type: { space: S, externalId: 'type' }, startNode: ref(e.s), endNode: ref(e.t) };
    const props = e.w === null ? undefined : { w: e.w };
    instances.push({ ...base, ...id, instanceType: 'edge', ...ends, containers: props ? { [`${S}:E`]: props } : {} });
    items.push({ instanceType: 'edge', ...id, ...ends, ...(props ? { sources: [{ source: EV, properties: props }] } : {}) });
  });
  const world: DmWorld = {
    containers: {
      [`${S}:N`]: { val: { type: 'int32' }, code: { type: 'text' }, next: { type: 'direct' }, refs: { type: 'direct', list: true } },
      [`${S}:M`]: { flag: { type: 'boolean' } },
      [`${S}:E`]: { w: { type: 'int32' } },
    },
    views: {
      [`${S}:N/1`]: { properties: { val: [`${S}:N`, 'val'], code: [`${S}:N`, 'code'], next: [`${S}:N`, 'next'], refs: [`${S}:N`, 'refs'] } },
      [`${S}:E/1`]: { properties: { w: [`${S}:E`, 'w'] } },
    },
    instances,
  };
  return { world, items };
}

type Case = typeof caseArb extends Arbitrary<infer T> ? T : never;
const key = (i: { space: string; externalId: string }) => `${i.space}:${i.externalId}`;
const keys = (items: ReadonlyArray<{ space: string; externalId: string }>) => items.map(key).sort();
const ofKind = (instances: readonly DmInstance[], kind: 'node' | 'edge') => instances.filter((i) => i.instanceType === kind);

/** Every operation's answer for `token` (the administrator when absent) against the evaluators over `world`. */
async function check(c: Case, world: DmWorld, token?: string) {
  const nodes = (f: Filter) => ofKind(dmFilter(world, f), 'node');
  const edges = (f: Filter) => ofKind(dmFilter(world, f), 'edge');
  const context = JSON.stringify({ nodes: c.nodes, inner: c.inner, edges: c.edges, token: token ? 'scoped' : 'all' });
  const nodeFilter = { and: [c.nodes, IN_SPACES('node')] };

  const list = await ok('/models/instances/list', { instanceType: 'node', filter: nodeFilter, limit: 1000 }, token);
  expect(keys(list.items), `list ${context}`).toEqual(keys(nodes(c.nodes)));
  const edgeList = await ok('/models/instances/list', { instanceType: 'edge', filter: { and: [c.edges, IN_SPACES('edge')] }, limit: 1000 }, token);
  expect(keys(edgeList.items), `edge list ${context}`).toEqual(keys(edges(c.edges)));

  const everything = c.graph.nodes.flatMap((_, i) => SPACES.map((space) => ({ instanceType: 'node', space, externalId: `n${i}` })));
  const byIds = await ok('/models/instances/byids', { items: everything, sources: [{ source: NV }] }, token);
  const shown = (i: any) => [key(i), i.properties[S]['N/1']];
  expect(byIds.items.map(shown).sort(), `byids ${context}`).toEqual(nodes({ hasData: [NV] }).map((i) => [key(i), i.containers[`${S}:N`]]).sort());

  const inView = nodes({ and: [c.nodes, { hasData: [NV] }] });
  const search = await ok('/models/instances/search', { view: NV, filter: c.nodes, limit: 1000 }, token);
  expect(keys(search.items.filter((i: any) => SPACES.includes(i.space))), `search ${context}`).toEqual(keys(inView));
  const counted = await ok('/models/instances/aggregate', { view: NV, filter: nodeFilter, aggregates: [{ count: {} }] }, token);
  expect(counted.items[0].aggregates[0].value, `count ${context}`).toBe(inView.length);
  const grouped = await ok('/models/instances/aggregate', { view: NV, filter: nodeFilter, groupBy: ['code'], aggregates: [{ count: {} }] }, token);
  const codes = new Map<string, number>();
  for (const i of inView) {
    const code = i.containers[`${S}:N`]?.code as string | undefined;
    if (code !== undefined) codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  expect(grouped.items.map((g: any) => [g.group.code, g.aggregates[0].value]).sort(), `values ${context}`).toEqual([...codes].sort());

  const withSets = {
    s0: { nodes: { filter: nodeFilter }, limit: 100 },
    s1: { nodes: { from: 's0', through: { source: NV, identifier: 'next' }, direction: c.through }, limit: 100 },
    s2: { edges: { from: 's0', direction: c.direction, maxDistance: c.maxDistance, nodeFilter: c.inner, filter: c.edges }, limit: 100 },
    s3: { nodes: { from: 's2', chainTo: c.chainTo }, limit: 100 },
    s4: { nodes: { from: 's1', through: { source: NV, identifier: 'refs' }, direction: 'outwards', filter: c.inner }, limit: 100 },
  };
  const order = Object.keys(withSets);
  const expected = evaluateSets(world, withSets, order);
  const query = await ok('/models/instances/query', { with: withSets, select: Object.fromEntries(order.map((n) => [n, {}])) }, token);
  for (const name of order) expect(keys(query.items[name]), `query ${name} ${context}`).toEqual(keys(expected[name].page));

  const feeds = { nodes: { nodes: { filter: nodeFilter } }, edges: { edges: { filter: { and: [c.edges, IN_SPACES('edge')] } } } };
  const synced: Record<string, Array<{ space: string; externalId: string }>> = { nodes: [], edges: [] };
  let cursors: Record<string, string> | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await ok('/models/instances/sync', { with: feeds, select: { nodes: {}, edges: {} }, ...(cursors ? { cursors } : {}) }, token);
    synced.nodes.push(...res.items.nodes);
    synced.edges.push(...res.items.edges);
    cursors = res.nextCursor;
    if (res.items.nodes.length === 0 && res.items.edges.length === 0) break;
  }
  expect(keys(synced.nodes), `sync nodes ${context}`).toEqual(keys(nodes(c.nodes)));
  expect(keys(synced.edges), `sync edges ${context}`).toEqual(keys(edges(c.edges)));
}

describe('a principal scoped to one space sees what a store of that space alone would hold', () => {
  it('in every read of instances, with random graphs and filters crossing the spaces', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { world, items } = worldOf(c.graph);
        await ok('/models/instances', { items, autoCreateDirectRelations: false });
        try {
          await check(c, world);
          await check(c, { ...world, instances: world.instances.filter((i) => i.space === 'pa') }, scoped);
        } finally {
          await ok('/models/instances/delete', { items: items.map((i) => ({ instanceType: i.instanceType, space: i.space, externalId: i.externalId })) });
        }
      }),
      { numRuns: 60, seed: 27 },
    );
  });
});
