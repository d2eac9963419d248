/**
 * CORS for browser applications: off by default; for each origin in STRATA_CORS_ORIGINS, preflights are
 * answered before authentication with the methods and headers the official client sends, responses expose
 * the headers a client reads, and the origin is echoed exactly (never `*`); other origins get no CORS header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import { startSdkHarness } from './support/sdk.js';

const APP = 'https://app.example.com';
const LOCAL = 'http://localhost:3000';

async function call(h: Harness, method: string, url: string, headers: Record<string, string>): Promise<Response> {
  const res = await h.strata.app.inject({ method: method as 'GET', url, headers });
  let body: unknown;
  try {
    body = res.body ? JSON.parse(res.body) : undefined;
  } catch {
    body = res.body;
  }
  return { status: res.statusCode, headers: res.headers, body };
}

const corsHeaders = (res: Response) => Object.keys(res.headers).filter((name) => name.startsWith('access-control-'));
const list = (value: unknown) =>
  String(value ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

const preflight = (h: Harness, origin: string, requestHeaders = 'authorization,content-type', url = `${h.base}/events/list`) =>
  call(h, 'OPTIONS', url, { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders });

describe('CORS, with allowed origins', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { STRATA_CORS_ORIGINS: `${APP}, ${LOCAL}` });
  });
  afterAll(() => h.close());

  it('answers a preflight from an allowed origin before authentication, with the methods and headers the official client sends', async () => {
    const sdkHeaders = 'authorization,cdf-version,content-type,x-cdp-app,x-cdp-sdk,x-request-id,content-encoding,svc-version,x-cdp-clienttag';
    const res = await preflight(h, APP, sdkHeaders);
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(APP);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(list(res.headers['access-control-allow-methods'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(list(res.headers['access-control-allow-headers'])).toEqual(expect.arrayContaining(sdkHeaders.split(',')));
    expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(list(res.headers.vary)).toContain('origin');
    // Also for the token endpoint and for a project that does not exist: nothing is looked up.
    expect((await preflight(h, LOCAL, 'content-type', '/oauth2/token')).headers['access-control-allow-origin']).toBe(LOCAL);
    expect((await preflight(h, APP, 'authorization', '/api/v1/projects/nowhere/events')).status).toBe(204);
  });

  it('exposes the headers a client reads on answers to an allowed origin, errors included', async () => {
    const ok = await call(h, 'GET', `${h.base}/events`, { origin: APP, authorization: `Bearer ${h.token}` });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(APP);
    expect(ok.headers['access-control-allow-credentials']).toBe('true');
    expect(list(ok.headers['access-control-expose-headers'])).toEqual(expect.arrayContaining(['x-request-id', 'svc-version', 'retry-after']));
    const refused = await call(h, 'GET', `${h.base}/events`, { origin: LOCAL });
    expect(errorMessage(refused, 401)).toMatch(/Authorization/);
    expect(refused.headers['access-control-allow-origin']).toBe(LOCAL);
    const unknown = await call(h, 'GET', `${h.base}/no-such-thing`, { origin: APP, authorization: `Bearer ${h.token}` });
    expect(errorMessage(unknown, 404)).toMatch(/No operation/);
    expect(unknown.headers['access-control-allow-origin']).toBe(APP);
  });

  it('gives any other origin, or a request without one, no CORS header at all', async () => {
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.example', 'http://app.example.com', 'null']) {
      const pre = await preflight(h, origin);
      expect(errorMessage(pre, 404)).toMatch(/No operation OPTIONS/);
      expect(corsHeaders(pre), origin).toEqual([]);
      const get = await call(h, 'GET', `${h.base}/events`, { origin, authorization: `Bearer ${h.token}` });
      expect(get.status).toBe(200);
      expect(corsHeaders(get), origin).toEqual([]);
    }
    expect(corsHeaders(await call(h, 'GET', `${h.base}/events`, { authorization: `Bearer ${h.token}` }))).toEqual([]);
  });

  it('never answers with a wildcard', async () => {
    const answers = [
      await preflight(h, APP),
      await preflight(h, '*'),
      await call(h, 'GET', `${h.base}/events`, { origin: APP, authorization: `Bearer ${h.token}` }),
      await call(h, 'GET', `${h.base}/events`, { origin: '*', authorization: `Bearer ${h.token}` }),
    ];
    for (const res of answers) {
      expect(res.headers['access-control-allow-origin']).not.toBe('*');
      expect(String(res.headers['access-control-allow-headers'] ?? '')).not.toContain('*');
      expect(String(res.headers['access-control-allow-methods'] ?? '')).not.toContain('*');
    }
  });
});

describe('CORS, by default', () => {
  it('is off: no preflight, no CORS header', async () => {
    const h = await startHarness();
    try {
      const pre = await preflight(h, APP);
      expect(errorMessage(pre, 404)).toMatch(/No operation OPTIONS/);
      expect(corsHeaders(pre)).toEqual([]);
      const get = await call(h, 'GET', `${h.base}/events`, { origin: APP, authorization: `Bearer ${h.token}` });
      expect(get.status).toBe(200);
      expect(corsHeaders(get)).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe('the official JavaScript client in a browser', () => {
  it('sends no header that a preflight from its origin would not allow', async () => {
    const h = await startSdkHarness({ env: { STRATA_CORS_ORIGINS: APP } });
    try {
      const sent = new Set<string>();
      h.strata.app.server.on('request', (req: { headers: Record<string, unknown> }) => Object.keys(req.headers).forEach((name) => sent.add(name)));
      const [created] = await h.client.events.create([{ externalId: 'cors-sdk', startTime: 1 }]);
      await h.client.events.retrieve([{ id: created.id }]);
      await h.client.events.list({ filter: { externalIdPrefix: 'cors' } }).autoPagingToArray();
      await h.client.timeseries.create([{ externalId: 'cors-ts' }]);
      await h.client.datapoints.insert([{ externalId: 'cors-ts', datapoints: [{ timestamp: 1, value: 1 }] }]);
      // What a browser adds itself, or lets any page send, needs no permission.
      const browserOwn = new Set(['host', 'connection', 'content-length', 'accept', 'accept-encoding', 'accept-language', 'user-agent', 'sec-fetch-mode']);
      const needed = [...sent].filter((name) => !browserOwn.has(name));
      expect(needed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-cdp-app', 'x-cdp-sdk', 'cdf-version']));
      const res = await fetch(`${h.origin}/api/v1/projects/dev/events/list`, {
        method: 'OPTIONS',
        headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': needed.join(',') },
      });
      expect(res.status).toBe(204);
      expect(list(res.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(needed));
    } finally {
      await h.close();
    }
  });
});

describe('STRATA_CORS_ORIGINS', () => {
  it('takes exact origins, and refuses wildcards and what is not an origin, naming the setting', () => {
    expect(loadConfig([], {}).corsOrigins).toEqual([]);
    expect(loadConfig(['--cors-origins', `${APP},${LOCAL}, ${APP}`], {}).corsOrigins).toEqual([APP, LOCAL]);
    for (const bad of ['*', 'https://*.example.com', 'https://app.example.com/', 'https://App.example.com', 'app.example.com', 'ftp://x.example.com', 'https://app.example.com/path']) {
      expect(() => loadConfig([], { STRATA_CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig([], { STRATA_CORS_ORIGINS: bad }), bad).toThrow(/^STRATA_CORS_ORIGINS \(--cors-origins\): /);
    }
  });
});
