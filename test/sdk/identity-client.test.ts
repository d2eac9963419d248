/**
 * Security categories, groups that grant them, the project's organization and the identity service,
 * through the official JavaScript client as its users call them: `client.securityCategories` (create, list
 * page by page, delete), `client.groups.create` with `attributes` and a `securityCategoriesAcl` capability,
 * `client.projects.retrieve`, and `client.get` for what it has no method for (token inspection, the
 * organization's projects and principals, `principals/me`: served on the same origin), and `client.profiles`
 * for a person whose token comes from the project's own identity provider.
 */
import type { CogniteClient } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_PROVIDERS, startTestIssuer, trustedIssuer, type TestIssuer } from '../support/oidc-issuer.js';
import { clientFailure, sdkClient, startSdkHarness, type SdkHarness } from '../support/sdk.js';

const CLIENTS = [{ clientId: 'sdk-member', clientSecret: 'sdk-member-secret', groups: ['sdk-members'] }];

let h: SdkHarness;
let member: CogniteClient;
let idp: TestIssuer;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'identity', env: { ...LOOPBACK_PROVIDERS, STRATA_CLIENTS: JSON.stringify(CLIENTS) } });
  member = await h.clientFor('sdk-member', 'sdk-member-secret');
  idp = await startTestIssuer();
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

describe('security categories', () => {
  it('creates, lists every page and deletes', async () => {
    const created = await h.client.securityCategories.create([{ name: 'sdk-b' }, { name: 'sdk-a' }, { name: 'sdk-c' }]);
    expect(created.map((c) => c.name)).toEqual(['sdk-b', 'sdk-a', 'sdk-c']);
    const all = await h.client.securityCategories.list({ limit: 2 }).autoPagingToArray({ limit: Infinity });
    expect(all.map((c) => c.name)).toEqual(['sdk-a', 'sdk-b', 'sdk-c']);
    const first = await h.client.securityCategories.list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));

    await h.client.securityCategories.delete([created[0].id]);
    expect((await h.client.securityCategories.list().autoPagingToArray()).map((c) => c.name)).toEqual(['sdk-a', 'sdk-c']);
    const err = await clientFailure(h.client.securityCategories.delete([created[0].id]));
    expect(err.status).toBe(400);
    await h.client.securityCategories.delete([created[1].id, created[2].id]);
  });

  it('is granted by groups, with attributes, and needs securityCategoriesAcl', async () => {
    const [category] = await h.client.securityCategories.create([{ name: 'sdk-granted' }]);
    const [group] = await h.client.groups.create([
      {
        name: 'SDK members',
        sourceId: 'sdk-members',
        capabilities: [{ securityCategoriesAcl: { actions: ['MEMBEROF', 'LIST'], scope: { idscope: { ids: [category.id] } } } }],
        attributes: { token: { appIds: ['sdk-member'] } },
      } as never,
    ]);
    expect(group).toMatchObject({
      capabilities: [{ securityCategoriesAcl: { actions: ['MEMBEROF', 'LIST'], scope: { idscope: { ids: [category.id] } } } }],
      attributes: { token: { appIds: ['sdk-member'] } },
    });
    expect((await member.securityCategories.list().autoPagingToArray()).map((c) => c.name)).toEqual(['sdk-granted']);
    expect((await clientFailure(member.securityCategories.create([{ name: 'x' }]))).status).toBe(403);
    const inspected = await member.get<{ subject: string; capabilities: object[] }>('/api/v1/token/inspect');
    expect(inspected.data).toEqual({
      subject: 'sdk-member',
      projects: [{ projectUrlName: 'dev', groups: [group.id] }],
      capabilities: [{ securityCategoriesAcl: { actions: ['MEMBEROF', 'LIST'], scope: { idscope: { ids: [category.id] } } }, projectScope: { projects: ['dev'] } }],
    });
  });
});

describe('the organization', () => {
  it('names the project\'s organization, whose projects, principals and caller the identity service shows', async () => {
    const project = (await h.client.projects.retrieve('dev')) as unknown as { organization: string };
    expect(project.organization).toBe('strata');
    const projects = await member.get<{ items: Array<{ name: string; apiUrl: string }> }>(`/api/v1/orgs/${project.organization}/projects`);
    expect(projects.data.items).toEqual([
      { name: 'dev', apiUrl: h.origin },
      { name: 'other', apiUrl: h.origin },
    ]);
    const principals = await member.get<{ items: Array<{ id: string; type: string }> }>(`/api/v1/orgs/${project.organization}/principals`);
    expect(principals.data.items.map((p) => p.id)).toEqual(['sdk-member', 'strata-admin']);
    expect((await member.get<{ id: string }>('/api/v1/principals/me')).data).toMatchObject({ id: 'sdk-member', type: 'SERVICE_ACCOUNT' });
  });
});

describe('user profiles', () => {
  it('shows the people who called the project: me, list, retrieve, search', async () => {
    await h.client.post('/api/v1/projects/other/groups', {
      data: { items: [{ name: 'People', sourceId: 'people', capabilities: [{ userProfilesAcl: { actions: ['READ'], scope: { all: {} } } }] }] },
    });
    // The project then accepts the tokens of its own provider (the test issuer) only.
    await h.client.post('/api/v1/projects/other/update', {
      data: { update: { oidcConfiguration: { set: trustedIssuer(idp) }, userProfilesConfiguration: { set: { enabled: true } } } },
    });
    const person = async (claims: Record<string, unknown>) => sdkClient(h.baseUrl, 'other', await idp.sign({ ...claims, groups: ['people'] }));
    const jane = await person({ sub: 'sdk-jane', name: 'Jane Doe', given_name: 'Jane', family_name: 'Doe', email: 'jane@example.com' });
    const me = await jane.profiles.me();
    expect(me).toMatchObject({ userIdentifier: 'sdk-jane', displayName: 'Jane Doe', givenName: 'Jane', surname: 'Doe', email: 'jane@example.com' });
    expect(me.lastUpdatedTime).toEqual(expect.any(Number));
    await (await person({ sub: 'sdk-ana', name: 'Ana Berg' })).profiles.me();
    expect((await jane.profiles.list({ limit: 1 }).autoPagingToArray({ limit: Infinity })).map((p) => p.userIdentifier)).toEqual(['sdk-ana', 'sdk-jane']);
    expect((await jane.profiles.retrieve([{ userIdentifier: 'sdk-jane' }])).map((p) => p.displayName)).toEqual(['Jane Doe']);
    expect((await clientFailure(jane.profiles.retrieve([{ userIdentifier: 'nobody' }]))).status).toBe(400);
    expect((await jane.profiles.search({ search: { name: 'ana' } })).map((p) => p.userIdentifier)).toEqual(['sdk-ana']);
    const app = await person({ sub: 'sdk-app' });
    expect((await clientFailure(app.profiles.me())).status).toBe(404);
  });
});
