/**
 * Sessions: created from client credentials (checked with the project's provider, built-in or external) or
 * from the caller's token, bound once with the nonce, refreshed with the session key, used as delegated
 * access in their own project only, and cut off by revocation. One-shot sessions are not refreshed. A
 * session created with a session's access token lives within that session: one-shot when it is, never past
 * its end, and revoked with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { LOOPBACK_PROVIDERS, startTestIssuer, type TestIssuer } from './support/oidc-issuer.js';
import { TOKEN_NOT_ACCEPTED } from '../src/auth/verify.js';

const CLIENTS = [
  { clientId: 'worker', clientSecret: 'worker-secret', groups: ['workers'] },
  { clientId: 'operator', clientSecret: 'operator-secret', groups: ['operators'] },
];

let h: Harness;
let idp: TestIssuer;

beforeAll(async () => {
  h = await startHarness({ jwksRefreshIntervalMs: 0 }, { ...LOOPBACK_PROVIDERS, STRATA_CLIENTS: JSON.stringify(CLIENTS), STRATA_PROJECTS: 'dev,other,ext' });
  await createGroup(h, { name: 'Workers', sourceId: 'workers', capabilities: [capability('eventsAcl', ['READ'])] });
  await createGroup(h, {
    name: 'Operators',
    sourceId: 'operators',
    capabilities: [capability('sessionsAcl', ['CREATE']), capability('eventsAcl', ['READ'])],
  });
  idp = await startTestIssuer();
  idp.clients.set('ext-worker', { secret: 'ext-secret', groups: ['ext-workers'] });
  await createGroup(h, { name: 'Ext workers', sourceId: 'ext-workers', capabilities: [capability('eventsAcl', ['READ']), capability('sessionsAcl', ['CREATE'])] }, 'ext');
  const configured = await h.post('/api/v1/projects/ext/update', {
    update: { oidcConfiguration: { set: { issuer: idp.issuer, audience: idp.audience, accessClaims: [{ claimName: 'groups' }], scopeClaims: [], logClaims: [] } } },
  });
  expect(configured.status).toBe(200);
});
afterAll(async () => {
  await h.close();
  await idp.close();
});

const tokenEndpoint = (project: string, body: unknown) => h.request('POST', `/api/v1/projects/${project}/sessions/token`, body, { authorization: '' });

async function create(credentials: unknown, token = h.token, project = 'dev') {
  const res = await h.request('POST', `/api/v1/projects/${project}/sessions`, { items: [credentials] }, bearer(token));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items[0] as { id: number; type: string; status: string; nonce: string; clientId?: string };
}

describe('sessions', () => {
  it('delegates a client\'s access: create, bind, use, refresh, revoke', async () => {
    const session = await create({ clientId: 'worker', clientSecret: 'worker-secret' });
    expect(session).toMatchObject({ type: 'CLIENT_CREDENTIALS', status: 'READY', clientId: 'worker' });
    const bound = await tokenEndpoint('dev', { nonce: session.nonce });
    expect(bound.status).toBe(200);
    expect(bound.body).toMatchObject({ id: session.id, sessionIsExtendable: true });
    expect(bound.body.sessionKey).toEqual(expect.any(String));
    expect(errorMessage(await tokenEndpoint('dev', { nonce: session.nonce }), 401)).toMatch(/already used/);

    const access = bound.body.accessToken as string;
    expect((await h.request('GET', '/events', undefined, bearer(access))).status).toBe(200);
    expect(errorMessage(await h.request('POST', '/events', { items: [{}] }, bearer(access)), 403)).toMatch(/"worker"/);
    // A session's tokens are valid in their own project only.
    expect(errorMessage(await h.request('GET', '/api/v1/projects/other/events', undefined, bearer(access)), 401)).toBe(TOKEN_NOT_ACCEPTED);

    const refreshed = await tokenEndpoint('dev', { sessionId: session.id, sessionKey: bound.body.sessionKey });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.sessionKey).toBeUndefined();
    expect(errorMessage(await tokenEndpoint('dev', { sessionId: session.id, sessionKey: 'wrong' }), 401)).toMatch(/sessionKey/);

    const listed = await h.get('/sessions?status=active');
    expect(listed.body.items.map((s: { id: number }) => s.id)).toContain(session.id);
    const revoked = await h.post('/sessions/revoke', { items: [{ id: session.id }] });
    expect(revoked.body.items).toEqual([expect.objectContaining({ id: session.id, status: 'REVOKED' })]);
    expect(errorMessage(await h.request('GET', '/events', undefined, bearer(refreshed.body.accessToken)), 401)).toMatch(/revoked/);
    expect(errorMessage(await tokenEndpoint('dev', { sessionId: session.id, sessionKey: bound.body.sessionKey }), 401)).toMatch(/sessionKey|revoked/);
    expect((await h.post('/sessions/byids', { items: [{ id: session.id }] })).body.items[0].status).toBe('REVOKED');
  });

  it('refuses wrong client credentials and unknown sessions', async () => {
    const res = await h.post('/sessions', { items: [{ clientId: 'worker', clientSecret: 'nope' }] });
    expect(errorMessage(res, 400)).toMatch(/refused the client credentials of "worker"/);
    const missing = await h.post('/sessions/byids', { items: [{ id: 99999 }] });
    expect(missing.body.error.missing).toEqual([{ id: 99999 }]);
  });

  it('delegates the caller\'s own access by token exchange, and checks its groups on every use', async () => {
    const operator = await clientToken(h, 'operator', 'operator-secret');
    const session = await create({ tokenExchange: true }, operator);
    expect(session.type).toBe('TOKEN_EXCHANGE');
    const bound = (await tokenEndpoint('dev', { nonce: session.nonce, maxExpirationSeconds: 600 })).body;
    expect(bound.sessionExpirationTime).toBeLessThanOrEqual(Date.now() + 600_000);
    const res = await h.request('GET', '/api/v1/token/inspect', undefined, bearer(bound.accessToken));
    expect(res.body.subject).toBe('operator');
    expect((await h.request('GET', '/events', undefined, bearer(bound.accessToken))).status).toBe(200);
  });

  it('gives one-shot sessions a short life and no refresh', async () => {
    const session = await create({ oneshotTokenExchange: true });
    expect(session.type).toBe('ONESHOT_TOKEN_EXCHANGE');
    const bound = (await tokenEndpoint('dev', { nonce: session.nonce })).body;
    expect(bound.sessionIsExtendable).toBe(false);
    expect(bound.sessionExpirationTime).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect((await h.request('GET', '/events', undefined, bearer(bound.accessToken))).status).toBe(200);
    expect(errorMessage(await tokenEndpoint('dev', { sessionId: session.id, sessionKey: bound.sessionKey }), 400)).toMatch(/one-shot session.*not refreshed/);
  });

  it('checks client credentials with an external provider\'s token endpoint', async () => {
    const extToken = await idp.sign({ sub: 'ext-worker', groups: ['ext-workers'] });
    const session = await create({ clientId: 'ext-worker', clientSecret: 'ext-secret' }, extToken, 'ext');
    const bound = (await tokenEndpoint('ext', { nonce: session.nonce })).body;
    expect((await h.request('GET', '/api/v1/projects/ext/events', undefined, bearer(bound.accessToken))).status).toBe(200);
    const refused = await h.request('POST', '/api/v1/projects/ext/sessions', { items: [{ clientId: 'ext-worker', clientSecret: 'bad' }] }, bearer(extToken));
    // The provider's registered error code is named; its free text ("bad credentials") is not repeated.
    expect(errorMessage(refused, 400)).toBe('The identity provider refused the client credentials of "ext-worker" (HTTP 401, invalid_client)');
  });

  it('pages the list with a cursor', async () => {
    for (let i = 0; i < 3; i++) await create({ oneshotTokenExchange: true });
    const first = await h.get('/sessions?limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await h.get(`/sessions?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.items[0].id).toBeGreaterThan(first.body.items[1].id);
    expect(errorMessage(await h.get(`/sessions?limit=2&status=ready&cursor=${encodeURIComponent(first.body.nextCursor)}`), 400)).toMatch(/cursor/);
  });

  it('names the statuses a list may filter on', async () => {
    expect(errorMessage(await h.get('/sessions?status=bogus'), 400)).toMatch(/query parameter "status": must be one of "ready", .*"expired", got "bogus"/);
  });
});

describe('sessions created with a session\'s access token', () => {
  const bind = async (nonce: string, maxExpirationSeconds?: number) => {
    const res = await tokenEndpoint('dev', { nonce, ...(maxExpirationSeconds ? { maxExpirationSeconds } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { id: number; accessToken: string; sessionKey: string; sessionExpirationTime: number; sessionIsExtendable: boolean };
  };
  const status = async (id: number) => (await h.post('/sessions/byids', { items: [{ id }] })).body.items[0].status as string;

  it('are one-shot when created from a one-shot session, cannot be refreshed, and end with it', async () => {
    const parent = await bind((await create({ oneshotTokenExchange: true })).nonce);
    const child = await create({ tokenExchange: true }, parent.accessToken);
    expect(child.type).toBe('ONESHOT_TOKEN_EXCHANGE');
    const bound = await bind(child.nonce);
    expect(bound.sessionIsExtendable).toBe(false);
    expect(bound.sessionExpirationTime).toBeLessThanOrEqual(parent.sessionExpirationTime);
    expect(errorMessage(await tokenEndpoint('dev', { sessionId: child.id, sessionKey: bound.sessionKey }), 400)).toMatch(/one-shot session.*not refreshed/);
    const grandchild = await bind((await create({ tokenExchange: true }, bound.accessToken)).nonce);
    const viaClient = await create({ clientId: 'worker', clientSecret: 'worker-secret' }, parent.accessToken);
    expect((await bind(viaClient.nonce)).sessionIsExtendable).toBe(false);
    const unbound = await create({ oneshotTokenExchange: true }, parent.accessToken);

    expect((await h.post('/sessions/revoke', { items: [{ id: parent.id }] })).status).toBe(200);
    for (const id of [child.id, grandchild.id, viaClient.id, unbound.id]) expect(await status(id)).toBe('REVOKED');
    expect(errorMessage(await h.request('GET', '/events', undefined, bearer(bound.accessToken)), 401)).toMatch(/revoked/);
    expect(errorMessage(await h.request('GET', '/events', undefined, bearer(grandchild.accessToken)), 401)).toMatch(/revoked/);
    expect(errorMessage(await tokenEndpoint('dev', { nonce: unbound.nonce }), 401)).toMatch(/nonce/);
  });

  it('never last beyond the session they were created from, nor refresh past it', async () => {
    const parent = await bind((await create({ tokenExchange: true })).nonce, 600);
    const child = await create({ tokenExchange: true }, parent.accessToken);
    expect(child.type).toBe('TOKEN_EXCHANGE');
    expect((await h.post('/sessions/byids', { items: [{ id: child.id }] })).body.items[0].expirationTime).toBeLessThanOrEqual(parent.sessionExpirationTime);
    const bound = await bind(child.nonce);
    expect(bound.sessionIsExtendable).toBe(true);
    expect(bound.sessionExpirationTime).toBeLessThanOrEqual(parent.sessionExpirationTime);
    const refreshed = await tokenEndpoint('dev', { sessionId: child.id, sessionKey: bound.sessionKey });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.sessionExpirationTime).toBeLessThanOrEqual(parent.sessionExpirationTime);

    expect((await h.post('/sessions/revoke', { items: [{ id: parent.id }] })).status).toBe(200);
    expect(await status(child.id)).toBe('REVOKED');
    expect(errorMessage(await h.request('GET', '/events', undefined, bearer(refreshed.body.accessToken)), 401)).toMatch(/revoked/);
    expect(errorMessage(await tokenEndpoint('dev', { sessionId: child.id, sessionKey: bound.sessionKey }), 401)).toMatch(/sessionKey/);
  });

  it('leave sessions created with a plain token alone when another is revoked', async () => {
    const a = await bind((await create({ tokenExchange: true })).nonce);
    const b = await bind((await create({ tokenExchange: true })).nonce);
    await h.post('/sessions/revoke', { items: [{ id: a.id }] });
    expect(await status(b.id)).toBe('ACTIVE');
    expect((await h.request('GET', '/events', undefined, bearer(b.accessToken))).status).toBe(200);
  });
});
