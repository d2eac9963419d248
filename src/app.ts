/**
 * The composition root: the server built from the list of areas (areas.ts) and the mechanisms they share.
 * One request flows one way:
 * request id -> version header -> authentication -> project -> capability check -> channel gate -> throttle
 * -> body (limits, decoding, JSON) -> schema validation -> resource handler (one transaction) -> response.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AREAS } from './areas.js';
import type { Config } from './config.js';
import { accessFor, securityCategoriesOf, FULL_ACCESS, ownedDataSets, reachOf } from './auth/access.js';
import { createAclRegistry } from './auth/acls.js';
import { API_KEYS_REMOVED, registerAuthRoutes } from './auth/http-routes.js';
import { createIdentityProvider, type IdentityProvider } from './auth/idp.js';
import { canAccessProject, requireCapability, type Grant, type Principal } from './auth/principal.js';
import { createAuthRuntime, type AuthRuntime } from './auth/runtime.js';
import { authTables } from './auth/schema.js';
import { registerTokenEndpoint } from './auth/token-endpoint.js';
import { deprecationHeader } from './http/dated-changes.js';
import { createRequestLog } from './http/request-log.js';
import { registerConsole } from './resources/console/static.js';
import { MISSING_AUTHORIZATION } from './auth/verify.js';
import { createCursorCodec } from './query/cursor.js';
import { migrate, type Schema } from './storage/migrate.js';
import type { BlobStore } from './storage/blobs/blob-store.js';
import { openBlobStore } from './storage/blobs/open.js';
import { ChangeFeed } from './storage/changes.js';
import { clockOf, systemClock, type Clock } from './storage/clock.js';
import { Jobs } from './storage/jobs/jobs.js';
import { openStore } from './storage/open.js';
import { platformTables } from './storage/platform-tables.js';
import { inProcessReader, ReadPool, sharedReader, type Reader } from './storage/read-pool.js';
import { rebuildIdSuffixedIndexes } from './storage/schema.js';
import { SqliteStore } from './storage/sqlite-store.js';
import type { Store } from './storage/store.js';
import { coreTables, ensureProjects, findProjectAuthRecent, serverSecret } from './storage/projects.js';
import { createMetrics } from './http/metrics.js';
import { createOutboundClient } from './http/outbound.js';
import { capConnectionsPerAddress, serverTimeouts } from './http/connections.js';
import { registerCors } from './http/cors.js';
import { forbidden, malformedRequestResponse, routerError, unauthorized } from './http/errors.js';
import { decodeRequestBody } from './http/content-encoding.js';
import { jsonResponseText } from './http/json-text.js';
import { createApiLayers, type RouteLayers } from './http/layers.js';
import type { AreaRuntime } from './http/area.js';
import { IDENTITY_SETTINGS } from './resources/identity/settings.js';
import { createLinkSigner, registerLinkRoutes } from './http/links.js';
import { registerOpenApi } from './http/openapi.js';
import {
  asApiError,
  clientGone,
  MAX_PARAM_LENGTH,
  registerBodyParsers,
  registerHealthRoutes,
  registerLanding,
  REQUEST_ID_HEADER,
  sendError,
  sendResult,
  type RouteConfig,
} from './http/pipeline.js';
import { API_PREFIX, type ApiRoute, type Project } from './http/route.js';
import type { Services } from './http/services.js';
import { createSelfCaller } from './http/self-calls.js';
import { createTokenFailures } from './http/token-failures.js';
import { noOperation } from './http/unimplemented.js';
import { validatorCompiler } from './http/validation.js';
import { LATEST_STABLE } from './http/versioning.js';

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
  /**
   * Wraps the authentication runtime the app builds (bench: one that resolves every token to a given
   * principal, to measure what verification costs); the request path is the same either way.
   */
  wrapAuth?: (auth: AuthRuntime) => AuthRuntime;
  /** True sends every list read to the read workers, even a lone request's (tests of the workers). */
  readsOnWorkers?: boolean;
}

/** Every operation the API serves, from every area. */
export function allRoutes(): ApiRoute[] {
  return AREAS.flatMap((a) => a.routes);
}

/**
 * Everything this build stores: the tables of the server's own mechanisms and of every area, and the data
 * steps that rewrite rows written by earlier builds (storage/migrate.ts). Storage knows none of the areas.
 */
export function appSchema(): Schema {
  const tables = [...coreTables, ...platformTables, ...authTables, ...AREAS.flatMap((a) => a.tables ?? [])];
  return {
    tables,
    steps: [
      ...AREAS.flatMap((a) => a.steps ?? []),
      // PostgreSQL indexes came to end with the id, as SQLite's do (storage/schema.ts indexColumns).
      { version: 12, run: (db) => rebuildIdSuffixedIndexes(db, tables) },
    ],
  };
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
  const built = createAuthRuntime({
    db,
    idp,
    acls: createAclRegistry(routes.flatMap((r) => [...(r.capability ? [r.capability] : []), ...(r.alsoNeeds ?? [])])),
    now,
    jwksRefreshIntervalMs: config.jwksRefreshIntervalMs,
    providers: { outbound, extraOrigins: config.oidcExtraOrigins },
  });
  const auth = options.wrapAuth ? options.wrapAuth(built) : built;
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
  // The server, once every operation is registered (below).
  let served!: (app: FastifyInstance) => void;
  const serving = new Promise<FastifyInstance>((resolve) => (served = resolve));
  const services: Services = {
    db,
    reads,
    cursors: createCursorCodec(await serverSecret(db, 'cursor-secret')),
    links: createLinkSigner(await serverSecret(db, 'link-secret'), config.publicUrl),
    publicUrl: config.publicUrl,
    now,
    auth,
    outbound,
    settings: config.sections,
    ...platform,
    clock,
    api: createSelfCaller({ app: serving, auth, db, now }),
    requestLog: createRequestLog(now),
  };
  const areaRuntime: AreaRuntime = { jobs: platform.jobs, store: db, reads, now, api: services.api!, auth, blobs: platform.blobs, outbound, publicUrl: config.publicUrl, cursors: services.cursors, settings: config.sections };
  for (const area of AREAS) area.registerJobs?.(areaRuntime);

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
  registerOpenApi(app, routes, { origin: config.publicUrl, project: config.projects[0] });
  app.setValidatorCompiler(validatorCompiler);
  app.setReplySerializer(jsonResponseText);
  // First of the request hooks: every answer to an allowed origin carries its CORS headers, refusals included.
  await registerCors(app, config.corsOrigins, [...new Set(['POST', ...routes.map((r) => r.method)])]);

  // Requests between arrival and the end of their response, counted only when there are read workers to share.
  const counted = pool !== undefined && !options.readsOnWorkers;
  const finished = () => void inFlight--;
  app.addHook('onRequest', (req, reply, done) => {
    reply.header(REQUEST_ID_HEADER, req.id);
    // An unknown operation (a 404, or a 501 for one of the reference's) whatever its body: answered before
    // the token, the project or the body is read.
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
  registerLanding(app, config.publicUrl, config.sections.of(IDENTITY_SETTINGS).url ?? config.publicUrl);

  registerBodyParsers(app, config.jsonMaxDepth);

  app.setErrorHandler((error, req, reply) => {
    const refused = asApiError(error, req);
    return sendError(reply, refused);
  });

  app.setNotFoundHandler((req, reply) => {
    void sendError(reply, noOperation(req.method, req.url));
  });

  registerTokenEndpoint(app, idp, createTokenFailures(config.tokenFailures, now), now, db);
  registerAuthRoutes(app, auth, db);
  for (const area of AREAS) await area.serve?.(app, areaRuntime);
  registerConsole(app);
  await registerLinkRoutes(app, AREAS.flatMap((a) => a.links ?? []), services);

  const layers = await createApiLayers({ enabled: options.apiLayers !== false, throttle: config.throttle, db, routes, now, log: app.log });
  await app.register(
    async (scope) => {
      layers.register(scope);
      services.requestLog!.register(scope, routes, db);
      // One hook per operation, in order: the version header, authentication, the route's capability (a
      // caller without it learns nothing about the operation, not even how its request would be validated;
      // the grants found decide the request's scope), the channel gate, the throttle.
      const requestHook = (def: ApiRoute, layer: RouteLayers) =>
        async function projectRequest(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
          layer.version(req, reply);
          if (def.deprecatedBy && req.apiVersion?.at(def.deprecatedBy) === 'deprecated') reply.header('deprecation', deprecationHeader(def.deprecatedBy));
          if (req.headers['api-key'] !== undefined) throw unauthorized(API_KEYS_REMOVED);
          const authorization = req.headers.authorization;
          if (!authorization) throw unauthorized(MISSING_AUTHORIZATION);
          const name = (req.params as { project: string }).project;
          const recent = findProjectAuthRecent(db, name);
          const project = recent instanceof Promise ? await recent : recent;
          if (!project) throw await auth.unknownProject(authorization, name);
          const principal = auth.cachedPrincipal(authorization, project) ?? (await auth.authenticate(authorization, project));
          if (!canAccessProject(principal, name)) throw forbidden(`The principal "${principal.subject}" has no access to project "${name}"`);
          req.principal = principal;
          req.project = project;
          // An operation without a capability reads no project data (see ApiRoute.capability): nothing to scope.
          const grants = def.capability ? requireCapability(principal, def.capability, name) : [];
          if (!def.alsoNeedsWaived?.({ headers: req.headers, params: req.params, principal, project, services })) {
            for (const also of def.alsoNeeds ?? []) requireCapability(principal, also, name);
          }
          req.grants = grants;
          req.services = {
            ...services,
            access: def.capability ? accessFor(def.capability, grants, securityCategoriesOf(principal, name)) : FULL_ACCESS,
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
          bodyLimit: def.bodyLimit ?? config.bodyLimit,
          schema: {
            ...(def.body ? { body: def.body } : {}),
            ...(def.query ? { querystring: def.query } : {}),
            ...(def.params ? { params: def.params } : {}),
          },
          config: { protobufBody: def.protobufBody, exactIntegers: def.exactIntegers } satisfies RouteConfig,
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
              setHeader: (header, value) => void reply.header(header, value),
            });
            reply.code(def.status ?? 200);
            return sendResult(reply, result);
          },
        });
      }
    },
    { prefix: API_PREFIX },
  );
  served(app);

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

