/**
 * The organization and identity service on Strata's origin: organizations and child organizations, the
 * projects of an organization (the listing dated 2024-10-11), principals, login sessions and their
 * revocation, `GET /api/v1/principals/me`, and token inspection listing exactly what the caller holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const CLIENTS = [
  { clientId: 'member', clientSecret: 'member-secret', groups: ['members'] },
  { clientId: 'orgadmin', clientSecret: 'orgadmin-secret', groups: ['plant-admins'] },
];

let h: Harness;
let member: string;
let orgadmin: string;
let memberGroup: number;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  memberGroup = await createGroup(h, { name: 'Members', sourceId: 'members', capabilities: [capability('eventsAcl', ['READ']), capability('sessionsAcl', ['CREATE'])] });
  member = await clientToken(h, 'member', 'member-secret');
  orgadmin = await clientToken(h, 'orgadmin', 'orgadmin-secret');
});
afterAll(() => h.close());

const as = (token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  h.request(method, path, body, { ...bearer(token), ...headers });

const PLANT = {
  id: 'plant-north',
  idp: { issuer: 'https://login.example.com/tenant/v2.0', idpVendor: 'AZURE_AD', clientSecret: 'never-shown' },
  adminGroupId: 'plant-admins',
  adminsCanCreateProjectsInSubtree: true,
  allowedClusters: ['strata'],
};

describe('organizations', () => {
  it('names the organization of a project, and shows the root organization to its admin only', async () => {
    expect((await h.get('/api/v1/projects/dev')).body.organization).toBe('strata');
    const root = await h.get('/api/v1/orgs/strata');
    expect(root.status).toBe(200);
    expect(root.body).toEqual({
      id: 'strata',
      parentId: null,
      adminGroupId: null,
      adminsCanCreateOrgsInSubtree: true,
      adminsCanCreateProjectsInSubtree: true,
      allowedClusters: ['strata'],
      idp: { issuer: 'http://localhost:4000' },
    });
    const refused = errorMessage(await as(member, 'GET', '/api/v1/orgs/strata'), 403);
    expect(refused).toMatch(/"member" is not an admin of organization "strata"/);
    // To a non-admin, an organization that does not exist is refused alike; to the root's admin it is absent.
    expect(errorMessage(await as(member, 'GET', '/api/v1/orgs/nowhere'), 403)).toMatch(/not an admin of organization "nowhere"/);
    expect(errorMessage(await h.get('/api/v1/orgs/nowhere'), 404)).toMatch(/"nowhere" does not exist/);
    expect(errorMessage(await h.request('GET', '/api/v1/orgs/strata', undefined, { authorization: '' }), 401)).toMatch(/Authorization/);
  });

  it('creates, lists and deletes child organizations, with their rules', async () => {
    const created = await h.post('/api/v1/orgs/strata/orgs', { items: [PLANT] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.items).toEqual([
      {
        id: 'plant-north',
        parentId: 'strata',
        adminGroupId: 'plant-admins',
        adminsCanCreateOrgsInSubtree: false,
        adminsCanCreateProjectsInSubtree: true,
        allowedClusters: ['strata'],
        idp: { issuer: 'https://login.example.com/tenant/v2.0', idpVendor: 'AZURE_AD' },
      },
    ]);
    expect(errorMessage(await h.post('/api/v1/orgs/strata/orgs', { items: [PLANT] }), 409)).toMatch(/plant-north/);
    expect((await h.get('/api/v1/orgs/strata/orgs')).body.items.map((o: { id: string }) => o.id)).toEqual(['plant-north']);

    // The admin group of the child administers the child and nothing above it.
    expect((await as(orgadmin, 'GET', '/api/v1/orgs/plant-north')).body.id).toBe('plant-north');
    errorMessage(await as(orgadmin, 'GET', '/api/v1/orgs/strata'), 403);
    errorMessage(await as(orgadmin, 'GET', '/api/v1/orgs/strata/orgs'), 403);
    errorMessage(await as(member, 'POST', '/api/v1/orgs/strata/orgs', { items: [{ ...PLANT, id: 'by-member' }] }), 403);
    // The child's flag says its admins create no organizations.
    expect(errorMessage(await as(orgadmin, 'POST', '/api/v1/orgs/plant-north/orgs', { items: [{ ...PLANT, id: 'sub-plant' }] }), 403)).toMatch(/adminsCanCreateOrgsInSubtree/);

    const south = await h.post('/api/v1/orgs/strata/orgs', { items: [{ id: 'plant-south', idp: { issuer: 'https://idp.example.com' }, adminsCanCreateOrgsInSubtree: true }] });
    expect(south.status).toBe(201);
    expect((await h.post('/api/v1/orgs/plant-south/orgs', { items: [{ id: 'plant-temp', idp: { issuer: 'https://idp.example.com' } }] })).status).toBe(201);
    expect(errorMessage(await h.post('/api/v1/orgs/plant-south/delete'), 400)).toMatch(/child organizations \(plant-temp\)/);
    expect((await h.post('/api/v1/orgs/plant-temp/delete')).status).toBe(200);
    errorMessage(await h.get('/api/v1/orgs/plant-temp'), 404);
    expect((await h.post('/api/v1/orgs/plant-south/delete')).status).toBe(200);
    expect(errorMessage(await h.post('/api/v1/orgs/strata/delete'), 400)).toMatch(/root organization/);
  });

  it('refuses bad child organizations, creating nothing', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ ...PLANT, id: 'Bad_Id' }, /id/],
      [{ ...PLANT, id: 'ok-id', allowedClusters: ['elsewhere'] }, /items\[0\]\.allowedClusters\[0\]: cluster "elsewhere" is not allowed/],
      [{ id: 'ok-id' }, /idp/],
      [{ ...PLANT, id: 'ok-id', idp: { issuer: 'not a url' } }, /items\[0\]\.idp\.issuer: "not a url" is not an http or https URL/],
      [{ ...PLANT, id: 'ok-id', extra: 1 }, /extra/],
    ];
    for (const [item, message] of bad) expect(errorMessage(await h.post('/api/v1/orgs/strata/orgs', { items: [item] }), 400)).toMatch(message);
    errorMessage(await h.post('/api/v1/orgs/strata/orgs', { items: [{ ...PLANT, id: 'a1' }, { ...PLANT, id: 'a2' }] }), 400);
    expect((await h.get('/api/v1/orgs/strata/orgs')).body.items.map((o: { id: string }) => o.id)).toEqual(['plant-north']);
  });
});

describe('projects of an organization', () => {
  it('creates a project whose admins are the organization\'s admin group', async () => {
    const res = await as(orgadmin, 'POST', '/api/v1/orgs/plant-north/projects', { items: [{ name: 'north-ops', clusterName: 'strata' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.items).toEqual([{ name: 'north-ops', clusterName: 'strata', projectAdminGroupId: 'plant-admins' }]);
    expect((await as(orgadmin, 'GET', '/api/v1/projects/north-ops/events')).status).toBe(200);
    expect((await as(orgadmin, 'GET', '/api/v1/projects/north-ops')).body.organization).toBe('plant-north');
    errorMessage(await as(member, 'GET', '/api/v1/projects/north-ops/events'), 403);

    expect(errorMessage(await h.post('/api/v1/orgs/plant-north/projects', { items: [{ name: 'dev', clusterName: 'strata' }] }), 409)).toMatch(/dev/);
    expect(errorMessage(await h.post('/api/v1/orgs/plant-north/projects', { items: [{ name: 'far-ops', clusterName: 'mars' }] }), 400)).toMatch(
      /items\[0\]\.clusterName: cluster "mars" is not allowed in organization "plant-north"/,
    );
    errorMessage(await h.post('/api/v1/orgs/plant-north/projects', { items: [{ name: 'x', clusterName: 'strata' }] }), 400);
    errorMessage(await as(member, 'POST', '/api/v1/orgs/strata/projects', { items: [{ name: 'by-member', clusterName: 'strata' }] }), 403);
    errorMessage(await h.get('/api/v1/projects/far-ops'), 404);
  });

  it('lists them: admin properties to admins; from 20241011 to every member with apiUrl, before to admins only', async () => {
    const admin = await as(orgadmin, 'GET', '/api/v1/orgs/plant-north/projects?includeAdminProperties=true');
    expect(admin.body.items).toEqual([{ name: 'north-ops', apiUrl: 'http://localhost:4000', clusterName: 'strata', state: 'ACTIVE' }]);
    errorMessage(await as(member, 'GET', '/api/v1/orgs/plant-north/projects?includeAdminProperties=true'), 403);

    const latest = await as(member, 'GET', '/api/v1/orgs/plant-north/projects');
    expect(latest.body).toEqual({ items: [{ name: 'north-ops', apiUrl: 'http://localhost:4000' }] });
    const dated = await as(member, 'GET', '/api/v1/orgs/plant-north/projects', undefined, { 'svc-version': '20241011' });
    expect(dated.body.items).toEqual([{ name: 'north-ops', apiUrl: 'http://localhost:4000' }]);

    const before = { 'svc-version': '20241010' };
    expect(errorMessage(await as(member, 'GET', '/api/v1/orgs/plant-north/projects', undefined, before), 403)).toMatch(/not an admin/);
    expect((await as(orgadmin, 'GET', '/api/v1/orgs/plant-north/projects', undefined, before)).body).toEqual({ items: [{ name: 'north-ops' }] });
    expect((await h.get('/api/v1/orgs/strata/projects')).body.items.map((p: { name: string }) => p.name)).toEqual(['dev', 'other']);
    expect(errorMessage(await h.get('/api/v1/orgs/strata/projects?includeAdminProperties=maybe'), 400)).toMatch(/includeAdminProperties/);
  });

  it('keeps an organization with projects', async () => {
    expect(errorMessage(await h.post('/api/v1/orgs/plant-north/delete'), 400)).toMatch(/has projects \(north-ops\)/);
    expect((await h.get('/api/v1/orgs/plant-north')).status).toBe(200);
  });
});

describe('principals', () => {
  it('lists the service accounts page by page, by type, by ids, and the caller itself', async () => {
    const all = await h.get('/api/v1/orgs/strata/principals');
    expect(all.body.items.map((p: { id: string }) => p.id)).toEqual(['member', 'orgadmin', 'strata-admin']);
    expect(all.body.items[0]).toEqual({
      id: 'member',
      type: 'SERVICE_ACCOUNT',
      externalId: 'member',
      name: 'member',
      createdBy: { orgId: 'strata', userId: 'member' },
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
      pictureUrl: '',
    });
    const first = await as(member, 'GET', '/api/v1/orgs/strata/principals?limit=2');
    expect(first.body.items).toHaveLength(2);
    const second = await as(member, 'GET', `/api/v1/orgs/strata/principals?limit=2&cursor=${encodeURIComponent(first.body.nextCursor.cursor)}`);
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: 'strata-admin' })] });
    expect((await h.get('/api/v1/orgs/strata/principals?types=USER')).body.items).toEqual([]);
    expect((await h.get('/api/v1/orgs/strata/principals?types=USER&types=SERVICE_ACCOUNT')).body.items).toHaveLength(3);
    expect(errorMessage(await h.get('/api/v1/orgs/strata/principals?types=ROBOT'), 400)).toMatch(/types/);
    expect(errorMessage(await h.get('/api/v1/orgs/strata/principals?limit=101'), 400)).toMatch(/limit/);

    const byIds = await h.post('/api/v1/orgs/strata/principals/byids', { items: [{ id: 'orgadmin' }, { externalId: 'member' }] });
    expect(byIds.body.items.map((p: { id: string }) => p.id)).toEqual(['orgadmin', 'member']);
    expect(errorMessage(await h.post('/api/v1/orgs/strata/principals/byids', { items: [{ externalId: 'ghost' }] }), 400)).toMatch(/not found/);
    const ignored = await h.post('/api/v1/orgs/strata/principals/byids', { items: [{ id: 'ghost' }, { id: 'member' }], ignoreUnknownIds: true });
    expect(ignored.body.items.map((p: { id: string }) => p.id)).toEqual(['member']);

    expect((await as(member, 'GET', '/api/v1/principals/me')).body).toMatchObject({ id: 'member', type: 'SERVICE_ACCOUNT' });
    expect((await h.get('/api/v1/principals/me')).body.id).toBe('strata-admin');
  });
});

describe('login sessions', () => {
  it('lists a principal\'s login sessions and revokes one: its token and the sessions made with it stop working at once', async () => {
    const token = await clientToken(h, 'member', 'member-secret');
    const other = await clientToken(h, 'member', 'member-secret');
    // A session created with the token is backed by its login session.
    const created = await as(token, 'POST', '/api/v1/projects/dev/sessions', { items: [{ tokenExchange: true }] });
    expect(created.status).toBe(200);
    const bound = await h.request('POST', '/api/v1/projects/dev/sessions/token', { nonce: created.body.items[0].nonce }, { authorization: '' });
    const sessionToken = bound.body.accessToken as string;
    expect((await as(sessionToken, 'GET', '/api/v1/projects/dev/events')).status).toBe(200);
    expect((await as(token, 'GET', '/api/v1/projects/dev/events')).status).toBe(200);

    const listed = await h.get('/api/v1/orgs/strata/principals/member/sessions?limit=2');
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(2);
    for (const s of listed.body.items) expect(s).toEqual({ id: expect.stringMatching(/^\d+$/), createdTime: expect.any(Number), status: 'ACTIVE' });
    expect(listed.body.nextCursor.cursor).toEqual(expect.any(String));
    const [newest, revoked] = listed.body.items as Array<{ id: string }>;

    // The newest is `other`'s; the one before it is `token`'s.
    const res = await h.post('/api/v1/orgs/strata/principals/member/sessions/revoke', { items: [{ id: revoked.id }] });
    expect(res.status).toBe(204);
    expect(errorMessage(await as(token, 'GET', '/api/v1/projects/dev/events'), 401)).toMatch(/login session .* was revoked/);
    errorMessage(await as(sessionToken, 'GET', '/api/v1/projects/dev/events'), 401);
    errorMessage(await as(token, 'GET', '/api/v1/token/inspect'), 401);
    errorMessage(await as(token, 'GET', '/api/v1/principals/me'), 401);
    expect((await as(other, 'GET', '/api/v1/projects/dev/events')).status).toBe(200);

    const after = await h.get('/api/v1/orgs/strata/principals/member/sessions?limit=2');
    expect(after.body.items).toEqual([
      { id: newest.id, createdTime: expect.any(Number), status: 'ACTIVE' },
      { id: revoked.id, createdTime: expect.any(Number), status: 'REVOKED', deactivatedTime: expect.any(Number) },
    ]);
  });

  it('lets only admins of that organization list and revoke, and refuses unknown sessions', async () => {
    errorMessage(await as(member, 'GET', '/api/v1/orgs/strata/principals/member/sessions'), 403);
    // An admin of a child organization is not an admin of the organization on the path.
    errorMessage(await as(orgadmin, 'GET', '/api/v1/orgs/strata/principals/member/sessions'), 403);
    expect((await as(orgadmin, 'GET', '/api/v1/orgs/plant-north/principals/member/sessions')).status).toBe(200);
    expect(errorMessage(await h.get('/api/v1/orgs/strata/principals/ghost/sessions'), 400)).toMatch(/"ghost" does not exist/);
    const listed = (await h.get('/api/v1/orgs/strata/principals/orgadmin/sessions')).body.items as Array<{ id: string }>;
    const res = await h.post('/api/v1/orgs/strata/principals/orgadmin/sessions/revoke', { items: [{ id: listed[0].id }, { id: '999999999' }] });
    expect(errorMessage(res, 400)).toMatch(/not found/);
    expect((await as(orgadmin, 'GET', '/api/v1/orgs/plant-north')).status).toBe(200);
    errorMessage(await h.post('/api/v1/orgs/strata/principals/orgadmin/sessions/revoke', { items: Array.from({ length: 11 }, () => ({ id: '1' })) }), 400);
  });
});

describe('token inspection', () => {
  it('lists exactly the caller\'s subject, projects, groups and capabilities', async () => {
    const res = await as(member, 'GET', '/api/v1/token/inspect');
    expect(res.body).toEqual({
      subject: 'member',
      projects: [{ projectUrlName: 'dev', groups: [memberGroup] }],
      capabilities: [
        { eventsAcl: { actions: ['READ'], scope: { all: {} } }, projectScope: { projects: ['dev'] } },
        { sessionsAcl: { actions: ['CREATE'], scope: { all: {} } }, projectScope: { projects: ['dev'] } },
      ],
    });
  });
});

describe('settings', () => {
  it('names the identity service\'s base URL for clients, and the root organization and cluster', async () => {
    const other = await startHarness({}, { STRATA_IDENTITY_URL: 'https://auth.example.com/', STRATA_ORGANIZATION: 'acme', STRATA_CLUSTER: 'west-1' });
    try {
      expect((await other.strata.app.inject({ method: 'GET', url: '/' })).json().identity).toBe('https://auth.example.com');
      expect((await other.get('/api/v1/projects/dev')).body.organization).toBe('acme');
      expect((await other.get('/api/v1/orgs/acme')).body).toMatchObject({ id: 'acme', allowedClusters: ['west-1'] });
      expect((await other.get('/api/v1/orgs/acme/projects?includeAdminProperties=true')).body.items[0]).toMatchObject({ name: 'dev', clusterName: 'west-1' });
    } finally {
      await other.close();
    }
    await expect(startHarness({}, { STRATA_ORGANIZATION: 'Not An Id' })).rejects.toThrow(/STRATA_ORGANIZATION.*not an organization id/);
  });
});
