/**
 * No request makes the server answer 500: every declared operation (and the identity endpoints) gets random
 * JSON bodies built from the API's own vocabulary, random query strings and random path parameters, and
 * must answer with a status below 500, in the error shape when it refuses.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // Something to find, update and delete, so random requests reach past "not found".
  await h.post('/datasets', { items: [{ externalId: 'a' }] });
  await h.post('/assets', { items: [{ externalId: 'a', name: 'a' }, { externalId: 'b', name: 'b', parentExternalId: 'a' }] });
  await h.post('/events', { items: [{ externalId: 'a', description: 'a b', metadata: { a: 'b' }, assetIds: [1], dataSetId: 1 }] });
  await h.post('/timeseries', { items: [{ externalId: 'a', instanceId: { space: 'a', externalId: 'a' } }, { externalId: 'b', isString: true }] });
});
afterAll(() => h.close());

const KEYS = [
  'items', 'id', 'externalId', 'instanceId', 'space', 'filter', 'advancedFilter', 'aggregateFilter', 'sort', 'limit',
  'cursor', 'partition', 'property', 'order', 'nulls', 'value', 'values', 'and', 'or', 'not', 'equals', 'in', 'range',
  'prefix', 'exists', 'containsAny', 'containsAll', 'search', 'gt', 'gte', 'lt', 'lte', 'update', 'set', 'setNull', 'add',
  'remove', 'metadata', 'assetIds', 'dataSetIds', 'dataSetId', 'assetSubtreeIds', 'startTime', 'endTime', 'min', 'max',
  'isNull', 'aggregate', 'properties', 'path', 'ignoreUnknownIds', 'name', 'description', 'parentId', 'parentExternalId',
  'recursive', 'isString', 'isStep', 'datapoints', 'timestamp', 'start', 'end', 'granularity', 'aggregates', 'timeZone',
  'before', 'includeOutsidePoints', 'status', 'code', 'capabilities', 'sourceId', 'members', '__proto__', 'constructor',
];
const scalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1, 2, 1.5, 2 ** 53, -(2 ** 63), 1e308, '', 'a', '1/2', '0/0', '2d-ago', 'now', '1h', 'x'.repeat(300)),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.string(),
  fc.constantFrom(...KEYS),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 5 }),
})).value;
const body = fc.oneof(json, fc.record({ items: fc.array(json, { minLength: 1, maxLength: 3 }) }, { requiredKeys: [] }));
const pathParam = fc.oneof(fc.constantFrom('1', '2', '0', '-1', 'abc', '9007199254740993', '1e3', '%20'), fc.nat().map(String));
const query = fc.dictionary(fc.constantFrom(...KEYS, 'includeMetadata', 'minStartTime', 'all'), fc.oneof(fc.string(), fc.constantFrom('1', '[1]', 'true', '1/2')), {
  maxKeys: 3,
});

function expectHandled(res: { status: number; body: any }, what: string) {
  expect(res.status, `${what} -> ${res.status} ${JSON.stringify(res.body)}`).toBeLessThan(500);
  if (res.status >= 400) expect(typeof res.body?.error?.message, `${what}: ${JSON.stringify(res.body)}`).toBe('string');
}

describe('no request makes the server answer 500', () => {
  it('on every declared operation, with random bodies, queries and path parameters', async () => {
    const routes = h.strata.routes;
    expect(routes.length).toBeGreaterThan(30);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: routes.length - 1 }), body, query, pathParam, async (r, payload, q, param) => {
        const def = routes[r];
        const path = def.path.replace(/:[a-zA-Z]+/g, encodeURIComponent(param));
        const qs = new URLSearchParams(q as Record<string, string>).toString();
        const res = await h.request(def.method, `${path}${qs ? `?${qs}` : ''}`, def.method === 'GET' ? undefined : payload);
        expectHandled(res, `${def.method} ${path}?${qs} ${JSON.stringify(payload)}`);
      }),
      { numRuns: 1500, seed: 4242 },
    );
  });

  it('on the identity endpoints', async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.string(), async (payload, basic) => {
        const res = await h.strata.app.inject({
          method: 'POST',
          url: '/oauth2/token',
          payload: JSON.stringify(payload),
          headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(basic).toString('base64')}` },
        });
        expect(res.statusCode, res.body).toBeLessThan(500);
        const inspect = await h.request('GET', '/api/v1/token/inspect', undefined, { authorization: `Bearer ${basic}` });
        expect(inspect.status).toBeLessThan(500);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});

describe('requests refused before any route runs still get the error shape', () => {
  it('a path with bad percent-encoding is a 400, and an over-long path segment a 414', async () => {
    const badUrl = await h.get('/events/%ZZ');
    expect(errorMessage(badUrl, 400)).toMatch(/not a valid URL \(check its percent-encoding\)/);
    expect(badUrl.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(errorMessage(await h.get(`/api/v1/projects/${'p'.repeat(150)}/events`), 414)).toMatch(/longer than 100 characters/);
  });

  it('a request that is not valid HTTP, or whose headers are too large, gets a JSON error before the connection closes', async () => {
    const url = new URL(await h.strata.app.listen({ host: '127.0.0.1', port: 0 }));
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(url.port), url.hostname, () => socket.write(text));
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString('utf8')));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
    const parse = (raw: string) => {
      const [head, body] = raw.split('\r\n\r\n');
      return { status: Number(head.split(' ')[1]), headers: { 'content-type': /content-type: ([^\r]+)/i.exec(head)?.[1] }, body: JSON.parse(body) };
    };
    const framing = parse(await send('POST /api/v1/projects/dev/events HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'));
    expect(framing).toMatchObject({ status: 400, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(errorMessage(framing, 400)).toMatch(/not valid HTTP\/1\.1/);
    const headers = parse(await send(`GET /api/v1/projects/dev/events HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`));
    expect(errorMessage(headers, 431)).toMatch(/larger than \d+ bytes/);
  });
});
