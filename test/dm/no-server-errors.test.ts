/**
 * No data modeling request makes the server answer 500: every data modeling operation gets random bodies
 * built from the language's own vocabulary (references to real spaces, containers, views and properties,
 * values of every kind), and random filters, and must answer below 500, in the error shape when it refuses.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
const C = { type: 'container', space: 'fz', externalId: 'Box' };
const V = { type: 'view', space: 'fz', externalId: 'Box', version: '1' };

beforeAll(async () => {
  h = await startHarness();
  await h.post('/models/spaces', { items: [{ space: 'fz' }] });
  await h.post('/models/containers', {
    items: [
      {
        space: 'fz',
        externalId: 'Box',
        properties: {
          t: { type: { type: 'text' } },
          n: { type: { type: 'int64' } },
          f: { type: { type: 'float32' } },
          l: { type: { type: 'text', list: true } },
          d: { type: { type: 'direct' } },
          j: { type: { type: 'json' } },
          ts: { type: { type: 'timestamp' } },
          e: { type: { type: 'enum', values: { a: {}, b: {} } } },
        },
        constraints: { u: { constraintType: 'uniqueness', properties: ['t'] } },
      },
    ],
  });
  await h.post('/models/views', { items: [{ space: 'fz', externalId: 'Box', version: '1', properties: { t: { container: C, containerPropertyIdentifier: 't' }, n: { container: C, containerPropertyIdentifier: 'n' } } }] });
  await h.post('/models/instances', { items: [{ instanceType: 'node', space: 'fz', externalId: 'x', sources: [{ source: V, properties: { t: 'a', n: 1 } }] }] });
});
afterAll(() => h.close());

const KEYS = [
  'items', 'space', 'externalId', 'version', 'instanceType', 'sources', 'source', 'properties', 'type', 'filter', 'sort',
  'limit', 'cursor', 'view', 'query', 'groupBy', 'aggregates', 'count', 'avg', 'histogram', 'interval', 'property',
  'value', 'values', 'and', 'or', 'not', 'equals', 'in', 'range', 'prefix', 'exists', 'containsAny', 'containsAll',
  'matchAll', 'nested', 'scope', 'overlaps', 'startProperty', 'endProperty', 'hasData', 'instanceReferences', 'gt',
  'gte', 'lt', 'lte', 'existingVersion', 'replace', 'delete', 'startNode', 'endNode', 'container', 'usedFor',
  'containerPropertyIdentifier', 'implements', 'views', 'indexes', 'constraints', 'inspectionOperations',
  'involvedViews', 'involvedContainers', 'debug', 'direction', 'nullsFirst', 'parameter', 'identifier',
  'containerExternalId', 'targetUnits', 'unit', 'operator', 'includeTyping', '__proto__',
];
const refs = fc.constantFrom<unknown>(
  ['fz', 'Box', 't'], ['fz', 'Box', 'l'], ['fz', 'Box', 'd'], ['fz', 'Box', 'j'], ['fz', 'Box/1', 'n'], ['node', 'externalId'],
  ['edge', 'startNode'], ['t'], ['fz', 'Nope', 'x'], C, V, { space: 'fz', externalId: 'x' }, 'fz', 'Box', '1', 'node', 'edge',
);
const scalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, 1e308, '', 'a', '2024-01-01', '2024-01-01T00:00:00Z', '\u0000', 'x'.repeat(300)),
  fc.integer(),
  fc.string(),
  fc.constantFrom(...KEYS),
  refs,
);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 5 }),
})).value;

describe('no data modeling request makes the server answer 500', () => {
  it('on every data modeling operation, with random bodies', async () => {
    const routes = h.strata.routes.filter((r) => r.path.startsWith('/models'));
    expect(routes.length).toBeGreaterThan(30);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: routes.length - 1 }), json, async (r, payload) => {
        const def = routes[r];
        const res = await h.request(def.method, def.path, def.method === 'GET' ? undefined : payload);
        expect(res.status, `${def.method} ${def.path} ${JSON.stringify(payload)} -> ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body?.error?.message).toBe('string');
      }),
      { numRuns: 1500, seed: 2020 },
    );
  });

  it('on list, search and aggregate with random filters', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.constantFrom('/models/instances/list', '/models/instances/search', '/models/instances/aggregate'), async (filter, path) => {
        const res = await h.post(path, path.endsWith('list') ? { filter } : { view: V, filter });
        expect(res.status, `${path} ${JSON.stringify(filter)} -> ${JSON.stringify(res.body)}`).toBeLessThan(500);
      }),
      { numRuns: 800, seed: 2021 },
    );
  });

  it('on query with random result set expressions', async () => {
    const names = fc.constantFrom('a', 'b', 'c');
    const QUERY_KEYS = ['nodes', 'edges', 'from', 'through', 'source', 'identifier', 'direction', 'chainTo', 'maxDistance', 'filter', 'nodeFilter', 'terminationFilter', 'limitEach', 'union', 'unionAll', 'intersection', 'except', 'limit', 'sort', 'postSort'];
    const part = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, names, fc.constantFrom('outwards', 'inwards', 'source', 'destination', 1, 10_000), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(fc.constantFrom(...QUERY_KEYS), tie('value'), { maxKeys: 4 }),
    })).object;
    const body = fc.record({
      with: fc.dictionary(names, part, { minKeys: 1, maxKeys: 3 }),
      select: fc.dictionary(names, fc.oneof(fc.constant({}), fc.record({ sources: fc.constant([{ source: V, properties: ['*'] }]) }), json), { minKeys: 1, maxKeys: 2 }),
      parameters: fc.option(fc.dictionary(fc.string({ maxLength: 3 }), scalar), { nil: undefined }),
      cursors: fc.option(fc.dictionary(names, fc.oneof(fc.string(), fc.constant(null))), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const res = await h.post('/models/instances/query', JSON.parse(JSON.stringify(payload)));
        expect(res.status, `${JSON.stringify(payload)} -> ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body?.error?.message).toBe('string');
      }),
      { numRuns: 800, seed: 2022 },
    );
  });

  it('on sync with random result sets, chains, modes and backfill sorts', async () => {
    const names = fc.constantFrom('a', 'b', 'c');
    const property = fc.constantFrom<unknown>(['fz', 'Box/1', 't'], ['fz', 'Box/1', 'n'], ['fz', 'Box', 't'], ['node', 'externalId'], ['node', 'space'], ['edge', 'startNode'], ['fz', 'Box/1', 'nope'], 'x');
    const options = {
      mode: fc.constantFrom<unknown>('onePhase', 'twoPhase', 'twoPhase', 'noBackfill', 'other'),
      backfillSort: fc.array(fc.record({ property, direction: fc.constantFrom<unknown>('ascending', 'descending'), nullsFirst: fc.boolean() }, { requiredKeys: ['property'] }), { minLength: 1, maxLength: 2 }),
      skipAlreadyDeleted: fc.boolean(),
      limit: fc.integer({ min: 0, max: 2001 }),
    };
    const chained = {
      from: fc.constantFrom<unknown>('a', 'b', 'c', 1),
      direction: fc.constantFrom<unknown>('outwards', 'inwards', 'sideways'),
      chainTo: fc.constantFrom<unknown>('source', 'destination'),
      filter: json,
    };
    const through = fc.constantFrom<unknown>({ source: V, identifier: 't' }, { source: C, identifier: 'd' }, { view: V, identifier: 'n' }, { identifier: 'd' }, 'd');
    const filters = fc.oneof(json, fc.constant({ equals: { property: ['fz', 'Box', 'd'], value: { space: 'fz', externalId: 'x' } } }));
    const set = fc.oneof(
      fc.record({ nodes: fc.oneof(fc.constant({}), fc.constant({}), fc.record({ filter: json }), fc.record({ ...chained, through }, { requiredKeys: ['from'] })), ...options }, { requiredKeys: ['nodes'] }),
      fc.record(
        {
          edges: fc.oneof(
            fc.constant({}),
            json,
            fc.record({ ...chained, maxDistance: fc.integer({ min: 0, max: 3 }), nodeFilter: filters, terminationFilter: filters, limitEach: fc.constant(1) }, { requiredKeys: ['from'] }),
          ),
          ...options,
        },
        { requiredKeys: ['edges'] },
      ),
    );
    const body = fc.record({
      with: fc.dictionary(names, set, { minKeys: 1, maxKeys: 3 }),
      select: fc.dictionary(names, fc.oneof(fc.constant({}), fc.record({ sources: fc.constant([{ source: V, properties: ['*'] }]) }), json), { minKeys: 1, maxKeys: 2 }),
      cursors: fc.option(fc.dictionary(names, fc.oneof(fc.string(), fc.constant(null))), { nil: undefined, freq: 5 }),
      debug: fc.option(fc.constant({}), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const res = await h.post('/models/instances/sync', JSON.parse(JSON.stringify(payload)));
        expect(res.status, `${JSON.stringify(payload)} -> ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status >= 400) expect(typeof res.body?.error?.message).toBe('string');
      }),
      { numRuns: 600, seed: 2023 },
    );
  });
});
