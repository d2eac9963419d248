/**
 * Access through the official JavaScript client, called as its users call it: groups (create, list own and
 * all, delete), sessions (create from client credentials, by token exchange and one-shot; list by status,
 * retrieve, revoke), token inspection (the client has no method for it; its users call `client.get`), and
 * the project (`client.projects.retrieve`; an update through `client.post`, the client having no method).
 */
import type { CogniteClient, Group } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

const CLIENTS = [
  { clientId: 'sdk-worker', clientSecret: 'sdk-worker-secret', groups: ['sdk-workers'] },
  { clientId: 'sdk-operator', clientSecret: 'sdk-operator-secret', groups: ['sdk-operators'] },
];
const capability = (acl: string, actions: string[], scope: object = { all: {} }) => ({ [acl]: { actions, scope } });

let h: SdkHarness;
let operator: CogniteClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'access', env: { STRATA_CLIENTS: JSON.stringify(CLIENTS) } });
  await h.seed('POST', '/groups', {
    items: [
      { name: 'SDK workers', sourceId: 'sdk-workers', capabilities: [capability('eventsAcl', ['READ'])] },
      {
        name: 'SDK operators',
        sourceId: 'sdk-operators',
        capabilities: [
          capability('sessionsAcl', ['CREATE', 'DELETE']),
          capability('groupsAcl', ['LIST'], { currentuserscope: {} }),
          capability('eventsAcl', ['READ']),
        ],
      },
    ],
  });
  operator = await h.clientFor('sdk-operator', 'sdk-operator-secret');
});
afterAll(() => h?.close());


describe('groups', () => {
  let created: Group[];
  beforeAll(async () => {
    created = await h.client.groups.create([
      {
        name: 'SDK readers',
        sourceId: 'idp-readers',
        capabilities: [capability('eventsAcl', ['READ'], { datasetScope: { ids: [1, 2] } }), capability('timeSeriesAcl', ['READ', 'WRITE'])],
        metadata: { team: 'ops' },
      } as never,
      { name: 'SDK members', members: ['user-a', 'user-b'], capabilities: [capability('assetsAcl', ['READ'])] } as never,
      { name: 'SDK everyone', members: 'allUserAccounts', attributes: { token: { appIds: ['app-1'] } } } as never,
    ]);
  });

  it('creates groups with their capabilities, members or source id, metadata and attributes', () => {
    const [readers, members, everyone] = created;
    expect(readers).toMatchObject({
      name: 'SDK readers',
      sourceId: 'idp-readers',
      capabilities: [capability('eventsAcl', ['READ'], { datasetScope: { ids: [1, 2] } }), capability('timeSeriesAcl', ['READ', 'WRITE'])],
      metadata: { team: 'ops' },
      isDeleted: false,
    });
    expect(members).toMatchObject({ name: 'SDK members', members: ['user-a', 'user-b'] });
    expect(everyone).toMatchObject({ members: 'allUserAccounts', attributes: { token: { appIds: ['app-1'] } } });
    expect(new Set(created.map((g) => g.id)).size).toBe(3);
  });

  it('lists every group with all: true, and the caller\'s own groups without it', async () => {
    const all = await h.client.groups.list({ all: true });
    expect(all.map((g) => g.name)).toEqual(expect.arrayContaining(['SDK workers', 'SDK operators', 'SDK readers', 'SDK members', 'SDK everyone']));
    const own = await operator.groups.list();
    expect(own.map((g) => g.name)).toEqual(['SDK operators']);
    expect(await operator.groups.list({ all: false })).toEqual(own);
    // Listing every group needs groupsAcl:LIST with scope all.
    const err = await clientFailure(operator.groups.list({ all: true }));
    expect(err.status).toBe(403);
  });

  // Refusals of bad groups and unknown ids: test/groups.test.ts (the reference has no 400 form for them).
  it('deletes groups by id', async () => {
    const ids = created.map((g) => g.id);
    expect(await h.client.groups.delete(ids.slice(0, 2))).toEqual({});
    const left = (await h.client.groups.list({ all: true })).map((g) => g.id);
    expect(left).not.toContain(ids[0]);
    expect(left).toContain(ids[2]);
  });
});

describe('sessions', () => {
  it('creates sessions from client credentials, by token exchange and one-shot', async () => {
    const [client] = await h.client.sessions.create([{ clientId: 'sdk-worker', clientSecret: 'sdk-worker-secret' }]);
    expect(client).toMatchObject({ type: 'CLIENT_CREDENTIALS', status: 'READY', clientId: 'sdk-worker' });
    expect(client.nonce).toEqual(expect.any(String));
    const [exchange] = await h.client.sessions.create([{ tokenExchange: true }]);
    expect(exchange).toMatchObject({ type: 'TOKEN_EXCHANGE', status: 'READY' });
    expect(exchange.clientId).toBeUndefined();
    const [oneshot] = await operator.sessions.create([{ oneshotTokenExchange: true }]);
    expect(oneshot).toMatchObject({ type: 'ONESHOT_TOKEN_EXCHANGE', status: 'READY' });
    const err = await clientFailure(h.client.sessions.create([{ clientId: 'sdk-worker', clientSecret: 'wrong-secret' }]));
    expect(err.status).toBe(400);
  });

  it('lists sessions by status, paging as the client does, and retrieves them by id', async () => {
    const created = await Promise.all(Array.from({ length: 5 }, () => h.client.sessions.create([{ tokenExchange: true }])));
    const ids = created.map(([s]) => s.id);
    const ready = await h.client.sessions.list({ filter: { status: 'READY' }, limit: 2 }).autoPagingToArray({ limit: -1 });
    expect(ready.map((s) => s.id)).toEqual(expect.arrayContaining(ids));
    expect(ready.every((s) => s.status === 'READY')).toBe(true);
    expect(ready[0].creationTime).toEqual(expect.any(Number));
    expect(await h.client.sessions.list({ filter: { status: 'REVOKED' } }).autoPagingToArray({ limit: -1 })).toEqual([]);
    const all = await h.client.sessions.list().autoPagingToArray({ limit: -1 });
    expect(all.length).toBe(ready.length);
    const got = await h.client.sessions.retrieve([{ id: ids[3] }, { id: ids[1] }]);
    expect(got.map((s) => [s.id, s.type, s.status])).toEqual([
      [ids[3], 'TOKEN_EXCHANGE', 'READY'],
      [ids[1], 'TOKEN_EXCHANGE', 'READY'],
    ]);
    const err = await clientFailure(h.client.sessions.retrieve([{ id: 987654 }]));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ id: 987654 }]);
  });

  it('revokes sessions; a caller without sessionsAcl:LIST learns only the ids', async () => {
    const [[a], [b]] = await Promise.all([h.client.sessions.create([{ tokenExchange: true }]), h.client.sessions.create([{ tokenExchange: true }])]);
    const revoked = await h.client.sessions.revoke([{ id: a.id }]);
    expect(revoked).toEqual([expect.objectContaining({ id: a.id, status: 'REVOKED', type: 'TOKEN_EXCHANGE' })]);
    expect(await operator.sessions.revoke([{ id: b.id }])).toEqual([{ id: b.id }]);
    const listed = await h.client.sessions.list({ filter: { status: 'REVOKED' } }).autoPagingToArray({ limit: -1 });
    expect(listed.map((s) => s.id).sort()).toEqual([a.id, b.id].sort());
    const err = await clientFailure(h.client.sessions.revoke([{ id: 987654 }]));
    expect(err.status).toBe(400);
  });
});

describe('token inspection and the project', () => {
  it('inspects the token: its subject, projects with their groups, and capabilities with their project scope', async () => {
    const res = await operator.get<{ subject: string; projects: Array<{ projectUrlName: string; groups: number[] }>; capabilities: object[] }>('/api/v1/token/inspect');
    expect(res.status).toBe(200);
    expect(res.data.subject).toBe('sdk-operator');
    expect(res.data.projects).toEqual([{ projectUrlName: 'dev', groups: [expect.any(Number)] }]);
    expect(res.data.capabilities).toEqual(
      expect.arrayContaining([
        { sessionsAcl: { actions: ['CREATE', 'DELETE'], scope: { all: {} } }, projectScope: { projects: ['dev'] } },
        { groupsAcl: { actions: ['LIST'], scope: { currentuserscope: {} } }, projectScope: { projects: ['dev'] } },
      ]),
    );
    const admin = await h.client.get<{ projects: Array<{ projectUrlName: string }>; capabilities: Array<Record<string, unknown>> }>('/api/v1/token/inspect');
    expect(admin.data.projects.map((p) => p.projectUrlName)).toEqual(['dev', 'other']);
    expect(admin.data.capabilities.every((c) => 'projectScope' in c)).toBe(true);
  });

  it('reads the project, and updates its name', async () => {
    const project = await h.client.projects.retrieve('dev');
    expect(project).toMatchObject({ name: 'dev', urlName: 'dev', userProfilesConfiguration: { enabled: false } });
    expect(project.oidcConfiguration).toMatchObject({ issuer: h.origin, accessClaims: expect.any(Array) });
    const updated = await h.client.post<{ name: string; urlName: string }>('/api/v1/projects/dev/update', {
      data: { update: { name: { set: 'Development' }, userProfilesConfiguration: { set: { enabled: true } } } },
    });
    expect(updated.status).toBe(200);
    expect(updated.data).toMatchObject({ name: 'Development', urlName: 'dev', userProfilesConfiguration: { enabled: true } });
    expect((await h.client.projects.retrieve('dev')).name).toBe('Development');
  });
});
