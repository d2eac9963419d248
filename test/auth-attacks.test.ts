/**
 * Every token attack the authentication issue lists, against the built-in provider and against an external
 * OpenID Connect issuer started by the test: each is refused with 401 (or 403) in the error shape, and no
 * data is touched.
 */
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, builtInSigner, capability, createGroup, type BuiltInSigner } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { LOOPBACK_PROVIDERS, startTestIssuer, type TestIssuer } from './support/oidc-issuer.js';
import { TOKEN_NOT_ACCEPTED } from '../src/auth/verify.js';

let h: Harness;
let dir: string;
let builtIn: BuiltInSigner;
let idp: TestIssuer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'strata-attacks-'));
  h = await startHarness({ dataDir: dir, jwksRefreshIntervalMs: 0 }, { ...LOOPBACK_PROVIDERS, STRATA_PROJECTS: 'dev,other,ext' });
  builtIn = await builtInSigner(h);
  idp = await startTestIssuer();
  await createGroup(h, { name: 'ext admins', sourceId: 'ext-admins', capabilities: [capability('eventsAcl', ['READ', 'WRITE'])] }, 'ext');
  const res = await h.post('/api/v1/projects/ext/update', {
    update: { oidcConfiguration: { set: { issuer: idp.issuer, audience: idp.audience, accessClaims: [{ claimName: 'groups' }], scopeClaims: [], logClaims: [] } } },
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await h.close();
  await idp.close();
  rmSync(dir, { recursive: true, force: true });
});

const listDev = (token: string) => h.request('GET', '/api/v1/projects/dev/events', undefined, bearer(token));
const listExt = (token: string) => h.request('GET', '/api/v1/projects/ext/events', undefined, bearer(token));
const extClaims = { sub: 'svc-1', groups: ['ext-admins'] };

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function withAlgNone(token: string): string {
  const [, payload] = token.split('.');
  return `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
}

function withFlippedSignature(token: string): string {
  const [header, payload, signature] = token.split('.');
  const bytes = Buffer.from(signature, 'base64url');
  bytes[0] ^= 0xff;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

function withTamperedPayload(token: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  return `${header}.${b64({ ...claims, ...change })}.${signature}`;
}

/** The classic confusion: an HMAC token whose secret is the provider's public key. */
async function hs256WithPublicKey(publicJwk: Record<string, unknown>, claims: Record<string, unknown>, issuer: string, audience: string, kid: string) {
  const pem = createPublicKey({ key: publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', kid })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(new Uint8Array(Buffer.from(pem)));
}

describe('attacks on the built-in provider', () => {
  it('accepts the genuine token these attacks start from', async () => {
    expect((await listDev(await builtIn.sign({ sub: 'strata-admin' }))).status).toBe(200);
  });

  it('refuses alg none', async () => {
    expect(errorMessage(await listDev(withAlgNone(await builtIn.sign({ sub: 'strata-admin' }))), 401)).toMatch(/algorithm|malformed|invalid/i);
  });

  it('refuses a wrong signature', async () => {
    expect(errorMessage(await listDev(withFlippedSignature(await builtIn.sign({ sub: 'strata-admin' }))), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('refuses a token signed with the right key id but another key', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const other = { ...(await exportJWK(privateKey)), kid: builtIn.jwk.kid };
    expect(errorMessage(await listDev(await builtIn.sign({ sub: 'strata-admin' }, { key: other })), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('refuses HS256 signed with the public key', async () => {
    const { kty, n, e } = builtIn.jwk;
    const token = await hs256WithPublicKey({ kty, n, e }, { sub: 'strata-admin' }, 'http://localhost:4000', 'http://localhost:4000', builtIn.jwk.kid!);
    expect(errorMessage(await listDev(token), 401)).toMatch(/algorithm/);
  });

  it('refuses expired and not yet valid tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(errorMessage(await listDev(await builtIn.sign({ sub: 'strata-admin' }, { exp: now - 1 })), 401)).toMatch(/expired/);
    expect(errorMessage(await listDev(await builtIn.sign({ sub: 'strata-admin' }, { nbf: now + 120 })), 401)).toMatch(/not valid yet/);
  });

  it('refuses a wrong issuer and a wrong audience', async () => {
    expect(errorMessage(await listDev(await builtIn.sign({ sub: 'strata-admin' }, { iss: 'https://evil.example' })), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(errorMessage(await listDev(await builtIn.sign({ sub: 'strata-admin' }, { aud: 'https://evil.example' })), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('refuses a tampered payload (a reader turning itself into the administrator)', async () => {
    const reader = await builtIn.sign({ sub: 'reader' });
    expect(errorMessage(await listDev(withTamperedPayload(reader, { sub: 'strata-admin' })), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('refuses a key id the provider does not publish', async () => {
    expect(errorMessage(await listDev(await builtIn.sign({ sub: 'strata-admin' }, { kid: 'not-a-key' })), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('touches no data when a write is refused', async () => {
    const before = (await h.post('/events/aggregate', {})).body.items[0].count;
    const forged = withTamperedPayload(await builtIn.sign({ sub: 'reader' }), { sub: 'strata-admin' });
    const res = await h.request('POST', '/api/v1/projects/dev/events', { items: [{ externalId: 'forged' }] }, bearer(forged));
    errorMessage(res, 401);
    expect((await h.post('/events/aggregate', {})).body.items[0].count).toBe(before);
  });
});

describe('attacks on an external provider', () => {
  it('accepts RS256, ES256 and PS256 tokens from the configured issuer', async () => {
    for (const alg of ['RS256', 'ES256', 'PS256'] as const) {
      const key = await idp.rotate(alg);
      const res = await listExt(await idp.sign(extClaims, { key }));
      expect(res.status, alg).toBe(200);
    }
  });

  it('refuses alg none, wrong signatures, another key under a published key id, and tampering', async () => {
    const good = await idp.sign(extClaims);
    errorMessage(await listExt(withAlgNone(good)), 401);
    expect(errorMessage(await listExt(withFlippedSignature(good)), 401)).toBe(TOKEN_NOT_ACCEPTED);
    const impostor = { ...(await idp.newKey('RS256')), kid: idp.keys[0].kid };
    expect(errorMessage(await listExt(await idp.sign(extClaims, { key: impostor })), 401)).toBe(TOKEN_NOT_ACCEPTED);
    const nobody = await idp.sign({ sub: 'svc-2', groups: [] });
    expect(errorMessage(await listExt(withTamperedPayload(nobody, { groups: ['ext-admins'] })), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('refuses HS256 signed with the public key', async () => {
    const key = idp.keys[0];
    const token = await hs256WithPublicKey(key.publicJwk as Record<string, unknown>, extClaims, idp.issuer, idp.audience, key.kid);
    expect(errorMessage(await listExt(token), 401)).toMatch(/algorithm/);
  });

  it('refuses expired, not yet valid, wrong issuer and wrong audience', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(errorMessage(await listExt(await idp.sign(extClaims, { expiresIn: -10 })), 401)).toMatch(/expired/);
    expect(errorMessage(await listExt(await idp.sign(extClaims, { notBefore: now + 300 })), 401)).toMatch(/not valid yet/);
    expect(errorMessage(await listExt(await idp.sign(extClaims, { issuer: 'https://elsewhere.example' })), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(errorMessage(await listExt(await idp.sign(extClaims, { audience: 'https://other-service.example' })), 401)).toBe(TOKEN_NOT_ACCEPTED);
  });

  it('refreshes the keys on an unknown key id, and still refuses a key id that is not published after the refresh', async () => {
    const rotated = await idp.rotate('ES256');
    const before = idp.jwksFetches;
    expect((await listExt(await idp.sign(extClaims, { key: rotated }))).status).toBe(200);
    expect(idp.jwksFetches).toBe(before + 1);
    const unpublished = await idp.newKey('RS256', 'never-published');
    expect(errorMessage(await listExt(await idp.sign(extClaims, { key: unpublished })), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(idp.jwksFetches).toBe(before + 2);
  });

  it('tells a caller without a token the project accepts neither how it is configured nor whether it exists', async () => {
    const listMissing = (token: string) => h.request('GET', '/api/v1/projects/no-such-project/events', undefined, bearer(token));
    const now = Math.floor(Date.now() / 1000);
    const good = await idp.sign(extClaims);
    const tokens = [
      withAlgNone(good),
      withFlippedSignature(good),
      withFlippedSignature(h.token),
      await idp.sign(extClaims, { issuer: 'https://elsewhere.example' }),
      await idp.sign(extClaims, { expiresIn: -10 }),
      await idp.sign(extClaims, { notBefore: now + 300 }),
      await builtIn.sign({ sub: 'strata-admin' }, { aud: 'https://evil.example' }),
      'not-a-jwt',
    ];
    for (const token of tokens) {
      const [ext, missing] = [await listExt(token), await listMissing(token)];
      expect(ext.status, token).toBe(401);
      expect(missing.body, token).toEqual(ext.body);
    }
    // The issuer and the keys of the project's provider are named nowhere.
    for (const token of tokens) expect(JSON.stringify((await listExt(token)).body)).not.toContain(new URL(idp.issuer).host);
    // A caller with a token of this server's own provider is told that a project does not exist.
    expect(errorMessage(await listMissing(h.token), 404)).toMatch(/"no-such-project" does not exist/);
  });

  it('keeps a token for one project from opening another', async () => {
    const extToken = await idp.sign(extClaims);
    // The built-in projects do not accept the external issuer, and the external project refuses built-in tokens.
    expect(errorMessage(await listDev(extToken), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(errorMessage(await listExt(h.token), 401)).toBe(TOKEN_NOT_ACCEPTED);
    // A token the other project's provider issued, for a principal that has groups only in "dev", gets nothing in "other".
    await createGroup(h, { name: 'dev readers', members: ['dev-reader'], capabilities: [capability('eventsAcl', ['READ'])] });
    const devReader = await builtIn.sign({ sub: 'dev-reader' });
    expect((await listDev(devReader)).status).toBe(200);
    expect(errorMessage(await h.request('GET', '/api/v1/projects/other/events', undefined, bearer(devReader)), 403)).toMatch(/eventsAcl:READ/);
  });
});

describe('groups that would grant something unknown', () => {
  it('refuses an unknown capability, action or scope with 400 naming it', async () => {
    const create = (c: unknown) => h.post('/groups', { items: [{ name: 'bad', capabilities: [c] }] });
    expect(errorMessage(await create({ eventAcl: { actions: ['READ'], scope: { all: {} } } }), 400)).toMatch(/unknown capability "eventAcl"/);
    expect(errorMessage(await create(capability('eventsAcl', ['DELETE'])), 400)).toMatch(/unknown action "DELETE" for eventsAcl/);
    expect(errorMessage(await create(capability('eventsAcl', ['READ'], { spaceScope: { ids: [1] } })), 400)).toMatch(/unknown scope "spaceScope" for eventsAcl/);
    expect(errorMessage(await create(capability('timeSeriesAcl', ['READ'], { assetRootIdScope: { rootIds: [1] } })), 400)).toMatch(/not supported/);
    expect(errorMessage(await create(capability('eventsAcl', ['READ'], { datasetScope: { ids: ['x'] } })), 400)).toMatch(/datasetScope\.ids\[0\]/);
    const groups = (await h.get('/groups?all=true')).body.items as Array<{ name: string }>;
    expect(groups.some((g) => g.name === 'bad')).toBe(false);
  });
});

describe('removed mechanisms', () => {
  it('refuses API keys with a message saying what replaced them', async () => {
    expect(errorMessage(await h.request('GET', '/events', undefined, { 'api-key': 'k' }), 401)).toMatch(/API keys were removed/);
    expect(errorMessage(await h.request('GET', '/api/v1/token/inspect', undefined, { 'api-key': 'k' }), 401)).toMatch(/API keys were removed/);
  });

  it('answers /login, as every path it does not serve, 404 whatever the method and the body', async () => {
    const bodies: Array<[string, Record<string, string>] | undefined> = [
      undefined,
      ['', { 'content-type': 'application/json' }],
      ['{"not json', { 'content-type': 'application/json' }],
      ['a=b', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['x'.repeat(100_000), { 'content-type': 'application/json' }],
    ];
    for (const path of ['/login', '/login/status', '/api/v1/projects/dev/login', '/api/v1/projects/dev/login/status', '/api/v1/projects/dev/no-such-thing']) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        for (const body of bodies) {
          if (method === 'GET' && body) continue;
          const res = await h.strata.app.inject({ method: method as 'POST', url: path, ...(body ? { payload: body[0], headers: body[1] } : {}) });
          const where = `${method} ${path} ${body ? body[0].slice(0, 12) : '(no body)'}`;
          expect(res.statusCode, where).toBe(404);
          expect(res.json().error.code, where).toBe(404);
        }
      }
    }
  });
});
