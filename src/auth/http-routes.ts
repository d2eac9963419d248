/**
 * Authentication endpoints outside the project operations: token inspection (`GET /api/v1/token/inspect`),
 * the session token exchange (the nonce or session key is the credential, not a bearer token), and a clear
 * answer for API keys, which were removed. Removed paths (`/login`) are unknown paths: 404, as the reference
 * answers, whatever the method and body.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { notFound, unauthorized } from '../http/errors.js';
import type { Queryable } from '../storage/store.js';
import { findProjectAuth } from '../storage/projects.js';
import { InternalId } from '../http/common-schemas.js';
import { SessionSecret, sessionToken, type SessionTokenRequest } from './sessions.js';
import type { AuthRuntime } from './runtime.js';

export const API_KEYS_REMOVED = 'API keys were removed; authenticate with "Authorization: Bearer <access token>" from your identity provider';

/** The session token exchange: a nonce (with how long the session may last), or a session's id and key. */
const SessionTokenBody = Type.Union([
  Type.Object(
    { nonce: SessionSecret, maxExpirationSeconds: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])) },
    { additionalProperties: false },
  ),
  Type.Object({ sessionId: InternalId, sessionKey: SessionSecret }, { additionalProperties: false }),
]);

export function registerAuthRoutes(app: FastifyInstance, auth: AuthRuntime, db: Queryable): void {
  app.get('/api/v1/token/inspect', { schema: { summary: 'What the token in the Authorization header grants', security: [{ bearer: [] }] } }, async (req) => {
    if (req.headers['api-key'] !== undefined) throw unauthorized(API_KEYS_REMOVED);
    return auth.inspect(req.headers.authorization);
  });

  const summary = "A session's access token, for its nonce or session key (no bearer token)";
  app.post('/api/v1/projects/:project/sessions/token', { schema: { summary, body: SessionTokenBody } }, async (req) => {
    const name = (req.params as { project: string }).project;
    const project = await findProjectAuth(db, name);
    if (!project) throw notFound(`Project "${name}" does not exist on this server`);
    return sessionToken(auth, db, project, req.body as SessionTokenRequest);
  });
}
