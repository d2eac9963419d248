/**
 * Calls of this API made by Strata on a user's behalf: a workflow's `cdf` task, a transformation writing its
 * rows, an agent's tool. Each goes through the same route, checks and scope as the user's own request would,
 * in process (no socket), with the credential it was given: a token, or a session the user created with
 * `POST /sessions` and handed over as its nonce. Nothing here reaches more than that credential does.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthRuntime } from '../auth/runtime.js';
import { sessionToken, type SessionTokenResponse } from '../auth/sessions.js';
import { findProjectAuth } from '../storage/projects.js';
import type { Queryable } from '../storage/store.js';
import { badRequest } from './errors.js';

/** A session bound for later calls: what an area keeps (its key is a secret). */
export interface SessionGrant {
  sessionId: number;
  sessionKey: string;
}

export type Credential = { token: string } | SessionGrant;

export interface SelfRequest {
  project: string;
  credential: Credential;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path under the project (`/timeseries/list`), with its query string if any. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface SelfResponse {
  status: number;
  /** The parsed JSON answer; the text when the answer is not JSON. */
  body: unknown;
  headers: Record<string, string | string[] | number | undefined>;
}

export interface SelfCaller {
  /** Binds the session of `nonce` (once: a nonce is used up by it) and returns what later calls need. */
  bind(project: string, nonce: string): Promise<SessionGrant>;
  /** Calls an operation of the project as the credential; the API's refusals come back as answers. */
  call(request: SelfRequest): Promise<SelfResponse>;
  /** An access token for the credential (a session's is refreshed when it is about to expire). */
  token(project: string, credential: Credential): Promise<string>;
}

/** A token is taken again when less than this is left of it. */
const TOKEN_MARGIN_MS = 5 * 60_000;

/**
 * `app` resolves once the server is built: job runners start (and resume work) while it is still being
 * built, and a call then would boot the server before its last operations are registered.
 */
export function createSelfCaller(deps: { app: Promise<FastifyInstance>; auth: AuthRuntime; db: Queryable; now(): number }): SelfCaller {
  const tokens = new Map<number, { token: string; until: number; key: string }>();

  async function projectRow(name: string) {
    const row = await findProjectAuth(deps.db, name);
    if (!row) throw badRequest(`There is no project "${name}"`);
    return row;
  }

  /** Keeps a token the session issued, for the calls until it is about to expire. */
  function keep(issued: SessionTokenResponse, sessionKey: string): string {
    tokens.set(issued.id, { token: issued.accessToken, until: deps.now() + issued.expiresIn * 1000, key: sessionKey });
    return issued.accessToken;
  }

  async function token(project: string, credential: Credential): Promise<string> {
    if ('token' in credential) return credential.token;
    const kept = tokens.get(credential.sessionId);
    if (kept && kept.key === credential.sessionKey && kept.until - TOKEN_MARGIN_MS > deps.now()) return kept.token;
    return keep(await sessionToken(deps.auth, deps.db, await projectRow(project), credential), credential.sessionKey);
  }

  return {
    async bind(project, nonce) {
      const issued = await sessionToken(deps.auth, deps.db, await projectRow(project), { nonce });
      keep(issued, issued.sessionKey!);
      return { sessionId: issued.id, sessionKey: issued.sessionKey! };
    },
    token,
    async call(request) {
      const bearer = await token(request.project, request.credential);
      const hasBody = request.body !== undefined;
      const res = await (await deps.app).inject({
        method: request.method,
        url: `/api/v1/projects/${encodeURIComponent(request.project)}${request.path}`,
        headers: { ...request.headers, authorization: `Bearer ${bearer}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
        ...(hasBody ? { payload: JSON.stringify(request.body) } : {}),
      });
      let body: unknown = res.body;
      if (String(res.headers['content-type'] ?? '').includes('json')) {
        try {
          body = res.json();
        } catch {
          body = res.body;
        }
      }
      return { status: res.statusCode, body, headers: res.headers };
    },
  };
}
