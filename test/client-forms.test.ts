/**
 * Requests in the forms the official clients send them: a trailing slash before the query string or at the
 * end of the path, fixed query values in another letter case, booleans spelled `True`/`False`, and an
 * unknown operation answered 404 whatever its body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  expect((await h.post('/events', { items: [{ externalId: 'e1' }, { externalId: 'e2' }] })).status).toBe(201);
});
afterAll(() => h.close());

describe('paths', () => {
  it('takes a trailing slash at the end of the path or before the query string as the same operation', async () => {
    const plain = await h.get('/events?limit=1');
    for (const path of ['/events/?limit=1', '/events/?limit=1&']) {
      const res = await h.get(path);
      expect(res.status, path).toBe(200);
      expect(res.body.items, path).toEqual(plain.body.items);
    }
    const listed = await h.post('/events/list/', { limit: 5 });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['e1', 'e2']);
    const [first] = plain.body.items;
    expect((await h.get(`/events/${first.id}/`)).body.externalId).toBe(first.externalId);
  });

  it('answers an unknown operation 404 whatever its body, before reading it', async () => {
    const unknown = '/api/v1/projects/dev/no-such-thing/list';
    for (const [body, type] of [
      ['{"not json', 'application/json'],
      ['<x/>', 'application/xml'],
      [JSON.stringify({ items: [] }), 'application/json'],
    ]) {
      const res = await h.request('POST', unknown, body, { 'content-type': type });
      expect(errorMessage(res, 404), type).toBe('No operation POST /api/v1/projects/dev/no-such-thing/list');
    }
  });
});

describe('query values', () => {
  it('matches fixed values in any letter case', async () => {
    const lower = await h.get('/sessions?status=ready');
    expect(lower.status).toBe(200);
    for (const status of ['READY', 'Ready']) {
      const res = await h.get(`/sessions/?status=${status}`);
      expect(res.status, status).toBe(200);
      expect(res.body).toEqual(lower.body);
    }
    expect(errorMessage(await h.get('/sessions?status=REDY'), 400)).toMatch(/query parameter "status": must be one of "ready", .*got "REDY"/);
  });

  it('takes booleans as True and False', async () => {
    const all = await h.get('/groups?all=true');
    expect(all.status).toBe(200);
    expect((await h.get('/groups/?all=True')).body).toEqual(all.body);
    expect((await h.get('/groups?all=FALSE')).body).toEqual((await h.get('/groups?all=false')).body);
    expect(errorMessage(await h.get('/groups?all=yes'), 400)).toMatch(/query parameter "all": expected boolean/);
  });
});
