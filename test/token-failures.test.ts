/**
 * The built-in token endpoint slows down guessing: failed attempts per client id and per client address are
 * limited (429, Retry-After, the OAuth error form), while a client that knows its secret keeps getting tokens
 * from an address that is not failing.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { manualClock } from './support/custom-harness.js';
import { startHarness, type Harness } from './support/harness.js';

const clock = manualClock();
let h: Harness;
beforeEach(async () => {
  await h?.close();
  // 3 failures at once, then one every 20 s.
  h = await startHarness({}, { STRATA_TOKEN_FAILURE_BURST: '3', STRATA_TOKEN_FAILURE_RATE: '3' }, { now: clock.now });
});
afterAll(() => h.close());

interface TokenAnswer {
  status: number;
  retryAfter: string | undefined;
  body: { access_token?: string; error?: string; error_description?: string };
}

async function token(address: string, clientId: string, secret: string, forwardedFor?: string): Promise<TokenAnswer> {
  const res = await h.strata.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    remoteAddress: address,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString(),
  });
  return { status: res.statusCode, retryAfter: res.headers['retry-after'] as string | undefined, body: res.json() };
}

const admin = 'strata-admin';
const secret = () => h.strata.idp.devClient.secret;

describe('failed token requests', () => {
  it('are limited per address, whatever the client id, even for the right secret, until the budget refills', async () => {
    for (const id of ['nobody', 'someone', admin]) expect((await token('192.0.2.1', id, 'wrong')).status).toBe(401);
    const refused = await token('192.0.2.1', admin, secret());
    expect(refused).toMatchObject({ status: 429, retryAfter: '20', body: { error: 'slow_down' } });
    expect(refused.body.error_description).toBe(
      'Too many failed attempts from 192.0.2.1 (at most 3 failed attempts at once, then 3 a minute); retry after 20 s',
    );
    expect(refused.body.access_token).toBeUndefined();
    // Another address is not affected; nor is this one once a failure's worth has refilled.
    expect((await token('192.0.2.2', admin, secret())).status).toBe(200);
    clock.advance(20_000);
    expect((await token('192.0.2.1', admin, secret())).status).toBe(200);
    expect((await token('192.0.2.1', admin, 'wrong')).status).toBe(401);
    expect((await token('192.0.2.1', admin, secret())).status).toBe(429);
  });

  it('are limited per client id across addresses; the right secret from an address that is not failing is still served', async () => {
    // Three addresses fail once each: none is past its own budget, the client id is.
    for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) expect((await token(address, admin, 'wrong')).status).toBe(401);
    const refused = await token('198.51.100.1', admin, 'wrong');
    expect(refused).toMatchObject({ status: 429, retryAfter: '20', body: { error: 'slow_down' } });
    expect(refused.body.error_description).toMatch(/^Too many failed attempts for client_id "strata-admin" \(.*\); retry after 20 s$/);
    // Refused before the secret is looked at: the right one from a failing address is refused the same way.
    expect(await token('198.51.100.2', admin, secret())).toMatchObject({ status: 429, retryAfter: '20' });
    // Other client ids from those addresses are not limited by it.
    expect((await token('198.51.100.3', 'someone-else', 'wrong')).status).toBe(401);
    // The owner, from an address that has not failed, gets its token.
    const owner = await token('203.0.113.9', admin, secret());
    expect(owner.status).toBe(200);
    expect(owner.body.access_token).toEqual(expect.any(String));
    // A new address gets one guess: it is failing from then on.
    expect((await token('203.0.113.10', admin, 'wrong')).status).toBe(401);
    expect((await token('203.0.113.10', admin, 'wrong')).status).toBe(429);
  });

  it('count an IPv6 client by its /64 network, and missing credentials as failures', async () => {
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3']) {
      expect((await token(address, `c-${address}`, 'wrong')).status).toBe(401);
    }
    const refused = await token('2001:db8:1:2:abcd::9', admin, secret());
    expect(refused.status).toBe(429);
    expect(refused.body.error_description).toMatch(/^Too many failed attempts from 2001:db8:1:2::\/64 /);
    expect((await token('2001:db8:1:3::1', admin, secret())).status).toBe(200);

    const bare = () =>
      h.strata.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        remoteAddress: '192.0.2.77',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials',
      });
    for (let i = 0; i < 3; i++) expect((await bare()).statusCode).toBe(401);
    expect((await bare()).statusCode).toBe(429);
  });

  it('count the address a request came from, whatever X-Forwarded-For it claims', async () => {
    for (const claimed of ['192.0.2.61', '192.0.2.62', '192.0.2.63']) expect((await token('192.0.2.60', admin, 'wrong', claimed)).status).toBe(401);
    expect((await token('192.0.2.60', admin, secret(), '192.0.2.64')).status).toBe(429);
  });

  it('count the client behind a proxy listed in STRATA_TRUST_PROXY', async () => {
    await h.close();
    h = await startHarness({}, { STRATA_TOKEN_FAILURE_BURST: '3', STRATA_TOKEN_FAILURE_RATE: '3', STRATA_TRUST_PROXY: '10.0.0.0/8' }, { now: clock.now });
    for (let i = 0; i < 3; i++) expect((await token('10.1.1.1', `c${i}`, 'wrong', '192.0.2.70')).status).toBe(401);
    const refused = await token('10.1.1.1', admin, secret(), '192.0.2.70');
    expect(refused.status).toBe(429);
    expect(refused.body.error_description).toMatch(/^Too many failed attempts from 192\.0\.2\.70 /);
    // Another client behind the same proxy is served.
    expect((await token('10.1.1.1', admin, secret(), '192.0.2.71')).status).toBe(200);
  });

  it('never limit a client that knows its secret', async () => {
    for (let i = 0; i < 20; i++) expect((await token('192.0.2.50', admin, secret())).status).toBe(200);
  });
});

describe('token failure settings', () => {
  it('default to 10 at once, then 10 a minute', () => {
    expect(loadConfig([], {}).tokenFailures).toEqual({ burst: 10, perMinute: 10 });
    expect(loadConfig(['--token-failure-burst', '5', '--token-failure-rate=0.5'], {}).tokenFailures).toEqual({ burst: 5, perMinute: 0.5 });
  });

  it('refuse nonsense, naming the setting (and so does the proxy setting they count behind)', () => {
    expect(() => loadConfig([], { STRATA_TOKEN_FAILURE_BURST: '0' })).toThrow(ConfigError);
    expect(() => loadConfig([], { STRATA_TOKEN_FAILURE_BURST: '0' })).toThrow(/STRATA_TOKEN_FAILURE_BURST \(--token-failure-burst\) must be a whole number of failed attempts/);
    for (const proxy of ['10.0.0.0/33', 'proxy.example.com', '10.0.0.1/8/8', '::1/129']) {
      expect(() => loadConfig([], { STRATA_TRUST_PROXY: proxy }), proxy).toThrow(/^STRATA_TRUST_PROXY \(--trust-proxy\): ".*" is not an address, a CIDR range/);
    }
    expect(loadConfig(['--trust-proxy', '10.0.0.0/8, loopback,::1'], {}).trustProxy).toEqual(['10.0.0.0/8', 'loopback', '::1']);
    expect(() => loadConfig([], { STRATA_TOKEN_FAILURE_RATE: 'many' })).toThrow(/STRATA_TOKEN_FAILURE_RATE \(--token-failure-rate\) must be a number of failed attempts per minute above 0/);
  });
});
