/**
 * Security categories of a project: list (by name, with a cursor), create, delete. A grant scoped by
 * `idscope` reaches the categories it names: those are the ones listed, and the ones deleted (any other is
 * unknown to it).
 */
import type { Access } from '../../auth/access.js';
import { missingItems } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import { allocateIds } from '../../storage/ids.js';
import { sql, type Sql } from '../../storage/sql.js';
import { requireWithinLimit } from '../project-limits.js';
import { CreateSecurityCategoriesBody, DeleteSecurityCategoriesBody, ListSecurityCategoriesQuery, SECURITY_CATEGORY_LIMITS } from './schema.js';

/** The categories a grant scoped by `idscope` reaches; every category otherwise. */
function inScope(access: Access | undefined): Sql {
  if (access === undefined || access.all) return sql``;
  return access.itemIds.length ? sql`AND id IN (${access.itemIds})` : sql`AND 1 = 0`;
}

interface SecurityCategory {
  id: number;
  name: string;
}

export const securityCategoryRoutes: ApiRoute[] = [
  route({
    method: 'GET',
    path: '/securitycategories',
    capability: { acl: 'securityCategoriesAcl', action: 'LIST' },
    query: ListSecurityCategoriesQuery,
    handler: async ({ services, project, query }) => {
      const limit = query.limit ?? 25;
      const desc = query.sort === 'DESC';
      const fingerprint = { resource: 'securitycategories', desc };
      const after = query.cursor === undefined ? undefined : (services.cursors.decode(query.cursor, fingerprint) as { name: string; id: number });
      // Sorted by name (the reference's order), ties by id, so the cursor names one place in the order.
      const from =
        after === undefined
          ? sql``
          : desc
            ? sql`AND (name < ${after.name} OR (name = ${after.name} AND id < ${after.id}))`
            : sql`AND (name > ${after.name} OR (name = ${after.name} AND id > ${after.id}))`;
      const order = desc ? sql`ORDER BY name DESC, id DESC` : sql`ORDER BY name, id`;
      const rows = await services.db.all<SecurityCategory>(
        sql`SELECT id, name FROM security_categories WHERE project_id = ${project.id} ${inScope(services.access)} ${from} ${order} LIMIT ${limit + 1}`,
      );
      const items = rows.slice(0, limit);
      if (rows.length <= limit) return { items };
      const last = items[limit - 1];
      return { items, nextCursor: services.cursors.encode({ name: last.name, id: last.id }, fingerprint) };
    },
  }),
  route({
    method: 'POST',
    path: '/securitycategories',
    capability: { acl: 'securityCategoriesAcl', action: 'CREATE' },
    body: CreateSecurityCategoriesBody,
    status: 201,
    handler: async ({ services, project, body }) =>
      services.db.transaction(async (db) => {
        const ids = await allocateIds(db, 'security_categories', body.items.length);
        const items = body.items.map((item, i) => ({ id: ids[i], name: item.name }));
        for (const c of items) await db.run(sql`INSERT INTO security_categories (id, project_id, name) VALUES (${c.id}, ${project.id}, ${c.name})`);
        await requireWithinLimit(db, project.id, 'security_categories', SECURITY_CATEGORY_LIMITS.perProject, 'security categories');
        return { items };
      }),
  }),
  route({
    method: 'POST',
    path: '/securitycategories/delete',
    capability: { acl: 'securityCategoriesAcl', action: 'DELETE' },
    body: DeleteSecurityCategoriesBody,
    handler: async ({ services, project, body }) =>
      services.db.transaction(async (db) => {
        const found = new Set(
          (await db.all<{ id: number }>(sql`SELECT id FROM security_categories WHERE project_id = ${project.id} AND id IN (${body.items}) ${inScope(services.access)}`)).map((r) => Number(r.id)),
        );
        const missing = body.items.filter((id) => !found.has(id));
        if (missing.length) throw missingItems(missing.map((id) => ({ id })));
        await db.run(sql`DELETE FROM security_categories WHERE project_id = ${project.id} AND id IN (${body.items})`);
        return {};
      }),
  }),
];
