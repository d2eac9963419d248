/**
 * The version and throttling layers of the project API, wired in one place. In request order:
 * version header (scope hook, before authentication) -> authentication (app.ts) -> channel gate and throttle
 * (route hooks, before the body is parsed) -> validation -> handler; the throttle's slot goes back on send.
 */
import type { FastifyBaseLogger, FastifyInstance, onRequestHookHandler, onSendHookHandler } from 'fastify';
import type { ThrottleConfig } from '../config.js';
import type { Db } from '../storage/db.js';
import type { ApiRoute } from './route.js';
import { createThrottle, type Throttle } from './throttle.js';
import { channelGate, registerVersioning } from './versioning.js';

export interface ApiLayers {
  /** Scope-level hooks; call before the scope's authentication hook. */
  register(scope: FastifyInstance): void;
  /** Route-level hooks of one operation, to spread into its route options. */
  routeHooks(def: ApiRoute): { onRequest?: onRequestHookHandler[]; onSend?: onSendHookHandler[] };
  close(): Promise<void>;
}

export interface LayerOptions {
  /** False leaves both layers out (every request is served as the latest stable version, unthrottled): only to measure their cost. */
  enabled: boolean;
  throttle: ThrottleConfig;
  db: Db;
  routes: readonly ApiRoute[];
  now: () => number;
  log: FastifyBaseLogger;
}

export async function createApiLayers(opts: LayerOptions): Promise<ApiLayers> {
  if (!opts.enabled) return { register() {}, routeHooks: () => ({}), close: async () => {} };
  const throttle: Throttle | undefined = opts.throttle.enabled
    ? await createThrottle({ config: opts.throttle, db: opts.db, routes: opts.routes, now: opts.now, log: opts.log })
    : undefined;
  return {
    register: registerVersioning,
    routeHooks(def) {
      const onRequest: onRequestHookHandler[] = [];
      const gate = channelGate(def);
      if (gate) onRequest.push(gate);
      if (!throttle) return onRequest.length > 0 ? { onRequest } : {};
      const hooks = throttle.hooksFor(def);
      onRequest.push(hooks.onRequest);
      return { onRequest, onSend: [hooks.onSend] };
    },
    close: async () => throttle?.close(),
  };
}
