/**
 * A resource keyed by two fields (`externalId` + `version`), declared here as a test-only resource on the
 * shared item operations: by-key reads with `missing`, `duplicated` and `ignoreUnknownIds`, create
 * conflicts, updates (derived bodies, `modify`, a field that cannot change), cursors, partitions,
 * filters, sorting and counts behave as they do for resources keyed by an internal id, on both backends.
 * Data products (test/dataproducts.test.ts) cover the external-id key and a parent.
 */
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IgnoreUnknownIds, listBodySchema, partialObject } from '../src/http/common-schemas.js';
import { route } from '../src/http/route.js';
import { runAggregate } from '../src/query/aggregate.js';
import { createItems, deleteItems, fromModel, listItemsJson, retrieveItemsJson, updateItems, type ResourceSpec } from '../src/resources/crud.js';
import { defineModel, field } from '../src/resources/model.js';
import { ensureTables } from '../src/storage/schema.js';
import { startCustomHarness } from './support/custom-harness.js';
import { errorMessage, type Harness } from './support/harness.js';

const gaugeModel = defineModel({
  noun: 'gauge',
  acl: 'gaugesAcl',
  table: 'test_gauges',
  alias: 'g',
  key: ['externalId', 'version'],
  fields: {
    externalId: field.string(Type.String({ minLength: 1, maxLength: 64 }), { notNull: true, query: { maxValueLength: 64, sortable: true } }),
    version: field.integer(Type.Integer({ minimum: 1, maximum: 1000 }), { notNull: true, query: { sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: 64 }), { query: { maxValueLength: 64, sortable: true } }),
    size: field.integer(Type.Integer({ minimum: 0, maximum: 1_000_000 }), { query: { sortable: true } }),
    kind: field.string(Type.String({ maxLength: 16 }), { patch: false, query: { maxValueLength: 16 } }),
    limits: field.object({ low: Type.Integer(), high: Type.Integer() }),
  },
});
const spec: ResourceSpec<unknown> = fromModel(gaugeModel);
const Refs = Type.Object({ items: Type.Array(gaugeModel.refSchema, { minItems: 1, maxItems: 100 }), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

const routes = [
  route({
    method: 'POST',
    path: '/test-gauges',
    capability: null,
    body: Type.Object({ items: Type.Array(gaugeModel.createSchema, { minItems: 1, maxItems: 100 }) }),
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/test-gauges/byids',
    capability: null,
    body: Refs,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/test-gauges/list',
    capability: null,
    body: listBodySchema(partialObject({})),
    handler: ({ services, project, body }) => listItemsJson(spec, services, project.id, body, undefined),
  }),
  route({
    method: 'POST',
    path: '/test-gauges/aggregate',
    capability: null,
    body: Type.Object({ advancedFilter: Type.Optional(Type.Unknown()) }),
    handler: ({ services, project, body }) => runAggregate(services, gaugeModel.catalog, project.id, { advancedFilter: body.advancedFilter }),
  }),
  route({
    method: 'POST',
    path: '/test-gauges/update',
    capability: null,
    body: gaugeModel.updateBody(100),
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/test-gauges/delete',
    capability: null,
    body: Refs,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
];

let h: Harness;
beforeAll(async () => {
  h = await startCustomHarness({ build: { extraRoutes: routes } });
  await h.strata.services.db.transaction((tx) => ensureTables(tx, gaugeModel.tables));
  const items = [];
  for (const externalId of ['a', 'b', 'c', 'd']) for (const version of [1, 2, 3]) items.push({ externalId, version, name: `${externalId}${version}`, size: version * 10 + externalId.charCodeAt(0) - 96, kind: 'k' });
  const res = await h.post('/test-gauges', { items });
  expect(res.status).toBe(201);
});
afterAll(() => h.close());

const keys = (items: Array<{ externalId: string; version: number }>) => items.map((i) => `${i.externalId}${i.version}`);

describe('a resource keyed by externalId and version', () => {
  it('answers with the key and no internal id', async () => {
    const res = await h.post('/test-gauges/byids', { items: [{ externalId: 'b', version: 2 }] });
    expect(res.body.items).toEqual([
      { externalId: 'b', version: 2, name: 'b2', size: 22, kind: 'k', limits: {}, createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number) },
    ]);
  });

  it('reads by key in request order, with missing, ignoreUnknownIds and a key named twice', async () => {
    const both = await h.post('/test-gauges/byids', { items: [{ externalId: 'c', version: 3 }, { externalId: 'a', version: 1 }] });
    expect(keys(both.body.items)).toEqual(['c3', 'a1']);
    const missing = await h.post('/test-gauges/byids', { items: [{ externalId: 'a', version: 1 }, { externalId: 'a', version: 9 }, { externalId: 'z', version: 1 }] });
    expect(errorMessage(missing, 400)).toMatch(/2 items were not found/);
    expect(missing.body.error.missing).toEqual([
      { externalId: 'a', version: 9 },
      { externalId: 'z', version: 1 },
    ]);
    const ignored = await h.post('/test-gauges/byids', { items: [{ externalId: 'a', version: 9 }, { externalId: 'a', version: 2 }], ignoreUnknownIds: true });
    expect(keys(ignored.body.items)).toEqual(['a2']);
    const twice = await h.post('/test-gauges/byids', { items: [{ externalId: 'a', version: 1 }, { externalId: 'a', version: 1 }] });
    expect(errorMessage(twice, 400)).toMatch(/more than once/);
    expect(twice.body.error.duplicated).toEqual([{ externalId: 'a', version: 1 }]);
    expect(errorMessage(await h.post('/test-gauges/byids', { items: [{ externalId: 'a' }] }), 400)).toMatch(/items\[0\]/);
  });

  it('refuses a create of a key taken, or named twice, and creates nothing', async () => {
    const taken = await h.post('/test-gauges', { items: [{ externalId: 'e', version: 1 }, { externalId: 'a', version: 1 }] });
    expect(errorMessage(taken, 409)).toMatch(/Duplicate keys/);
    expect(taken.body.error.duplicated).toEqual([{ externalId: 'a', version: 1 }]);
    const twice = await h.post('/test-gauges', { items: [{ externalId: 'e', version: 1 }, { externalId: 'e', version: 1 }] });
    expect(twice.body.error.duplicated).toEqual([{ externalId: 'e', version: 1 }]);
    expect((await h.post('/test-gauges/byids', { items: [{ externalId: 'e', version: 1 }], ignoreUnknownIds: true })).body.items).toEqual([]);
    // The same external id under another version is another item.
    expect((await h.post('/test-gauges', { items: [{ externalId: 'e', version: 1 }, { externalId: 'e', version: 2 }] })).status).toBe(201);
    expect((await h.post('/test-gauges/delete', { items: [{ externalId: 'e', version: 1 }, { externalId: 'e', version: 2 }] })).status).toBe(200);
  });

  it('updates by key with derived patches; a field declared not to change is refused by name', async () => {
    await h.post('/test-gauges', { items: [{ externalId: 'u', version: 1, name: 'n', limits: { low: 1, high: 5 } }] });
    const upd = (update: Record<string, unknown>) => h.post('/test-gauges/update', { items: [{ externalId: 'u', version: 1, update }] });
    const res = await upd({ name: { setNull: true }, size: { set: 7 }, limits: { modify: { high: { set: 9 }, low: { setNull: true } } } });
    expect(res.body.items[0]).toMatchObject({ externalId: 'u', version: 1, size: 7, limits: { high: 9 } });
    expect(res.body.items[0]).not.toHaveProperty('name');
    expect(errorMessage(await upd({ kind: { set: 'x' } }), 400)).toBe('items[0].update.kind: kind is fixed when a gauge is created and cannot be changed');
    expect(errorMessage(await upd({ version: { set: 2 } }), 400)).toMatch(/update\.version: version is fixed/);
    expect(errorMessage(await upd({ externalId: { set: 'v' } }), 400)).toMatch(/update\.externalId: externalId is fixed/);
    expect(errorMessage(await upd({ other: { set: 1 } }), 400)).toMatch(/other/);
    const missing = await h.post('/test-gauges/update', { items: [{ externalId: 'u', version: 2, update: { size: { set: 1 } } }] });
    expect(missing.body.error.missing).toEqual([{ externalId: 'u', version: 2 }]);
    await h.post('/test-gauges/delete', { items: [{ externalId: 'u', version: 1 }] });
  });

  it('deletes by key, with missing and ignoreUnknownIds', async () => {
    await h.post('/test-gauges', { items: [{ externalId: 'x', version: 1 }] });
    const missing = await h.post('/test-gauges/delete', { items: [{ externalId: 'x', version: 1 }, { externalId: 'x', version: 2 }] });
    expect(missing.body.error.missing).toEqual([{ externalId: 'x', version: 2 }]);
    expect((await h.post('/test-gauges/delete', { items: [{ externalId: 'x', version: 1 }, { externalId: 'x', version: 2 }], ignoreUnknownIds: true })).status).toBe(200);
    expect((await h.post('/test-gauges/byids', { items: [{ externalId: 'x', version: 1 }], ignoreUnknownIds: true })).body.items).toEqual([]);
  });

  it('lists with filters, sorting and cursors', async () => {
    const filter = { and: [{ in: { property: ['externalId'], values: ['a', 'b'] } }, { range: { property: ['version'], gte: 2 } }] };
    const sort = [{ property: ['size'], order: 'desc' }];
    const all = await h.post('/test-gauges/list', { advancedFilter: filter, sort, limit: 100 });
    expect(keys(all.body.items)).toEqual(['b3', 'a3', 'b2', 'a2']);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await h.post('/test-gauges/list', { advancedFilter: filter, sort, limit: 1, cursor });
      paged.push(...keys(res.body.items));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(keys(all.body.items));
    const byKey = await h.post('/test-gauges/list', { sort: [{ property: ['externalId'], order: 'desc' }, { property: ['version'] }], limit: 4 });
    expect(keys(byKey.body.items)).toEqual(['d1', 'd2', 'd3', 'c1']);
    expect(errorMessage(await h.post('/test-gauges/list', { advancedFilter: { equals: { property: ['id'], value: 1 } } }), 400)).toMatch(/id/);
  });

  it('splits into partitions that together are the whole list', async () => {
    const whole = keys((await h.post('/test-gauges/list', { limit: 1000 })).body.items).sort();
    const parts: string[] = [];
    for (const m of [1, 2, 3]) parts.push(...keys((await h.post('/test-gauges/list', { partition: `${m}/3`, limit: 1000 })).body.items));
    expect(parts.sort()).toEqual(whole);
    expect(whole).toHaveLength(12);
  });

  it('counts what a filter matches', async () => {
    const res = await h.post('/test-gauges/aggregate', { advancedFilter: { equals: { property: ['version'], value: 1 } } });
    expect(res.body.items).toEqual([{ count: 4 }]);
  });
});
