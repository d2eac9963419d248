/**
 * How a resource declares an operation: method, path under the project root, the capability it needs and
 * its schemas, all as data. The app registers every declaration the same way, so the access matrix can be
 * listed and tested from one table.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Principal, Capability, Grant } from '../auth/principal.js';
import type { Services } from './services.js';

export interface Project {
  id: number;
  name: string;
}

export interface ApiContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  project: Project;
  principal: Principal;
  /** The principal's grants that satisfy this route's capability (for scoped access). */
  grants: Grant[];
  services: Services;
}

export interface ApiRoute<BS extends TSchema = TSchema, QS extends TSchema = TSchema, PS extends TSchema = TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path relative to `/api/v1/projects/{project}`. */
  path: string;
  capability: Capability;
  body?: BS;
  query?: QS;
  params?: PS;
  /** Success status; 200 unless stated. */
  status?: number;
  handler: (ctx: ApiContext<Static<BS>, Static<QS>, Static<PS>>) => unknown;
}

/** Identity helper that keeps the schema-derived types of one route declaration. */
export function route<BS extends TSchema = TSchema, QS extends TSchema = TSchema, PS extends TSchema = TSchema>(
  def: ApiRoute<BS, QS, PS>,
): ApiRoute {
  return def as unknown as ApiRoute;
}
