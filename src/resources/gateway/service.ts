/**
 * The Postgres gateway: users bound to a session of the caller, and their tables. The session is the
 * user's scope: what its principal may read of assets, events, time series, sequences and data modeling
 * instances is written down as the user's scope rows (roles.ts) when the user is created, when its
 * credentials change and whenever a table is created for it.
 *
 * On PostgreSQL each user is a login role with a schema of views (roles.ts), created and dropped in the
 * transaction of the request, so a request is applied in the database completely or not at all. On the
 * embedded store the users and tables are kept the same way and the answer to a create says that SQL
 * clients need the PostgreSQL backend (`connectable: false`).
 */
import { randomBytes } from 'node:crypto';
import { accessFor, reachOf } from '../../auth/access.js';
import { grantsFor, type Principal } from '../../auth/principal.js';
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import type { SessionGrant } from '../../http/self-calls.js';
import type { Services } from '../../http/services.js';
import type { FilterNode } from '../../query/filter.js';
import { findProjectAuth, type Project } from '../../storage/projects.js';
import { sql } from '../../storage/sql.js';
import type { Item } from '../../storage/items.js';
import { createItems, deleteItems, fromModel, inWrite, retrieveItems, underParent, updateItems, type ResourceSpec, type UpdateItem } from '../crud.js';
import type { RefInput } from '../../query/refs.js';
import { INSTANCES_ACL, visibleSchema } from '../models/space-access.js';
import type { ProjectSchema } from '../models/schema-store.js';
import type { ViewId } from '../models/identifiers.js';
import { gatewayTableModel, gatewayUserModel, type ColumnType } from './model.js';
import { connectionInfo, createRole, createView, dropRole, dropView, endSessions, requireRolesCanBeConfined, writeScope, type ScopeRow, type ViewSource } from './roles.js';
import { BUILT_INS, builtInSource, SCOPED_ACLS, viewSource } from './sources.js';
import { GATEWAY_SETTINGS } from './settings.js';
import type { TableCreate } from './schema.js';

interface UserCreate {
  username: string;
  sessionId: number;
  sessionGrant: SessionGrant;
}

export const userSpec: ResourceSpec<UserCreate> = {
  ...fromModel(gatewayUserModel),
  createValues: (item) => ({ sessionGrant: item.sessionGrant }),
};

export const tableSpec: ResourceSpec<Record<string, unknown>> = {
  ...fromModel(gatewayTableModel),
  createValues: (item) => ({ options: item.options ?? null, columns: item.columns }),
};

const isPostgres = (services: Services) => services.db.dialect.kind === 'postgres';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const PASSWORD_ALPHABET = `${ALPHABET}ABCDEFGHIJKLMNOPQRSTUVWXYZ`;

function randomText(length: number, alphabet: string): string {
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** A new username: `gw_`, the project's name as far as it is a plain identifier, and random letters and digits. */
function newUsername(project: string): string {
  const slug = project.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 40);
  return `gw_${slug}_${randomText(16, ALPHABET)}`;
}

/**
 * The principal a session stands for now. A session that no longer stands for anyone (revoked, expired) is
 * the user's problem, not the caller's token's: a 400 saying how to mend it.
 */
async function sessionPrincipal(services: Services, project: Project, grant: SessionGrant): Promise<Principal> {
  const row = (await findProjectAuth(services.db, project.name))!;
  try {
    return await services.auth!.principalForToken(await services.api!.token(project.name, grant), row);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      throw badRequest(`The user's session ${grant.sessionId} cannot be used (${error.message}); update the user's credentials with a new session`);
    }
    throw error;
  }
}

/** What the principal may read of each ACL the gateway serves, as scope rows. */
function scopeRows(principal: Principal, project: string): ScopeRow[] {
  const rows: ScopeRow[] = [];
  for (const acl of SCOPED_ACLS) {
    const capability = { acl, action: 'READ' };
    const access = accessFor(capability, grantsFor(principal, capability, project));
    if (access.all) {
      rows.push({ acl, all: true });
      continue;
    }
    for (const dataSetId of access.dataSetIds) rows.push({ acl, dataSetId });
    for (const itemId of access.itemIds) rows.push({ acl, itemId });
    for (const space of access.spaces) rows.push({ acl, space });
  }
  return rows;
}

const columnsOf = (source: ViewSource): Record<string, { type: ColumnType }> => Object.fromEntries(source.columns.map((c) => [c.name, { type: c.type }]));

const NOT_CONNECTABLE = 'SQL clients connect to the gateway only when Strata keeps its data in PostgreSQL (STRATA_DATABASE_URL); this server uses the embedded store';

/** Creates the user of the session of `nonce`, with its role and built-in tables on PostgreSQL. */
export async function createUser(services: Services, project: Project, nonce: string) {
  const postgres = isPostgres(services);
  if (postgres) await requireRolesCanBeConfined(services.db);
  const grant = await services.api!.bind(project.name, nonce);
  const principal = await sessionPrincipal(services, project, grant);
  const username = newUsername(project.name);
  const password = postgres ? randomText(32, PASSWORD_ALPHABET) : '';
  const [user, connection] = await inWrite(services, async (services) => {
    const [user] = await createItems(userSpec, services, project.id, [{ username, sessionId: grant.sessionId, sessionGrant: grant }]);
    await writeScope(services.db, project.id, username, scopeRows(principal, project.name));
    if (postgres) await createRole(services.db, username, password);
    const tables = await tablesOf(services, project.id, username);
    const builtIns = BUILT_INS.map((b) => ({ tablename: b.name, type: 'built_in', source: builtInSource(b) }));
    await createItems(tables, services, project.id, builtIns.map((b) => ({ tablename: b.tablename, type: b.type, columns: columnsOf(b.source) })));
    if (postgres) for (const b of builtIns) await createView(services.db, username, b.tablename, b.source);
    return [user, postgres ? await connectionInfo(services.db) : undefined] as const;
  });
  const where = connection
    ? { host: services.settings.of(GATEWAY_SETTINGS).host ?? connection.host ?? 'localhost', port: connection.port, database: connection.database, connectable: true }
    : { host: '', connectable: false, message: NOT_CONNECTABLE };
  return { ...user, password, ...where };
}

/** The tables of the user `username` (a 400 naming it when there is no such user). */
export function tablesOf(services: Services, projectId: number, username: string) {
  return underParent(tableSpec, userSpec as ResourceSpec<unknown>, services, projectId, { username });
}

async function storedGrant(services: Services, projectId: number, username: string): Promise<SessionGrant> {
  const row = await services.db.get<{ grant: string }>(sql`SELECT session_grant AS "grant" FROM gateway_users WHERE project_id = ${projectId} AND username = ${username}`);
  return JSON.parse(row!.grant) as SessionGrant;
}

/** Binds the session of `nonce` to an existing user, whose scope becomes that session's. */
export async function updateUser(services: Services, project: Project, username: string, nonce: string): Promise<Item[]> {
  // The user must exist before the nonce is used up (a 400 listing it as missing otherwise).
  await retrieveItems(userSpec as ResourceSpec<unknown>, services, project.id, [{ username } as RefInput]);
  const grant = await services.api!.bind(project.name, nonce);
  const principal = await sessionPrincipal(services, project, grant);
  return inWrite(services, async (services) => {
    const items = await updateItems(userSpec as ResourceSpec<unknown>, services, project.id, [{ username, update: { sessionId: { set: grant.sessionId } } } as UpdateItem]);
    await services.db.run(sql`UPDATE gateway_users SET session_grant = ${JSON.stringify(grant)} WHERE project_id = ${project.id} AND username = ${username}`);
    await writeScope(services.db, project.id, username, scopeRows(principal, project.name));
    return items;
  });
}

export async function deleteUsers(services: Services, project: Project, items: ReadonlyArray<{ username: string }>, ignoreUnknownIds?: boolean): Promise<void> {
  const dropped: string[] = [];
  const spec: ResourceSpec<unknown> = {
    ...(userSpec as ResourceSpec<unknown>),
    async beforeDelete(ids, ctx) {
      if (!ids.length) return;
      const rows = await ctx.db.all<{ username: string }>(sql`SELECT username FROM gateway_users WHERE project_id = ${ctx.projectId} AND id IN (${ids})`);
      for (const { username } of rows) {
        await ctx.db.run(sql`DELETE FROM gateway_scopes WHERE username = ${username}`);
        if (isPostgres(ctx.services)) {
          await dropRole(ctx.db, username);
          dropped.push(username);
        }
      }
      ctx.db.afterCommit(() => Promise.all(dropped.map((username) => endSessions(services.db, username).catch(() => undefined))));
    },
  };
  await deleteItems(spec, services, project.id, items as readonly RefInput[], ignoreUnknownIds);
}

/** The view a table names: the version it gives, or the latest version of the view in `schema`. */
function latestVersion(schema: ProjectSchema, view: { space: string; externalId: string; version?: string }): ViewId | undefined {
  if (view.version !== undefined) return { space: view.space, externalId: view.externalId, version: view.version };
  let latest: { id: ViewId; time: number } | undefined;
  for (const v of schema.views.values()) {
    const d = v.definition;
    if (d.space !== view.space || d.externalId !== view.externalId) continue;
    if (!latest || v.createdTime > latest.time) latest = { id: { space: d.space, externalId: d.externalId, version: d.version }, time: v.createdTime };
  }
  return latest?.id;
}

/**
 * Creates tables for the user: each must be a table the caller and the user's session may both read. The
 * scope rows are taken again from the session, so the new table reads in its scope as it is now.
 */
export async function createTables(services: Services, project: Project, username: string, items: readonly TableCreate[]) {
  const spec = await tablesOf(services, project.id, username);
  const grant = await storedGrant(services, project.id, username);
  const principal = await sessionPrincipal(services, project, grant);
  const sessionSchema = await visibleSchema({ reach: reachOf(principal, project.name), reads: services.reads }, project.id, services.db);
  const requestSchema = await visibleSchema(services, project.id, services.db);
  const instances = accessFor({ acl: INSTANCES_ACL, action: 'READ' }, grantsFor(principal, { acl: INSTANCES_ACL, action: 'READ' }, project.name));
  const sources = items.map((item, i) => {
    const path = ['items', i];
    if (item.type === 'raw_rows') throw badRequest(`${formatPath([...path, 'type'])}: raw_rows tables read Raw, which this server does not serve`);
    if (!instances.all && instances.spaces.length === 0) {
      throw badRequest(`${formatPath([...path, 'type'])}: the user's session may read no data modeling instances (dataModelInstancesAcl:READ), so a view table would show it nothing`);
    }
    const { space, externalId, version } = item.options;
    if (space === undefined || externalId === undefined) throw badRequest(`${formatPath([...path, 'options'])}: a view table names its view by space and externalId`);
    const options = { space, externalId, ...(version !== undefined ? { version } : {}) };
    const id = latestVersion(sessionSchema, options);
    const shown = { ...options, version: options.version ?? '(latest)' };
    // A view the request cannot see is refused the same way as one that does not exist.
    if (!id || !requestSchema.view(id)) throw badRequest(`${formatPath([...path, 'options'])}: the view ${shown.space}:${shown.externalId}/${shown.version} does not exist`);
    return { id, source: viewSource(sessionSchema, id, [...path, 'options']) };
  });
  return inWrite(services, async (services) => {
    const created = await createItems(
      spec,
      services,
      project.id,
      items.map((item, i) => ({ tablename: item.tablename, type: item.type, options: sources[i].id, columns: columnsOf(sources[i].source) })),
    );
    await writeScope(services.db, project.id, username, scopeRows(principal, project.name));
    if (isPostgres(services)) for (const [i, item] of items.entries()) await createView(services.db, username, item.tablename, sources[i].source);
    return created;
  });
}

/** The filter that leaves out the built-in tables, unless asked for. */
export function customTablesOnly(includeBuiltIns: boolean): FilterNode | undefined {
  if (includeBuiltIns) return undefined;
  const target = { type: 'property' as const, name: 'type', def: { kind: 'string' as const, column: 'type', nullable: false } };
  return { op: 'in', target, values: ['raw_rows', 'view'] };
}

export async function deleteTables(services: Services, project: Project, username: string, items: ReadonlyArray<{ tablename: string }>, ignoreUnknownIds?: boolean): Promise<void> {
  const tables = await tablesOf(services, project.id, username);
  const spec: ResourceSpec<unknown> = {
    ...(tables as ResourceSpec<unknown>),
    async beforeDelete(ids, ctx) {
      if (!ids.length) return;
      const rows = await ctx.db.all<{ tablename: string; type: string }>(sql`SELECT tablename, type FROM gateway_tables WHERE project_id = ${ctx.projectId} AND id IN (${ids})`);
      for (const row of rows) {
        if (row.type === 'built_in') {
          const i = items.findIndex((item) => item.tablename === row.tablename);
          throw badRequest(`${formatPath(['items', i, 'tablename'])}: ${row.tablename} is a built-in table, which cannot be deleted`);
        }
        if (isPostgres(ctx.services)) await dropView(ctx.db, username, row.tablename);
      }
    },
  };
  await deleteItems(spec, services, project.id, items as readonly RefInput[], ignoreUnknownIds);
}
