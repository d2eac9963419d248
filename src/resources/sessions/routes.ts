/**
 * The sessions of a project: create (client credentials, token exchange, one-shot token exchange), list,
 * retrieve by id and revoke. Binding and refreshing a session (its token exchange) is served outside the
 * authenticated operations, because the nonce or session key is the credential (auth/http-routes.ts).
 */
import { authRuntime } from '../../auth/runtime.js';
import { grantsFor } from '../../auth/principal.js';
import { createSession, sessionView, type SessionView } from '../../auth/sessions.js';
import { revokeSessions, sessionsByIds, sessionsPage, type SessionRecord } from '../../auth/session-store.js';
import { missingItems } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import type { Queryable } from '../../storage/store.js';
import { bumpAuthVersion, findProjectAuth } from '../../storage/projects.js';
import { CreateSessionsBody, ListSessionsQuery, SessionIdsBody } from './schema.js';

const LIST = { acl: 'sessionsAcl', action: 'LIST' };

/** Sessions in request order; unknown ids are a 400 with `missing`. */
async function byIds(db: Queryable, projectId: number, ids: number[]): Promise<SessionRecord[]> {
  const found = new Map((await sessionsByIds(db, projectId, ids)).map((s) => [s.id, s]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length) throw missingItems(missing.map((id) => ({ id })));
  return ids.map((id) => found.get(id)!);
}

export const sessionRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/sessions',
    capability: { acl: 'sessionsAcl', action: 'CREATE' },
    body: CreateSessionsBody,
    handler: async ({ services, project, principal, body }) => {
      const auth = authRuntime(services);
      const row = (await findProjectAuth(services.db, project.name))!;
      const created = await createSession(auth, services.db, row, principal, body.items[0]);
      return { items: [{ id: created.id, type: created.type, status: created.status, nonce: created.nonce, ...(created.clientId ? { clientId: created.clientId } : {}) }] };
    },
  }),
  route({
    method: 'GET',
    path: '/sessions',
    capability: LIST,
    query: ListSessionsQuery,
    handler: async ({ services, project, query }) => {
      const limit = query.limit ?? 25;
      const status = query.status?.toUpperCase();
      const fingerprint = { resource: 'sessions', status };
      let after = query.cursor === undefined ? 0 : (services.cursors.decode(query.cursor, fingerprint) as { after: number }).after;
      const now = services.now();
      // The status filter applies to the shown status, which depends on the time: filter page by page until
      // one more match than asked for shows that a next page exists.
      const matches: SessionView[] = [];
      for (;;) {
        const page = await sessionsPage(services.db, project.id, after, limit + 1);
        for (const s of page) {
          const v = sessionView(s, now);
          if (status === undefined || v.status === status) matches.push(v);
        }
        if (page.length <= limit || matches.length > limit) break;
        after = page[page.length - 1].id;
      }
      const items = matches.slice(0, limit);
      return matches.length > limit ? { items, nextCursor: services.cursors.encode({ after: items[limit - 1].id }, fingerprint) } : { items };
    },
  }),
  route({
    method: 'POST',
    path: '/sessions/byids',
    capability: LIST,
    body: SessionIdsBody,
    handler: async ({ services, project, body }) => {
      const now = services.now();
      return { items: (await byIds(services.db, project.id, body.items.map((i) => i.id))).map((s) => sessionView(s, now)) };
    },
  }),
  route({
    method: 'POST',
    path: '/sessions/revoke',
    capability: { acl: 'sessionsAcl', action: 'DELETE' },
    body: SessionIdsBody,
    handler: async ({ services, project, principal, body }) => {
      const { db } = services;
      const ids = body.items.map((i) => i.id);
      const revoked = await db.transaction(async (db) => {
        await byIds(db, project.id, ids);
        await revokeSessions(db, project.id, ids);
        await bumpAuthVersion(db, project.id);
        return byIds(db, project.id, ids);
      });
      // Without the right to list sessions, a caller learns only which ids it revoked.
      if (grantsFor(principal, LIST, project.name).length === 0) return { items: ids.map((id) => ({ id })) };
      const now = services.now();
      return { items: revoked.map((s) => sessionView(s, now)) };
    },
  }),
];
