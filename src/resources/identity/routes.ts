/**
 * The organization and identity service, on Strata's own origin (its base URL for clients is a setting):
 * organizations and their child organizations and projects, principals, the login sessions of a principal,
 * and `GET /api/v1/principals/me`. These operations belong to no project: the caller's token must come from
 * the built-in identity provider (the identity provider of every organization here), and what it may do
 * follows from the organizations it administers (organizations.ts).
 *
 * The principals are the built-in provider's clients, all service accounts; each token the provider issues
 * opens a login session of its client (auth/login-sessions.ts), listed and revoked here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JWTPayload } from 'jose';
import type { TSchema } from '@sinclair/typebox';
import type { AreaRuntime } from '../../http/area.js';
import { badRequest, duplicatedItems, forbidden, formatPath, missingItems } from '../../http/errors.js';
import { applyVersion } from '../../http/versioning.js';
import { insertGroup } from '../../auth/group-store.js';
import { firstLogins, loginSessionsByIds, loginSessionsPage, revokeLoginSessions, type LoginSession } from '../../auth/login-sessions.js';
import { ensureProjects, findProjectAuth, writeProjectConfigMember } from '../../storage/projects.js';
import { sql } from '../../storage/sql.js';
import { orgView, Organizations, requireAdmin, type Organization } from './organizations.js';
import {
  CreateOrgBody,
  CreateProjectBody,
  ListLoginSessionsQuery,
  ListPrincipalsQuery,
  ListProjectsQuery,
  OrgParams,
  PrincipalParams,
  PrincipalsByIdsBody,
  RevokeLoginSessionsBody,
} from './schema.js';
import { IDENTITY_SETTINGS } from './settings.js';

interface Schemas {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
}

type Handler = (req: FastifyRequest, claims: JWTPayload, reply: FastifyReply) => Promise<unknown>;

/** A service account principal: one of the built-in provider's clients. */
function principalView(clientId: string, root: string, createdTime: number) {
  return {
    id: clientId,
    type: 'SERVICE_ACCOUNT',
    externalId: clientId,
    name: clientId.slice(0, 50),
    createdBy: { orgId: root, userId: clientId },
    createdTime,
    lastUpdatedTime: createdTime,
    pictureUrl: '',
  };
}

function isHttpUrl(text: unknown): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(String(text)).protocol);
  } catch {
    return false;
  }
}

const loginSessionView = (s: LoginSession) => ({
  id: String(s.id),
  createdTime: s.createdTime,
  status: s.status,
  ...(s.deactivatedTime !== undefined ? { deactivatedTime: s.deactivatedTime } : {}),
});

export async function registerIdentityRoutes(app: FastifyInstance, runtime: AreaRuntime): Promise<void> {
  const { auth, store: db } = runtime;
  const settings = runtime.settings.of(IDENTITY_SETTINGS);
  const orgs = new Organizations(settings, auth.idp.issuer);
  const { cursors } = runtime;
  const apiUrl = runtime.publicUrl;

  function serve(method: 'GET' | 'POST', url: string, summary: string, schema: Schemas, handler: Handler, status = 200): void {
    app.route({
      method,
      url,
      schema: { summary, security: [{ bearer: [] }], ...schema },
      // The token is checked before the body and parameters are validated: a caller without one learns nothing.
      preValidation: async (req) => {
        (req as FastifyRequest & { claims?: JWTPayload }).claims = await auth.builtInClaims(req.headers.authorization);
      },
      handler: async (req, reply) => {
        applyVersion(req, reply);
        const result = await handler(req, (req as FastifyRequest & { claims: JWTPayload }).claims, reply);
        return status === 204 ? reply.code(204).send() : reply.code(status).send(result ?? {});
      },
    });
  }

  async function principals(): Promise<Array<ReturnType<typeof principalView>>> {
    const first = await firstLogins(db);
    return auth.idp.clientIds.map((id) => principalView(id, orgs.rootId, first.get(id) ?? 0));
  }

  /** Members of an organization (every principal of the built-in provider here) and admins above it. */
  async function requireMember(id: string, claims: JWTPayload): Promise<Organization[]> {
    const chain = await orgs.chain(db, id);
    if (chain) return chain;
    return requireAdmin(db, orgs, claims, id);
  }

  const orgParams = (req: FastifyRequest) => (req.params as { org: string }).org;

  serve('GET', '/api/v1/orgs/:org', 'Retrieve an organization', { params: OrgParams }, async (req, claims) => {
    const [org] = await requireAdmin(db, orgs, claims, orgParams(req));
    return orgView(org);
  });

  serve('GET', '/api/v1/orgs/:org/orgs', 'List the child organizations of an organization', { params: OrgParams }, async (req, claims) => {
    const [org] = await requireAdmin(db, orgs, claims, orgParams(req));
    return { items: (await orgs.children(db, org.id)).map(orgView) };
  });

  serve(
    'POST',
    '/api/v1/orgs/:org/orgs',
    'Create a child organization',
    { params: OrgParams, body: CreateOrgBody },
    async (req, claims) => {
      const [parent] = await requireAdmin(db, orgs, claims, orgParams(req));
      if (!parent.adminsCanCreateOrgsInSubtree) throw forbidden(`Organization "${parent.id}" does not let its admins create organizations (adminsCanCreateOrgsInSubtree is false)`);
      const item = (req.body as { items: Array<Record<string, unknown>> }).items[0] as {
        id: string;
        idp: Record<string, unknown>;
        adminGroupId?: string | null;
        adminsCanCreateOrgsInSubtree?: boolean;
        adminsCanCreateProjectsInSubtree?: boolean;
        allowedClusters?: string[];
      };
      if (!isHttpUrl(item.idp.issuer)) throw badRequest(`items[0].idp.issuer: "${String(item.idp.issuer)}" is not an http or https URL`);
      const clusters = item.allowedClusters ?? [];
      clusters.forEach((c, i) => {
        if (!parent.allowedClusters.includes(c)) {
          throw badRequest(`${formatPath(['items', 0, 'allowedClusters', i])}: cluster "${c}" is not allowed in organization "${parent.id}" (allowed: ${parent.allowedClusters.join(', ')})`);
        }
      });
      const org: Organization = {
        id: item.id,
        parentId: parent.id,
        ...(item.adminGroupId ? { adminGroupId: item.adminGroupId } : {}),
        adminsCanCreateOrgsInSubtree: item.adminsCanCreateOrgsInSubtree ?? false,
        adminsCanCreateProjectsInSubtree: item.adminsCanCreateProjectsInSubtree ?? false,
        allowedClusters: clusters,
        idp: item.idp,
      };
      await db.transaction(async (tx) => {
        if (org.id === orgs.rootId || (await tx.get(sql`SELECT id FROM organizations WHERE id = ${org.id}`))) {
          throw duplicatedItems([{ externalId: org.id }]);
        }
        await tx.run(sql`INSERT INTO organizations (id, parent_id, admin_group_id, orgs_in_subtree, projects_in_subtree, allowed_clusters, idp, created_time)
          VALUES (${org.id}, ${parent.id}, ${org.adminGroupId ?? null}, ${org.adminsCanCreateOrgsInSubtree ? 1 : 0}, ${org.adminsCanCreateProjectsInSubtree ? 1 : 0},
                  ${JSON.stringify(org.allowedClusters)}, ${JSON.stringify(org.idp)}, ${runtime.now()})`);
      });
      return { items: [orgView(org)] };
    },
    201,
  );

  serve('POST', '/api/v1/orgs/:org/delete', 'Delete an organization without child organizations or projects', { params: OrgParams }, async (req, claims) => {
    const [org] = await requireAdmin(db, orgs, claims, orgParams(req));
    if (org.id === orgs.rootId) throw badRequest(`Organization "${org.id}" is the root organization of this server; it cannot be deleted`);
    await db.transaction(async (tx) => {
      const children = await orgs.children(tx, org.id);
      if (children.length) throw badRequest(`Organization "${org.id}" has child organizations (${children.map((c) => c.id).join(', ')}); delete them first`);
      const projects = await orgs.projects(tx, org.id);
      if (projects.length) throw badRequest(`Organization "${org.id}" has projects (${projects.join(', ')}); an organization with projects cannot be deleted`);
      await tx.run(sql`DELETE FROM organizations WHERE id = ${org.id}`);
    });
    return {};
  });

  serve('GET', '/api/v1/orgs/:org/projects', 'List the projects of an organization', { params: OrgParams, querystring: ListProjectsQuery }, async (req, claims) => {
    const id = orgParams(req);
    const { includeAdminProperties } = req.query as { includeAdminProperties?: boolean };
    const open = req.apiVersion!.at('orgProjectListing') === 'members';
    const chain = includeAdminProperties || !open ? await requireAdmin(db, orgs, claims, id) : await requireMember(id, claims);
    const names = await orgs.projects(db, chain[0].id);
    return {
      items: names.map((name) => ({
        name,
        ...(open ? { apiUrl } : {}),
        ...(includeAdminProperties ? { clusterName: settings.cluster, state: 'ACTIVE' } : {}),
      })),
    };
  });

  serve(
    'POST',
    '/api/v1/orgs/:org/projects',
    'Create a project in an organization',
    { params: OrgParams, body: CreateProjectBody },
    async (req, claims) => {
      const chain = await requireAdmin(db, orgs, claims, orgParams(req));
      const org = chain[0];
      if (!org.adminsCanCreateProjectsInSubtree) throw forbidden(`Organization "${org.id}" does not let its admins create projects (adminsCanCreateProjectsInSubtree is false)`);
      const item = (req.body as { items: Array<{ name: string; clusterName: string; projectAdminGroupId?: string | null }> }).items[0];
      if (!org.allowedClusters.includes(item.clusterName)) {
        throw badRequest(`items[0].clusterName: cluster "${item.clusterName}" is not allowed in organization "${org.id}" (allowed: ${org.allowedClusters.join(', ') || 'none'})`);
      }
      // Without an admin group of its own, the project's admins are the organization's (the nearest one set).
      const adminGroup = item.projectAdminGroupId ?? chain.find((o) => o.adminGroupId !== undefined)?.adminGroupId ?? null;
      await db.transaction(async (tx) => {
        if (await findProjectAuth(tx, item.name)) throw duplicatedItems([{ externalId: item.name }]);
        const now = runtime.now();
        await ensureProjects(tx, [item.name], now);
        const project = (await findProjectAuth(tx, item.name))!;
        await writeProjectConfigMember(tx, project.id, 'organization', org.id);
        if (adminGroup !== null) {
          const capabilities = auth.acls.all().map((def) => ({ [def.name]: { actions: [...def.actions], scope: { all: {} } } }));
          await insertGroup(tx, project.id, { name: 'Project administrators', sourceId: adminGroup, capabilities }, now);
        }
      });
      return { items: [{ name: item.name, clusterName: item.clusterName, projectAdminGroupId: adminGroup }] };
    },
    201,
  );

  serve('GET', '/api/v1/orgs/:org/principals', 'List the principals of an organization', { params: OrgParams, querystring: ListPrincipalsQuery }, async (req, claims) => {
    await requireMember(orgParams(req), claims);
    const query = req.query as { cursor?: string; limit?: number; types?: string | string[] };
    const types = query.types === undefined ? undefined : new Set([query.types].flat());
    const limit = query.limit ?? 25;
    const fingerprint = { resource: 'principals', types: types ? [...types].sort() : null };
    const after = query.cursor === undefined ? undefined : (cursors.decode(query.cursor, fingerprint) as { after: string }).after;
    const all = (await principals()).filter((p) => !types || types.has(p.type)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const rest = after === undefined ? all : all.filter((p) => p.id > after);
    const items = rest.slice(0, limit);
    return rest.length > limit ? { items, nextCursor: { cursor: cursors.encode({ after: items[limit - 1].id }, fingerprint) } } : { items };
  });

  serve('POST', '/api/v1/orgs/:org/principals/byids', 'Principals by id or external id', { params: OrgParams, body: PrincipalsByIdsBody }, async (req, claims) => {
    await requireMember(orgParams(req), claims);
    const body = req.body as { items: Array<{ id?: string; externalId?: string }>; ignoreUnknownIds?: boolean };
    const all = await principals();
    const found = body.items.map((ref) => all.find((p) => (ref.id !== undefined ? p.id === ref.id : p.externalId === ref.externalId)));
    const missing = body.items.filter((_, i) => found[i] === undefined);
    if (missing.length && !body.ignoreUnknownIds) throw missingItems(missing.map((m) => (m.id !== undefined ? { externalId: m.id } : { externalId: m.externalId! })));
    return { items: [...new Set(found.filter((p) => p !== undefined))] };
  });

  /** A principal of the organization whose login sessions the caller administers (admins of that very organization). */
  async function sessionsOf(req: FastifyRequest, claims: JWTPayload): Promise<string> {
    const { org, principal } = req.params as { org: string; principal: string };
    await requireAdmin(db, orgs, claims, org, true);
    if (!auth.idp.clientIds.includes(principal)) throw badRequest(`Principal "${principal}" does not exist in organization "${org}"`);
    return principal;
  }

  serve(
    'GET',
    '/api/v1/orgs/:org/principals/:principal/sessions',
    "A principal's login sessions, newest first",
    { params: PrincipalParams, querystring: ListLoginSessionsQuery },
    async (req, claims) => {
      const principal = await sessionsOf(req, claims);
      const query = req.query as { cursor?: string; limit?: number };
      const limit = query.limit ?? 25;
      const fingerprint = { resource: 'loginSessions', principal };
      const before = query.cursor === undefined ? undefined : (cursors.decode(query.cursor, fingerprint) as { before: number }).before;
      const page = await loginSessionsPage(db, principal, before, limit + 1, runtime.now());
      const items = page.slice(0, limit);
      const next = page.length > limit ? { nextCursor: { cursor: cursors.encode({ before: items[limit - 1].id }, fingerprint) } } : {};
      return { items: items.map(loginSessionView), ...next };
    },
  );

  serve(
    'POST',
    '/api/v1/orgs/:org/principals/:principal/sessions/revoke',
    "Revokes login sessions of a principal: their tokens, and the sessions created with them, are refused at once",
    { params: PrincipalParams, body: RevokeLoginSessionsBody },
    async (req, claims) => {
      const principal = await sessionsOf(req, claims);
      const ids = (req.body as { items: Array<{ id: string }> }).items.map((i) => Number(i.id));
      const found = new Set((await loginSessionsByIds(db, principal, ids, runtime.now())).map((s) => s.id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length) throw missingItems(missing.map((id) => ({ externalId: String(id) })));
      await revokeLoginSessions(db, ids, runtime.now());
      return undefined;
    },
    204,
  );

  serve('GET', '/api/v1/principals/me', 'The principal of the access token', {}, async (_req, claims) => {
    const me = (await principals()).find((p) => p.id === claims.sub);
    if (!me) throw forbidden(`The token's subject "${String(claims.sub)}" is not a principal of this server`);
    return me;
  });

}
