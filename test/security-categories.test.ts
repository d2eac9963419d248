/**
 * Security categories: created, listed by name with a cursor in either order, deleted; unknown ids and
 * malformed bodies refused without changing anything; each operation needs its securityCategoriesAcl action.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('lister', 'scoped') });
});
afterAll(() => h.close());

async function names(query = ''): Promise<{ names: string[]; pages: number }> {
  const out: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await h.get(`/securitycategories?limit=2${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.items.map((c: { name: string }) => c.name));
    cursor = res.body.nextCursor;
    pages++;
  } while (cursor);
  return { names: out, pages };
}

describe('security categories', () => {
  it('creates, lists by name page by page in either order, and deletes', async () => {
    const created = await h.post('/securitycategories', { items: [{ name: 'pumps' }, { name: 'alpha' }, { name: 'zeta' }, { name: 'alpha' }, { name: 'mid' }] });
    expect(created.status).toBe(201);
    expect(created.body.items).toHaveLength(5);
    for (const c of created.body.items) expect(c).toEqual({ id: expect.any(Number), name: expect.any(String) });
    expect(await names()).toEqual({ names: ['alpha', 'alpha', 'mid', 'pumps', 'zeta'], pages: 3 });
    expect((await names('&sort=DESC')).names).toEqual(['zeta', 'pumps', 'mid', 'alpha', 'alpha']);

    const ids = created.body.items.map((c: { id: number }) => c.id);
    expect((await h.post('/securitycategories/delete', { items: [ids[0], ids[1]] })).status).toBe(200);
    expect((await names()).names).toEqual(['alpha', 'mid', 'zeta']);
    await h.post('/securitycategories/delete', { items: ids.slice(2) });
    expect((await h.get('/securitycategories')).body).toEqual({ items: [] });
  });

  it('refuses unknown ids and bad bodies, changing nothing', async () => {
    const [kept] = (await h.post('/securitycategories', { items: [{ name: 'kept' }] })).body.items;
    const res = await h.post('/securitycategories/delete', { items: [kept.id, 987654321] });
    errorMessage(res, 400);
    expect(res.body.error.missing).toEqual([{ id: 987654321 }]);
    expect(errorMessage(await h.post('/securitycategories', { items: [{ name: 'ok' }, { name: '' }] }), 400)).toMatch(/items\/1\/name|items\[1\]\.name/);
    expect(errorMessage(await h.post('/securitycategories', { items: [{ name: 'x', id: 3 }] }), 400)).toMatch(/id/);
    expect(errorMessage(await h.get('/securitycategories?sort=UP'), 400)).toMatch(/sort/);
    expect(errorMessage(await h.get('/securitycategories?limit=1001'), 400)).toMatch(/limit/);
    expect(errorMessage(await h.get('/securitycategories?cursor=forged'), 400)).toMatch(/cursor/i);
    expect((await h.get('/securitycategories')).body.items).toEqual([{ id: kept.id, name: 'kept' }]);
    await h.post('/securitycategories/delete', { items: [kept.id] });
  });

  it('needs securityCategoriesAcl LIST, CREATE and DELETE for each operation', async () => {
    const token = await namedClientToken(h, 'lister', [capability('securityCategoriesAcl', ['LIST'])]);
    expect((await h.request('GET', '/securitycategories', undefined, bearer(token))).status).toBe(200);
    expect(errorMessage(await h.request('POST', '/securitycategories', { items: [{ name: 'x' }] }, bearer(token)), 403)).toMatch(/securityCategoriesAcl:CREATE/);
    expect(errorMessage(await h.request('POST', '/securitycategories/delete', { items: [1] }, bearer(token)), 403)).toMatch(/securityCategoriesAcl:DELETE/);
    expect((await h.get('/securitycategories')).body.items).toEqual([]);
  });

  it('lists and deletes only the categories an idscope grant names', async () => {
    const [a, b] = (await h.post('/securitycategories', { items: [{ name: 'scoped-a' }, { name: 'scoped-b' }] })).body.items;
    const token = await namedClientToken(h, 'scoped', [capability('securityCategoriesAcl', ['LIST', 'DELETE'], { idscope: { ids: [a.id] } })]);
    expect((await h.request('GET', '/securitycategories', undefined, bearer(token))).body.items).toEqual([a]);
    const refused = await h.request('POST', '/securitycategories/delete', { items: [b.id] }, bearer(token));
    expect(errorMessage(refused, 400)).toMatch(/not found/);
    expect((await h.request('POST', '/securitycategories/delete', { items: [a.id] }, bearer(token))).status).toBe(200);
    expect((await h.get('/securitycategories')).body.items).toEqual([b]);
    await h.post('/securitycategories/delete', { items: [b.id] });
  });

  it('keeps each project\'s categories to itself', async () => {
    const [c] = (await h.post('/securitycategories', { items: [{ name: 'dev-only' }] })).body.items;
    expect((await h.get('/api/v1/projects/other/securitycategories')).body.items).toEqual([]);
    errorMessage(await h.request('POST', '/api/v1/projects/other/securitycategories/delete', { items: [c.id] }), 400);
    await h.post('/securitycategories/delete', { items: [c.id] });
  });
});

describe('the number of categories of a project', () => {
  it('is at most 1000: a request that would pass it is refused whole, naming the limit', async () => {
    const own = await startHarness();
    try {
      const make = (n: number, prefix: string) => own.post('/securitycategories', { items: Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}` })) });
      expect((await make(999, 'a')).status).toBe(201);
      const refused = await make(2, 'b');
      expect(errorMessage(refused, 400)).toMatch(/at most 1000 security categories/);
      expect((await make(1, 'c')).status).toBe(201);
      expect(errorMessage(await make(1, 'd'), 400)).toMatch(/at most 1000 security categories/);
      const all = (await own.get('/securitycategories?limit=1000')).body;
      expect(all.items).toHaveLength(1000);
      expect(all.nextCursor).toBeUndefined();
      expect(all.items.some((c: { name: string }) => c.name.startsWith('b') || c.name.startsWith('d'))).toBe(false);
    } finally {
      await own.close();
    }
  });
});
