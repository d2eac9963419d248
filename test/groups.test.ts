/**
 * Groups and what they grant: membership by the token's groups claim (`sourceId`), by subject (`members`)
 * or for everyone, narrowed by application; capabilities as the union over groups; own groups and all
 * groups; deletion taking effect at once (in another process on the same store: within moments); token
 * inspection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_AUTH_FRESH_MS } from '../src/storage/projects.js';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { newPostgresDatabase, testEngine } from './support/test-store.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

const CLIENTS = [
  { clientId: 'reader', clientSecret: 'reader-secret', groups: ['readers'] },
  { clientId: 'editor', clientSecret: 'editor-secret', groups: ['readers', 'writers'] },
  { clientId: 'auditor', clientSecret: 'auditor-secret', groups: ['auditors'] },
  { clientId: 'nobody', clientSecret: 'nobody-secret', groups: [] },
];

let h: Harness;
const tokens: Record<string, string> = {};
const ids: Record<string, number> = {};

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
  for (const c of CLIENTS) tokens[c.clientId] = await clientToken(h, c.clientId, c.clientSecret);
  ids.readers = await createGroup(h, {
    name: 'Readers',
    sourceId: 'readers',
    capabilities: [capability('eventsAcl', ['READ']), capability('groupsAcl', ['LIST'], { currentuserscope: {} })],
    metadata: { team: 'ops' },
  });
  ids.writers = await createGroup(h, { name: 'Writers', sourceId: 'writers', capabilities: [capability('eventsAcl', ['WRITE'])] });
  ids.auditors = await createGroup(h, { name: 'Auditors', sourceId: 'auditors', capabilities: [capability('groupsAcl', ['LIST'])] });
});
afterAll(() => h.close());

const as = (who: string, method: string, path: string, body?: unknown) => h.request(method, path, body, bearer(tokens[who]));

describe('groups', () => {
  it('grants the capabilities of the groups named in the token, as their union', async () => {
    expect((await as('reader', 'GET', '/events')).status).toBe(200);
    expect(errorMessage(await as('reader', 'POST', '/events', { items: [{}] }), 403)).toMatch(/Missing capability eventsAcl:WRITE \(scope: all or datasetScope\)/);
    expect((await as('editor', 'POST', '/events', { items: [{ externalId: 'by-editor' }] })).status).toBe(201);
    expect((await as('editor', 'GET', '/events')).status).toBe(200);
    expect(errorMessage(await as('nobody', 'GET', '/events'), 403)).toMatch(/eventsAcl:READ.*"nobody"/);
  });

  it('lists the caller\'s own groups, and every group with all=true and the right scope', async () => {
    const own = await as('editor', 'GET', '/groups');
    expect(own.status).toBe(200);
    expect(own.body.items.map((g: { id: number }) => g.id)).toEqual([ids.readers, ids.writers]);
    expect(own.body.items[0]).toMatchObject({ name: 'Readers', sourceId: 'readers', metadata: { team: 'ops' }, isDeleted: false });
    expect(errorMessage(await as('reader', 'GET', '/groups?all=true'), 403)).toMatch(/all=true.*groupsAcl:LIST with scope all.*currentuserscope/);
    const everything = await as('auditor', 'GET', '/groups?all=true');
    expect(everything.body.items.map((g: { id: number }) => g.id)).toEqual(expect.arrayContaining([ids.readers, ids.writers, ids.auditors]));
  });

  it('grants to explicit members and to all user accounts, narrowed by application', async () => {
    const groupId = await createGroup(h, { name: 'Named', members: ['nobody'], capabilities: [capability('datasetsAcl', ['READ'])] });
    expect((await as('nobody', 'POST', '/datasets/list', {})).status).toBe(200);
    const everyone = await createGroup(h, {
      name: 'Everyone from the auditor app',
      members: 'allUserAccounts',
      capabilities: [capability('timeSeriesAcl', ['READ'])],
      attributes: { token: { appIds: ['auditor'] } },
    });
    expect((await as('auditor', 'POST', '/timeseries/list', {})).status).toBe(200);
    expect(errorMessage(await as('reader', 'POST', '/timeseries/list', {}), 403)).toMatch(/timeSeriesAcl:READ/);
    await h.post('/groups/delete', { items: [groupId, everyone] });
  });

  it('takes a deleted group away at once, from a token already in use', async () => {
    const id = await createGroup(h, { name: 'Temporary', sourceId: 'readers', capabilities: [capability('sessionsAcl', ['LIST'])] });
    expect((await as('reader', 'GET', '/sessions')).status).toBe(200);
    expect((await h.post('/groups/delete', { items: [id] })).status).toBe(200);
    expect(errorMessage(await as('reader', 'GET', '/sessions'), 403)).toMatch(/sessionsAcl:LIST/);
  });

  it('refuses bad groups with 400 naming the problem, and unknown ids on delete', async () => {
    const bad = (item: unknown) => h.post('/groups', { items: [item] });
    expect(errorMessage(await bad({ name: 'x', sourceId: 's', members: ['a'] }), 400)).toMatch(/items\[0\]: give either sourceId .* or members/);
    expect(errorMessage(await bad({ name: 'x', members: 'all' }), 400)).toBe('items[0].members: must be an array or "allUserAccounts", got "all"');
    expect(errorMessage(await bad({ name: 'x', capabilities: [{ eventsAcl: { actions: ['READ'] } }] }), 400)).toMatch(/items\[0\]\.capabilities\[0\]\.eventsAcl\.scope: is required/);
    expect(errorMessage(await bad({ name: 'x', capabilities: [{ eventsAcl: { actions: ['READ'], scope: { all: {} } }, assetsAcl: { actions: ['READ'], scope: { all: {} } } }] }), 400)).toMatch(/exactly one ACL/);
    expect(errorMessage(await bad({ name: 'x', capabilities: [{ ...capability('eventsAcl', ['READ']), projectUrlNames: { urlNames: ['other'] } }] }), 400)).toMatch(/own project "dev"/);
    expect(errorMessage(await bad({ name: 'x', metadata: { ['k'.repeat(33)]: 'v' } }), 400)).toMatch(/at most 32 bytes/);
    const missing = await h.post('/groups/delete', { items: [987654] });
    expect(errorMessage(missing, 400)).toMatch(/not found/);
    expect(missing.body.error.missing).toEqual([{ id: 987654 }]);
  });

  it('accepts ACL names as the reference spells them, and normalizes them', async () => {
    const res = await h.post('/groups', { items: [{ name: 'Spelling', capabilities: [{ DataModelsAcl: { actions: ['read'], scope: { all: {} } } }] }] });
    expect(res.status).toBe(201);
    expect(res.body.items[0].capabilities).toEqual([{ dataModelsAcl: { actions: ['READ'], scope: { all: {} } } }]);
  });
});

describe('token inspection', () => {
  it('lists subject, the projects that grant something, the groups and the capabilities', async () => {
    const res = await h.request('GET', '/api/v1/token/inspect', undefined, bearer(tokens.editor));
    expect(res.status).toBe(200);
    expect(res.body.subject).toBe('editor');
    expect(res.body.projects).toEqual([{ projectUrlName: 'dev', groups: [ids.readers, ids.writers] }]);
    expect(res.body.capabilities).toEqual(
      expect.arrayContaining([
        { eventsAcl: { actions: ['READ'], scope: { all: {} } }, projectScope: { projects: ['dev'] } },
        { eventsAcl: { actions: ['WRITE'], scope: { all: {} } }, projectScope: { projects: ['dev'] } },
      ]),
    );
  });

  it('shows the administrator in every project of the built-in provider, and refuses bad tokens', async () => {
    const admin = await h.get('/api/v1/token/inspect');
    expect(admin.body.subject).toBe('strata-admin');
    expect(admin.body.projects.map((p: { projectUrlName: string }) => p.projectUrlName)).toEqual(['dev', 'other']);
    expect(admin.body.capabilities).toContainEqual({ eventsAcl: { actions: ['READ', 'WRITE'], scope: { all: {} } }, projectScope: { allProjects: {} } });
    errorMessage(await h.request('GET', '/api/v1/token/inspect', undefined, { authorization: 'Bearer x.y.z' }), 401);
    errorMessage(await h.request('GET', '/api/v1/token/inspect', undefined, { authorization: '' }), 401);
  });
});

describe('two processes on one store', () => {
  it('takes a group deleted through one away in the other within PROJECT_AUTH_FRESH_MS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-two-'));
    // One data directory, or one PostgreSQL database, for both.
    const shared: Record<string, string> = testEngine() === 'postgres' ? { STRATA_DATABASE_URL: await newPostgresDatabase() } : {};
    const env = { STRATA_DATA_DIR: dir, STRATA_CLIENTS: JSON.stringify(CLIENTS), ...shared };
    const a = await startHarness({}, env);
    const b = await startHarness({}, env);
    try {
      const reader = await clientToken(a, 'reader', 'reader-secret');
      const id = await createGroup(a, { name: 'Shared', sourceId: 'readers', capabilities: [capability('sessionsAcl', ['LIST'])] });
      // B has resolved the reader's groups with the group in them (and keeps them while the version holds).
      expect((await b.request('GET', '/sessions', undefined, bearer(reader))).status).toBe(200);
      expect((await a.post('/groups/delete', { items: [id] })).status).toBe(200);
      expect((await a.request('GET', '/sessions', undefined, bearer(reader))).status).toBe(403);
      const deleted = performance.now();
      let status = 200;
      while (status === 200 && performance.now() - deleted < PROJECT_AUTH_FRESH_MS * 8) {
        status = (await b.request('GET', '/sessions', undefined, bearer(reader))).status;
        if (status === 200) await new Promise((r) => setTimeout(r, 10));
      }
      expect(status).toBe(403);
    } finally {
      await b.close();
      await a.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
