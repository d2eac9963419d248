/**
 * Sessions: delegated access for longer than one access token lives. A session is created from client
 * credentials (checked with the project's identity provider) or from the caller's own token (token
 * exchange), and records the identity it delegates. The service that uses it binds it once with the nonce,
 * gets a session key, and from then on exchanges the key for access tokens that Strata signs itself; the
 * delegated identity's groups are checked on every use. A one-shot session needs nothing from the identity
 * provider: it lives at most as long as the token it came from (and an hour), and is not refreshed. A session
 * created with a session's access token never outlives that session, is one-shot when it is, and is revoked
 * with it, so a session cannot be used to stretch the access it was given.
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { ApiError, badRequest, unauthorized } from '../http/errors.js';
import type { Queryable } from '../storage/store.js';
import type { ProjectAuthRow } from '../storage/projects.js';
import type { Principal } from './principal.js';
import type { AuthRuntime } from './runtime.js';
import {
  bindSession,
  effectiveStatus,
  extendSession,
  insertSession,
  sessionById,
  sessionByNonce,
  sessionKeyMatches,
  type SessionRecord,
  type SessionStatus,
  type SessionType,
} from './session-store.js';

/** A credential of the session API: a client secret, a nonce, a session key. */
export const SessionSecret = Type.String({ minLength: 1, maxLength: 4096 });

/** How long a nonce can wait to be bound. */
export const NONCE_TTL_MS = 10 * 60_000;
/** An extendable session expires this long after it was created, bound or last refreshed. */
export const SESSION_TTL_MS = 24 * 3600_000;
/** The longest a one-shot session lives. */
export const ONESHOT_TTL_MS = 3600_000;
/** Lifetime of one session access token. */
export const SESSION_TOKEN_TTL_MS = 3600_000;

export type SessionCredentials = { clientId: string; clientSecret: string } | { tokenExchange: true } | { oneshotTokenExchange: true };

export interface SessionView {
  id: number;
  type: SessionType;
  status: SessionStatus;
  creationTime: number;
  expirationTime: number;
  clientId?: string;
}

export function sessionView(s: SessionRecord, now: number): SessionView {
  return {
    id: s.id,
    type: s.type,
    status: effectiveStatus(s, now),
    creationTime: s.creationTime,
    expirationTime: s.expirationTime,
    ...(s.clientId !== undefined ? { clientId: s.clientId } : {}),
  };
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The session whose access token the caller used, which a session it creates lives within; 401 when it
 * ended meanwhile (revoked by another request).
 */
async function liveParent(db: Queryable, project: ProjectAuthRow, id: number, now: number): Promise<SessionRecord> {
  const parent = await sessionById(db, id);
  const status = parent && parent.projectId === project.id ? effectiveStatus(parent, now) : 'REVOKED';
  if (!parent || status !== 'ACTIVE') throw unauthorized(`The session ${id} of this access token is ${status.toLowerCase()}; create a new session`);
  return parent;
}

/** The latest a session may last: never past the session it was created from. */
async function parentEnd(db: Queryable, s: SessionRecord): Promise<number> {
  return s.parentId === undefined ? Number.POSITIVE_INFINITY : ((await sessionById(db, s.parentId))?.expirationTime ?? 0);
}

export async function createSession(
  auth: AuthRuntime,
  db: Queryable,
  project: ProjectAuthRow,
  caller: Principal,
  credentials: SessionCredentials,
): Promise<SessionView & { nonce: string }> {
  const delegate =
    'clientId' in credentials
      ? await auth.principalForToken(await auth.clientCredentialsToken(project, credentials.clientId, credentials.clientSecret), project)
      : caller;
  const claims = delegate.claims;
  if (!claims) throw new ApiError(500, 'The principal has no verified claims to delegate');
  const nonce = secret();
  const record = await db.transaction(async (db) => {
    const now = auth.now();
    // A session created with a session's access token lives within that session: one-shot when it is,
    // never past its end, and revoked with it.
    const parent = caller.sessionId === undefined ? undefined : await liveParent(db, project, caller.sessionId, now);
    const oneShot = 'oneshotTokenExchange' in credentials || parent?.extendable === false;
    const type: SessionType = 'clientId' in credentials ? 'CLIENT_CREDENTIALS' : oneShot ? 'ONESHOT_TOKEN_EXCHANGE' : 'TOKEN_EXCHANGE';
    const own = type === 'ONESHOT_TOKEN_EXCHANGE' ? Math.min(now + ONESHOT_TTL_MS, (caller.expiresAt ?? 0) * 1000) : now + SESSION_TTL_MS;
    const expirationTime = Math.min(own, parent?.expirationTime ?? Number.POSITIVE_INFINITY);
    return insertSession(db, project.id, {
      type,
      subject: delegate.subject,
      ...('clientId' in credentials ? { clientId: credentials.clientId } : {}),
      claims,
      nonce,
      nonceExpires: Math.min(now + NONCE_TTL_MS, expirationTime),
      creationTime: now,
      expirationTime,
      extendable: !oneShot,
      ...(parent ? { parentId: parent.id } : {}),
    });
  });
  return { ...sessionView(record, auth.now()), nonce };
}

export type SessionTokenRequest = { nonce: string; maxExpirationSeconds?: number | null } | { sessionId: number; sessionKey: string };

export interface SessionTokenResponse {
  id: number;
  accessToken: string;
  expiresIn: number;
  sessionKey?: string;
  sessionExpirationTime: number;
  sessionIsExtendable: boolean;
}

async function issue(auth: AuthRuntime, project: ProjectAuthRow, s: SessionRecord, expirationTime: number, sessionKey?: string): Promise<SessionTokenResponse> {
  const now = auth.now();
  const expiresAtMs = Math.min(now + SESSION_TOKEN_TTL_MS, expirationTime);
  const accessToken = await auth.idp.sign({
    subject: s.subject,
    audience: auth.sessionAudience(project.name),
    issuedAt: Math.floor(now / 1000),
    expiresAt: Math.floor(expiresAtMs / 1000),
    claims: { sid: s.id },
  });
  return {
    id: s.id,
    accessToken,
    expiresIn: Math.max(0, Math.floor((expiresAtMs - now) / 1000)),
    ...(sessionKey !== undefined ? { sessionKey } : {}),
    sessionExpirationTime: expirationTime,
    sessionIsExtendable: s.extendable,
  };
}

/** Binds a session with its nonce (returning the session key) or refreshes a bound one with its key. */
export async function sessionToken(auth: AuthRuntime, db: Queryable, project: ProjectAuthRow, req: SessionTokenRequest): Promise<SessionTokenResponse> {
  const now = auth.now();
  if ('nonce' in req) {
    const key = secret();
    const bound = await db.transaction(async (db) => {
      const s = await sessionByNonce(db, project.id, req.nonce);
      if (!s) throw unauthorized(`nonce: not a nonce of a session of project "${project.name}", or it was already used`);
      const status = effectiveStatus(s, now);
      if (status !== 'READY') throw unauthorized(`nonce: the session ${s.id} is ${status.toLowerCase()}; create a new session`);
      const cap = req.maxExpirationSeconds == null ? null : now + req.maxExpirationSeconds * 1000;
      const expiration = Math.min(s.extendable ? now + SESSION_TTL_MS : s.expirationTime, cap ?? Number.POSITIVE_INFINITY, await parentEnd(db, s));
      await bindSession(db, s.id, key, expiration, cap);
      return { s, expiration };
    });
    return issue(auth, project, bound.s, bound.expiration, key);
  }
  const s = await sessionById(db, req.sessionId);
  if (!s || s.projectId !== project.id || !await sessionKeyMatches(db, s.id, req.sessionKey)) {
    throw unauthorized(`sessionKey: not the key of session ${req.sessionId} in project "${project.name}"`);
  }
  const status = effectiveStatus(s, now);
  if (status !== 'ACTIVE') throw unauthorized(`The session ${s.id} is ${status.toLowerCase()}; create a new session`);
  if (!s.extendable) throw badRequest(`The session ${s.id} is a one-shot session: it is not refreshed; create a new session when it expires`);
  const expiration = Math.min(now + SESSION_TTL_MS, s.maxExpirationTime ?? Number.POSITIVE_INFINITY, await parentEnd(db, s));
  await extendSession(db, s.id, expiration);
  return issue(auth, project, s, expiration);
}
