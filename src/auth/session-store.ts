/**
 * Sessions in SQL. A session holds the identity it delegates (the verified claims of the token or client it
 * was created from), a short-lived nonce to bind it, and after binding the hash of its session key. Only
 * hashes of nonces and keys are stored.
 */
import { createHash } from 'node:crypto';
import { allocateIds } from '../storage/ids.js';
import type { Queryable } from '../storage/store.js';
import { sql } from '../storage/sql.js';
import type { Claims } from './principal.js';

export type SessionType = 'CLIENT_CREDENTIALS' | 'TOKEN_EXCHANGE' | 'ONESHOT_TOKEN_EXCHANGE';
/** Stored states; CANCELLED (never bound) and EXPIRED follow from the times when a session is shown. */
export type StoredStatus = 'READY' | 'ACTIVE' | 'REVOKED';
export type SessionStatus = StoredStatus | 'CANCELLED' | 'EXPIRED';

export interface SessionRecord {
  id: number;
  projectId: number;
  type: SessionType;
  status: StoredStatus;
  subject: string;
  clientId?: string;
  claims: Claims;
  nonceExpires: number;
  creationTime: number;
  expirationTime: number;
  extendable: boolean;
  /** Latest expiration a refresh may reach (from `maxExpirationSeconds` when bound). */
  maxExpirationTime?: number;
  /** The session whose access token created this one: this one ends with it. */
  parentId?: number;
}

export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

interface SessionRow {
  id: number;
  project_id: number;
  type: SessionType;
  status: StoredStatus;
  subject: string;
  client_id: string | null;
  claims: string;
  nonce_expires: number;
  creation_time: number;
  expiration_time: number;
  max_expiration_time: number | null;
  extendable: number;
  parent_id: number | null;
}

function toRecord(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    projectId: r.project_id,
    type: r.type,
    status: r.status,
    subject: r.subject,
    ...(r.client_id !== null ? { clientId: r.client_id } : {}),
    claims: JSON.parse(r.claims) as Claims,
    nonceExpires: r.nonce_expires,
    creationTime: r.creation_time,
    expirationTime: r.expiration_time,
    ...(r.max_expiration_time !== null ? { maxExpirationTime: r.max_expiration_time } : {}),
    extendable: r.extendable === 1,
    ...(r.parent_id !== null ? { parentId: r.parent_id } : {}),
  };
}

const COLUMNS = sql`id, project_id, type, status, subject, client_id, claims, nonce_expires, creation_time, expiration_time, max_expiration_time, extendable, parent_id`;

export interface NewSession {
  type: SessionType;
  subject: string;
  clientId?: string;
  claims: Claims;
  nonce: string;
  nonceExpires: number;
  creationTime: number;
  expirationTime: number;
  extendable: boolean;
  parentId?: number;
}

export async function insertSession(db: Queryable, projectId: number, s: NewSession): Promise<SessionRecord> {
  const [id] = await allocateIds(db, 'sessions', 1);
  await db.run(sql`INSERT INTO sessions (id, project_id, type, status, subject, client_id, claims, nonce_hash, nonce_expires, creation_time, expiration_time, extendable, parent_id)
        VALUES (${id}, ${projectId}, ${s.type}, 'READY', ${s.subject}, ${s.clientId ?? null}, ${JSON.stringify(s.claims)}, ${secretHash(s.nonce)}, ${s.nonceExpires},
                ${s.creationTime}, ${s.expirationTime}, ${s.extendable ? 1 : 0}, ${s.parentId ?? null})`,
  );
  return (await sessionById(db, id))!;
}

export async function sessionById(db: Queryable, id: number): Promise<SessionRecord | undefined> {
  const row = await db.get<SessionRow>(sql`SELECT ${COLUMNS} FROM sessions WHERE id = ${id}`);
  return row && toRecord(row);
}

export async function sessionByNonce(db: Queryable, projectId: number, nonce: string): Promise<SessionRecord | undefined> {
  const row = await db.get<SessionRow>(sql`SELECT ${COLUMNS} FROM sessions WHERE nonce_hash = ${secretHash(nonce)} AND project_id = ${projectId}`);
  return row && toRecord(row);
}

export async function sessionKeyMatches(db: Queryable, id: number, key: string): Promise<boolean> {
  return (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM sessions WHERE id = ${id} AND key_hash = ${secretHash(key)}`))!.n === 1;
}

/** Binds a ready session: the nonce is spent and the session key's hash recorded. */
export async function bindSession(db: Queryable, id: number, key: string, expirationTime: number, maxExpirationTime: number | null): Promise<void> {
  await db.run(sql`UPDATE sessions SET status = 'ACTIVE', nonce_hash = NULL, key_hash = ${secretHash(key)}, expiration_time = ${expirationTime},
        max_expiration_time = ${maxExpirationTime} WHERE id = ${id}`,
  );
}

export async function extendSession(db: Queryable, id: number, expirationTime: number): Promise<void> {
  await db.run(sql`UPDATE sessions SET expiration_time = ${expirationTime} WHERE id = ${id}`);
}

/** Revokes the sessions and every session created from them, at any depth. */
export async function revokeSessions(db: Queryable, projectId: number, ids: readonly number[]): Promise<void> {
  await db.run(sql`WITH RECURSIVE revoked (id) AS (
          SELECT id FROM sessions WHERE project_id = ${projectId} AND id IN (${ids})
          UNION SELECT s.id FROM sessions s JOIN revoked r ON s.parent_id = r.id
        )
        UPDATE sessions SET status = 'REVOKED', nonce_hash = NULL, key_hash = NULL WHERE id IN (SELECT id FROM revoked)`,
  );
}

export async function sessionsByIds(db: Queryable, projectId: number, ids: readonly number[]): Promise<SessionRecord[]> {
  return (await db.all<SessionRow>(sql`SELECT ${COLUMNS} FROM sessions WHERE project_id = ${projectId} AND id IN (${ids})`)).map(toRecord);
}

/** A page of the project's sessions in id order, after `afterId`. */
export async function sessionsPage(db: Queryable, projectId: number, afterId: number, limit: number): Promise<SessionRecord[]> {
  return (await db.all<SessionRow>(sql`SELECT ${COLUMNS} FROM sessions WHERE project_id = ${projectId} AND id > ${afterId} ORDER BY id LIMIT ${limit}`)).map(toRecord);
}

/** The status a client sees: a ready session whose nonce expired was cancelled; a session past its time expired. */
export function effectiveStatus(s: SessionRecord, now: number): SessionStatus {
  if (s.status === 'READY' && now >= s.nonceExpires) return 'CANCELLED';
  if (s.status !== 'REVOKED' && now >= s.expirationTime) return 'EXPIRED';
  return s.status;
}
