/**
 * What a principal can manage without widening its own access: groups grant only capabilities their creator
 * holds (the covering rule), `currentuserscope` limits group management to the principal's own groups, and
 * neither the project's identity configuration nor the built-in provider's token endpoint lets a principal
 * choose which groups it belongs to. Refusals are 403s naming the capability, alike for groups the principal
 * cannot see and groups that do not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

const CLIENTS = [
  { clientId: 'manager', clientSecret: 'manager-secret', groups: ['managers'] },
  { clientId: 'keeper', clientSecret: 'keeper-secret', groups: ['keepers'] },
  { clientId: 'other', clientSecret: 'other-secret', groups: ['others'] },
  { clientId: 'updater', clientSecret: 'updater-secret', groups: ['updaters'] },
];

let h: Harness;
let dsA: number;
let dsB: number;
const tokens: Record<string, string> = {};
const ids: Record<string, number> = {};

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS), STRATA_PROJECTS: 'dev,other,claims' });
  [dsA, dsB] = (await h.post('/datasets', { items: [{ externalId: 'ds-a' }, { externalId: 'ds-b' }] })).body.items.map((d: { id: number }) => d.id);
  await h.post('/events', { items: [{ externalId: 'in-a', dataSetId: dsA }, { externalId: 'in-b', dataSetId: dsB }, { externalId: 'in-none' }] });
  ids.managers = await createGroup(h, {
    name: 'Managers',
    sourceId: 'managers',
    capabilities: [
      capability('groupsAcl', ['LIST', 'CREATE', 'DELETE'], { currentuserscope: {} }),
      capability('eventsAcl', ['READ'], { datasetScope: { ids: [dsA] } }),
      capability('datasetsAcl', ['READ'], { idscope: { ids: [dsA] } }),
      capability('timeSeriesAcl', ['READ'], { datasetScope: { ids: [dsA] } }),
    ],
  });
  ids.keepers = await createGroup(h, {
    name: 'Keepers',
    sourceId: 'keepers',
    capabilities: [capability('groupsAcl', ['LIST', 'CREATE', 'DELETE']), capability('eventsAcl', ['READ'])],
  });
  ids.others = await createGroup(h, { name: 'Others', sourceId: 'others', capabilities: [capability('eventsAcl', ['READ', 'WRITE'])] });
  for (const c of CLIENTS) tokens[c.clientId] = await clientToken(h, c.clientId, c.clientSecret);
});
afterAll(() => h.close());

const as = (who: string, method: string, path: string, body?: unknown): Promise<Response> => h.request(method, path, body, bearer(tokens[who]));
const createAs = (who: string, group: Record<string, unknown>) => as(who, 'POST', '/groups', { items: [{ name: 'g', ...group }] });
const xids = (res: Response) => (res.body.items as Array<{ externalId: string }>).map((e) => e.externalId).sort();
const groupCount = async () => (await h.get('/groups?all=true')).body.items.length as number;

describe('groups grant only what their creator holds', () => {
  it('refuses a group granting more than the creator holds, and grants nothing', async () => {
    const before = await groupCount();
    const wider = await createAs('manager', { sourceId: 'managers', capabilities: [capability('eventsAcl', ['READ', 'WRITE'])] });
    expect(errorMessage(wider, 403)).toBe(
      `items[0].capabilities[0]: missing capability eventsAcl:READ with scope all: principal "manager" holds it only in datasetScope [${dsA}]; ` +
        'a group grants only capabilities its creator holds itself',
    );
    const write = await createAs('manager', { sourceId: 'managers', capabilities: [capability('eventsAcl', ['WRITE'], { datasetScope: { ids: [dsA] } })] });
    expect(errorMessage(write, 403)).toMatch(/capabilities\[0\]: missing capability eventsAcl:WRITE with datasetScope \[\d+\]: principal "manager" does not hold it/);
    const moreIds = await createAs('manager', { sourceId: 'managers', capabilities: [capability('eventsAcl', ['READ'], { datasetScope: { ids: [dsA, dsB] } })] });
    expect(errorMessage(moreIds, 403)).toMatch(/missing capability eventsAcl:READ with datasetScope \[\d+,\d+\]/);
    // A data set scope never covers item ids: an item can move between data sets.
    const itemIds = await createAs('manager', { sourceId: 'managers', capabilities: [capability('timeSeriesAcl', ['READ'], { idscope: { ids: [1] } })] });
    expect(errorMessage(itemIds, 403)).toMatch(/timeSeriesAcl:READ with idscope \[1\]: principal "manager" holds it only in datasetScope/);
    expect(await groupCount()).toBe(before);
    // The probe's escalation: nothing outside its data set became readable.
    expect(xids(await as('manager', 'POST', '/events/list', {}))).toEqual(['in-a']);
  });

  it('refuses widening its own group management', async () => {
    const res = await createAs('manager', { sourceId: 'managers', capabilities: [capability('groupsAcl', ['CREATE'])] });
    expect(errorMessage(res, 403)).toMatch(/missing capability groupsAcl:CREATE with scope all: principal "manager" holds it only in currentuserscope/);
  });

  it('allows granting what it holds, in the same or a narrower scope', async () => {
    const res = await createAs('manager', {
      name: 'Managers, again',
      sourceId: 'managers',
      capabilities: [
        capability('eventsAcl', ['READ'], { datasetScope: { ids: [dsA] } }),
        // For data sets, idscope and datasetScope list the same ids.
        capability('datasetsAcl', ['READ'], { datasetScope: { ids: [dsA] } }),
        capability('groupsAcl', ['LIST'], { currentuserscope: {} }),
      ],
    });
    expect(res.status).toBe(201);
    const narrower = await as('keeper', 'POST', '/groups', {
      items: [{ name: 'Readers of A', sourceId: 'others', capabilities: [capability('eventsAcl', ['READ'], { datasetScope: { ids: [dsA] } })] }],
    });
    expect(narrower.status).toBe(201);
  });
});

describe('currentuserscope: only the principal\'s own groups', () => {
  it('creates groups it is a member of, by sourceId, members or all user accounts', async () => {
    expect((await createAs('manager', { sourceId: 'managers' })).status).toBe(201);
    expect((await createAs('manager', { members: ['manager', 'someone'] })).status).toBe(201);
    expect((await createAs('manager', { members: 'allUserAccounts' })).status).toBe(201);
  });

  it('refuses a group it would not be a member of, whatever it grants', async () => {
    const notMember = /items\[0\]: groupsAcl:CREATE is granted only in currentuserscope, and principal "manager" would not be a member of this group .*; this needs groupsAcl:CREATE with scope all/;
    expect(errorMessage(await createAs('manager', { sourceId: 'others' }), 403)).toMatch(notMember);
    expect(errorMessage(await createAs('manager', { members: ['someone'] }), 403)).toMatch(notMember);
    expect(errorMessage(await createAs('manager', { members: ['manager'], attributes: { token: { appIds: ['another-app'] } } }), 403)).toMatch(notMember);
    expect(errorMessage(await createAs('manager', {}), 403)).toMatch(notMember);
  });

  it('deletes only its own groups, refusing another\'s group exactly as a missing one', async () => {
    const other = await as('manager', 'POST', '/groups/delete', { items: [ids.others] });
    const missing = await as('manager', 'POST', '/groups/delete', { items: [987654] });
    expect(errorMessage(other, 403)).toBe(
      `items[0]: groupsAcl:DELETE is granted only in currentuserscope, and group ${ids.others} is not one of the groups of principal "manager"; ` +
        'this needs groupsAcl:DELETE with scope all',
    );
    expect(errorMessage(missing, 403).replace('987654', String(ids.others))).toBe(errorMessage(other, 403));
    expect((await h.get('/groups?all=true')).body.items.map((g: { id: number }) => g.id)).toContain(ids.others);
    const own = await createAs('manager', { name: 'Disposable', sourceId: 'managers' });
    expect((await as('manager', 'POST', '/groups/delete', { items: [own.body.items[0].id] })).status).toBe(200);
  });
});

describe('scope all: any group, still only what the principal holds', () => {
  it('creates groups for others and deletes any group, but grants only its own capabilities', async () => {
    const granted = await as('keeper', 'POST', '/groups', { items: [{ name: 'For others', sourceId: 'others', capabilities: [capability('eventsAcl', ['READ'])] }] });
    expect(granted.status).toBe(201);
    const more = await as('keeper', 'POST', '/groups', { items: [{ name: 'x', sourceId: 'keepers', capabilities: [capability('eventsAcl', ['WRITE'])] }] });
    expect(errorMessage(more, 403)).toMatch(/missing capability eventsAcl:WRITE with scope all: principal "keeper" does not hold it/);
    expect((await as('keeper', 'POST', '/groups/delete', { items: [granted.body.items[0].id] })).status).toBe(200);
  });
});

describe('the project\'s identity configuration', () => {
  beforeAll(async () => {
    await createGroup(h, { name: 'Updaters', sourceId: 'updaters', capabilities: [capability('projectsAcl', ['READ', 'UPDATE'])] }, 'other');
    await createGroup(h, { name: 'Readers', sourceId: 'readers', capabilities: [capability('eventsAcl', ['READ'])] }, 'other');
  });
  const update = (body: unknown) => h.request('POST', '/api/v1/projects/other/update', { update: body }, bearer(tokens.updater));

  it('is changed only by a principal holding everything the project\'s groups grant', async () => {
    const widen = await update({ oidcConfiguration: { modify: { accessClaims: { add: [{ claimName: 'client_id' }] } } } });
    expect(errorMessage(widen, 403)).toMatch(
      /^update\.oidcConfiguration: missing capability eventsAcl:READ with scope all: principal "updater" does not hold it; the identity provider configuration decides who belongs to every group/,
    );
    expect(errorMessage(await update({ oidcConfiguration: { setNull: true } }), 403)).toMatch(/eventsAcl:READ/);
    expect((await update({ name: { set: 'Other project' } })).status).toBe(200);
    await createGroup(h, { name: 'Updaters read', sourceId: 'updaters', capabilities: [capability('eventsAcl', ['READ'])] }, 'other');
    expect((await update({ oidcConfiguration: { modify: { logClaims: { add: [{ claimName: 'sub' }] } } } })).status).toBe(200);
  });
});

describe('the built-in provider\'s tokens', () => {
  it('carry no claim the requester chose, so a requested scope cannot make it a member of a group', async () => {
    const configured = await h.post('/api/v1/projects/claims/update', {
      update: { oidcConfiguration: { modify: { accessClaims: { set: [{ claimName: 'scope' }, { claimName: 'groups' }] } } } },
    });
    expect(configured.status).toBe(200);
    await createGroup(h, { name: 'Admins by scope', sourceId: 'admins', capabilities: [capability('eventsAcl', ['READ'])] }, 'claims');
    const res = await h.strata.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'other', client_secret: 'other-secret', scope: 'admins' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(200);
    const chosen = res.json().access_token as string;
    expect(errorMessage(await h.request('GET', '/api/v1/projects/claims/events', undefined, bearer(chosen)), 403)).toMatch(/eventsAcl:READ/);
  });
});
