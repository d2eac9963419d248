import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { builtInKey } from './support/auth.js';
import { TOKEN_NOT_ACCEPTED } from '../src/auth/verify.js';

let h: Harness;
let dir: string;
let signingJwk: JWK;
const issuer = 'http://localhost:4000';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-auth-'));
  h = await startHarness({ dataDir: dir });
  signingJwk = await builtInKey(h);
});
afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function token(claims: Record<string, unknown>, opts: { key?: JWK; alg?: string; kid?: string; exp?: number; nbf?: number } = {}) {
  const key = await importJWK(opts.key ?? signingJwk, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'strata-admin', ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? signingJwk.kid })
    .setIssuer((claims.iss as string) ?? issuer)
    .setAudience((claims.aud as string) ?? issuer)
    .setIssuedAt(now - 10)
    .setNotBefore(opts.nbf ?? now - 10)
    .setExpirationTime(opts.exp ?? now + 600)
    .sign(key);
}

const call = (authorization: string, headers: Record<string, string> = {}) =>
  h.request('GET', '/events', undefined, { authorization, ...headers });

describe('bearer tokens', () => {
  it('accepts a token from the built-in provider', async () => {
    expect((await call(`Bearer ${h.token}`)).status).toBe(200);
    expect((await call(`Bearer ${await token({})}`)).status).toBe(200);
  });

  it('refuses missing, malformed, expired, not-yet-valid and badly signed tokens with 401', async () => {
    expect(errorMessage(await call(''), 401)).toMatch(/Missing Authorization/);
    expect(errorMessage(await call('Basic abc'), 401)).toMatch(/Malformed/);
    expect(errorMessage(await call('Bearer not-a-jwt'), 401)).toMatch(/malformed|invalid/i);
    const now = Math.floor(Date.now() / 1000);
    expect(errorMessage(await call(`Bearer ${await token({}, { exp: now - 60 })}`), 401)).toMatch(/expired/);
    expect(errorMessage(await call(`Bearer ${await token({}, { nbf: now + 3600 })}`), 401)).toMatch(/not valid yet/);
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const other = { ...(await exportJWK(privateKey)), kid: signingJwk.kid };
    expect(errorMessage(await call(`Bearer ${await token({}, { key: other })}`), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(errorMessage(await call(`Bearer ${await token({ iss: 'https://elsewhere' })}`), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(errorMessage(await call(`Bearer ${await token({ aud: 'https://elsewhere' })}`), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('says what is wrong when a failed token request left no token, or its error answer, in the header', async () => {
    // What `TOKEN=$(curl ... | sed ...)` leaves behind with a wrong secret: nothing, or the error body.
    expect(errorMessage(await call('Bearer '), 401)).toMatch(/no token after "Bearer"; did getting the access token fail/);
    const answer = await h.strata.app.inject({ method: 'POST', url: '/oauth2/token', payload: 'grant_type=client_credentials&client_id=strata-admin&client_secret=wrong', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(answer.statusCode).toBe(401);
    expect(errorMessage(await call(`Bearer ${answer.body}`), 401)).toMatch(/bearer token is JSON, not an access token \(a JWT: header\.payload\.signature\); was it the error answer of a token request/);
    expect(errorMessage(await call('Bearer two words'), 401)).toMatch(/expected "Bearer <access token>", the token a JWT/);
    expect(errorMessage(await call('Bearer abc'), 401)).toMatch(/expected a signed JWT \(header\.payload\.signature\)/);
  });

  it('refuses alg none and a tampered payload', async () => {
    const good = await token({});
    const [header, payload, signature] = good.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect(errorMessage(await call(`Bearer ${none}`), 401)).toBeTruthy();
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url');
    expect(errorMessage(await call(`Bearer ${header}.${tampered}.${signature}`), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('gives a principal without capabilities nothing, with a 403 naming the capability', async () => {
    const res = await call(`Bearer ${await token({ sub: 'nobody' })}`);
    expect(errorMessage(res, 403)).toMatch(/nobody/);
  });

  it('refuses API keys with a message saying they were removed', async () => {
    expect(errorMessage(await call(`Bearer ${h.token}`, { 'api-key': 'abc' }), 401)).toMatch(/API keys were removed/);
  });

  it('answers 404 for an unknown project', async () => {
    expect(errorMessage(await h.request('GET', '/api/v1/projects/missing/events'), 404)).toMatch(/"missing" does not exist/);
  });
});

describe('built-in identity provider', () => {
  it('publishes discovery and JWKS documents', async () => {
    const discovery = await h.request('GET', '/.well-known/openid-configuration');
    expect(discovery.body).toMatchObject({ issuer, token_endpoint: `${issuer}/oauth2/token`, jwks_uri: `${issuer}/.well-known/jwks.json` });
    const jwks = await h.request('GET', '/.well-known/jwks.json');
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', kid: signingJwk.kid });
    expect(jwks.body.keys[0].d).toBeUndefined();
  });

  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    h.strata.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
  const { clientId, secret } = { clientId: 'strata-admin', secret: () => h.strata.idp.devClient.secret };

  it('issues RS256 tokens for client credentials, in the body or with HTTP Basic', async () => {
    const res = await form({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret(), scope: 'anything/.default' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const basic = Buffer.from(`${clientId}:${secret()}`).toString('base64');
    const viaBasic = await form({ grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(viaBasic.statusCode).toBe(200);
    expect((await call(`Bearer ${viaBasic.json().access_token}`)).status).toBe(200);
  });

  it('refuses a wrong secret and other grant types', async () => {
    const wrong = await form({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'nope' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('invalid_client');
    const grant = await form({ grant_type: 'password', client_id: clientId, client_secret: secret() });
    expect(grant.statusCode).toBe(400);
    expect(grant.json().error).toBe('unsupported_grant_type');
  });
});
