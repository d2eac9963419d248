/**
 * A principal scoped to one data set gets from a store holding assets of two data sets exactly the answers
 * that a store holding only its data set's assets gives: random hierarchies spread over data sets 1 and 2
 * go to project "dev", and the same hierarchies with the data set 2 assets left out (an asset whose parent
 * is left out is a root there) go to project "other". The scoped principal reads "dev", the administrator
 * reads "other", and every answer is compared with ids replaced by external ids.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
let reader: string;
const dataSets = { dev: new Map<number, string>(), other: new Map<number, string>() };
const devSet: Record<string, number> = {};
let otherSet: number;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify([{ clientId: 'prop-reader', clientSecret: 'prop-reader-secret', groups: ['prop-read'] }]) });
  for (const d of (await h.post('/datasets', { items: [{ externalId: 'ds1' }, { externalId: 'ds2' }] })).body.items) {
    devSet[d.externalId] = d.id;
    dataSets.dev.set(d.id, d.externalId);
  }
  otherSet = (await h.request('POST', '/api/v1/projects/other/datasets', { items: [{ externalId: 'ds1' }] })).body.items[0].id;
  dataSets.other.set(otherSet, 'ds1');
  const scope = { datasetScope: { ids: [devSet.ds1] } };
  await createGroup(h, {
    name: 'Data set 1',
    sourceId: 'prop-read',
    capabilities: [capability('assetsAcl', ['READ'], scope), capability('eventsAcl', ['READ'], scope)],
  });
  reader = await clientToken(h, 'prop-reader', 'prop-reader-secret');
});
afterAll(() => h.close());

type Store = 'dev' | 'other';

/** A request to a store, as the principal that reads it. */
function ask(store: Store, method: string, path: string, body?: unknown): Promise<Response> {
  return store === 'dev' ? h.request(method, path, body, bearer(reader)) : h.request(method, `/api/v1/projects/other${path}`, body);
}

interface Node {
  parent: number | null;
  inScope: boolean;
}

const hierarchy = fc
  .integer({ min: 2, max: 12 })
  .chain((n) =>
    fc.tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.record({ parent: i === 0 ? fc.constant(null) : fc.option(fc.nat(i - 1), { freq: 3 }), inScope: fc.boolean() }),
      ),
    ),
  )
  .chain((nodes: Node[]) => fc.tuple(fc.constant(nodes), fc.array(fc.subarray(nodes.map((_, i) => i), { minLength: 1, maxLength: 2 }), { maxLength: 4 })));

/**
 * Answers with every asset id replaced by the external id it stands for in its store (or a mark that it is
 * unknown there). The ids of events (`eventIds`) differ between the stores and say nothing about assets.
 */
function normalize(body: unknown, ids: Map<number, string>, sets: Map<number, string>, eventIds: boolean): unknown {
  const name = (id: unknown) => (typeof id === 'number' ? (ids.get(id) ?? `unknown asset ${id}`) : id);
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (k === 'createdTime' || k === 'lastUpdatedTime') continue;
        out[k] = walk(x, k);
      }
      return out;
    }
    if (key === 'dataSetId') return sets.get(v as number) ?? `unknown data set ${v}`;
    if (key === 'id' && eventIds) return 'an event';
    if (key === 'id' || key === 'parentId' || key === 'rootId' || key === 'values' || key === 'value' || key === 'assetIds') return name(v);
    return v;
  };
  return walk(body);
}

let run = 0;

describe('a scoped principal sees what a store of its data set alone would hold', () => {
  it('in asset hierarchies, their filters and aggregates, and event filters on them', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(hierarchy, async ([nodes, links]) => {
        const prefix = `r${run++}-`;
        const xid = (i: number) => `${prefix}${i}`;
        const visible = nodes.map((n) => n.inScope);
        const devAssets = await h.post('/assets', {
          items: nodes.map((n, i) => ({
            externalId: xid(i),
            name: xid(i),
            dataSetId: n.inScope ? devSet.ds1 : devSet.ds2,
            ...(n.parent === null ? {} : { parentExternalId: xid(n.parent) }),
          })),
        });
        expect(devAssets.status).toBe(201);
        const kept = nodes.map((n, i) => ({ n, i })).filter(({ n }) => n.inScope);
        const otherAssets = kept.length
          ? await h.request('POST', '/api/v1/projects/other/assets', {
              items: kept.map(({ n, i }) => ({
                externalId: xid(i),
                name: xid(i),
                dataSetId: otherSet,
                ...(n.parent !== null && visible[n.parent] ? { parentExternalId: xid(n.parent) } : {}),
              })),
            })
          : undefined;
        const ids = { dev: new Map<number, string>(), other: new Map<number, string>() };
        const idOf = { dev: new Map<string, number>(), other: new Map<string, number>() };
        for (const [store, res] of [['dev', devAssets], ['other', otherAssets]] as const) {
          for (const a of res?.body.items ?? []) {
            ids[store].set(a.id, a.externalId);
            idOf[store].set(a.externalId, a.id);
          }
        }
        // Events of data set 1 on assets it sees.
        const visibleLinks = links.map((l) => l.filter((i) => visible[i])).filter((l) => l.length > 0);
        for (const store of ['dev', 'other'] as const) {
          if (!visibleLinks.length) break;
          const path = store === 'dev' ? '/events' : '/api/v1/projects/other/events';
          const dataSetId = store === 'dev' ? devSet.ds1 : otherSet;
          const items = visibleLinks.map((l, k) => ({ externalId: `${prefix}ev${k}`, dataSetId, assetIds: l.map((i) => idOf[store].get(xid(i))!) }));
          expect((await h.request('POST', path, { items })).status).toBe(201);
        }

        const same = async (method: string, path: string, body: (store: Store) => unknown) => {
          const [dev, other] = await Promise.all((['dev', 'other'] as const).map((s) => ask(s, method, path, body(s))));
          const events = path.startsWith('/events');
          const seen = { status: dev.status, body: normalize(dev.body, ids.dev, dataSets.dev, events) };
          const expected = { status: other.status, body: normalize(other.body, ids.other, dataSets.other, events) };
          expect(seen, `${method} ${path} ${JSON.stringify(body('dev'))}`).toEqual(expected);
        };
        const inRun = { externalIdPrefix: prefix };
        const sorted = { sort: [{ property: ['externalId'] }] };
        const aggregatedProperties = ['childCount', 'depth', 'path'];
        await same('POST', '/assets/list', () => ({ filter: inRun, ...sorted, aggregatedProperties, limit: 1000 }));
        for (const root of [true, false]) await same('POST', '/assets/list', () => ({ filter: { ...inRun, root }, ...sorted }));
        for (const property of ['rootId', 'parentId']) {
          await same('POST', '/assets/aggregate', () => ({ filter: inRun, aggregate: 'uniqueValues', properties: [{ property: [property] }] }));
        }
        for (let i = 0; i < nodes.length; i++) {
          const ref = { externalId: xid(i) };
          const id = (s: Store) => idOf[s].get(xid(i)) ?? idOf.dev.get(xid(i))!;
          await same('POST', '/assets/list', () => ({ filter: { assetSubtreeIds: [ref] }, ...sorted }));
          await same('POST', '/assets/list', () => ({ filter: { rootIds: [ref] }, ...sorted }));
          await same('POST', '/assets/list', () => ({ filter: { parentExternalIds: [ref.externalId] }, ...sorted }));
          await same('POST', '/events/list', () => ({ filter: { assetSubtreeIds: [ref] }, ...sorted }));
          if (!visible[i]) {
            await same('POST', '/assets/byids', () => ({ items: [ref] }));
            continue;
          }
          await same('POST', '/assets/list', (s) => ({ filter: { ...inRun, parentIds: [id(s)] }, ...sorted }));
          for (const property of ['rootId', 'parentId']) {
            await same('POST', '/assets/list', (s) => ({ advancedFilter: { and: [{ prefix: { property: ['externalId'], value: prefix } }, { equals: { property: [property], value: id(s) } }] }, ...sorted }));
          }
        }
      }),
      { numRuns: 25 },
    );
  });
});
