/**
 * The gateway's users as PostgreSQL sees them: a login role per user, with a schema of its own holding one
 * view per table. The role may use its schema and read its views, nothing else: it has no grant on Strata's
 * tables, owns nothing, and the views (owned by Strata's own role, which reads the tables for them) keep to
 * the rows in the user's scope. Each view is a security barrier: a function the role writes cannot see the
 * rows the view's condition leaves out.
 *
 * Which rows a view shows is decided in the database: its condition joins `gateway_scopes` on
 * `current_user` (the role reading), and the user's session (a revoked one shows nothing), so a view's text
 * holds no value of a request, and the scope is kept as rows written with parameters. Names (roles, schemas, views, columns) are validated by the request schemas
 * and always quoted (`escapeIdentifier`); the only literal, a generated password, is escaped as one.
 */
import pg from 'pg';
import { ApiError } from '../../http/errors.js';
import type { TableDef } from '../../storage/schema.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import type { ColumnType } from './model.js';

/** A name as SQL text: always quoted, so no name is read as anything but a name. */
export const ident = (name: string): string => pg.escapeIdentifier(name);

/** One column of a gateway view: its name, its type as the API reports it, and its expression over the view's source. */
export interface ViewColumn {
  name: string;
  type: ColumnType;
  expr: string;
}

/**
 * What a view reads: its columns, the FROM clause, the rows it keeps (a condition of the source, without
 * the scope), and how the scope applies: the ACL whose scope rows decide, and the condition one scope row
 * `s` sets on a source row.
 */
export interface ViewSource {
  columns: readonly ViewColumn[];
  from: string;
  where?: string;
  projectColumn: string;
  acl: string;
  scopeMatch: string;
}

/** The scope of each user, one row per data set, item or space it may read of an ACL (or one row for all of them). */
export const scopeTable: TableDef = {
  name: 'gateway_scopes',
  columns: {
    username: { type: 'text', notNull: true },
    project_id: { type: 'integer', notNull: true },
    acl: { type: 'text', notNull: true },
    all_items: { type: 'integer', notNull: true, default: '0' },
    data_set_id: { type: 'integer' },
    item_id: { type: 'integer' },
    space: { type: 'text' },
  },
  indexes: [{ name: 'gateway_scopes_user', columns: ['username', 'acl'] }],
};

export interface ScopeRow {
  acl: string;
  all?: boolean;
  dataSetId?: number;
  itemId?: number;
  space?: string;
}

/** Replaces a user's scope rows (on either engine: they are the record of what the user reads). */
export async function writeScope(db: Queryable, projectId: number, username: string, rows: readonly ScopeRow[]): Promise<void> {
  await db.run(sql`DELETE FROM gateway_scopes WHERE username = ${username}`);
  for (const r of rows) {
    await db.run(
      sql`INSERT INTO gateway_scopes (username, project_id, acl, all_items, data_set_id, item_id, space) VALUES (${username}, ${projectId}, ${r.acl}, ${r.all ? 1 : 0}, ${r.dataSetId ?? null}, ${r.itemId ?? null}, ${r.space ?? null})`,
    );
  }
}

/** PostgreSQL's code for "insufficient privilege" (Strata's role may not create roles, say). */
const INSUFFICIENT_PRIVILEGE = '42501';

const cannotManageRoles = (detail: string) =>
  new ApiError(503, `The database refused to manage the gateway's roles: Strata's database role needs the CREATEROLE attribute (${detail})`);

async function ddl(db: Queryable, statement: string): Promise<void> {
  try {
    await db.run(Sql.raw(statement));
  } catch (error) {
    if ((error as { code?: string }).code === INSUFFICIENT_PRIVILEGE) throw cannotManageRoles((error as Error).message);
    throw error;
  }
}

/**
 * Refuses, before anything is done (a session's nonce used up), when Strata's role may not create roles, or
 * when every role may create objects in a schema (a grant to PUBLIC, which no REVOKE for one role undoes):
 * a gateway role could then write there.
 */
export async function requireRolesCanBeConfined(db: Queryable): Promise<void> {
  const row = await db.get<{ allowed: boolean }>(sql`SELECT rolcreaterole OR rolsuper AS allowed FROM pg_roles WHERE rolname = current_user`);
  if (!row?.allowed) throw cannotManageRoles('it has neither CREATEROLE nor SUPERUSER');
  const open = await db.all<{ name: string }>(sql`SELECT nspname AS name FROM pg_namespace WHERE has_schema_privilege('public', oid, 'CREATE') ORDER BY nspname`);
  if (open.length) {
    const names = open.map((s) => s.name);
    throw new ApiError(
      503,
      `The database lets every role create objects in the schema${names.length > 1 ? 's' : ''} ${names.join(', ')}, so a gateway user could write there: ` +
        `run REVOKE CREATE ON SCHEMA ${names.map(ident).join(', ')} FROM PUBLIC`,
    );
  }
}

/** Creates the user's login role and its schema, which it may use and nothing more. */
export async function createRole(db: Queryable, username: string, password: string): Promise<void> {
  const role = ident(username);
  await ddl(
    db,
    `CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 10 PASSWORD ${pg.escapeLiteral(password)}`,
  );
  await ddl(db, `CREATE SCHEMA ${role}`);
  await ddl(db, `REVOKE ALL ON SCHEMA ${role} FROM PUBLIC`);
  await ddl(db, `GRANT USAGE ON SCHEMA ${role} TO ${role}`);
  await ddl(db, `REVOKE ALL ON SCHEMA public FROM ${role}`);
  await ddl(db, `ALTER ROLE ${role} SET search_path = ${role}`);
  await ddl(db, `ALTER ROLE ${role} SET default_transaction_read_only = on`);
}

/** Drops the user's schema (its views with it) and its role. */
export async function dropRole(db: Queryable, username: string): Promise<void> {
  const role = ident(username);
  await ddl(db, `DROP SCHEMA IF EXISTS ${role} CASCADE`);
  await ddl(db, `DROP ROLE IF EXISTS ${role}`);
}

/**
 * Ends the sessions a dropped role still has open (they keep running as a role that no longer exists until
 * they end). Strata's role needs `pg_signal_backend` for it; without it they end when their clients leave.
 */
export async function endSessions(db: Queryable, username: string): Promise<void> {
  await db.run(sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ${username}`);
}

/** Creates (or replaces) the view `tablename` in the user's schema, readable by the user alone. */
export async function createView(db: Queryable, username: string, tablename: string, source: ViewSource): Promise<void> {
  const name = `${ident(username)}.${ident(tablename)}`;
  const columns = source.columns.map((c) => `${c.expr} AS ${ident(c.name)}`).join(', ');
  // The scope rows count while the user's session is active: revoking it leaves the user reading nothing.
  const scope =
    `EXISTS (SELECT 1 FROM gateway_scopes s JOIN gateway_users u ON u.username = s.username AND u.project_id = s.project_id` +
    ` JOIN sessions ss ON ss.id = u.session_id AND ss.status = 'ACTIVE'` +
    ` WHERE s.username = current_user AND s.project_id = ${source.projectColumn}` +
    ` AND s.acl = ${pg.escapeLiteral(source.acl)} AND (s.all_items = 1 OR ${source.scopeMatch}))`;
  const where = source.where ? `(${source.where}) AND ${scope}` : scope;
  await ddl(db, `DROP VIEW IF EXISTS ${name}`);
  await ddl(db, `CREATE VIEW ${name} WITH (security_barrier = true) AS SELECT ${columns} FROM ${source.from} WHERE ${where}`);
  await ddl(db, `REVOKE ALL ON ${name} FROM PUBLIC`);
  await ddl(db, `GRANT SELECT ON ${name} TO ${ident(username)}`);
}

export async function dropView(db: Queryable, username: string, tablename: string): Promise<void> {
  await ddl(db, `DROP VIEW IF EXISTS ${ident(username)}.${ident(tablename)}`);
}

/** Where SQL clients connect: the database's own address, port and name (the host may be overridden by a setting). */
export async function connectionInfo(db: Queryable): Promise<{ host: string | null; port: number | null; database: string }> {
  const row = await db.get<{ host: string | null; port: number | null; database: string }>(
    sql`SELECT host(inet_server_addr()) AS host, inet_server_port() AS port, current_database() AS database`,
  );
  return { host: row!.host, port: row!.port === null ? null : Number(row!.port), database: row!.database };
}
