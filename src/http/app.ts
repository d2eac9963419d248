/**
 * Builds the HTTP application. One request flows one way:
 * request id -> version header -> authentication -> project -> capability check -> channel gate -> throttle
 * -> body (limits, decoding, JSON) -> schema validation -> resource handler (one transaction) -> response.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { accessFor, FULL_ACCESS, ownedDataSets, reachOf } from '../auth/access.js';
import { createAclRegistry } from '../auth/acls.js';
import { API_KEYS_REMOVED, registerAuthRoutes } from '../auth/http-routes.js';
import { createIdentityProvider, type IdentityProvider } from '../auth/idp.js';
import { canAccessProject, requireCapability, type Grant, type Principal } from '../auth/principal.js';
import { createAuthRuntime, type AuthRuntime } from '../auth/runtime.js';
import { MISSING_AUTHORIZATION } from '../auth/verify.js';
import { createCursorCodec } from '../query/cursor.js';
import { assetRoutes } from '../resources/assets/routes.js';
import { datapointRoutes } from '../resources/datapoints/routes.js';
import { dataSetRoutes } from '../resources/datasets/routes.js';
import { eventRoutes } from '../resources/events/routes.js';
import { groupRoutes } from '../resources/groups/routes.js';
import { registerContainerChecks } from '../resources/models/container-checks.js';
import { modelRoutes } from '../resources/models/routes.js';
import { projectRoutes } from '../resources/projects/routes.js';
import { sessionRoutes } from '../resources/sessions/routes.js';
import { timeSeriesRoutes } from '../resources/timeseries/routes.js';
import { unitRoutes } from '../resources/units/routes.js';
import { appSchema } from '../resources/tables.js';
import { migrate } from '../storage/migrate.js';
import type { BlobStore } from '../storage/blobs/blob-store.js';
import { openBlobStore } from '../storage/blobs/open.js';
import { ChangeFeed } from '../storage/changes.js';
import { clockOf, systemClock, type Clock } from '../storage/clock.js';
import { Jobs } from '../storage/jobs/jobs.js';
import { openStore } from '../storage/open.js';
import { inProcessReader, ReadPool, sharedReader, type Reader } from '../storage/read-pool.js';
import { SqliteStore } from '../storage/sqlite-store.js';
import { sql } from '../storage/sql.js';
import { StoreUnavailable, type Store } from '../storage/store.js';
import { ensureProjects, findProjectAuthRecent, serverSecret } from '../storage/projects.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createOutboundClient } from './outbound.js';
import { clientAddress } from './client-address.js';
import { capConnectionsPerAddress, serverTimeouts } from './connections.js';
import { registerCors } from './cors.js';
import { ApiError, bodyTooLarge, forbidden, malformedRequestResponse, notFound, routerError, unauthorized } from './errors.js';
import { decodeRequestBody } from './content-encoding.js';
import { EncodedBody, JsonText, jsonResponseText } from './json-text.js';
import { parseJsonBody } from './json-body.js';
import { createApiLayers, type RouteLayers } from './layers.js';
import type { ApiRoute, Project } from './route.js';
import type { Services } from './services.js';
import { createTokenFailures, type TokenFailures } from './token-failures.js';
import { validatorCompiler } from './validation.js';
import { LATEST_STABLE } from './versioning.js';

export const API_PREFIX = '/api/v1/projects/:project';
export const REQUEST_ID_HEADER = 'x-request-id';
/** The longest path segment the router takes (project names have at most 64 characters, ids fewer). */
const MAX_PARAM_LENGTH = 100;

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    project?: Project;
    /** The principal's grants that satisfy the route's capability. */
    grants?: Grant[];
    /** The app's services with this request's scope (`access`). */
    services?: Services;
  }
}

export interface Strata {
  app: FastifyInstance;
  services: Services;
  idp: IdentityProvider;
  auth: AuthRuntime;
  routes: readonly ApiRoute[];
  /** The store the app reads and writes. */
  store: Store;
  /** The read workers, when the store is a SQLite file and STRATA_READ_WORKERS is not 0. */
  readPool?: ReadPool;
  close(): Promise<void>;
}

export interface BuildOptions {
  /** Use an already-open store (tests share one between app instances); it is not closed with the app. */
  store?: Store;
  now?: () => number;
  /** The clock of waits, leases and schedules (tests move it by hand); `now`'s, with real timers, when absent. */
  clock?: Clock;
  logger?: boolean;
  /** Operations served besides allRoutes() (tests declare test-only operations here). */
  extraRoutes?: readonly ApiRoute[];
  /** False leaves out the version and throttling layers; only to measure their cost (bench). */
  apiLayers?: boolean;
  /** Every project request is made by this principal and no token is read: only to measure what authentication costs (bench). */
  principal?: Principal;
  /** True sends every list read to the read workers, even a lone request's (tests of the workers). */
  readsOnWorkers?: boolean;
}

/** Every operation the API serves, from every resource. */
export function allRoutes(): ApiRoute[] {
  return [...eventRoutes, ...dataSetRoutes, ...timeSeriesRoutes, ...assetRoutes, ...projectRoutes, ...groupRoutes, ...sessionRoutes, ...datapointRoutes, ...unitRoutes, ...modelRoutes];
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<Strata> {
  const db =
    options.store ?? openStore({ dataDir: config.dataDir, synchronous: config.synchronous, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
  const replica = config.databaseReadUrl ? openStore({ dataDir: config.dataDir, databaseUrl: config.databaseReadUrl, poolSize: config.databasePoolSize }) : undefined;
  await migrate(db, appSchema());
  const clock = options.clock ?? (options.now ? clockOf(options.now) : systemClock);
  const now = options.now ?? clock.now;
  const platform = await openPlatform(config, db, clock).catch(async (error: unknown) => {
    if (!options.store) await db.close();
    throw error;
  });
  await ensureProjects(db, config.projects, now());

  const idp = await createIdentityProvider({
    db,
    dataDir: config.dataDir,
    issuer: config.publicUrl,
    audience: config.publicUrl,
    devClientSecret: config.devClientSecret,
    extraClients: config.clients,
    now,
  });
  const routes = options.extraRoutes ? [...allRoutes(), ...options.extraRoutes] : allRoutes();
  const outbound = createOutboundClient(config.outbound);
  const auth = createAuthRuntime({
    db,
    idp,
    acls: createAclRegistry(routes.flatMap((r) => (r.capability ? [r.capability] : []))),
    now,
    jwksRefreshIntervalMs: config.jwksRefreshIntervalMs,
    providers: { outbound, extraOrigins: config.oidcExtraOrigins },
  });
  // Requests between arrival and the end of their response: a lone one reads in process (see sharedReader).
  let inFlight = 0;
  // Read workers share a SQLite file (an in-memory database is private to its connection); PostgreSQL reads
  // on its pool, or on a replica when one is configured.
  const pool =
    config.readWorkers > 0 && db instanceof SqliteStore && !db.memory
      ? new ReadPool(db.location, config.readWorkers, (err) => app.log.error({ err }, 'a read worker stopped; its reads run on the main thread meanwhile'))
      : undefined;
  // A write transaction holds the connection; reads outside it go to the workers meanwhile (sqlite-store.ts).
  if (pool) (db as SqliteStore).readAside(pool);
  const reads: Reader = pool
    ? sharedReader(pool, inProcessReader(db), options.readsOnWorkers ? () => true : () => inFlight > 1)
    : inProcessReader(replica ?? db);
  const services: Services = {
    db,
    reads,
    cursors: createCursorCodec(await serverSecret(db, 'cursor-secret')),
    now,
    auth,
    outbound,
    syncCursorMaxAgeMs: config.syncCursorMaxAgeMs,
    modelsLimits: config.modelsLimits,
    ...platform,
    clock,
  };
  registerContainerChecks(platform.jobs, db, reads, now);

  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel },
    // The limit of every route that needs no token (and of unknown paths); the project's operations, which
    // read a body only once its token is checked, take config.bodyLimit.
    bodyLimit: config.unauthenticatedBodyLimit,
    ...serverTimeouts(config),
    // Behind the listed proxies a request's address (req.ip, which per-address limits count) is the client's.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    genReqId: (req) => {
      const given = req.headers[REQUEST_ID_HEADER];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    ajv: { customOptions: { strict: false } },
    // Requests refused before any route runs get the API's error shape too.
    frameworkErrors: (error, req, reply) => {
      const refused = routerError(error.code, req.url, MAX_PARAM_LENGTH);
      void sendError((reply as FastifyReply).header(REQUEST_ID_HEADER, req.id), refused);
    },
    // A trailing slash, before the query string or at the end of the path, names the same operation (the
    // official clients send `GET /groups/?all=true`).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) {
        const limits = { maxHeaderBytes: http.maxHeaderSize, headersTimeoutMs: config.headersTimeoutMs, requestTimeoutMs: config.requestTimeoutMs };
        socket.write(malformedRequestResponse(err.code, limits));
      }
      socket.destroy(err);
    },
  });
  capConnectionsPerAddress(app.server, config.maxConnectionsPerAddress);
  app.setValidatorCompiler(validatorCompiler);
  app.setReplySerializer(jsonResponseText);
  // First of the request hooks: every answer to an allowed origin carries its CORS headers, refusals included.
  await registerCors(app, config.corsOrigins, [...new Set(['POST', ...routes.map((r) => r.method)])]);

  // Requests between arrival and the end of their response, counted only when there are read workers to share.
  const counted = pool !== undefined && !options.readsOnWorkers;
  const finished = () => void inFlight--;
  app.addHook('onRequest', (req, reply, done) => {
    reply.header(REQUEST_ID_HEADER, req.id);
    // An unknown operation is a 404 whatever its body: answered before the body is read or parsed.
    if (req.is404) {
      void sendError(reply, noOperation(req.method, req.url));
      return;
    }
    if (counted) {
      inFlight++;
      // 'close' comes once per response, also when the client goes away before it is sent.
      reply.raw.once('close', finished);
    }
    done();
  });

  app.addHook('preParsing', decodeRequestBody);

  // Operations' figures (GET /metrics), by route: the operation's template, `unknown` for no operation.
  const metrics = config.metrics ? createMetrics() : undefined;
  if (metrics) {
    metrics.watchPool(() => db.connections());
    app.addHook('onResponse', (req, reply, done) => {
      const route = req.routeOptions.url;
      metrics.observe(route ? `${req.method} ${route.replace(API_PREFIX, '')}` : 'unknown', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
  registerHealthRoutes(app, db, metrics);
  registerLanding(app, config.publicUrl);

  // The API speaks JSON (and protocol buffers where an operation says so); the form parser serves the OAuth
  // token endpoint.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer, config.jsonMaxDepth));
    } catch (err) {
      done(err as ApiError, undefined);
    }
  });
  // Protocol buffers, for the operations that declare a decoder (data point inserts): decoded into the JSON
  // body's shape, which the operation's schema then checks as it checks JSON.
  app.addContentTypeParser(['application/protobuf', 'application/x-protobuf'], { parseAs: 'buffer' }, (req, body, done) => {
    const decode = routeConfig(req).protobufBody;
    try {
      if (!decode) throw jsonOnly(req, 'protocol buffers');
      done(null, decode(body as Buffer));
    } catch (err) {
      done(err as ApiError, undefined);
    }
  });
  // Forms, for the OAuth token endpoint only. Elsewhere a form is a JSON body sent without its type (what
  // `curl -d` does without -H), which deserves that answer rather than an unknown property named after it.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (req, body, done) => {
    if (!routeConfig(req).formBody) done(jsonOnly(req, 'a form (application/x-www-form-urlencoded), which curl -d sends unless given -H "Content-Type: application/json"'), undefined);
    else done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.setErrorHandler((error, req, reply) => {
    const refused = asApiError(error, req);
    return sendError(reply, refused);
  });

  app.setNotFoundHandler((req, reply) => {
    void sendError(reply, noOperation(req.method, req.url));
  });

  registerIdentityRoutes(app, idp, createTokenFailures(config.tokenFailures, now));
  registerAuthRoutes(app, auth, db);

  const layers = await createApiLayers({ enabled: options.apiLayers !== false, throttle: config.throttle, db, routes, now, log: app.log });
  await app.register(
    async (scope) => {
      layers.register(scope);
      // One hook per operation, in order: the version header, authentication, the route's capability (a
      // caller without it learns nothing about the operation, not even how its request would be validated;
      // the grants found decide the request's scope), the channel gate, the throttle.
      const requestHook = (def: ApiRoute, layer: RouteLayers) =>
        async function projectRequest(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
          layer.version(req, reply);
          if (req.headers['api-key'] !== undefined) throw unauthorized(API_KEYS_REMOVED);
          const authorization = req.headers.authorization;
          if (!authorization && !options.principal) throw unauthorized(MISSING_AUTHORIZATION);
          const name = (req.params as { project: string }).project;
          const recent = findProjectAuthRecent(db, name);
          const project = recent instanceof Promise ? await recent : recent;
          if (!project) throw await auth.unknownProject(authorization, name);
          const principal = options.principal ?? auth.cachedPrincipal(authorization!, project) ?? (await auth.authenticate(authorization, project));
          if (!canAccessProject(principal, name)) throw forbidden(`The principal "${principal.subject}" has no access to project "${name}"`);
          req.principal = principal;
          req.project = project;
          // An operation without a capability reads no project data (see ApiRoute.capability): nothing to scope.
          const grants = def.capability ? requireCapability(principal, def.capability, name) : [];
          req.grants = grants;
          req.services = {
            ...services,
            access: def.capability ? accessFor(def.capability, grants) : FULL_ACCESS,
            dataSetOwner: ownedDataSets(principal, name),
            reach: reachOf(principal, name),
          };
          layer.gate(req);
          const admit = layer.admit(req, reply);
          // Refused: the 429 is sent, and returning the reply ends the request here.
          if (admit === false || (admit !== true && !(await admit))) return reply;
          return undefined;
        };
      for (const def of routes) {
        scope.route({
          method: def.method,
          url: def.path,
          bodyLimit: config.bodyLimit,
          schema: {
            ...(def.body ? { body: def.body } : {}),
            ...(def.query ? { querystring: def.query } : {}),
            ...(def.params ? { params: def.params } : {}),
          },
          config: { protobufBody: def.protobufBody } satisfies RouteConfig,
          onRequest: requestHook(def, layers.forRoute(def)),
          handler: async (req, reply) => {
            let signal: AbortSignal | undefined;
            const result = await def.handler({
              body: req.body,
              query: req.query,
              params: req.params,
              project: req.project!,
              principal: req.principal!,
              grants: req.grants!,
              services: req.services!,
              version: req.apiVersion ?? LATEST_STABLE,
              headers: req.headers,
              get signal() {
                return (signal ??= clientGone(req, reply));
              },
            });
            reply.code(def.status ?? 200);
            // Already JSON (items rendered by SQL): sent as is; Fastify's default type for objects, so clients see no difference.
            if (result instanceof EncodedBody) return reply.type(result.type).send(result.body);
            if (result instanceof JsonText) {
              const { body, length } = result.payload();
              if (length !== undefined) reply.header('content-length', length);
              return reply.type('application/json; charset=utf-8').send(body);
            }
            if (result === null || typeof result !== 'object' || Buffer.isBuffer(result)) return result;
            return reply.type('application/json; charset=utf-8').send(jsonResponseText(result));
          },
        });
      }
    },
    { prefix: API_PREFIX },
  );

  return {
    app,
    services,
    store: db,
    readPool: pool,
    idp,
    auth,
    routes,
    async close() {
      // Runners hand their jobs back, and long waits end now rather than hold the server open to their deadlines.
      await platform.jobs.close();
      await platform.changes.close();
      await app.close();
      await layers.close();
      await pool?.close();
      await outbound.close();
      await replica?.close();
      await platform.blobs.close();
      if (!options.store) await db.close();
    },
  };
}

/** The mechanisms areas build on (storage/blobs, changes.ts, jobs/): their jobs run once areas register kinds. */
async function openPlatform(config: Config, db: Store, clock: Clock): Promise<{ blobs: BlobStore; changes: ChangeFeed; jobs: Jobs }> {
  const changes = new ChangeFeed(clock, db);
  await changes.start();
  try {
    const blobs = await openBlobStore(config.blobs, { dataDir: config.dataDir, db, dbLocation: db.location, now: clock.now });
    return { blobs, changes, jobs: new Jobs({ db, clock, changes }) };
  } catch (error) {
    await changes.close();
    throw error;
  }
}

/** A signal that aborts when the client goes away before its answer is sent (made only for the handlers that ask). */
function clientGone(req: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  if (req.raw.socket?.destroyed) controller.abort();
  // 'close' comes once the answer is sent, or earlier when the connection ends.
  else reply.raw.once('close', () => reply.raw.writableFinished || controller.abort());
  return controller.signal;
}

/** Every error a request ends with, as the API's error: what is not ours is a 4xx from Fastify, the store being unavailable, or a 500. */
function asApiError(error: unknown, req: FastifyRequest): ApiError {
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
interface RouteConfig {
  protobufBody?: ApiRoute['protobufBody'];
  formBody?: boolean;
}

function routeConfig(req: FastifyRequest): RouteConfig {
  return (req.routeOptions.config ?? {}) as RouteConfig;
}

/** 415 for a body in a format the operation does not take: it takes JSON. */
function jsonOnly(req: FastifyRequest, sent: string): ApiError {
  return new ApiError(415, `${req.method} ${req.url.split('?')[0]} takes JSON, and the body came as ${sent}; send it with "Content-Type: application/json"`);
}

function noOperation(method: string, url: string): ApiError {
  const path = url.split('?')[0];
  return notFound(url.startsWith('/api/') ? `No operation ${method} ${path}` : `Not found: ${path}`);
}

/** An error in the API's shape, as JSON text: answers outside a route (404, the router's refusals) do not pass the reply serializer. */
function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
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
function registerHealthRoutes(app: FastifyInstance, db: Store, metrics: Metrics | undefined): void {
  app.get('/health/live', async () => ({ status: 'live' }));
  app.get('/health/ready', async (req, reply) => {
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
    app.get('/metrics', async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
  }
}

/** `GET /`: where a newcomer has arrived, for a client or a person with curl: the API's base, how to get a token, the docs, health. */
function registerLanding(app: FastifyInstance, origin: string): void {
  const landing = {
    name: 'Strata',
    api: `${origin}${API_PREFIX.replace(':project', '{project}')}`,
    tokenUrl: `${origin}/oauth2/token`,
    openidConfiguration: `${origin}/.well-known/openid-configuration`,
    docs: 'README.md and docs/ of the Strata source',
    health: { live: `${origin}/health/live`, ready: `${origin}/health/ready` },
  };
  app.get('/', async () => landing);
}

function registerIdentityRoutes(app: FastifyInstance, idp: IdentityProvider, failures: TokenFailures): void {
  app.get('/.well-known/openid-configuration', async () => idp.discovery());
  app.get('/.well-known/jwks.json', async () => idp.jwks);
  // OAuth 2.0 token endpoint (RFC 6749): errors use the OAuth error form that token clients expect.
  app.post('/oauth2/token', { config: { formBody: true } satisfies RouteConfig }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const form = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
    let clientId = form('client_id');
    let secret = form('client_secret');
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) [clientId, secret] = basicCredentials(basic[1]);
    if (form('grant_type') !== 'client_credentials') {
      return reply.code(400).send({
        error: 'unsupported_grant_type',
        error_description: `grant_type must be "client_credentials", got ${JSON.stringify(body.grant_type ?? null)}`,
      });
    }
    // Refused before the secret is checked, so that a refusal tells nothing about it.
    const address = clientAddress(req.ip);
    const refused = failures.refusal(clientId, address);
    if (refused) {
      return reply.code(429).header('retry-after', String(refused.retryAfter)).send({ error: 'slow_down', error_description: refused.description });
    }
    const client = clientId && secret ? idp.authenticate(clientId, secret) : undefined;
    if (!client) {
      failures.failed(clientId, address);
      return reply.code(401).send({ error: 'invalid_client', error_description: 'Unknown client_id or wrong client_secret' });
    }
    reply.header('cache-control', 'no-store');
    return idp.issueToken(client);
  });
}

/** Client id and secret of an HTTP Basic credential (RFC 6749 2.3.1: each form-urlencoded); none if malformed. */
function basicCredentials(encoded: string): [string | undefined, string | undefined] {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return [undefined, undefined];
  try {
    return [decodeURIComponent(decoded.slice(0, colon)), decodeURIComponent(decoded.slice(colon + 1))];
  } catch {
    return [undefined, undefined];
  }
}
