/**
 * The built-in provider's authorization code grant with PKCE (src/auth/authorize.ts), as a browser
 * application such as the web console uses it: the sign-in page, the redirect with a code, and the code's
 * exchange at the token endpoint.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODE_LIFETIME_SECONDS } from '../../src/auth/authorize.js';
import { bearer } from '../support/auth.js';
import { startHarness, type Harness } from '../support/harness.js';
import { openTestStore } from '../support/test-store.js';

let h: Harness;
let time = Date.now();
const ORIGIN = 'http://localhost:4000';
const REDIRECT = `${ORIGIN}/console/`;
const VERIFIER = 'v'.repeat(20) + 'erifier-0123456789-abcdefghijkl';
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const PARAMS = { response_type: 'code', client_id: 'strata-admin', redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 'st-1' };

beforeAll(async () => {
  h = await startHarness({}, {}, { now: () => time });
});
afterAll(() => h.close());

const form = (body: Record<string, string>) => ({ payload: new URLSearchParams(body).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

async function authorize(params: Record<string, string>) {
  return h.strata.app.inject({ method: 'POST', url: '/oauth2/authorize', ...form(params) });
}

async function code(params: Record<string, string> = PARAMS): Promise<string> {
  const res = await authorize({ ...params, client_secret: h.strata.idp.devClient.secret });
  expect(res.statusCode).toBe(303);
  const to = new URL(res.headers.location as string);
  expect(`${to.origin}${to.pathname}`).toBe(REDIRECT);
  expect(to.searchParams.get('state')).toBe('st-1');
  return to.searchParams.get('code')!;
}

async function exchange(body: Record<string, string>) {
  const res = await h.strata.app.inject({ method: 'POST', url: '/oauth2/token', ...form({ grant_type: 'authorization_code', redirect_uri: REDIRECT, client_id: 'strata-admin', code_verifier: VERIFIER, ...body }) });
  return { status: res.statusCode, body: res.json() };
}

describe('authorization code with PKCE', () => {
  it('is announced by the discovery document', async () => {
    const doc = (await h.get('/.well-known/openid-configuration')).body;
    expect(doc.authorization_endpoint).toBe(`${ORIGIN}/oauth2/authorize`);
    expect(doc.grant_types_supported).toContain('authorization_code');
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
  });

  it('shows a sign-in page for a valid request, which may not be framed', async () => {
    const res = await h.strata.app.inject({ method: 'GET', url: `/oauth2/authorize?${new URLSearchParams(PARAMS)}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.body).toContain('name="client_secret"');
    expect(res.body).toContain(`value="${CHALLENGE}"`);
  });

  it.each([
    [{ redirect_uri: 'https://elsewhere.example/console/' }, 'redirect_uri must be an address on http://localhost:4000'],
    [{ code_challenge_method: 'plain' }, 'code_challenge_method must be "S256"'],
    [{ code_challenge: 'short' }, 'code_challenge must be'],
    [{ response_type: 'token' }, 'response_type must be "code"'],
  ])('refuses %j on the page and redirects nowhere', async (change, message) => {
    const page = await h.strata.app.inject({ method: 'GET', url: `/oauth2/authorize?${new URLSearchParams({ ...PARAMS, ...change })}` });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain(message.replace(/"/g, '&#34;'));
    const post = await authorize({ ...PARAMS, ...change, client_secret: h.strata.idp.devClient.secret });
    expect(post.statusCode).toBe(400);
    expect(post.headers.location).toBeUndefined();
  });

  it('refuses a wrong secret with the page again, and no code', async () => {
    const res = await authorize({ ...PARAMS, client_secret: 'wrong' });
    expect(res.statusCode).toBe(401);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('Unknown client or wrong secret');
  });

  it("gives a token of the client for the code and its verifier, once", async () => {
    const c = await code();
    const token = await exchange({ code: c });
    expect(token.status).toBe(200);
    expect(token.body.token_type).toBe('Bearer');
    const events = await h.request('POST', '/events/list', {}, bearer(token.body.access_token));
    expect(events.status).toBe(200);
    const again = await exchange({ code: c });
    expect(again).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'The code was already used' } });
  });

  it('refuses a code with the wrong verifier, another redirect_uri, another client, or after it expired', async () => {
    expect((await exchange({ code: await code(), code_verifier: VERIFIER.replace('v', 'w') })).body.error_description).toBe('code_verifier does not match the code_challenge');
    expect((await exchange({ code: await code(), redirect_uri: `${ORIGIN}/other/` })).body.error_description).toBe('redirect_uri differs from the one of the authorization request');
    expect((await exchange({ code: await code(), client_id: 'someone-else' })).body.error_description).toBe('The code was issued to another client');
    expect((await exchange({ code: await code(), code_verifier: 'short' })).body.error).toBe('invalid_request');
    const late = await code();
    time += (CODE_LIFETIME_SECONDS + 1) * 1000;
    expect(await exchange({ code: late })).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'The code is not valid or has expired' } });
  });

  it('gives a token for a code once, whichever of the processes on the database redeems it', async () => {
    const store = await openTestStore();
    const [first, second] = [await startHarness({}, {}, { store, now: () => time }), await startHarness({}, {}, { store, now: () => time })];
    try {
      const signIn = await first.strata.app.inject({ method: 'POST', url: '/oauth2/authorize', ...form({ ...PARAMS, client_secret: first.strata.idp.devClient.secret }) });
      const c = new URL(signIn.headers.location as string).searchParams.get('code')!;
      const redeem = async (app: Harness) => {
        const res = await app.strata.app.inject({ method: 'POST', url: '/oauth2/token', ...form({ grant_type: 'authorization_code', redirect_uri: REDIRECT, client_id: 'strata-admin', code_verifier: VERIFIER, code: c }) });
        return { status: res.statusCode, body: res.json() };
      };
      expect((await redeem(second)).status).toBe(200);
      expect(await redeem(first)).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'The code was already used' } });
    } finally {
      await first.close();
      await second.close();
      await store.close();
    }
  });

  it('does not take an access token as a code, nor a code as an access token', async () => {
    expect((await exchange({ code: h.token })).body.error_description).toBe('The code is not valid or has expired');
    const c = await code();
    expect((await h.request('POST', '/events/list', {}, bearer(c))).status).toBe(401);
  });
});
