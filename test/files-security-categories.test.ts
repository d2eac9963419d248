/**
 * Files in security categories: a file is visible only to principals that are members
 * (`securityCategoriesAcl:MEMBEROF`) of every category it is in, in every read and write; hidden files
 * behave as if they did not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let a: number;
let b: number;
const ids: Record<string, number> = {};

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('in-a', 'in-none', 'in-all', 'writer', 'asset-reader') });
  [a, b] = (await h.post('/securitycategories', { items: [{ name: 'A' }, { name: 'B' }] })).body.items.map((c: { id: number }) => c.id);
  for (const [externalId, securityCategories] of [
    ['open', []],
    ['in-a', [a]],
    ['in-a-b', [a, b]],
    ['in-b', [b]],
  ] as const) {
    const res = await h.post('/files', { externalId, name: `pump ${externalId}.txt`, securityCategories });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids[externalId] = res.body.id;
  }
});
afterAll(() => h.close());

const READ = capability('filesAcl', ['READ']);
const seen = async (token: string) =>
  ((await h.request('POST', '/files/list', { limit: 100 }, bearer(token))).body.items as Array<{ externalId: string }>).map((f) => f.externalId).sort();

describe('files in security categories', () => {
  it('are listed, counted, searched and read by id only by members of all their categories', async () => {
    const inA = await namedClientToken(h, 'in-a', [READ, capability('securityCategoriesAcl', ['MEMBEROF'], { idscope: { ids: [a] } })]);
    const none = await namedClientToken(h, 'in-none', [READ]);
    const all = await namedClientToken(h, 'in-all', [READ, capability('securityCategoriesAcl', ['MEMBEROF'])]);

    expect(await seen(h.token)).toEqual(['in-a', 'in-a-b', 'in-b', 'open']);
    expect(await seen(all)).toEqual(['in-a', 'in-a-b', 'in-b', 'open']);
    expect(await seen(inA)).toEqual(['in-a', 'open']);
    expect(await seen(none)).toEqual(['open']);

    const count = await h.request('POST', '/files/aggregate', {}, bearer(inA));
    expect(count.body.items[0].count).toBe(2);
    const search = await h.request('POST', '/files/search', { search: { name: 'pump' } }, bearer(inA));
    expect(search.body.items.map((f: { externalId: string }) => f.externalId).sort()).toEqual(['in-a', 'open']);

    expect((await h.request('GET', `/files/${ids['in-a']}`, undefined, bearer(inA))).status).toBe(200);
    const hidden = await h.request('POST', '/files/byids', { items: [{ id: ids['in-a-b'] }] }, bearer(inA));
    const unknown = await h.request('POST', '/files/byids', { items: [{ id: 987654321 }] }, bearer(inA));
    expect(errorMessage(hidden, 400)).toMatch(/not found/);
    expect(hidden.body.error.missing).toEqual([{ id: ids['in-a-b'] }]);
    expect(errorMessage(unknown, 400)).toMatch(/not found/);
    const link = await h.request('POST', '/files/downloadlink', { items: [{ id: ids['in-b'] }] }, bearer(inA));
    expect(link.body.error.missing).toEqual([{ id: ids['in-b'] }]);
    const byPath = await h.request('GET', `/files/${ids['in-b']}`, undefined, bearer(inA));
    const unknownByPath = await h.request('GET', '/files/987654321', undefined, bearer(inA));
    expect(byPath.status).toBe(unknownByPath.status);
    expect(byPath.body.error.message.replace(String(ids['in-b']), 'ID')).toBe(unknownByPath.body.error.message.replace('987654321', 'ID'));
  });

  it('cannot be changed or deleted by a principal outside their categories, and nothing changes', async () => {
    const writer = await namedClientToken(h, 'writer', [capability('filesAcl', ['READ', 'WRITE'])]);
    const update = await h.request('POST', '/files/update', { items: [{ id: ids['in-b'], update: { source: { set: 'renamed' } } }] }, bearer(writer));
    expect(errorMessage(update, 400)).toMatch(/not found/);
    errorMessage(await h.request('POST', '/files/delete', { items: [{ id: ids['in-b'] }] }, bearer(writer)), 400);
    expect((await h.post('/files/byids', { items: [{ id: ids['in-b'] }] })).body.items[0].source).toBeUndefined();
    const open = await h.request('POST', '/files/update', { items: [{ id: ids.open, update: { source: { set: 'writer' } } }] }, bearer(writer));
    expect(open.status, JSON.stringify(open.body)).toBe(200);
  });

  it('restrict nothing once their category is deleted', async () => {
    await h.post('/securitycategories/delete', { items: [b] });
    const none = await namedClientToken(h, 'in-none', [READ]);
    expect(await seen(none)).toEqual(['in-b', 'open']);
  });

  it('leave resources without categories as they were for a principal in none', async () => {
    const [root] = (await h.post('/assets', { items: [{ externalId: 'root', name: 'root' }] })).body.items;
    await h.post('/assets', { items: [{ externalId: 'child', name: 'child', parentId: root.id }] });
    const reader = await namedClientToken(h, 'asset-reader', [capability('assetsAcl', ['READ'])]);
    const children = await h.request('POST', '/assets/list', { filter: { parentIds: [root.id] } }, bearer(reader));
    expect(children.status, JSON.stringify(children.body)).toBe(200);
    expect(children.body.items.map((x: { externalId: string }) => x.externalId)).toEqual(['child']);
    const advanced = await h.request('POST', '/assets/list', { advancedFilter: { equals: { property: ['parentId'], value: root.id } } }, bearer(reader));
    expect(advanced.body.items.map((x: { externalId: string }) => x.externalId)).toEqual(['child']);
  });
});
