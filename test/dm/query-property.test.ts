/**
 * Query traversals on the server against the in-memory evaluator (test/support/graph-evaluator.ts): random
 * small graphs (nodes with a direct relation and a list of them, edges with a weight), each written to a
 * space of its own, and random chains of result sets (`through` either way, edge traversals with
 * `maxDistance`, `direction`, filters and `limitEach`, nodes from edge ends, edges from edges, and a set
 * operation over them). Every set's page must be the evaluator's, for each page of the root set, and paging
 * the last set through its cursors must give all its instances. Some instances are in a second space: a
 * principal that may not read it gets what the evaluator gives for the graph without them.
 */
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DmInstance, DmWorld } from '../support/dm-evaluator.js';
import { evaluateSets } from '../support/graph-evaluator.js';
import { bearer, capability, namedClients, namedClientToken } from '../support/auth.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
/** A principal that reads instances in the space "g" only: those in "gh" are missing to it. */
let scoped: string;
const S = 'gs';
const NV = { type: 'view', space: S, externalId: 'N', version: '1' };
const EV = { type: 'view', space: S, externalId: 'E', version: '1' };
const VAL = [S, 'N/1', 'val'];
const W = [S, 'E/1', 'w'];
const EDGE_TYPE = { space: S, externalId: 't' };

async function ok(path: string, body: unknown, token?: string) {
  const res = token ? await h.request('POST', path, body, bearer(token)) : await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('g-only') });
  await ok('/models/spaces', { items: [{ space: S }, { space: 'g' }, { space: 'gh' }] });
  const C = (externalId: string) => ({ type: 'container', space: S, externalId });
  await ok('/models/containers', {
    items: [
      { space: S, externalId: 'N', properties: { val: { type: { type: 'int32' } }, next: { type: { type: 'direct' } }, refs: { type: { type: 'direct', list: true } } } },
      { space: S, externalId: 'E', usedFor: 'edge', properties: { w: { type: { type: 'int32' } } } },
    ],
  });
  await ok('/models/views', {
    items: [
      { ...NV, type: undefined, properties: Object.fromEntries(['val', 'next', 'refs'].map((p) => [p, { container: C('N'), containerPropertyIdentifier: p }])) },
      { ...EV, type: undefined, properties: { w: { container: C('E'), containerPropertyIdentifier: 'w' } } },
    ].map(({ type: _, ...v }) => v),
  });
  await ok('/models/instances', { items: [{ instanceType: 'node', ...EDGE_TYPE }] });
  scoped = await namedClientToken(h, 'g-only', [capability('dataModelsAcl', ['READ']), capability('dataModelInstancesAcl', ['READ'], { spaceIdScope: { spaceIds: ['g'] } })]);
});
afterAll(() => h?.close());

interface Graph {
  nodes: Array<{ val: number | null; next: number | null; refs: number[]; hidden: boolean }>;
  edges: Array<{ s: number; t: number; w: number | null; hidden: boolean }>;
}

const graphArb: Arbitrary<Graph> = fc.integer({ min: 2, max: 7 }).chain((n) =>
  fc.record({
    nodes: fc.array(
      fc.record({
        val: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
        next: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: null }),
        refs: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { maxLength: 3 }),
        hidden: fc.integer({ min: 0, max: 3 }).map((x) => x === 0),
      }),
      { minLength: n, maxLength: n },
    ),
    edges: fc.array(fc.record({ s: fc.integer({ min: 0, max: n - 1 }), t: fc.integer({ min: 0, max: n - 1 }), w: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }), hidden: fc.integer({ min: 0, max: 5 }).map((x) => x === 0) }), {
      maxLength: 12,
    }),
  }),
);

type Step =
  | { kind: 'through'; prop: 'next' | 'refs'; direction?: 'outwards' | 'inwards' }
  | { kind: 'plain' }
  | { kind: 'edges'; direction?: 'outwards' | 'inwards'; maxDistance?: number; filterW?: number; nodeVal?: number; termVal?: number; limitEach?: number; chainTo?: 'source' | 'destination' }
  | { kind: 'ends'; chainTo?: 'source' | 'destination' };

const dir = fc.option(fc.constantFrom('outwards' as const, 'inwards' as const), { nil: undefined });
const small = fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined });
const stepArb: Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('through' as const), prop: fc.constantFrom('next' as const, 'refs' as const), direction: dir }),
  fc.record({ kind: fc.constant('plain' as const) }),
  fc.record({
    kind: fc.constant('edges' as const),
    direction: dir,
    maxDistance: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    filterW: small,
    nodeVal: small,
    termVal: small,
    limitEach: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined, freq: 2 }),
    chainTo: fc.option(fc.constantFrom('source' as const, 'destination' as const), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('ends' as const), chainTo: fc.option(fc.constantFrom('source' as const, 'destination' as const), { nil: undefined }) }),
);
const sortArb = fc.record({ on: fc.boolean(), direction: fc.constantFrom('ascending' as const, 'descending' as const), nullsFirst: fc.boolean() });
const setArb = fc.record({ step: stepArb, limit: fc.integer({ min: 1, max: 6 }), sort: sortArb });
const operationArb = fc.record({
  op: fc.constantFrom('union', 'unionAll', 'intersection'),
  /** Picks among the sets of the kind of the last set: members (at least one), and one set to leave out. */
  members: fc.uniqueArray(fc.nat(), { minLength: 1, maxLength: 3 }),
  except: fc.option(fc.nat(), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 6 }),
});
const queryArb = fc.record({
  rootVal: small,
  rootLimit: fc.integer({ min: 1, max: 6 }),
  rootSort: sortArb,
  sets: fc.array(setArb, { minLength: 1, maxLength: 3 }),
  operation: fc.option(operationArb, { nil: undefined }),
});
type Query = typeof queryArb extends Arbitrary<infer T> ? T : never;

const gte = (property: string[], k: number | undefined) => (k === undefined ? undefined : { range: { property, gte: k } });

/** The request's `with`, each set of nodes or edges as its step makes it, and their names in order. */
function buildWith(space: string, q: Query): { with: Record<string, any>; order: string[] } {
  const out: Record<string, any> = {};
  const sortOf = (s: Query['rootSort'], kind: 'node' | 'edge') => [
    ...(s.on ? [{ property: kind === 'node' ? VAL : W, direction: s.direction, nullsFirst: s.nullsFirst }] : []),
    { property: [kind, 'externalId'] },
  ];
  const inSpace = { equals: { property: ['node', 'space'], value: space } };
  const rootFilter = q.rootVal === undefined ? inSpace : { and: [inSpace, gte(VAL, q.rootVal)] };
  out.s0 = { nodes: { filter: rootFilter }, limit: q.rootLimit, sort: sortOf(q.rootSort, 'node') };
  let previous: 'node' | 'edge' = 'node';
  q.sets.forEach((s, i) => {
    const name = `s${i + 1}`;
    const from = `s${i}`;
    const { step } = s;
    if (step.kind === 'edges') {
      // limitEach applies to one level: a step with it traverses one.
      const maxDistance = step.limitEach !== undefined ? 1 : step.maxDistance;
      const edges: Record<string, unknown> = { from, direction: step.direction, maxDistance, chainTo: previous === 'edge' ? step.chainTo : undefined };
      if (step.filterW !== undefined) edges.filter = gte(W, step.filterW);
      if (step.nodeVal !== undefined) edges.nodeFilter = gte(VAL, step.nodeVal);
      if (step.termVal !== undefined) edges.terminationFilter = gte(VAL, step.termVal);
      if (step.limitEach !== undefined) edges.limitEach = step.limitEach;
      out[name] = { edges, limit: s.limit, sort: sortOf(s.sort, 'edge') };
      previous = 'edge';
      return;
    }
    const nodes: Record<string, unknown> = { from };
    if (step.kind === 'through' && previous === 'node') Object.assign(nodes, { through: { source: NV, identifier: step.prop }, direction: step.direction });
    if (step.kind === 'ends' && previous === 'edge') nodes.chainTo = step.chainTo;
    out[name] = { nodes, limit: s.limit, sort: sortOf(s.sort, 'node') };
    previous = 'node';
  });
  if (q.operation) {
    const kindOf = (name: string) => (out[name].edges ? 'edge' : 'node');
    const same = Object.keys(out).filter((n) => kindOf(n) === previous);
    const pick = (i: number) => same[i % same.length];
    const members = [...new Set(q.operation.members.map(pick))];
    const except = q.operation.except === undefined ? undefined : [pick(q.operation.except)];
    out.op = { [q.operation.op]: members, except, limit: q.operation.limit, sort: [{ property: [previous, 'externalId'] }] };
  }
  return { with: JSON.parse(JSON.stringify(out)), order: Object.keys(out) };
}

/** The graph as instances (nodes and edges marked hidden are in the space "gh"), and as the evaluator's world. */
function worldOf(space: string, g: Graph): { world: DmWorld; items: unknown[] } {
  const spaceOf = (hidden: boolean) => (hidden ? 'gh' : space);
  const ref = (i: number) => ({ space: spaceOf(g.nodes[i].hidden), externalId: `n${i}` });
  const instances: DmInstance[] = [];
  const items: unknown[] = [];
  const base = { version: 1, createdTime: 0, lastUpdatedTime: 0 };
  g.nodes.forEach((n, i) => {
    const props: Record<string, unknown> = {};
    if (n.val !== null) props.val = n.val;
    if (n.next !== null) props.next = ref(n.next);
    if (n.refs.length) props.refs = n.refs.map(ref);
    const id = { space: spaceOf(n.hidden), externalId: `n${i}` };
    instances.push({ ...base, ...id, instanceType: 'node', containers: Object.keys(props).length ? { [`${S}:N`]: props } : {} });
    items.push({ instanceType: 'node', ...id, ...(Object.keys(props).length ? { sources: [{ source: NV, properties: props }] } : {}) });
  });
  g.edges.forEach((e, i) => {
    const props = e.w === null ? {} : { w: e.w };
    const id = { space: spaceOf(e.hidden), externalId: `e${i}` };
    const ends = { type: EDGE_TYPE, startNode: ref(e.s), endNode: ref(e.t) };
    instances.push({ ...base, ...id, instanceType: 'edge', ...ends, containers: e.w === null ? {} : { [`${S}:E`]: props } });
    items.push({ instanceType: 'edge', ...id, ...ends, ...(e.w === null ? {} : { sources: [{ source: EV, properties: props }] }) });
  });
  const world: DmWorld = {
    containers: { [`${S}:N`]: { val: { type: 'int32' }, next: { type: 'direct' }, refs: { type: 'direct', list: true } }, [`${S}:E`]: { w: { type: 'int32' } } },
    views: {
      [`${S}:N/1`]: { properties: { val: [`${S}:N`, 'val'], next: [`${S}:N`, 'next'], refs: [`${S}:N`, 'refs'] } },
      [`${S}:E/1`]: { properties: { w: [`${S}:E`, 'w'] } },
    },
    instances,
  };
  return { world, items };
}

const names = (items: Array<{ externalId: string }>) => items.map((i) => i.externalId);

describe('query traversals against the evaluator', () => {
  it('every set gives the evaluator\'s page, and the last set pages through all of its instances', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, fc.array(queryArb, { minLength: 1, maxLength: 4 }), async (g, queries) => {
        const space = 'g';
        const { world, items } = worldOf(space, g);
        await ok('/models/instances', { items });
        try {
          await check(space, world, queries);
          // The principal reading "g" alone sees the graph without what is in "gh".
          await check(space, { ...world, instances: world.instances.filter((i) => i.space === space) }, queries, scoped);
        } finally {
          const written = items.map((i: any) => ({ instanceType: i.instanceType, space: i.space, externalId: i.externalId }));
          await ok('/models/instances/delete', { items: written });
        }
      }),
      { numRuns: 30, seed: 20261124 },
    );
  });
});

async function check(space: string, world: DmWorld, queries: Query[], token?: string) {
  for (const q of queries) {
    const built = buildWith(space, q);
    const select = Object.fromEntries(built.order.map((n) => [n, {}]));
    const context = JSON.stringify(built.with);
    // The root set page by page, every other set from each of its pages.
    let offset = 0;
    let rootCursor: string | undefined;
    let res;
    do {
      const expected = evaluateSets(world, built.with, built.order, { s0: offset });
      res = await ok('/models/instances/query', { with: built.with, select, ...(rootCursor ? { cursors: { s0: rootCursor } } : {}) }, token);
      for (const name of built.order) expect(names(res.items[name]), `${name} at ${offset} of ${context}`).toEqual(names(expected[name].page));
      offset += built.with.s0.limit;
      rootCursor = res.nextCursor.s0;
    } while (rootCursor);
    // The last set, from the root's first page, through all of its pages.
    const expected = evaluateSets(world, built.with, built.order);
    const last = built.order[built.order.length - 1];
    res = await ok('/models/instances/query', { with: built.with, select }, token);
    const seen = [...res.items[last]];
    let cursor = res.nextCursor[last];
    while (cursor) {
      const next = await ok('/models/instances/query', { with: built.with, select, cursors: { [last]: cursor } }, token);
      seen.push(...next.items[last]);
      cursor = next.nextCursor[last];
    }
    expect(names(seen), `paging ${last} of ${context}`).toEqual(names(expected[last].all));
  }
}
