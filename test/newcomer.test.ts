/**
 * What a newcomer with curl meets first: `GET /` says where they are; a JSON body sent as a form (curl -d
 * without -H) is answered with what is wrong; every JSON response ends with a newline, so the shell prompt
 * after it starts on its own line; binary answers are left as they are.
 */
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const raw = (method: string, url: string, payload?: string, headers: Record<string, string> = {}) =>
  h.strata.app.inject({ method: method as 'GET', url, ...(payload !== undefined ? { payload } : {}), headers: { authorization: `Bearer ${h.token}`, ...headers } });
const JSON_TYPE = { 'content-type': 'application/json' };

describe('GET /', () => {
  it('names the API base, the token URL, the operations served, the docs and the health endpoints, and needs no token', async () => {
    const res = await h.strata.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const origin = 'http://localhost:4000';
    expect(res.json()).toEqual({
      name: 'Strata',
      api: `${origin}/api/v1/projects/{project}`,
      identity: origin,
      tokenUrl: `${origin}/oauth2/token`,
      openidConfiguration: `${origin}/.well-known/openid-configuration`,
      openapi: `${origin}/openapi.json`,
      docs: expect.stringContaining('README.md'),
      health: { live: `${origin}/health/live`, ready: `${origin}/health/ready` },
    });
    // Each address it names is served.
    const path = (url: string) => url.slice(origin.length);
    const body = res.json();
    expect((await h.strata.app.inject({ method: 'GET', url: path(body.health.live) })).statusCode).toBe(200);
    expect((await h.strata.app.inject({ method: 'GET', url: path(body.health.ready) })).statusCode).toBe(200);
    expect((await h.strata.app.inject({ method: 'GET', url: path(body.openidConfiguration) })).json().token_endpoint).toBe(body.tokenUrl);
    expect((await h.strata.app.inject({ method: 'GET', url: path(body.openapi) })).json().openapi).toBe('3.1.0');
    expect((await raw('GET', path(body.api).replace('{project}', 'dev') + '/events')).statusCode).toBe(200);
  });
});

describe('a JSON body sent as a form', () => {
  it('is a 415 saying the operation takes JSON and how the body came', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const path of ['/events/list', '/events', '/timeseries/data/list']) {
      const res = await raw('POST', `${h.base}${path}`, '{"limit":1}', form);
      expect(res.statusCode, path).toBe(415);
      expect(res.json().error.message).toBe(
        `POST ${h.base}${path} takes JSON, and the body came as a form (application/x-www-form-urlencoded), which curl -d sends unless given -H "Content-Type: application/json"; send it with "Content-Type: application/json"`,
      );
    }
    const session = await h.strata.app.inject({ method: 'POST', url: `${h.base}/sessions/token`, payload: 'nonce=x', headers: form });
    expect(session.statusCode).toBe(415);
    // The token endpoint takes forms, as OAuth clients send them.
    const token = await h.strata.app.inject({ method: 'POST', url: '/oauth2/token', payload: 'grant_type=client_credentials&client_id=strata-admin&client_secret=wrong', headers: form });
    expect(token.json().error).toBe('invalid_client');
  });
});

describe('responses', () => {
  it('end JSON with a newline: objects, lists rendered by SQL (whole or streamed), errors and the token endpoint', async () => {
    const created = await h.post('/events', {
      items: Array.from({ length: 300 }, (_, i) => ({ externalId: `nl-${i}`, type: 'nl', description: 'd'.repeat(300) })),
    });
    expect(created.status).toBe(201);
    const { id } = created.body.items[0];
    const small = await raw('POST', `${h.base}/events/list`, JSON.stringify({ filter: { type: 'nl' }, limit: 2 }), JSON_TYPE);
    const large = await raw('POST', `${h.base}/events/list`, JSON.stringify({ filter: { type: 'nl' }, limit: 300 }), JSON_TYPE);
    expect(large.rawPayload.length).toBeGreaterThan(64 * 1024);
    const answers = [
      small,
      large,
      await raw('GET', `${h.base}/events/${id}`),
      await raw('POST', `${h.base}/events/byids`, JSON.stringify({ items: [{ id }] }), JSON_TYPE),
      await raw('POST', `${h.base}/events/aggregate`, JSON.stringify({}), JSON_TYPE),
      await raw('GET', `${h.base}/units/systems`),
      await raw('POST', `${h.base}/events/list`, JSON.stringify({ limit: 0 }), JSON_TYPE),
      await raw('GET', `${h.base}/no-such-operation`),
      await raw('GET', `${h.base}/events/%zz`),
      await h.strata.app.inject({ method: 'GET', url: `${h.base}/events` }),
      await h.strata.app.inject({ method: 'POST', url: '/oauth2/token', payload: `grant_type=client_credentials&client_id=strata-admin&client_secret=${h.strata.idp.devClient.secret}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      await h.strata.app.inject({ method: 'GET', url: '/health/live' }),
    ];
    for (const res of answers) {
      expect(res.headers['content-type'], res.body.slice(0, 80)).toMatch(/^application\/json/);
      expect(res.body.endsWith('}\n'), res.body.slice(-80)).toBe(true);
      expect(Number(res.headers['content-length'] ?? res.rawPayload.length)).toBe(res.rawPayload.length);
      expect(() => JSON.parse(res.body)).not.toThrow();
    }
    expect(JSON.parse(large.body).items).toHaveLength(300);
  });

  it('leave protocol buffers as they are', async () => {
    const series = await h.post('/timeseries', { items: [{ externalId: 'nl-series' }] });
    await h.post('/timeseries/data', { items: [{ externalId: 'nl-series', datapoints: [{ timestamp: 1, value: 10 }] }] });
    const res = await raw('POST', `${h.base}/timeseries/data/list`, JSON.stringify({ items: [{ externalId: 'nl-series', start: 0, end: 10 }] }), {
      ...JSON_TYPE,
      accept: 'application/protobuf',
    });
    expect(res.headers['content-type']).toBe('application/protobuf');
    // A message of one item (field 1, length-delimited) holding the id as field 1: the bytes end with the item.
    const reader = protobuf.Reader.create(res.rawPayload);
    expect(reader.uint32()).toBe((1 << 3) | 2);
    expect(reader.uint32()).toBe(res.rawPayload.length - reader.pos);
    expect(errorMessage(await h.post('/timeseries/data/list', { items: [{ externalId: 'nl-none' }] }), 400)).toBeTruthy();
    expect(series.body.items[0].id).toBeGreaterThan(0);
  });
});
