/**
 * Data products over HTTP: a resource keyed by its external id alone (no `id` in any answer), and versions
 * living under a product (created, listed, named and deleted under it, gone with it), on both backends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../src/storage/sql.js';
import { bearer, builtInSigner, capability, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
const ALPHA = { 'cdf-version': '20230101-alpha' };
const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  h.request(method, path, body, { ...ALPHA, ...headers });
const post = (path: string, body: unknown) => call('POST', path, body);
const get = (path: string) => call('GET', path);

async function created(path: string, item: Record<string, unknown>) {
  const res = await post(path, { items: [item] });
  if (res.status !== 201) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items[0];
}

const view = (externalId: string) => ({ space: 'dp_space', externalId, version: '1' });

beforeAll(async () => {
  h = await startHarness();
  await h.post('/models/spaces', { items: [{ space: 'dp_space' }, { space: 'other_space' }, { space: 'dp-default' }] });
  await h.post('/models/containers', { items: [{ space: 'dp_space', externalId: 'c', properties: { p: { type: { type: 'text' } } } }] });
  const props = { p: { container: { type: 'container', space: 'dp_space', externalId: 'c' }, containerPropertyIdentifier: 'p' } };
  const views = await h.post('/models/views', { items: ['v1', 'v2', 'v3'].map((externalId) => ({ space: 'dp_space', externalId, version: '1', properties: props })) });
  expect(views.status).toBe(200);
});
afterAll(() => h.close());

describe('data products', () => {
  it('are created with the defaults the clients read, and answered without an internal id', async () => {
    const item = await created('/dataproducts', { externalId: 'dp-default', name: 'Defaults' });
    expect(item).toEqual({
      externalId: 'dp-default',
      name: 'Defaults',
      schemaSpace: 'dp-default',
      isGoverned: false,
      tags: [],
      domains: [],
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
    expect((await get('/dataproducts/dp-default')).body).toEqual(item);
    const full = await created('/dataproducts', { externalId: 'dp-full', name: 'Full', schemaSpace: 'dp_space', description: 'd', isGoverned: true, tags: ['a', 'b'] });
    expect(full).toMatchObject({ schemaSpace: 'dp_space', description: 'd', isGoverned: true, tags: ['a', 'b'] });
    expect(full).not.toHaveProperty('id');
  });

  it('refuse a schema space that does not exist, naming it, and create nothing', async () => {
    expect(errorMessage(await post('/dataproducts', { items: [{ externalId: 'dp-nospace', name: 'x', schemaSpace: 'nowhere' }] }), 400)).toMatch(
      /items\[0\]\.schemaSpace: the space "nowhere" does not exist/,
    );
    expect(errorMessage(await post('/dataproducts', { items: [{ externalId: 'dp-nospace', name: 'x' }] }), 400)).toMatch(/items\[0\]\.externalId: the space "dp-nospace"/);
    expect((await get('/dataproducts/dp-nospace')).status).toBe(400);
  });

  it('refuse a schema space outside what the principal sees of data modeling, as one that does not exist', async () => {
    const signer = await builtInSigner(h);
    await createGroup(h, {
      name: 'dp scoped',
      members: ['dp scoped'],
      capabilities: [capability('dataProductsAcl', ['CREATE', 'READ']), capability('dataModelsAcl', ['READ'], { spaceIdScope: { spaceIds: ['other_space'] } })],
    });
    const token = bearer(await signer.sign({ sub: 'dp scoped' }));
    const hidden = await call('POST', '/dataproducts', { items: [{ externalId: 'dp-scoped', name: 'x', schemaSpace: 'dp_space' }] }, token);
    expect(errorMessage(hidden, 400)).toMatch(/the space "dp_space" does not exist/);
    expect((await call('POST', '/dataproducts', { items: [{ externalId: 'dp-scoped', name: 'x', schemaSpace: 'other_space' }] }, token)).status).toBe(201);
  });

  it('refuse an external id taken (409 duplicated) and malformed ones', async () => {
    await created('/dataproducts', { externalId: 'dp-taken', name: 'x', schemaSpace: 'dp_space' });
    const res = await post('/dataproducts', { items: [{ externalId: 'dp-taken', name: 'y', schemaSpace: 'dp_space' }] });
    expect(errorMessage(res, 409)).toMatch(/dp-taken/);
    expect(res.body.error.duplicated).toEqual([{ externalId: 'dp-taken' }]);
    expect(errorMessage(await post('/dataproducts', { items: [{ externalId: 'Upper', name: 'x', schemaSpace: 'dp_space' }] }), 400)).toMatch(/items\[0\]\.externalId/);
    expect(errorMessage(await post('/dataproducts', { items: [{ name: 'x', schemaSpace: 'dp_space' }] }), 400)).toMatch(/externalId/);
    expect(errorMessage(await post('/dataproducts', { items: [{ externalId: 'dp-x', name: 'x', schemaSpace: 'dp_space', domains: ['d'] }] }), 400)).toMatch(/domains/);
  });

  it('take one item per create, update and delete, as the official clients send them', async () => {
    const two = [
      { externalId: 'dp-two-a', name: 'a', schemaSpace: 'dp_space' },
      { externalId: 'dp-two-b', name: 'b', schemaSpace: 'dp_space' },
    ];
    expect(errorMessage(await post('/dataproducts', { items: two }), 400)).toMatch(/items/);
    expect(errorMessage(await post('/dataproducts/delete', { items: two.map((t) => ({ externalId: t.externalId })) }), 400)).toMatch(/items/);
  });

  it('are listed page by page with a cursor, each once', async () => {
    for (const n of [1, 2, 3, 4, 5]) await created('/dataproducts', { externalId: `dp-page-${n}`, name: `p${n}`, schemaSpace: 'dp_space' });
    const all = (await get('/dataproducts?limit=1000')).body.items.map((i: { externalId: string }) => i.externalId);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await get(`/dataproducts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      paged.push(...res.body.items.map((i: { externalId: string }) => i.externalId));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all);
    expect(all).toEqual(expect.arrayContaining(['dp-page-1', 'dp-page-5']));
    expect(errorMessage(await get('/dataproducts?limit=0'), 400)).toMatch(/limit/);
  });

  it('are read by external ids: missing, ignoreUnknownIds, a reference named twice, no internal ids, at most 100', async () => {
    await created('/dataproducts', { externalId: 'dp-read', name: 'r', schemaSpace: 'dp_space' });
    const both = await post('/dataproducts/byids', { items: [{ externalId: 'dp-read' }, { externalId: 'dp-full' }] });
    expect(both.body.items.map((i: { externalId: string }) => i.externalId)).toEqual(['dp-read', 'dp-full']);
    const missing = await post('/dataproducts/byids', { items: [{ externalId: 'dp-read' }, { externalId: 'dp-unknown' }] });
    expect(errorMessage(missing, 400)).toMatch(/dp-unknown/);
    expect(missing.body.error.missing).toEqual([{ externalId: 'dp-unknown' }]);
    const ignored = await post('/dataproducts/byids', { items: [{ externalId: 'dp-read' }, { externalId: 'dp-unknown' }], ignoreUnknownIds: true });
    expect(ignored.body.items.map((i: { externalId: string }) => i.externalId)).toEqual(['dp-read']);
    const twice = await post('/dataproducts/byids', { items: [{ externalId: 'dp-read' }, { externalId: 'dp-read' }] });
    expect(errorMessage(twice, 400)).toMatch(/dp-read/);
    expect(twice.body.error.duplicated).toEqual([{ externalId: 'dp-read' }]);
    expect(errorMessage(await post('/dataproducts/byids', { items: [{ id: 1 }] }), 400)).toMatch(/items\[0\]/);
    const many = Array.from({ length: 101 }, (_, i) => ({ externalId: `dp-${i}` }));
    expect(errorMessage(await post('/dataproducts/byids', { items: many }), 400)).toMatch(/items.*100/);
    expect((await post('/dataproducts/byids', { items: many.slice(0, 100), ignoreUnknownIds: true })).status).toBe(200);
    const unknown = await get('/dataproducts/dp-unknown');
    expect(unknown.body.error.missing).toEqual([{ externalId: 'dp-unknown' }]);
  });

  it('are updated by the patches the clients send; fixed fields are refused by name', async () => {
    await created('/dataproducts', { externalId: 'dp-upd', name: 'before', schemaSpace: 'dp_space', description: 'd', tags: ['a', 'b'] });
    const upd = (update: Record<string, unknown>) => post('/dataproducts/update', { items: [{ externalId: 'dp-upd', update }] });
    const res = await upd({ name: { set: 'after' }, description: { setNull: true }, isGoverned: { set: true }, tags: { add: ['c'], remove: ['a'] } });
    expect(res.status).toBe(200);
    expect(res.body.items[0]).toMatchObject({ externalId: 'dp-upd', name: 'after', isGoverned: true, tags: ['b', 'c'] });
    expect(res.body.items[0]).not.toHaveProperty('description');
    expect((await upd({ tags: { set: [] } })).body.items[0].tags).toEqual([]);
    for (const field of ['schemaSpace', 'domains', 'externalId']) {
      expect(errorMessage(await upd({ [field]: { set: field === 'domains' ? ['x'] : 'x' } }), 400)).toMatch(new RegExp(`items\\[0\\]\\.update\\.${field}: ${field} is fixed`));
    }
    expect(errorMessage(await upd({ name: { setNull: true } }), 400)).toMatch(/update\.name/);
    expect(errorMessage(await upd({ tags: { set: Array.from({ length: 11 }, (_, i) => `t${i}`) } }), 400)).toMatch(/tags/);
    const unknown = await post('/dataproducts/update', { items: [{ externalId: 'dp-nope', update: { name: { set: 'x' } } }] });
    expect(unknown.body.error.missing).toEqual([{ externalId: 'dp-nope' }]);
    expect((await get('/dataproducts/dp-upd')).body.name).toBe('after');
  });

  it('need the alpha channel, as the official clients call them', async () => {
    expect(errorMessage(await h.get('/dataproducts'), 400)).toMatch(/alpha operation/);
  });
});

describe('data product versions', () => {
  beforeAll(async () => {
    await created('/dataproducts', { externalId: 'dp-v', name: 'versions', schemaSpace: 'dp_space' });
    await created('/dataproducts', { externalId: 'dp-w', name: 'more versions', schemaSpace: 'dp_space' });
  });

  it('are created under their product with the defaults the clients read', async () => {
    const v = await created('/dataproducts/dp-v/versions', { version: '1.0.0', views: [view('v1')], description: 'first', terms: { usage: 'internal' } });
    expect(v).toEqual({
      version: '1.0.0',
      views: [view('v1')],
      status: 'draft',
      description: 'first',
      terms: { usage: 'internal' },
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
    expect(await created('/dataproducts/dp-v/versions', { version: '0.1.0' })).toMatchObject({ views: [], terms: {}, status: 'draft' });
    expect((await get('/dataproducts/dp-v/versions/1.0.0')).body).toEqual(v);
  });

  it('under a product that does not exist are a 400 naming it, for every operation', async () => {
    const where = /data product \{"externalId":"dp-none"\} does not exist/;
    expect(errorMessage(await post('/dataproducts/dp-none/versions', { items: [{ version: '1.0.0' }] }), 400)).toMatch(where);
    expect(errorMessage(await get('/dataproducts/dp-none/versions'), 400)).toMatch(where);
    expect(errorMessage(await get('/dataproducts/dp-none/versions/1.0.0'), 400)).toMatch(where);
    expect(errorMessage(await post('/dataproducts/dp-none/versions/update', { items: [{ version: '1.0.0', update: {} }] }), 400)).toMatch(where);
    expect(errorMessage(await post('/dataproducts/dp-none/versions/delete', { items: [{ version: '1.0.0' }] }), 400)).toMatch(where);
  });

  it('are keyed by version under their product: taken under one, free under another', async () => {
    await created('/dataproducts/dp-w/versions', { version: '1.0.0' });
    const again = await post('/dataproducts/dp-w/versions', { items: [{ version: '1.0.0' }] });
    expect(errorMessage(again, 409)).toMatch(/1\.0\.0/);
    expect(again.body.error.duplicated).toEqual([{ version: '1.0.0' }]);
    const list = (path: string) => get(path).then((r) => r.body.items.map((i: { version: string }) => i.version).sort());
    expect(await list('/dataproducts/dp-w/versions')).toEqual(['1.0.0']);
    expect(await list('/dataproducts/dp-v/versions')).toEqual(['0.1.0', '1.0.0']);
    const unknown = await get('/dataproducts/dp-w/versions/0.1.0');
    expect(unknown.body.error.missing).toEqual([{ version: '0.1.0' }]);
    expect(errorMessage(await post('/dataproducts/dp-w/versions', { items: [{ version: '1.0' }] }), 400)).toMatch(/items\[0\]\.version/);
  });

  it('are listed under their product page by page', async () => {
    await created('/dataproducts', { externalId: 'dp-pages', name: 'pages', schemaSpace: 'dp_space' });
    for (const n of [1, 2, 3]) await created('/dataproducts/dp-pages/versions', { version: `${n}.0.0` });
    const first = await get('/dataproducts/dp-pages/versions?limit=2');
    expect(first.body.items.map((i: { version: string }) => i.version)).toEqual(['1.0.0', '2.0.0']);
    const second = await get(`/dataproducts/dp-pages/versions?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items.map((i: { version: string }) => i.version)).toEqual(['3.0.0']);
    expect(second.body.nextCursor).toBeUndefined();
    // A cursor belongs to its product's list.
    expect(errorMessage(await get(`/dataproducts/dp-v/versions?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`), 400)).toMatch(/cursor/);
  });

  it('name views of data modeling, each once', async () => {
    const unknown = await post('/dataproducts/dp-w/versions', { items: [{ version: '2.0.0', views: [view('v1'), view('nope')] }] });
    expect(errorMessage(unknown, 400)).toMatch(/items\[0\]\.views\[1\]: the view dp_space:nope\/1 does not exist/);
    const twice = await post('/dataproducts/dp-w/versions', { items: [{ version: '2.0.0', views: [view('v1'), view('v1')] }] });
    expect(errorMessage(twice, 400)).toMatch(/items\[0\]\.views\[1\]: the view dp_space:v1\/1 is listed more than once/);
    expect((await get('/dataproducts/dp-w/versions/2.0.0')).status).toBe(400);
  });

  it('are updated: status, description, terms by modify, views only added', async () => {
    await created('/dataproducts/dp-w/versions', { version: '3.0.0', views: [view('v1')], terms: { usage: 'u', limitations: 'l' } });
    const upd = (update: Record<string, unknown>) => post('/dataproducts/dp-w/versions/update', { items: [{ version: '3.0.0', update }] });
    const res = await upd({ status: { set: 'published' }, description: { set: 'now' }, terms: { modify: { usage: { set: 'u2' }, limitations: { setNull: true } } }, views: { add: [view('v2')] } });
    expect(res.status).toBe(200);
    expect(res.body.items[0]).toMatchObject({ version: '3.0.0', status: 'published', description: 'now', terms: { usage: 'u2' }, views: [view('v1'), view('v2')] });
    expect((await upd({ terms: { modify: { usage: { setNull: true } } } })).body.items[0].terms).toEqual({});
    expect(errorMessage(await upd({ views: { add: [view('v1')] } }), 400)).toMatch(/views\[2\]: the view dp_space:v1\/1 is listed more than once/);
    expect(errorMessage(await upd({ views: { add: [view('gone')] } }), 400)).toMatch(/items\[0\]\.update\.views\.add\[0\]: the view dp_space:gone\/1 does not exist/);
    expect(errorMessage(await upd({ views: { remove: [view('v1')] } }), 400)).toMatch(/views/);
    expect(errorMessage(await upd({ views: { set: [view('v1')] } }), 400)).toMatch(/views/);
    expect(errorMessage(await upd({ status: { set: 'retired' } }), 400)).toMatch(/status/);
    expect(errorMessage(await upd({ version: { set: '9.9.9' } }), 400)).toMatch(/items\[0\]\.update\.version: version is fixed/);
    expect(errorMessage(await upd({ terms: { set: {} } }), 400)).toMatch(/terms/);
    const other = await post('/dataproducts/dp-v/versions/update', { items: [{ version: '3.0.0', update: { status: { set: 'deprecated' } } }] });
    expect(other.body.error.missing).toEqual([{ version: '3.0.0' }]);
  });

  it('are deleted under their product, and with it', async () => {
    await created('/dataproducts', { externalId: 'dp-gone', name: 'gone', schemaSpace: 'dp_space' });
    for (const version of ['1.0.0', '2.0.0', '3.0.0']) await created('/dataproducts/dp-gone/versions', { version, views: [view('v3')] });
    const missing = await post('/dataproducts/dp-gone/versions/delete', { items: [{ version: '1.0.0' }, { version: '9.0.0' }] });
    expect(missing.body.error.missing).toEqual([{ version: '9.0.0' }]);
    expect((await post('/dataproducts/dp-gone/versions/delete', { items: [{ version: '1.0.0' }, { version: '9.0.0' }], ignoreUnknownIds: true })).status).toBe(200);
    expect((await get('/dataproducts/dp-gone/versions')).body.items.map((i: { version: string }) => i.version)).toEqual(['2.0.0', '3.0.0']);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ version: `${i}.0.0` }));
    expect(errorMessage(await post('/dataproducts/dp-gone/versions/delete', { items: eleven }), 400)).toMatch(/items/);
    // The same version under another product stays.
    await created('/dataproducts/dp-w/versions', { version: '2.0.0' });
    expect((await post('/dataproducts/delete', { items: [{ externalId: 'dp-gone' }] })).status).toBe(200);
    expect(errorMessage(await get('/dataproducts/dp-gone/versions'), 400)).toMatch(/does not exist/);
    // No version is left behind without its product.
    const orphans = await h.strata.services.db.all<{ n: number }>(
      sql`SELECT count(*) AS n FROM data_product_versions v WHERE NOT EXISTS (SELECT 1 FROM data_products p WHERE p.id = v.data_product_id)`,
    );
    expect(Number(orphans[0].n)).toBe(0);
    await created('/dataproducts', { externalId: 'dp-gone', name: 'again', schemaSpace: 'dp_space' });
    expect((await get('/dataproducts/dp-gone/versions')).body.items).toEqual([]);
    expect((await get('/dataproducts/dp-w/versions/2.0.0')).status).toBe(200);
    const unknown = await post('/dataproducts/delete', { items: [{ externalId: 'dp-never' }] });
    expect(unknown.body.error.missing).toEqual([{ externalId: 'dp-never' }]);
    expect((await post('/dataproducts/delete', { items: [{ externalId: 'dp-never' }], ignoreUnknownIds: true })).status).toBe(200);
  });
});
