/**
 * User profiles: recorded from people's tokens (a token with a person's claims) where tokens are
 * authenticated, in projects that collect them, once and again only when the claims change; listed by name
 * with a cursor, found by user identifier (unknown ones named), searched by name prefix, the caller's own
 * (404 for an application). Deprecated from 2025-02-15: a Deprecation header from that version on, served on
 * both sides of the date. Login sessions are pruned where tokens are issued: a week after they expired they
 * are gone from the listing, revoked ones are kept, and a principal keeps the time it first got a token (last
 * here, since the clock then moves on by days).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { manualClock } from './support/custom-harness.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import type { ManualClock } from './support/manual-clock.js';
import { LOOPBACK_PROVIDERS, startTestIssuer, trustedIssuer, type TestIssuer } from './support/oidc-issuer.js';

const CLIENTS = [{ clientId: 'reader', clientSecret: 'reader-secret', groups: ['readers'] }];

let h: Harness;
let idp: TestIssuer;
let clock: ManualClock;

beforeAll(async () => {
  clock = manualClock();
  h = await startHarness({ jwksRefreshIntervalMs: 0 }, { ...LOOPBACK_PROVIDERS, STRATA_CLIENTS: JSON.stringify(CLIENTS), STRATA_PROJECTS: 'dev,ext,off' }, { now: clock.now, clock });
  idp = await startTestIssuer();
  await createGroup(h, { name: 'Readers', sourceId: 'readers', capabilities: [capability('userProfilesAcl', ['READ'])] });
  await createGroup(h, { name: 'People', sourceId: 'people', capabilities: [capability('userProfilesAcl', ['READ'])] }, 'ext');
  await createGroup(h, { name: 'Others', sourceId: 'others', capabilities: [capability('eventsAcl', ['READ'])] }, 'ext');
  await createGroup(h, { name: 'Admins', sourceId: 'admins', capabilities: [capability('userProfilesAcl', ['READ']), capability('projectsAcl', ['UPDATE'])] }, 'off');
  const configured = await h.post('/api/v1/projects/ext/update', {
    update: { oidcConfiguration: { set: trustedIssuer(idp) }, userProfilesConfiguration: { set: { enabled: true } } },
  });
  expect(configured.status).toBe(200);
  // Project off trusts the same provider and does not collect profiles until told to.
  expect((await h.post('/api/v1/projects/off/update', { update: { oidcConfiguration: { set: trustedIssuer(idp) } } })).status).toBe(200);
});
afterAll(async () => {
  await h.close();
  await idp.close();
});

const JANE = { sub: 'u-jane', name: 'Jane Doe', given_name: 'Jane', family_name: 'Doe', email: 'jane.doe@example.com', job_title: 'Engineer', groups: ['people'] };
let tokens = 0;
/** A request to project ext with a fresh token of these claims (a token seen before would be served from the cache). */
const inProject = async (project: string, method: string, path: string, claims: Record<string, unknown>, body?: unknown, headers: Record<string, string> = {}) => {
  clock.catchUp();
  return h.request(method, `/api/v1/projects/${project}${path}`, body, { ...bearer(await idp.sign({ ...claims, jti: String(++tokens) })), ...headers });
};
const ext = (method: string, path: string, claims: Record<string, unknown>, body?: unknown, headers: Record<string, string> = {}) =>
  inProject('ext', method, path, claims, body, headers);

describe('user profiles', () => {
  it('records a person on first use, and again only when their claims change', async () => {
    const first = await ext('GET', '/profiles/me', JANE);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({
      userIdentifier: 'u-jane',
      givenName: 'Jane',
      surname: 'Doe',
      email: 'jane.doe@example.com',
      displayName: 'Jane Doe',
      jobTitle: 'Engineer',
      identityType: 'USER',
      lastUpdatedTime: clock.now(),
    });
    const recorded = first.body.lastUpdatedTime;
    clock.advance(1000);
    // Another token with the same claims writes nothing.
    expect((await ext('GET', '/profiles/me', JANE)).body.lastUpdatedTime).toBe(recorded);
    clock.advance(1000);
    const renamed = await ext('GET', '/profiles/me', { ...JANE, family_name: 'Smith', name: 'Jane Smith' });
    expect(renamed.body).toMatchObject({ surname: 'Smith', displayName: 'Jane Smith' });
    expect(renamed.body.lastUpdatedTime).toBe(clock.now());
    expect(renamed.body.lastUpdatedTime).toBeGreaterThan(recorded);
    // Profiles belong to the project: the other project has none for this person.
    expect((await h.post('/profiles/byids', { items: [{ userIdentifier: 'u-jane' }] })).body.error.missing).toEqual([{ userIdentifier: 'u-jane' }]);
  });

  it('keeps no profile for applications: a client-credentials token, or one marked as an app', async () => {
    const app = await ext('GET', '/profiles/me', { sub: 'svc-1', groups: ['people'] });
    expect(errorMessage(app, 404)).toBe(
      'The principal "svc-1" has no user profile in project "ext": profiles are collected when the project\'s userProfilesConfiguration is enabled, ' +
        'for people, whose tokens carry a name or an email, not for applications (client credentials)',
    );
    expect(errorMessage(await ext('GET', '/profiles/me', { sub: 'svc-2', name: 'Pipeline', idtyp: 'app', groups: ['people'] }), 404)).toMatch(/"svc-2" has no user profile/);
    const reader = await clientToken(h, 'reader', 'reader-secret');
    expect(errorMessage(await h.request('GET', '/profiles/me', undefined, bearer(reader)), 404)).toMatch(/"reader" has no user profile/);
    const all = await ext('GET', '/profiles?identityType=ALL', JANE);
    expect(all.body.items.map((p: { userIdentifier: string }) => p.userIdentifier)).not.toContain('svc-2');
  });

  it('collects profiles only in a project whose userProfilesConfiguration is enabled', async () => {
    const admin = { sub: 'u-admin', name: 'Ada Admin', groups: ['admins'] };
    expect(errorMessage(await inProject('off', 'GET', '/profiles/me', admin), 404)).toMatch(/"u-admin" has no user profile in project "off"/);
    expect((await inProject('off', 'GET', '/profiles', admin)).body.items).toEqual([]);
    const enabled = await inProject('off', 'POST', '/update', admin, { update: { userProfilesConfiguration: { set: { enabled: true } } } });
    expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
    expect(enabled.body.userProfilesConfiguration).toEqual({ enabled: true });
    expect((await inProject('off', 'GET', '/profiles/me', admin)).body).toMatchObject({ userIdentifier: 'u-admin', displayName: 'Ada Admin' });
    await inProject('off', 'POST', '/update', admin, { update: { userProfilesConfiguration: { set: { enabled: false } } } });
    expect((await inProject('off', 'GET', '/profiles/me', { ...admin, name: 'Ada Renamed' })).body.displayName).toBe('Ada Admin');
  });

  it('lists by name with a cursor, retrieves by identifier, and searches by name prefix', async () => {
    const people = [
      { sub: 'u-adam', name: 'Adam Lee', given_name: 'Adam', family_name: 'Lee', email: 'adam@example.com' },
      { sub: 'u-zoe', name: 'Zoe Park', email: 'zoe@example.com' },
      { sub: 'u-bo', name: 'bo 100%_real', email: 'bo@example.com' },
    ];
    for (const p of people) expect((await ext('GET', '/profiles/me', { ...p, groups: ['people'] })).status).toBe(200);
    const first = await ext('GET', '/profiles?limit=2', JANE);
    expect(first.body.items.map((p: { displayName: string }) => p.displayName)).toEqual(['Adam Lee', 'bo 100%_real']);
    const rest = await ext('GET', `/profiles?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, JANE);
    expect(rest.body.items.map((p: { displayName: string }) => p.displayName)).toEqual(['Jane Doe', 'Zoe Park']);
    expect(rest.body.nextCursor).toBeUndefined();
    expect((await ext('GET', '/profiles?identityType=SERVICE_PRINCIPAL', JANE)).body.items).toEqual([]);
    expect(errorMessage(await ext('GET', '/profiles?limit=0', JANE), 400)).toMatch(/limit/);
    expect(errorMessage(await ext('GET', '/profiles?identityType=ROBOT', JANE), 400)).toMatch(/identityType/);

    const byIds = await ext('POST', '/profiles/byids', JANE, { items: [{ userIdentifier: 'u-zoe' }, { userIdentifier: 'u-adam' }] });
    expect(byIds.body.items.map((p: { userIdentifier: string }) => p.userIdentifier)).toEqual(['u-zoe', 'u-adam']);
    const unknown = await ext('POST', '/profiles/byids', JANE, { items: [{ userIdentifier: 'u-zoe' }, { userIdentifier: 'nobody' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.missing).toEqual([{ userIdentifier: 'nobody' }]);
    expect(errorMessage(await ext('POST', '/profiles/byids', JANE, { items: [{ userIdentifier: 'u-zoe' }, { userIdentifier: 'u-zoe' }] }), 400)).toMatch(
      /^items\[1\]\.userIdentifier: "u-zoe" is asked for more than once$/,
    );

    const search = async (name: string) =>
      (await ext('POST', '/profiles/search', JANE, { search: { name } })).body.items.map((p: { userIdentifier: string }) => p.userIdentifier);
    expect(await search('ja')).toEqual(['u-jane']);
    expect(await search('LEE')).toEqual(['u-adam']);
    expect(await search('zoe@')).toEqual(['u-zoe']);
    expect(await search('bo 100%_')).toEqual(['u-bo']);
    expect(await search('100%')).toEqual([]);
    expect(await search('%')).toEqual([]);
    expect((await ext('POST', '/profiles/search', JANE, { search: { name: '' }, limit: 3 })).body.items).toHaveLength(3);
    expect(errorMessage(await ext('POST', '/profiles/search', JANE, { search: { email: 'x' } }), 400)).toMatch(/email/);
  });

  it('needs userProfilesAcl:READ', async () => {
    expect(errorMessage(await ext('GET', '/profiles', { sub: 'u-other', name: 'Other Person', groups: ['others'] }), 403)).toMatch(/userProfilesAcl:READ/);
    expect(errorMessage(await ext('POST', '/profiles/search', { sub: 'u-other', name: 'Other Person', groups: ['others'] }, {}), 403)).toMatch(/userProfilesAcl:READ/);
  });

  it('is deprecated from 2025-02-15: served on both sides of the date, with a Deprecation header from it on', async () => {
    const before = await ext('GET', '/profiles/me', JANE, undefined, { 'svc-version': '20250214' });
    expect(before.status).toBe(200);
    expect(before.headers.deprecation).toBeUndefined();
    for (const version of ['20250215', '20250215-beta']) {
      const from = await ext('GET', '/profiles/me', JANE, undefined, { 'svc-version': version });
      expect(from.status).toBe(200);
      expect(from.headers.deprecation, version).toBe('@1739577600');
    }
    expect((await ext('POST', '/profiles/search', JANE, {})).headers.deprecation).toBe('@1739577600');
    // Only the profiles operations are deprecated.
    expect((await h.get('/groups')).headers.deprecation).toBeUndefined();
  });
});

describe('login sessions', () => {
  const admin = () => clientToken(h, h.strata.idp.devClient.clientId, h.strata.idp.devClient.secret);
  const sessions = async () => {
    const res = await h.request('GET', '/api/v1/orgs/strata/principals/reader/sessions?limit=1000', undefined, bearer(await admin()));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.items as Array<{ id: number; status: string }>;
  };
  const latest = async () => (await sessions())[0];
  const createdTime = async () =>
    (await h.request('POST', '/api/v1/orgs/strata/principals/byids', { items: [{ id: 'reader' }] }, bearer(await admin()))).body.items[0].createdTime as number;

  it('deletes expired ones a week after they expired, keeps revoked ones, and keeps when the principal first got a token', async () => {
    clock.catchUp();
    const firstToken = await createdTime();
    clock.advance(1000);
    await clientToken(h, 'reader', 'reader-secret');
    const expiring = await latest();
    await clientToken(h, 'reader', 'reader-secret');
    const revoked = await latest();
    const revoke = await h.request('POST', '/api/v1/orgs/strata/principals/reader/sessions/revoke', { items: [{ id: revoked.id }] }, bearer(await admin()));
    expect(revoke.status).toBe(204);
    const before = (await sessions()).map((s) => s.id);
    expect(before).toEqual(expect.arrayContaining([expiring.id, revoked.id]));

    // Expired for less than a week: still listed, as EXPIRED.
    clock.advance(3600_000 + 6 * 24 * 3600_000);
    await clientToken(h, 'reader', 'reader-secret');
    const recent = await latest();
    expect((await sessions()).find((s) => s.id === expiring.id)?.status).toBe('EXPIRED');

    clock.advance(2 * 24 * 3600_000);
    await clientToken(h, 'reader', 'reader-secret');
    const ids = (await sessions()).map((s) => s.id);
    expect(ids).not.toContain(expiring.id);
    expect(before.filter((id) => ids.includes(id))).toEqual([revoked.id]);
    expect(ids).toContain(recent.id);
    expect((await sessions()).find((s) => s.id === revoked.id)?.status).toBe('REVOKED');
    expect(await createdTime()).toBe(firstToken);
  });
});
