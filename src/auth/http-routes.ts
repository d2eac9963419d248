/**
 * Authentication endpoints outside the project operations: token inspection (`GET /api/v1/token/inspect`),
 * the session token exchange (the nonce or session key is the credential, not a bearer token), and clear
 * answers for sign-in mechanisms that were removed.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError, notFound, unauthorized } from '../http/errors.js';
import type { Queryable } from '../storage/store.js';
import { findProjectAuth } from '../storage/projects.js';
import { SessionTokenBody } from '../resources/sessions/schema.js';
import { sessionToken, type SessionTokenRequest } from './sessions.js';
import type { AuthRuntime } from './runtime.js';

export const API_KEYS_REMOVED = 'API keys were removed; authenticate with "Authorization: Bearer <access token>" from your identity provider';

const LOGIN_REMOVED =
  'Sign-in through /login was removed; get an access token from the project\'s OpenID Connect identity provider and send it as "Authorization: Bearer <access token>"';

export function registerAuthRoutes(app: FastifyInstance, auth: AuthRuntime, db: Queryable): void {
  app.get('/api/v1/token/inspect', async (req) => {
    if (req.headers['api-key'] !== undefined) throw unauthorized(API_KEYS_REMOVED);
    return auth.inspect(req.headers.authorization);
  });

  app.post('/api/v1/projects/:project/sessions/token', { schema: { body: SessionTokenBody } }, async (req) => {
    const name = (req.params as { project: string }).project;
    const project = await findProjectAuth(db, name);
    if (!project) throw notFound(`Project "${name}" does not exist on this server`);
    return sessionToken(auth, db, project, req.body as SessionTokenRequest);
  });

  const gone = async () => {
    throw new ApiError(410, LOGIN_REMOVED);
  };
  for (const url of ['/login', '/login/*', '/api/v1/projects/:project/login', '/api/v1/projects/:project/login/*']) app.all(url, gone);
}
