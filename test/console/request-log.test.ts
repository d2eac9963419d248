/**
 * The request log of the web console (GET /console/requests): what an entry keeps, who may read it (the
 * capability of the logged operation, on the whole project), that it is bounded, and that it keeps no
 * token or body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LOG_CAPACITY } from '../../src/http/request-log.js';
import { bearer, capability, namedClients, namedClientToken } from '../support/auth.js';
import { startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let events: string;
let scoped: string;
let nothing: string;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('events-reader', 'scoped', 'nothing') });
  events = await namedClientToken(h, 'events-reader', [capability('eventsAcl', ['READ'])]);
  scoped = await namedClientToken(h, 'scoped', [capability('eventsAcl', ['READ'], { datasetScope: { ids: [1] } }), capability('timeSeriesAcl', ['READ'])]);
  nothing = await namedClientToken(h, 'nothing', []);
});
afterAll(() => h.close());

const log = async (token = h.token, project = 'dev') => {
  const res = await h.request('GET', `/api/v1/projects/${project}/console/requests`, undefined, bearer(token));
  expect(res.status).toBe(200);
  return res.body.items as Record<string, any>[];
};

describe('request log', () => {
  it('keeps time, principal, operation, status, duration, SDK headers and the refusal message, newest first', async () => {
    const before = Date.now();
    await h.request('POST', '/events', { items: [{ externalId: 'secret-body-value' }] }, { 'x-cdp-sdk': 'CogniteJavaScriptSDK:10.5.0', 'x-cdp-app': 'my-app', 'cdf-version': '20230101' });
    const refused = await h.request('POST', '/timeseries/list', {}, bearer(events));
    expect(refused.status).toBe(403);
    const [last, first] = (await log()).filter((e) => e.operation !== 'GET /console/requests');
    expect(first).toMatchObject({ principal: 'strata-admin', operation: 'POST /events', status: 201, sdk: 'CogniteJavaScriptSDK:10.5.0', app: 'my-app', version: '20230101' });
    expect(first.error).toBeUndefined();
    expect(first.time).toBeGreaterThanOrEqual(before - 1000);
    expect(first.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof first.requestId).toBe('string');
    expect(last).toMatchObject({ principal: 'events-reader', operation: 'POST /timeseries/list', status: 403 });
    expect(last.error).toBe(refused.body.error.message);
    expect(last.error).toContain('timeSeriesAcl:READ');
  });

  it('keeps a refused token without its principal, and nothing of a token or body', async () => {
    await h.request('POST', '/events/list', { filter: { type: 'body-only-text' } }, { authorization: 'Bearer not-a-real-token-xyz' });
    const entries = await log();
    const refused = entries.find((e) => e.status === 401 && e.operation === 'POST /events/list')!;
    expect(refused.principal).toBeUndefined();
    expect(refused.error).toContain('The access token is malformed');
    const text = JSON.stringify(entries);
    for (const secret of [h.token, events, 'not-a-real-token-xyz', 'secret-body-value', 'body-only-text', 'Bearer']) expect(text).not.toContain(secret);
  });

  it("shows an entry only to a principal holding its operation's capability on the whole project", async () => {
    await h.request('POST', '/events/list', {});
    await h.request('POST', '/timeseries/list', {});
    const ops = (entries: Record<string, any>[]) => new Set(entries.map((e) => e.operation));
    expect(ops(await log(events))).toContain('POST /events/list');
    expect(ops(await log(events))).not.toContain('POST /timeseries/list');
    // Events read in one data set only: the events entries are not for it; its time series ones are.
    expect(ops(await log(scoped))).not.toContain('POST /events/list');
    expect(ops(await log(scoped))).toContain('POST /timeseries/list');
    expect([...ops(await log(nothing))].every((op) => op === 'GET /console/requests')).toBe(true);
  });

  it('is per project, and needs a token with access to the project', async () => {
    await h.request('POST', '/api/v1/projects/other/events/list', {});
    expect((await log(h.token, 'other')).map((e) => e.operation)).toContain('POST /events/list');
    expect((await log(h.token, 'dev')).filter((e) => e.operation === 'POST /events/list').length).toBeGreaterThan(0);
    const anonymous = await h.request('GET', '/console/requests', undefined, { authorization: '' });
    expect(anonymous.status).toBe(401);
  });

  it(`keeps the latest ${REQUEST_LOG_CAPACITY} requests of a project`, async () => {
    for (let i = 0; i < REQUEST_LOG_CAPACITY + 5; i++) await h.request('GET', `/events/${i + 1_000_000}`);
    const entries = await log();
    expect(entries).toHaveLength(REQUEST_LOG_CAPACITY);
    // A request is logged once answered: the read above is not in its own answer.
    expect(entries.every((e) => e.operation === 'GET /events/{id}')).toBe(true);
    expect(new Set(entries.map((e) => e.requestId)).size).toBe(REQUEST_LOG_CAPACITY);
  });
});
