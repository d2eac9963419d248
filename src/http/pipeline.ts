/**
 * The parts of the request pipeline every operation shares, below the composition root (src/app.ts): the
 * API's prefix and request id, how bodies are parsed, how a route's result and every refusal are sent, and the
 * routes outside the project API that need no token (health, metrics, the landing answer).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StoreUnavailable, type Store } from '../storage/store.js';
import { sql } from '../storage/sql.js';
import { ApiError, bodyTooLarge } from './errors.js';
import { EncodedBody, JsonText, jsonResponseText } from './json-text.js';
import { parseJsonBody } from './json-body.js';
import type { Metrics } from './metrics.js';
import { API_PREFIX, type ApiRoute } from './route.js';

export const REQUEST_ID_HEADER = 'x-request-id';
/** The longest path segment the router takes (project names have at most 64 characters, ids fewer). */
export const MAX_PARAM_LENGTH = 100;

/**
 * The bodies the API takes: JSON (within `jsonMaxDepth`), protocol buffers where an operation declares a
 * decoder, and forms for the OAuth token endpoint only. Elsewhere a form is a JSON body sent without its type
 * (what `curl -d` does without -H), which deserves that answer rather than an unknown property named after it.
 */
export function registerBodyParsers(app: FastifyInstance, jsonMaxDepth: number): void {
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer, jsonMaxDepth, routeConfig(req).exactIntegers));
    } catch (err) {
      done(err as ApiError, undefined);
    }
  });
  // Decoded into the JSON body's shape, which the operation's schema then checks as it checks JSON.
  app.addContentTypeParser(['application/protobuf', 'application/x-protobuf'], { parseAs: 'buffer' }, (req, body, done) => {
    const decode = routeConfig(req).protobufBody;
    try {
      if (!decode) throw jsonOnly(req, 'protocol buffers');
      done(null, decode(body as Buffer));
    } catch (err) {
      done(err as ApiError, undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    if (!routeConfig(req).formBody) done(jsonOnly(req, 'a form (application/x-www-form-urlencoded), which curl -d sends unless given -H "Content-Type: application/json"'), undefined);
    else done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

/**
 * Sends what an operation's handler returned: JSON already rendered (items rendered by SQL) as it is, with
 * Fastify's default type for objects so clients see no difference; other bodies of their own type; objects
 * as JSON text.
 */
export function sendResult(reply: FastifyReply, result: unknown): unknown {
  if (result instanceof EncodedBody) return reply.type(result.type).send(result.body);
  if (result instanceof JsonText) {
    const { body, length } = result.payload();
    if (length !== undefined) reply.header('content-length', length);
    return reply.type('application/json; charset=utf-8').send(body);
  }
  if (result === null || typeof result !== 'object' || Buffer.isBuffer(result)) return result;
  return reply.type('application/json; charset=utf-8').send(jsonResponseText(result));
}

/** A signal that aborts when the client goes away before its answer is sent (made only for the handlers that ask). */
export function clientGone(req: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  if (req.raw.socket?.destroyed) controller.abort();
  // 'close' comes once the answer is sent, or earlier when the connection ends.
  else reply.raw.once('close', () => reply.raw.writableFinished || controller.abort());
  return controller.signal;
}

/** Every error a request ends with, as the API's error: what is not ours is a 4xx from Fastify, the store being unavailable, or a 500. */
export function asApiError(error: unknown, req: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return bodyTooLarge(req.routeOptions.bodyLimit);
  // Nothing of the request was applied (its transaction did not commit), so the client may send it again.
  if (error instanceof StoreUnavailable) return new ApiError(503, `The service is unavailable: ${error.message}`, {}, { 'retry-after': '1' });
  const status = (error as { statusCode?: number }).statusCode ?? 500;
  if (status < 500) return new ApiError(status, fastifyMessage(error as Error & { code?: string }));
  req.log.error({ err: error }, 'request failed');
  return new ApiError(500, `Internal server error; report request id ${req.id} if it happens again`);
}

/** What a route says about the bodies it takes besides JSON. */
export interface RouteConfig {
  protobufBody?: ApiRoute['protobufBody'];
  exactIntegers?: boolean;
  formBody?: boolean;
}

export function routeConfig(req: FastifyRequest): RouteConfig {
  return (req.routeOptions.config ?? {}) as RouteConfig;
}

/** 415 for a body in a format the operation does not take: it takes JSON. */
export function jsonOnly(req: FastifyRequest, sent: string): ApiError {
  return new ApiError(415, `${req.method} ${req.url.split('?')[0]} takes JSON, and the body came as ${sent}; send it with "Content-Type: application/json"`);
}

/** An error in the API's shape, as JSON text: answers outside a route (404, the router's refusals) do not pass the reply serializer. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(jsonResponseText(error.body()));
}

function fastifyMessage(error: Error & { code?: string }): string {
  return error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
    ? 'Unsupported Content-Type; send the request body as JSON with "Content-Type: application/json"'
    : error.message;
}

/**
 * Liveness (the process answers), readiness (it can reach its database: a load balancer sends it requests)
 * and the metrics, outside the project API: they need no token.
 */
export function registerHealthRoutes(app: FastifyInstance, db: Store, metrics: Metrics | undefined): void {
  app.get('/health/live', { schema: { summary: 'Liveness: the process answers' } }, async () => ({ status: 'live' }));
  app.get('/health/ready', { schema: { summary: 'Readiness: the process reaches its database (503 when it does not)' } }, async (req, reply) => {
    try {
      await db.get(sql`SELECT 1 AS ok`);
      return { status: 'ready' };
    } catch (err) {
      // The cause goes to the log only: this answer needs no token, and a database address is not for everyone.
      req.log.warn({ err }, 'not ready: the database cannot be reached');
      const refused = new ApiError(503, 'Not ready: the database cannot be reached', {}, { 'retry-after': '1' });
      return sendError(reply, refused);
    }
  });
  if (metrics) {
    app.get('/metrics', { schema: { summary: "Operations' figures, in the Prometheus text format" } }, async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
  }
}

/** `GET /`: where a newcomer has arrived, for a client or a person with curl: the API's base, the identity service, how to get a token, the operations served, the docs, health. */
export function registerLanding(app: FastifyInstance, origin: string, identityUrl: string): void {
  const landing = {
    name: 'Strata',
    api: `${origin}${API_PREFIX.replace(':project', '{project}')}`,
    /** The organization and identity service (`/api/v1/orgs/...`, `/api/v1/principals/me`), served on this origin. */
    identity: identityUrl,
    tokenUrl: `${origin}/oauth2/token`,
    openidConfiguration: `${origin}/.well-known/openid-configuration`,
    openapi: `${origin}/openapi.json`,
    docs: 'README.md and docs/ of the Strata source',
    health: { live: `${origin}/health/live`, ready: `${origin}/health/ready` },
  };
  app.get('/', { schema: { summary: 'Where the API, the token endpoint, the list of operations served, the docs and the health checks are' } }, async () => landing);
}

