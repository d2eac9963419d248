/**
 * The recent requests of each project, for the web console's request view (GET /console/requests): a bounded ring buffer per
 * project, in this process's memory only (each process of a deployment keeps its own). An entry keeps what a
 * person needs to see why a request went as it did, and nothing else a request carried: no token, no body,
 * no query string. A refusal keeps the error message the client got.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { grantsFor, type Capability, type Principal } from '../auth/principal.js';
import { findProjectAuthRecent } from '../storage/projects.js';
import type { Queryable } from '../storage/store.js';
import { API_PREFIX, operationName, type ApiRoute } from './route.js';

/** Entries kept per project: the oldest goes when a new one comes. */
export const REQUEST_LOG_CAPACITY = 1000;

export interface RequestLogEntry {
  /** Milliseconds since the epoch when the request arrived. */
  time: number;
  /** The authenticated principal's subject; absent when the token was refused. */
  principal?: string;
  /** `POST /events/list`. */
  operation: string;
  status: number;
  durationMs: number;
  /** The client's `x-cdp-sdk` and `x-cdp-app` headers, as sent (cut at 200 characters). */
  sdk?: string;
  app?: string;
  /** The API version the client asked for (`cdf-version` or `svc-version`). */
  version?: string;
  /** The error message of a refusal (status 400 and above). */
  error?: string;
  requestId: string;
}

interface Kept extends RequestLogEntry {
  /** The capability of the logged operation: who may read the entry. */
  capability: Capability | null;
}

export interface RequestLog {
  /** The entries of a project that a principal may read, newest first. */
  entries(project: string, principal: Principal): RequestLogEntry[];
  /** Records the project API's requests of one Fastify scope. */
  register(scope: FastifyInstance, routes: readonly ApiRoute[], db: Queryable): void;
}

declare module 'fastify' {
  interface FastifyRequest {
    loggedError?: string;
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value.slice(0, 200) : undefined;
}

/**
 * An entry is readable by a principal holding its operation's capability with the `all` scope: the same
 * capability that reads the data the operation touched, so its error message tells nothing new.
 */
function readable(entry: Kept, principal: Principal, project: string): boolean {
  return entry.capability === null || grantsFor(principal, entry.capability, project).some((g) => 'all' in g.scope);
}

export function createRequestLog(now: () => number, capacity = REQUEST_LOG_CAPACITY): RequestLog {
  const rings = new Map<string, { items: Kept[]; next: number }>();
  function add(project: string, entry: Kept): void {
    let ring = rings.get(project);
    if (!ring) rings.set(project, (ring = { items: [], next: 0 }));
    if (ring.items.length < capacity) ring.items.push(entry);
    else ring.items[ring.next] = entry;
    ring.next = (ring.next + 1) % capacity;
  }
  return {
    entries(project, principal) {
      const ring = rings.get(project);
      if (!ring) return [];
      const ordered = [...ring.items.slice(ring.next), ...ring.items.slice(0, ring.next)].reverse();
      return ordered.filter((e) => readable(e, principal, project)).map(({ capability: _, ...entry }) => entry);
    },
    register(scope, routes, db) {
      const byRoute = new Map(routes.map((r) => [`${r.method} ${API_PREFIX}${r.path}`, r]));
      scope.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
        if (reply.statusCode >= 400 && typeof payload === 'string') {
          try {
            const message = (JSON.parse(payload) as { error?: { message?: unknown } }).error?.message;
            if (typeof message === 'string') req.loggedError = message;
          } catch {
            // Not the API's error shape: the status tells enough.
          }
        }
        return payload;
      });
      scope.addHook('onResponse', async (req, reply) => {
        const def = byRoute.get(`${req.method} ${req.routeOptions.url}`);
        const name = (req.params as { project?: string }).project;
        if (!def || !name) return;
        // Only projects that exist get a buffer: a request naming any other leaves nothing behind.
        const project = req.project ?? (await findProjectAuthRecent(db, name));
        if (!project) return;
        add(name, {
          time: now() - Math.round(reply.elapsedTime),
          principal: req.principal?.subject,
          operation: operationName(def),
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 10) / 10,
          sdk: header(req, 'x-cdp-sdk'),
          app: header(req, 'x-cdp-app'),
          version: header(req, 'cdf-version') ?? header(req, 'svc-version'),
          error: req.loggedError,
          requestId: req.id,
          capability: def.capability,
        });
      });
    },
  };
}
