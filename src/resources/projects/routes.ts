/**
 * The project itself: `GET /api/v1/projects/{project}` shows its name and OpenID Connect configuration;
 * `POST .../update` changes them. A new configuration is checked against the provider's discovery document
 * before it is stored, and takes effect for the next request in every process (the project's authentication
 * version changes with it).
 *
 * Whoever decides which identities the project accepts and which claims count decides who belongs to every
 * group, so changing the configuration needs every capability the project's groups grant.
 */
import { requireHeld } from '../../auth/delegation.js';
import { projectGroups } from '../../auth/group-store.js';
import { resolveGroups } from '../../auth/membership.js';
import { applyModify, type OidcConfiguration } from '../../auth/oidc-config.js';
import { authRuntime, type AuthRuntime } from '../../auth/runtime.js';
import type { Queryable } from '../../storage/store.js';
import { bumpAuthVersion, findProjectAuth, readProjectConfig, writeProjectConfigMember, type ProjectAuthRow } from '../../storage/projects.js';
import { route, type ApiRoute, type Project } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { IDENTITY_SETTINGS } from '../identity/settings.js';
import { ProjectUpdateBody } from './schema.js';

interface ProjectView {
  name: string;
  urlName: string;
  oidcConfiguration: OidcConfiguration;
  userProfilesConfiguration: { enabled: boolean };
  /** The organization the project belongs to (the identity service's; clients find its address from here). */
  organization: string;
}

async function authRow(db: Queryable, project: Project): Promise<ProjectAuthRow> {
  return (await findProjectAuth(db, project.name))!;
}

async function view(auth: AuthRuntime, services: Services, project: Project): Promise<ProjectView> {
  const { db } = services;
  const config = await readProjectConfig(db, project.id);
  const profiles = config.userProfiles as { enabled?: boolean } | undefined;
  return {
    name: typeof config.name === 'string' ? config.name : project.name,
    urlName: project.name,
    oidcConfiguration: (await auth.provider(await authRow(db, project))).config,
    userProfilesConfiguration: { enabled: profiles?.enabled ?? false },
    organization: typeof config.organization === 'string' ? config.organization : services.settings.of(IDENTITY_SETTINGS).organization,
  };
}

export const projectRoutes: ApiRoute[] = [
  route({
    method: 'GET',
    path: '/',
    summary: "The project's name and the OpenID Connect provider it trusts",
    capability: { acl: 'projectsAcl', action: 'READ' },
    handler: ({ services, project }) => view(authRuntime(services), services, project),
  }),
  route({
    method: 'POST',
    path: '/update',
    summary: "Changes the project's name or the OpenID Connect provider it trusts",
    capability: { acl: 'projectsAcl', action: 'UPDATE' },
    body: ProjectUpdateBody,
    handler: async ({ services, project, principal, body }) => {
      const auth = authRuntime(services);
      const { db } = services;
      const { update } = body;
      const oidc = update.oidcConfiguration;
      if (oidc) {
        const path = ['update', 'oidcConfiguration'];
        const granted = resolveGroups(await projectGroups(db, project.id), auth.acls, project.name).flatMap((g) => g.grants.map((grant) => ({ grant, path })));
        requireHeld(principal, project.name, granted, 'the identity provider configuration decides who belongs to every group, so changing it needs every capability the groups grant');
      }
      let next: OidcConfiguration | null | undefined;
      if (oidc && 'set' in oidc) next = await auth.resolveConfiguration(oidc.set, 'update.oidcConfiguration.set');
      else if (oidc && 'modify' in oidc) {
        const current = (await auth.provider(await authRow(db, project))).config;
        next = await auth.resolveConfiguration(applyModify(current, oidc.modify), 'update.oidcConfiguration.modify');
      } else if (oidc) next = null;
      await db.transaction(async (db) => {
        if (update.name) await writeProjectConfigMember(db, project.id, 'name', update.name.set);
        const profiles = update.userProfilesConfiguration;
        if (profiles) {
          const enabled = 'set' in profiles ? profiles.set.enabled : profiles.modify.enabled;
          if (enabled !== undefined) await writeProjectConfigMember(db, project.id, 'userProfiles', { enabled });
        }
        // Leaving the configuration out of the stored project makes it accept the built-in provider again.
        if (next !== undefined) await writeProjectConfigMember(db, project.id, 'oidc', next ?? undefined);
        await bumpAuthVersion(db, project.id);
      });
      return view(auth, services, project);
    },
  }),
];
