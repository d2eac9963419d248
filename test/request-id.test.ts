/**
 * Request ids: every response carries `x-request-id` (a valid one the client sent, or a new one), and a 500
 * message names it so it can be reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route } from '../src/http/route.js';
import { errorMessage, type Harness } from './support/harness.js';
import { manualClock, startCustomHarness } from './support/custom-harness.js';

let h: Harness;
beforeAll(async () => {
  // A clock that stands still, so the principal's bucket (10 requests, refilled at 1 per second) empties
  // however slowly the requests run.
  const clock = manualClock();
  h = await startCustomHarness({
    env: { STRATA_PRINCIPAL_RATE_LIMIT: '1', STRATA_PRINCIPAL_RATE_BURST: '10' },
    build: {
      now: clock.now,
      extraRoutes: [
        route({
          method: 'GET',
          path: '/test/crash',
          capability: { acl: 'eventsAcl', action: 'READ' },
          handler: () => {
            throw new Error('secret internal detail');
          },
        }),
      ],
    },
  });
  // The harness's token was issued after start-up by the real time; the clock must not be behind it.
  clock.catchUp();
});
afterAll(() => h.close());

describe('request ids', () => {
  it('puts the request id in a 500 message, and nothing internal', async () => {
    const res = await h.get('/test/crash');
    const id = res.headers['x-request-id'];
    expect(typeof id).toBe('string');
    expect(errorMessage(res, 500)).toBe(`Internal server error; report request id ${id} if it happens again`);
    const given = await h.request('GET', '/test/crash', undefined, { 'x-request-id': 'client-chosen.42' });
    expect(given.headers['x-request-id']).toBe('client-chosen.42');
    expect(errorMessage(given, 500)).toMatch(/report request id client-chosen\.42 /);
  });

  it('is on every response: 200, 400, 401, 404 and 429', async () => {
    const responses = {
      ok: await h.get('/events'),
      badVersion: await h.request('GET', '/events', undefined, { 'svc-version': 'x' }),
      badBody: await h.post('/events', { items: 'x' }),
      unauthenticated: await h.request('GET', '/events', undefined, { authorization: '' }),
      noProject: await h.get('/api/v1/projects/nowhere/events'),
      noOperation: await h.get('/api/v1/projects/dev/nothing-here'),
      notApi: await h.get('/.well-known/nothing'),
      discovery: await h.get('/.well-known/openid-configuration'),
    };
    let throttled = await h.get('/events');
    for (let i = 0; i < 20 && throttled.status !== 429; i++) throttled = await h.get('/events');
    expect(throttled.status).toBe(429);
    const statuses = Object.fromEntries(Object.entries({ ...responses, throttled }).map(([k, r]) => [k, r.status]));
    expect(statuses).toEqual({
      ok: 200,
      badVersion: 400,
      badBody: 400,
      unauthenticated: 401,
      noProject: 404,
      noOperation: 404,
      notApi: 404,
      discovery: 200,
      throttled: 429,
    });
    const ids = Object.values({ ...responses, throttled }).map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/^[\w.-]{1,128}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
