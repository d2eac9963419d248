/**
 * Login sessions: every access token the built-in identity provider issues opens one, named by the token's
 * `lsid` claim. Revoking a login session refuses its token at once, and every session (sessions.ts) created
 * from that token, in every project; its status is shown by the identity service's principals operations.
 */
import { allocateIds } from '../storage/ids.js';
import { forgetRecentProjects } from '../storage/projects.js';
import { sql } from '../storage/sql.js';
import type { Queryable } from '../storage/store.js';

/** The claim naming the login session of a built-in token. */
export const LOGIN_SESSION_CLAIM = 'lsid';

export type LoginSessionStatus = 'ACTIVE' | 'EXPIRED' | 'REVOKED';

export interface LoginSession {
  id: number;
  principal: string;
  status: LoginSessionStatus;
  createdTime: number;
  expirationTime: number;
  deactivatedTime?: number;
}

interface Row {
  id: number;
  principal: string;
  status: string;
  created_time: number;
  expiration_time: number;
  deactivated_time: number | null;
}

/** How long a login session that expired is still listed (and kept). */
export const EXPIRED_LOGIN_SESSION_KEPT_MS = 7 * 24 * 3600_000;
/** The most expired login sessions one new token deletes: a few at a time, so that no issue waits long. */
const PRUNE_BATCH = 100;

/**
 * Opens the login session of a new token, and deletes the principal's login sessions that expired a week
 * ago or more: the table grows with issued tokens only, so pruning where they are issued keeps it bounded.
 * A revoked login session is kept: the sessions created with its token (which may outlive it) stay refused
 * because it is there.
 */
export async function openLoginSession(db: Queryable, principal: string, createdTime: number, expirationTime: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [id] = await allocateIds(tx, 'login_sessions', 1);
    await tx.run(sql`INSERT INTO login_sessions (id, principal, status, created_time, expiration_time) VALUES (${id}, ${principal}, 'ACTIVE', ${createdTime}, ${expirationTime})`);
    await tx.run(sql`INSERT INTO principal_first_logins (principal, created_time) VALUES (${principal}, ${createdTime}) ON CONFLICT (principal) DO NOTHING`);
    await tx.run(sql`DELETE FROM login_sessions WHERE id IN (SELECT id FROM login_sessions WHERE principal = ${principal} AND status <> 'REVOKED'
      AND expiration_time < ${createdTime - EXPIRED_LOGIN_SESSION_KEPT_MS} LIMIT ${PRUNE_BATCH})`);
    return id;
  });
}

/** Whether the login session a token names was revoked (a token naming none, or an unknown one, was not). */
export async function loginSessionRevoked(db: Queryable, claim: unknown): Promise<boolean> {
  const id = Number(claim);
  if (!Number.isSafeInteger(id)) return false;
  const row = await db.get<{ status: string }>(sql`SELECT status FROM login_sessions WHERE id = ${id}`);
  return row?.status === 'REVOKED';
}

function view(row: Row, now: number): LoginSession {
  const status: LoginSessionStatus = row.status === 'REVOKED' ? 'REVOKED' : now >= Number(row.expiration_time) ? 'EXPIRED' : 'ACTIVE';
  const deactivated = status === 'EXPIRED' ? Number(row.expiration_time) : row.deactivated_time === null ? undefined : Number(row.deactivated_time);
  return {
    id: Number(row.id),
    principal: row.principal,
    status,
    createdTime: Number(row.created_time),
    expirationTime: Number(row.expiration_time),
    ...(deactivated !== undefined ? { deactivatedTime: deactivated } : {}),
  };
}

/** A page of a principal's login sessions, newest first, before `beforeId`. */
export async function loginSessionsPage(db: Queryable, principal: string, beforeId: number | undefined, limit: number, now: number): Promise<LoginSession[]> {
  const before = beforeId === undefined ? sql`` : sql`AND id < ${beforeId}`;
  const rows = await db.all<Row>(sql`SELECT * FROM login_sessions WHERE principal = ${principal} ${before} ORDER BY id DESC LIMIT ${limit}`);
  return rows.map((r) => view(r, now));
}

export async function loginSessionsByIds(db: Queryable, principal: string, ids: readonly number[], now: number): Promise<LoginSession[]> {
  return (await db.all<Row>(sql`SELECT * FROM login_sessions WHERE principal = ${principal} AND id IN (${ids})`)).map((r) => view(r, now));
}

/**
 * When each principal first logged in (the time Strata first issued it a token): kept apart from the login
 * sessions, which are pruned, in the same write as its first one.
 */
export async function firstLogins(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.all<{ principal: string; t: number }>(sql`SELECT principal, created_time AS t FROM principal_first_logins`);
  return new Map(rows.map((r) => [r.principal, Number(r.t)]));
}

/**
 * Revokes login sessions, and with them everything cached about their tokens: every project's
 * authentication version changes, so every process resolves the tokens again and refuses them.
 */
export async function revokeLoginSessions(db: Queryable, ids: readonly number[], now: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.run(sql`UPDATE login_sessions SET status = 'REVOKED', deactivated_time = ${now} WHERE id IN (${ids}) AND status <> 'REVOKED'`);
    await tx.run(sql`UPDATE projects SET auth_version = auth_version + 1`);
  });
  forgetRecentProjects();
}
