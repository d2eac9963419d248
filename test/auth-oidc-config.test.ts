/**
 * A project's OpenID Connect configuration: shown by GET /api/v1/projects/{project}, changed by POST .../update
 * under the spec's rules (key and token URLs must match discovery when given, deprecated fields), and in
 * effect for the next request. The provider is a real issuer started by the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { LOOPBACK_PROVIDERS, startTestIssuer, type TestIssuer } from './support/oidc-issuer.js';
import { TOKEN_NOT_ACCEPTED } from '../src/auth/verify.js';

let h: Harness;
let idp: TestIssuer;

const claims = { accessClaims: [{ claimName: 'groups' }], scopeClaims: [], logClaims: [] };

beforeAll(async () => {
  h = await startHarness({ jwksRefreshIntervalMs: 0 }, { ...LOOPBACK_PROVIDERS, STRATA_PROJECTS: 'dev,ext,locked' });
  idp = await startTestIssuer();
});
afterAll(async () => {
  await h.close();
  await idp.close();
});

const update = (project: string, oidcConfiguration: unknown, token = h.token) =>
  h.request('POST', `/api/v1/projects/${project}/update`, { update: { oidcConfiguration } }, bearer(token));
const show = (project: string, token = h.token) => h.request('GET', `/api/v1/projects/${project}`, undefined, bearer(token));

describe('project OpenID Connect configuration', () => {
  it('defaults to the built-in provider', async () => {
    const res = await show('dev');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      urlName: 'dev',
      oidcConfiguration: {
        issuer: 'http://localhost:4000',
        audience: 'http://localhost:4000',
        jwksUrl: 'http://localhost:4000/.well-known/jwks.json',
        tokenUrl: 'http://localhost:4000/oauth2/token',
        accessClaims: [{ claimName: 'groups' }],
      },
    });
  });

  it('refuses key and token URLs that differ from the discovery document, naming the mismatch', async () => {
    const base = { issuer: idp.issuer, audience: idp.audience, ...claims };
    expect(errorMessage(await update('ext', { set: { ...base, jwksUrl: `${idp.issuer}/other-keys` } }), 400)).toMatch(
      new RegExp(`oidcConfiguration\\.set\\.jwksUrl: "${idp.issuer}/other-keys" does not match the jwks_uri "${idp.jwksUrl}"`),
    );
    expect(errorMessage(await update('ext', { set: { ...base, tokenUrl: 'https://elsewhere.example/token' } }), 400)).toMatch(/tokenUrl: .* does not match the token_endpoint/);
    expect((await show('ext')).body.oidcConfiguration.issuer).toBe('http://localhost:4000');
  });

  it('applies the deprecated fields\' rules', async () => {
    const base = { issuer: idp.issuer, audience: idp.audience, ...claims };
    expect(errorMessage(await update('ext', { set: { ...base, skewMs: 5000 } }), 400)).toMatch(/skewMs: is deprecated and must be 0/);
    const azure = { ...base, issuer: 'https://login.microsoftonline.com/tenant-id/v2.0', isGroupCallbackEnabled: false };
    expect(errorMessage(await update('ext', { set: azure }), 400)).toMatch(/isGroupCallbackEnabled: .*must be true/);
    // Other providers may send either value.
    const ok = await update('ext', { set: { ...base, skewMs: 0, isGroupCallbackEnabled: false, jwksUrl: idp.jwksUrl, tokenUrl: idp.tokenUrl } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.oidcConfiguration).toMatchObject({ issuer: idp.issuer, jwksUrl: idp.jwksUrl, tokenUrl: idp.tokenUrl, skewMs: 0 });
  });

  it('refuses an issuer without a reachable or matching discovery document', async () => {
    const base = { audience: 'x', ...claims };
    expect(errorMessage(await update('dev', { set: { ...base, issuer: 'http://127.0.0.1:1' } }), 400)).toMatch(/issuer: the issuer's discovery document \(http:\/\/127\.0\.0\.1:1\/\.well-known\/openid-configuration\) could not be fetched/);
    expect(errorMessage(await update('dev', { set: { ...base, issuer: `${idp.issuer}/` } }), 400)).toMatch(/names another issuer/);
  });

  it('takes effect at once: the external provider\'s tokens are accepted, built-in ones no longer are', async () => {
    const token = await idp.sign({ sub: 'eve', groups: ['nobody-knows'] });
    expect(errorMessage(await h.request('GET', '/api/v1/projects/ext/events', undefined, bearer(h.token)), 401)).toBe(TOKEN_NOT_ACCEPTED);
    expect(errorMessage(await h.request('GET', '/api/v1/projects/ext/events', undefined, bearer(token)), 403)).toMatch(/eventsAcl:READ.*"eve"/);
  });

  it('modifies parts of a configuration and can be removed again', async () => {
    await createGroup(h, {
      name: 'Ext admins',
      sourceId: 'ext-admins',
      capabilities: [capability('projectsAcl', ['READ', 'UPDATE']), capability('eventsAcl', ['READ'])],
    }, 'locked');
    expect((await update('locked', { set: { issuer: idp.issuer, audience: idp.audience, ...claims } })).status).toBe(200);
    const admin = await idp.sign({ sub: 'ext-admin', groups: ['ext-admins'], roles: ['ext-admins'] });
    const modified = await update('locked', { modify: { accessClaims: { set: [{ claimName: 'roles' }] }, logClaims: { add: [{ claimName: 'sub' }] } } }, admin);
    expect(modified.status, JSON.stringify(modified.body)).toBe(200);
    expect(modified.body.oidcConfiguration).toMatchObject({ accessClaims: [{ claimName: 'roles' }], logClaims: [{ claimName: 'sub' }], jwksUrl: idp.jwksUrl });
    const byRoles = await idp.sign({ sub: 'someone', roles: ['ext-admins'] });
    const byGroups = await idp.sign({ sub: 'someone-else', groups: ['ext-admins'] });
    expect((await h.request('GET', '/api/v1/projects/locked/events', undefined, bearer(byRoles))).status).toBe(200);
    errorMessage(await h.request('GET', '/api/v1/projects/locked/events', undefined, bearer(byGroups)), 403);
    const audience = await update('locked', { modify: { audience: { set: 'https://strata.test/other' } } }, admin);
    expect(audience.body.oidcConfiguration.audience).toBe('https://strata.test/other');
    expect(errorMessage(await h.request('GET', '/api/v1/projects/locked/events', undefined, bearer(byRoles)), 401)).toBe(TOKEN_NOT_ACCEPTED);
    const newAudience = await idp.sign({ sub: 'ext-admin', roles: ['ext-admins'] }, { audience: 'https://strata.test/other' });
    expect((await update('locked', { setNull: true }, newAudience)).status).toBe(200);
    expect((await h.request('GET', '/api/v1/projects/locked/events')).status).toBe(200);
  });

  it('refuses unknown properties with a 400 that names them', async () => {
    expect(errorMessage(await update('dev', { set: { issuer: idp.issuer, audience: 'a', ...claims, colour: 'red' } }), 400)).toMatch(/colour|oidcConfiguration/);
  });
});

describe('keys of an external provider', () => {
  it('limits how often an unknown key id makes Strata fetch the keys again', async () => {
    const slow = await startHarness({ jwksRefreshIntervalMs: 60_000 }, { ...LOOPBACK_PROVIDERS, STRATA_PROJECTS: 'ext' });
    try {
      const configured = await slow.request('POST', '/api/v1/projects/ext/update', {
        update: { oidcConfiguration: { set: { issuer: idp.issuer, audience: idp.audience, ...claims } } },
      });
      expect(configured.status).toBe(200);
      const fetches = idp.jwksFetches;
      for (let i = 0; i < 5; i++) {
        const unknown = await idp.newKey('ES256');
        const res = await slow.request('GET', '/api/v1/projects/ext/events', undefined, bearer(await idp.sign({ sub: 'x' }, { key: unknown })));
        expect(errorMessage(res, 401)).toBe(TOKEN_NOT_ACCEPTED);
      }
      expect(idp.jwksFetches).toBe(fetches);
    } finally {
      await slow.close();
    }
  });
});
