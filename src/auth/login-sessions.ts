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

export async function openLoginSession(db: Queryable, principal: string, createdTime: number, expirationTime: number): Promise<number> {
  const [id] = await allocateIds(db, 'login_sessions', 1);
  await db.run(sql`INSERT INTO login_sessions (id, principal, status, created_time, expiration_time) VALUES (${id}, ${principal}, 'ACTIVE', ${createdTime}, ${expirationTime})`);
  return id;
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

/** When each principal first logged in (the time Strata first issued it a token). */
export async function firstLogins(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.all<{ principal: string; t: number }>(sql`SELECT principal, MIN(created_time) AS t FROM login_sessions GROUP BY principal`);
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
