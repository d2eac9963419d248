/**
 * An operation of the reference that Strata does not serve answers 501 naming it; a path the reference does
 * not have, or has with another method, answers 404. Both come from the method and path alone: before the
 * token, the project and the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readReferenceCatalog, wholePath } from '../src/http/reference-catalog.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const NOT_YET = /^Strata does not implement (\S+ \S+) yet: GET \/openapi\.json lists the operations it serves, and docs\/coverage\.md in its source those it lacks$/;

async function send(method: string, url: string, payload?: string, headers: Record<string, string> = {}) {
  const res = await h.strata.app.inject({ method: method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
}

/** The operation a 501 names. */
async function named(method: string, path: string): Promise<string> {
  const message = errorMessage(await h.request(method, path, method === 'GET' ? undefined : {}), 501);
  expect(message).toMatch(NOT_YET);
  return NOT_YET.exec(message)![1];
}

describe('an operation of the reference that Strata does not serve', () => {
  it('answers 501 naming the operation, its parameters matched in any segment', async () => {
    expect(await named('POST', '/annotations/list')).toBe('POST /annotations/list');
    expect(await named('GET', '/annotations/123')).toBe('GET /annotations/{annotationId}');
    expect(await named('GET', '/geospatial/featuretypes/ft1/features')).toBe('GET /geospatial/featuretypes/{featureTypeExternalId}/features');
    expect(await named('POST', '/geospatial/featuretypes/ft1/features/list')).toBe('POST /geospatial/featuretypes/{featureTypeExternalId}/features/list');
    expect(await named('GET', '/raw/dbs/plant/tables')).toBe('GET /raw/dbs/{dbName}/tables');
  });

  it('matches as the router does: a literal segment before a parameter, a trailing slash or query string ignored', async () => {
    expect(await named('POST', '/annotations/byids')).toBe('POST /annotations/byids');
    expect(await named('GET', '/geospatial/featuretypes/ft7/features/')).toBe('GET /geospatial/featuretypes/{featureTypeExternalId}/features');
    expect(await named('GET', '/annotations/123?limit=5')).toBe('GET /annotations/{annotationId}');
    // GET /annotations/list is an annotation whose id is "list", as a router would read it.
    expect(await named('GET', '/annotations/list')).toBe('GET /annotations/{annotationId}');
    const head = await send('HEAD', `${h.base}/annotations/123`);
    expect(head.status).toBe(501);
  });

  it('answers without a token, with a wrong one, and for a project that does not exist, the same', async () => {
    const url = `${h.base}/annotations/list`;
    const answers = [
      await send('POST', url),
      await send('POST', url, undefined, { authorization: 'Bearer not-a-token' }),
      await send('POST', url, undefined, { 'api-key': 'k' }),
      await send('POST', '/api/v1/projects/no-such-project/annotations/list'),
    ];
    for (const res of answers) {
      expect(res.status).toBe(501);
      expect(res.body.error.message).toMatch(/^Strata does not implement POST \/annotations\/list yet/);
    }
  });

  it('never reads the body', async () => {
    const url = `${h.base}/annotations/list`;
    const bodies: Array<[string | Buffer, Record<string, string>]> = [
      ['{"not json', { 'content-type': 'application/json' }],
      ['a=b', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['<x/>', { 'content-type': 'application/xml' }],
      [Buffer.from('not gzip'), { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
      ['x'.repeat(h.strata.app.initialConfig.bodyLimit! + 1), { 'content-type': 'application/json' }],
    ];
    for (const [payload, headers] of bodies) {
      const res = await send('POST', url, payload as string, headers);
      expect(res.status, JSON.stringify(headers)).toBe(501);
      expect(res.body.error.code).toBe(501);
    }
  });

  it('carries the request id', async () => {
    const res = await send('POST', `${h.base}/annotations/list`, undefined, { 'x-request-id': 'probe-501' });
    expect(res.headers['x-request-id']).toBe('probe-501');
  });
});

describe('a path the reference does not have', () => {
  it('answers 404, as does a path it has with another method (naming the methods the path takes)', async () => {
    expect(errorMessage(await h.request('POST', '/no-such-thing/list', {}), 404)).toBe('No operation POST /api/v1/projects/dev/no-such-thing/list');
    expect(errorMessage(await h.request('GET', '/login'), 404)).toBe('No operation GET /api/v1/projects/dev/login');
    expect(errorMessage(await send('GET', '/nothing/here'), 404)).toBe('Not found: /nothing/here');
    // The reference has POST /timeseries/synthetic/query only; Strata serves GET and POST /events.
    expect(errorMessage(await h.request('GET', '/timeseries/synthetic/query'), 404)).toBe('No operation GET /api/v1/projects/dev/timeseries/synthetic/query; the path takes POST');
    expect(errorMessage(await h.request('PUT', '/events', {}), 404)).toBe('No operation PUT /api/v1/projects/dev/events; the path takes GET, POST');
  });
});

describe('every operation of the reference', () => {
  it('is served, or answers 501 naming itself', async () => {
    const doc = (await send('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const served = new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    let unserved = 0;
    for (const op of readReferenceCatalog()) {
      const template = wholePath(op.path);
      const url = template.replace('{project}', 'dev').replace(/\{\w+\}/g, 'p1');
      const res = await send(op.method, url, undefined, { authorization: `Bearer ${h.token}` });
      const where = `${op.method} ${op.path}`;
      if (served.has(`${op.method} ${template}`)) {
        expect(res.status, where).not.toBe(501);
        expect(res.body?.error?.message ?? '', where).not.toMatch(/^No operation/);
      } else {
        unserved++;
        expect(res.status, where).toBe(501);
        // The same template may be listed twice (the reference names one path by two operation ids).
        expect(res.body.error.message, where).toContain(` ${op.method} `);
      }
    }
    expect(unserved).toBeGreaterThan(100);
  });
});
