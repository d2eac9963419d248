/**
 * How a resource declares an operation: method, path under the project root, the capability it needs and
 * its schemas, all as data. The app registers every declaration the same way, so the access matrix can be
 * listed and tested from one table.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal, Capability, Grant } from '../auth/principal.js';
import type { Services } from './services.js';
import type { DeprecatingKey } from './dated-changes.js';
import type { ApiVersion } from './versioning.js';
import type { Project } from '../storage/projects.js';

export type { Project } from '../storage/projects.js';

/** The address of a project: every ApiRoute's path is relative to it. */
export const API_PREFIX = '/api/v1/projects/:project';

export interface ApiContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  project: Project;
  principal: Principal;
  /** The principal's grants that satisfy this route's capability (for scoped access). */
  grants: Grant[];
  services: Services;
  /** The API version the request asked for: select dated behaviour with `version.at(key)` (see dated-changes.ts). */
  version: ApiVersion;
  /** The request's headers (content negotiation: `Accept`). */
  headers: IncomingHttpHeaders;
  /** Aborts when the client goes away before the answer is sent: a long wait ends early. */
  signal: AbortSignal;
  /** Sets a header of the answer (`X-Job-Token`). */
  setHeader(name: string, value: string): void;
}

/** What a route's `alsoNeedsWaived` sees of a request, after its token and `capability` were checked. */
export interface WaiverContext {
  headers: IncomingHttpHeaders;
  params: unknown;
  principal: Principal;
  project: Project;
  services: Services;
}

/** Release channel of an operation; beta and alpha operations need the channel's suffix on the version header. */
export type Channel = 'stable' | 'beta' | 'alpha';

export interface RouteRate {
  /** Requests per second. */
  rate: number;
  /** Bucket size; twice the rate unless given. */
  burst?: number;
}

/**
 * Maxima of one operation, on top of the project's and principal's budgets and enforced by the same throttle
 * (429 with Retry-After), for example `{ concurrency: { perProject: 50 } }`.
 */
export interface RouteLimits {
  rate?: { perProject?: RouteRate; perPrincipal?: RouteRate };
  concurrency?: {
    perProject?: number;
    perPrincipal?: number;
    /** Per value of a path parameter, for example 100 concurrent calls per function: `{ param: 'id', max: 100 }`. */
    perParam?: { param: string; max: number };
  };
}

export interface ApiRoute<BS extends TSchema = TSchema, QS extends TSchema = TSchema, PS extends TSchema = TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path relative to `/api/v1/projects/{project}`. */
  path: string;
  /**
   * What the principal must hold. null for an operation on data that is the same in every project and
   * belongs to none (the units catalog): any principal that may address the project may call it.
   */
  capability: Capability | null;
  /**
   * Further capabilities the operation needs besides `capability`, as the reference lists them (records are
   * written and read through containers: `dataModelsAcl:READ`). The request's scope is `capability`'s.
   */
  alsoNeeds?: readonly Capability[];
  /**
   * When it holds for a request, `alsoNeeds` are not asked of it: a job's results read with the job token
   * that the request starting the job answered with.
   */
  alsoNeedsWaived?: (ctx: WaiverContext) => boolean;
  body?: BS;
  query?: QS;
  params?: PS;
  /**
   * Decodes a body sent as `Content-Type: application/protobuf` into the shape of the JSON body, which the
   * `body` schema then checks. Without it the operation takes JSON only.
   */
  protobufBody?: (bytes: Buffer) => unknown;
  /**
   * Integers of the JSON body beyond ±(2^53 − 1) arrive as BigInt, exactly as sent, where JSON.parse would
   * round them (a sequence's 64-bit values); the schema must let them through where they may appear.
   */
  exactIntegers?: boolean;
  /** What the operation does, in one line, for GET /openapi.json (which names the reference's operations by its ids). */
  summary?: string;
  /** The largest body the operation takes, in bytes (413 past it); the server's `bodyLimit` unless stated. */
  bodyLimit?: number;
  /** Success status; 200 unless stated. */
  status?: number;
  /** Stable unless stated. */
  channel?: Channel;
  /**
   * The dated row that deprecates the operation: at versions from its date, every answer carries a
   * `Deprecation` header with that date, and the operation keeps working.
   */
  deprecatedBy?: DeprecatingKey;
  limits?: RouteLimits;
  handler: (ctx: ApiContext<Static<BS>, Static<QS>, Static<PS>>) => unknown;
}

/** Identity helper that keeps the schema-derived types of one route declaration. */
export function route<BS extends TSchema = TSchema, QS extends TSchema = TSchema, PS extends TSchema = TSchema>(
  def: ApiRoute<BS, QS, PS>,
): ApiRoute {
  return def as unknown as ApiRoute;
}

/** How messages name an operation: `POST /events/{id}`. */
export function operationName(def: Pick<ApiRoute, 'method' | 'path'>): string {
  return `${def.method} ${templatePath(def.path)}`;
}

/** A route's path as OpenAPI and messages write it: `/events/:id` -> `/events/{id}`. */
export function templatePath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}
