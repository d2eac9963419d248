/**
 * The version and throttling layers of the project API, wired in one place. Each operation's request hook
 * (app.ts) runs, in order: the version header -> authentication and the capability check -> the channel gate
 * -> the throttle; then the body is parsed and validated and the handler runs. Plain calls in one hook rather
 * than hooks of their own: a Fastify hook costs a runner and a few closures per request, and these run on
 * every request.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ThrottleConfig } from '../config.js';
import type { Queryable } from '../storage/store.js';
import type { ApiRoute } from './route.js';
import { createThrottle, type Admit } from './throttle.js';
import { applyVersion, channelGate, decorateVersion } from './versioning.js';

export interface ApiLayers {
  /** Scope decorations; call on the scope that serves the operations. */
  register(scope: FastifyInstance): void;
  /** The layers of one operation, for its request hook. */
  forRoute(def: ApiRoute): RouteLayers;
  close(): Promise<void>;
}

export interface RouteLayers {
  /** Before authentication: the requested version onto `req.apiVersion` and the response header; throws a 400 for a bad header. */
  version(req: FastifyRequest, reply: FastifyReply): void;
  /** After authentication: throws a 400 when the version's channel does not reach the operation. */
  gate(req: FastifyRequest): void;
  /** After the gate: the throttle (see throttle.ts); false when the request was refused and its 429 sent. */
  admit: Admit;
}

export interface LayerOptions {
  /** False leaves both layers out (every request is served as the latest stable version, unthrottled): only to measure their cost. */
  enabled: boolean;
  throttle: ThrottleConfig;
  db: Queryable;
  routes: readonly ApiRoute[];
  now: () => number;
  log: FastifyBaseLogger;
}

const nothing = (): void => {};
const admitted = (): boolean => true;
const NO_LAYERS: RouteLayers = { version: nothing, gate: nothing, admit: admitted };

export async function createApiLayers(opts: LayerOptions): Promise<ApiLayers> {
  if (!opts.enabled) return { register() {}, forRoute: () => NO_LAYERS, close: async () => {} };
  const throttle = opts.throttle.enabled
    ? await createThrottle({ config: opts.throttle, db: opts.db, routes: opts.routes, now: opts.now, log: opts.log })
    : undefined;
  return {
    register: decorateVersion,
    forRoute: (def) => ({ version: applyVersion, gate: channelGate(def) ?? nothing, admit: throttle?.admitter(def) ?? admitted }),
    close: async () => throttle?.close(),
  };
}
