/**
 * User profiles of a project (src/auth/user-profiles.ts records them): listed by name with a cursor, found by
 * user identifier, searched by name prefix, and the caller's own. All need `userProfilesAcl:READ`.
 */
import { profileView, type ProfileRow } from '../../auth/user-profiles.js';
import { badRequest, missingItems, notFound } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import { likeLiteral, sql } from '../../storage/sql.js';
import { ListProfilesQuery, ProfilesByIdsBody, SearchProfilesBody } from './schema.js';

const READ = { acl: 'userProfilesAcl', action: 'READ' };

const routes: ApiRoute[] = [
  route({
    method: 'GET',
    path: '/profiles',
    capability: READ,
    query: ListProfilesQuery,
    handler: async ({ services, project, query }) => {
      const limit = query.limit ?? 25;
      // Every profile is a person's (USER); the other identity types have none.
      const type = query.identityType ?? 'USER';
      const fingerprint = { resource: 'profiles', type };
      const after = query.cursor === undefined ? undefined : (services.cursors.decode(query.cursor, fingerprint) as { name: string; id: string });
      if (type !== 'USER' && type !== 'ALL') return { items: [] };
      const from = after === undefined ? sql`` : sql`AND (sort_name > ${after.name} OR (sort_name = ${after.name} AND user_identifier > ${after.id}))`;
      const rows = await services.db.all<ProfileRow & { sort_name: string }>(
        sql`SELECT * FROM user_profiles WHERE project_id = ${project.id} ${from} ORDER BY sort_name, user_identifier LIMIT ${limit + 1}`,
      );
      const page = rows.slice(0, limit);
      const items = page.map(profileView);
      if (rows.length <= limit) return { items };
      const last = page[limit - 1];
      return { items, nextCursor: services.cursors.encode({ name: last.sort_name, id: last.user_identifier }, fingerprint) };
    },
  }),
  route({
    method: 'POST',
    path: '/profiles/byids',
    capability: READ,
    body: ProfilesByIdsBody,
    handler: async ({ services, project, body }) => {
      const ids = body.items.map((i) => i.userIdentifier);
      const seen = new Set<string>();
      ids.forEach((id, i) => {
        if (seen.has(id)) throw badRequest(`items[${i}].userIdentifier: "${id}" is asked for more than once`);
        seen.add(id);
      });
      const rows = await services.db.all<ProfileRow>(sql`SELECT * FROM user_profiles WHERE project_id = ${project.id} AND user_identifier IN (${ids})`);
      const found = new Map(rows.map((r) => [r.user_identifier, r]));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length) throw missingItems(missing.map((userIdentifier) => ({ userIdentifier })));
      return { items: ids.map((id) => profileView(found.get(id)!)) };
    },
  }),
  route({
    method: 'GET',
    path: '/profiles/me',
    capability: READ,
    handler: async ({ services, project, principal }) => {
      const row = await services.db.get<ProfileRow>(sql`SELECT * FROM user_profiles WHERE project_id = ${project.id} AND user_identifier = ${principal.subject}`);
      if (!row) {
        throw notFound(
          `The principal "${principal.subject}" has no user profile in project "${project.name}": profiles are collected when the project's ` +
            'userProfilesConfiguration is enabled, for people, whose tokens carry a name or an email, not for applications (client credentials)',
        );
      }
      return profileView(row);
    },
  }),
  route({
    method: 'POST',
    path: '/profiles/search',
    capability: READ,
    body: SearchProfilesBody,
    handler: async ({ services, project, body }) => {
      const prefix = `${likeLiteral((body.search?.name ?? '').toLowerCase())}%`;
      // A prefix of the display name, the given name, the surname or the email address, in any case.
      const rows = await services.db.all<ProfileRow>(
        sql`SELECT * FROM user_profiles WHERE project_id = ${project.id} AND (sort_name LIKE ${prefix} ESCAPE '\\' OR lower(given_name) LIKE ${prefix} ESCAPE '\\'
          OR lower(surname) LIKE ${prefix} ESCAPE '\\' OR lower(email) LIKE ${prefix} ESCAPE '\\') ORDER BY sort_name, user_identifier LIMIT ${body.limit ?? 25}`,
      );
      return { items: rows.map(profileView) };
    },
  }),
];

/** Deprecated in favour of the principals operations (the dated row `userProfilesApi`). */
export const profileRoutes: ApiRoute[] = routes.map((r) => ({ ...r, deprecatedBy: 'userProfilesApi' }));
