/**
 * A principal scoped to some spaces gets from data modeling the answers a store holding only those spaces
 * (and the system spaces) gives. Each run writes a random schema across a visible space and a hidden one
 * (containers in either; views in either that implement earlier views, map containers and go through views
 * and containers of both; data models listing views of both) and nodes in both spaces with data in any
 * container, to project "dev" and, alike, to project "other", where everything in the hidden space is then
 * deleted. The scoped principal asks "dev", the administrator asks "other", and their answers (status and
 * body, without times and cursors) must be equal: reads of spaces, containers, views and data models, container
 * and instance inspection, and instance reads through, filtered on and aggregated over every view, container
 * and property, hidden or not, and writes that name them.
 */
import fc, { type Arbitrary } from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from '../support/auth.js';
import { startHarness, type Harness, type Response } from '../support/harness.js';

const RUNS = 15;
/** Spaces a run may use; shrinking takes more runs than RUNS. */
const MAX_RUNS = 200;

let h: Harness;
let scoped: string;

beforeAll(async () => {
  h = await startHarness(
    {},
    {
      STRATA_CLIENTS: JSON.stringify([{ clientId: 'schema-prop', clientSecret: 'schema-prop-secret', groups: ['schema-prop'] }]),
      STRATA_MODELS_LIMITS: JSON.stringify({ spaces: 2 * MAX_RUNS + 10, containers: 10 * MAX_RUNS, views: 20 * MAX_RUNS, dataModels: 5 * MAX_RUNS }),
    },
  );
  const scope = { spaceIdScope: { spaceIds: Array.from({ length: MAX_RUNS }, (_, r) => `v${r}`) } };
  await createGroup(h, {
    name: 'Visible spaces',
    sourceId: 'schema-prop',
    capabilities: [capability('dataModelsAcl', ['READ', 'WRITE'], scope), capability('dataModelInstancesAcl', ['READ', 'WRITE'], scope)],
  });
  scoped = await clientToken(h, 'schema-prop', 'schema-prop-secret');
});
afterAll(() => h?.close());

/** Property identifiers, each of one type wherever it appears, so that views implementing each other agree. */
const TYPES: Record<string, string> = { t0: 'text', t1: 'text', i0: 'int64', f0: 'float64', b0: 'boolean', d0: 'direct' };
const PROPS = Object.keys(TYPES);
/** Values by property; a direct relation points at `target`. */
const VALUES: Record<string, (target: { space: string; externalId: string }) => unknown> = {
  t0: () => 'alpha',
  t1: () => 'beta',
  i0: () => 7,
  f0: () => 1.5,
  b0: () => true,
  d0: (target) => target,
};

interface World {
  containers: Array<{ hidden: boolean; props: string[] }>;
  views: Array<{
    hidden: boolean;
    implements: number[];
    maps: Array<{ container: number; prop: string }>;
    /** A reverse relation through a view (which must map `d0` itself) or a container (which must hold it). */
    back?: { kind: 'view' | 'container'; index: number };
    /** An edge connection whose source is this view. */
    link?: number;
  }>;
  models: Array<{ hidden: boolean; views: number[] }>;
  nodes: Array<{ hidden: boolean; containers: number[] }>;
}

const world: Arbitrary<World> = fc
  .array(fc.record({ hidden: fc.boolean(), props: fc.subarray(PROPS, { minLength: 1 }) }), { minLength: 1, maxLength: 4 })
  .chain((containers) =>
    fc.integer({ min: 1, max: 5 }).chain((n) =>
      fc.record({
        containers: fc.constant(containers),
        views: fc.tuple(
          ...Array.from({ length: n }, (_, i) =>
            fc.record(
              {
                hidden: fc.boolean(),
                implements: fc.subarray(Array.from({ length: i }, (_, k) => k), { maxLength: Math.min(i, 2) }),
                maps: fc.uniqueArray(
                  fc.integer({ min: 0, max: containers.length - 1 }).chain((c) => fc.constantFrom(...containers[c].props).map((prop) => ({ container: c, prop }))),
                  { selector: (m) => m.prop, maxLength: 4 },
                ),
                back: fc.record({ kind: fc.constantFrom<'view' | 'container'>('view', 'container'), index: fc.nat(Math.max(containers.length, i)) }),
                link: fc.nat(i),
              },
              { requiredKeys: ['hidden', 'implements', 'maps'] },
            ),
          ),
        ),
        models: fc.array(fc.record({ hidden: fc.boolean(), views: fc.subarray(Array.from({ length: n }, (_, k) => k)) }), { maxLength: 2 }),
        nodes: fc.array(fc.record({ hidden: fc.boolean(), containers: fc.subarray(containers.map((_, k) => k)) }), { minLength: 1, maxLength: 3 }),
      }),
    ),
  );

type Store = 'dev' | 'other';

/** An answer without what differs between two projects built alike: times, cursors, and the order of inspection lists. */
function comparable(res: Response): unknown {
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) {
      const items = v.map((x) => walk(x));
      return key === 'involvedViews' || key === 'involvedContainers' ? items.map((x) => JSON.stringify(x)).sort() : items;
    }
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['createdTime', 'lastUpdatedTime', 'nextCursor'].includes(k))
        .map(([k, x]) => [k, walk(x, k)]),
    );
  };
  return { status: res.status, body: walk(res.body) };
}

let run = 0;

describe('a scoped principal sees the data modeling schema a store of its spaces alone would hold', () => {
  it('in definitions, inspection, and instance reads and writes naming any view, container or property', { timeout: 900_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const r = run++;
        if (r >= MAX_RUNS) throw new Error(`more than ${MAX_RUNS} runs: raise MAX_RUNS`);
        const [visible, hidden] = [`v${r}`, `h${r}`];
        const spaceOf = (isHidden: boolean) => (isHidden ? hidden : visible);
        const cRef = (k: number) => ({ type: 'container', space: spaceOf(w.containers[k].hidden), externalId: `C${k}` });
        const vRef = (k: number) => ({ type: 'view', space: spaceOf(w.views[k].hidden), externalId: `V${k}`, version: '1' });
        const bare = <T extends { type: string }>({ type: _type, ...rest }: T) => rest;

        const viewBody = (k: number) => {
          const v = w.views[k];
          const properties: Record<string, unknown> = {};
          for (const m of v.maps) properties[m.prop] = { container: cRef(m.container), containerPropertyIdentifier: m.prop };
          const back = v.back;
          if (back?.kind === 'container' && back.index < w.containers.length && w.containers[back.index].props.includes('d0')) {
            properties.back = { connectionType: 'multi_reverse_direct_relation', source: vRef(k), through: { source: cRef(back.index), identifier: 'd0' } };
          } else if (back?.kind === 'view' && back.index < k && w.views[back.index].maps.some((m) => m.prop === 'd0')) {
            properties.back = { connectionType: 'multi_reverse_direct_relation', source: vRef(k), through: { source: vRef(back.index), identifier: 'd0' } };
          }
          if (v.link !== undefined) properties.link = { connectionType: 'multi_edge_connection', type: { space: visible, externalId: 'lt' }, source: vRef(v.link), direction: 'outwards' };
          return { ...bare(vRef(k)), implements: v.implements.map(vRef), properties };
        };
        // The first node of each space is written before the others, which point at it.
        const firstOf = (i: number) => w.nodes.findIndex((n) => n.hidden === w.nodes[i].hidden);
        const firsts = w.nodes.map((_, i) => i).filter((i) => firstOf(i) === i);
        const rest = w.nodes.map((_, i) => i).filter((i) => firstOf(i) !== i);
        const nodeBody = (i: number) => ({
          instanceType: 'node',
          space: spaceOf(w.nodes[i].hidden),
          externalId: `n${i}`,
          ...(w.nodes[i].containers.length
            ? {
                sources: w.nodes[i].containers.map((k) => ({
                  source: cRef(k),
                  properties: Object.fromEntries(w.containers[k].props.map((p) => [p, VALUES[p]({ space: spaceOf(w.nodes[i].hidden), externalId: `n${firstOf(i)}` })])),
                })),
              }
            : {}),
        });
        const setup: Array<[string, unknown]> = [
          ['/models/spaces', { items: [{ space: visible }, { space: hidden }] }],
          ['/models/containers', { items: w.containers.map((c, k) => ({ ...bare(cRef(k)), properties: Object.fromEntries(c.props.map((p) => [p, { type: { type: TYPES[p] } }])) })) }],
          ...w.views.map((_, k): [string, unknown] => ['/models/views', { items: [viewBody(k)] }]),
          ...w.models.map((m, k): [string, unknown] => ['/models/datamodels', { items: [{ space: spaceOf(m.hidden), externalId: `M${k}`, version: '1', views: m.views.map(vRef) }] }]),
          ['/models/instances', { items: firsts.map(nodeBody) }],
          ['/models/instances', { items: rest.map(nodeBody) }],
        ];
        const hiddenOnes = <T extends { hidden: boolean }>(list: T[], ref: (k: number) => Record<string, string>) =>
          list.flatMap((x, k) => (x.hidden ? [ref(k)] : []));
        const alone: Array<[string, unknown]> = [
          ['/models/instances/delete', { items: w.nodes.flatMap((n, i) => (n.hidden ? [{ instanceType: 'node', space: hidden, externalId: `n${i}` }] : [])) }],
          ['/models/datamodels/delete', { items: hiddenOnes(w.models, (k) => ({ space: hidden, externalId: `M${k}`, version: '1' })) }],
          ['/models/views/delete', { items: hiddenOnes(w.views, (k) => bare(vRef(k))) }],
          ['/models/containers/delete', { items: hiddenOnes(w.containers, (k) => bare(cRef(k))) }],
          ['/models/spaces/delete', { items: [{ space: hidden }] }],
        ];
        for (const [store, steps] of [
          ['dev', setup],
          ['other', [...setup, ...alone]],
        ] as const) {
          for (const [path, body] of steps) {
            if ((body as { items: unknown[] }).items.length === 0) continue;
            const res = await h.request('POST', `/api/v1/projects/${store}${path}`, body);
            expect(res.status, `${store} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(200);
          }
        }

        const ask = (store: Store, method: string, path: string, body?: unknown) =>
          store === 'dev' ? h.request(method, path, body, bearer(scoped)) : h.request(method, `/api/v1/projects/other${path}`, body);
        const same = async (method: string, path: string, body?: unknown) => {
          const [seen, expected] = await Promise.all((['dev', 'other'] as const).map((s) => ask(s, method, path, body)));
          expect(comparable(seen), `${method} ${path} ${JSON.stringify(body)}`).toEqual(comparable(expected));
        };

        const views = w.views.map((_, k) => vRef(k));
        const containers = w.containers.map((_, k) => cRef(k));
        const nodeIds = w.nodes.map((n, i) => ({ instanceType: 'node', space: spaceOf(n.hidden), externalId: `n${i}` }));
        await same('POST', '/models/spaces/byids', { items: [{ space: visible }, { space: hidden }] });
        await same('GET', `/models/containers?space=${visible}&limit=1000`);
        await same('POST', '/models/containers/byids', { items: containers.map(bare) });
        await same('POST', '/models/containers/inspect', { items: containers.map(bare), inspectionOperations: { involvedViews: { allVersions: true }, totalInvolvedViewCount: {} } });
        for (const inherited of [true, false]) {
          await same('GET', `/models/views?space=${visible}&limit=1000&includeInheritedProperties=${inherited}`);
          await same('POST', '/models/views/byids', { items: views.map(bare), includeInheritedProperties: inherited });
        }
        await same('GET', `/models/datamodels?space=${visible}&inlineViews=true&limit=1000`);
        for (const inlineViews of [true, false]) {
          await same('POST', `/models/datamodels/byids?inlineViews=${inlineViews}`, { items: w.models.flatMap((m, k) => [{ space: visible, externalId: `M${k}` }, { space: hidden, externalId: `M${k}` }]) });
        }
        await same('POST', '/models/instances/inspect', { items: nodeIds, inspectionOperations: { involvedViews: { allVersions: true }, involvedContainers: {} } });

        // Instance reads keep to the run's spaces: the unit nodes of the system space are instances, read by scope.
        const inRun = { in: { property: ['node', 'space'], values: [visible, hidden] } };
        const filtered = (filter?: unknown) => ({ filter: filter ? { and: [inRun, filter] } : inRun });
        const sorted = { sort: [{ property: ['node', 'externalId'] }] };
        for (const v of views) {
          const viewProp = (p: string) => [v.space, `${v.externalId}/1`, p];
          await same('POST', '/models/instances/list', { sources: [{ source: v }], includeTyping: true, ...filtered(), ...sorted });
          await same('POST', '/models/instances/list', { ...filtered({ hasData: [v] }), ...sorted });
          await same('POST', '/models/instances/byids', { items: nodeIds, sources: [{ source: v }], includeTyping: true });
          await same('POST', '/models/instances/search', { view: v, query: 'alpha', ...filtered() });
          await same('POST', '/models/instances/aggregate', { view: v, aggregates: [{ count: {} }], ...filtered() });
          await same('POST', '/models/instances/query', {
            with: { n: { nodes: filtered({ hasData: [v] }) } },
            select: { n: { sources: [{ source: v, properties: ['*'] }] } },
            includeTyping: true,
          });
          for (const p of [...PROPS, 'back', 'link']) {
            await same('POST', '/models/instances/list', { ...filtered({ exists: { property: viewProp(p) } }), ...sorted });
            await same('POST', '/models/instances/aggregate', { view: v, groupBy: [p], aggregates: [{ count: { property: p } }], ...filtered() });
          }
          await same('POST', '/models/instances/query', { with: { n: { nodes: filtered() }, m: { nodes: { from: 'n', through: { view: v, identifier: 'd0' } } } }, select: { m: {} } });
        }
        for (const c of containers) {
          await same('POST', '/models/instances/list', { ...filtered({ hasData: [c] }), ...sorted });
          for (const p of PROPS) await same('POST', '/models/instances/list', { ...filtered({ exists: { property: [c.space, c.externalId, p] } }), ...sorted });
        }

        // Writes naming each view and container: refused alike, or applied alike in both stores.
        for (const [k, v] of views.entries()) {
          await same('POST', '/models/views', { items: [{ space: visible, externalId: `Probe${k}`, version: '1', implements: [v] }] });
          await same('POST', '/models/datamodels', { items: [{ space: visible, externalId: `Probe${k}`, version: '1', views: [v] }] });
          await same('POST', '/models/instances', { items: [{ instanceType: 'node', space: visible, externalId: 'n0', sources: [{ source: v, properties: {} }] }] });
        }
        for (const [k, c] of containers.entries()) {
          await same('POST', '/models/views', { items: [{ space: visible, externalId: `ProbeC${k}`, version: '1', properties: { p: { container: c, containerPropertyIdentifier: w.containers[k].props[0] } } }] });
          await same('POST', '/models/containers', { items: [{ space: visible, externalId: `ProbeC${k}`, properties: { x: { type: { type: 'text' } } }, constraints: { r: { constraintType: 'requires', require: c } } }] });
        }
      }),
      { numRuns: RUNS },
    );
  });
});
