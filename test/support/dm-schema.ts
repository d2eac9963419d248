/**
 * A data modeling schema held in memory for tests of the pure functions in src/resources/models: request
 * bodies validated by their schemas (as a route would), definitions normalized, views resolved.
 */
import { expect } from 'vitest';
import { ApiError } from '../../src/http/errors.js';
import { compileBodyValidator } from '../../src/http/validation.js';
import { ApplyContainersBody, type ContainerCreate } from '../../src/resources/models/container-schema.js';
import { normalizeContainers, type ContainerDefinition } from '../../src/resources/models/containers.js';
import { containerKey, viewKey, type ContainerId, type ViewId } from '../../src/resources/models/identifiers.js';
import { ApplyViewsBody, type ViewCreate } from '../../src/resources/models/view-schema.js';
import { ViewResolver, type ResolvedView, type SchemaSource } from '../../src/resources/models/view-resolution.js';
import { normalizeViews, type ViewDefinition } from '../../src/resources/models/views.js';

const validateContainers = compileBodyValidator<{ items: ContainerCreate[] }>(ApplyContainersBody);
const validateViews = compileBodyValidator<{ items: ViewCreate[] }>(ApplyViewsBody);

/** Containers as an apply request would give them: schema-checked, then normalized. */
export function containers(...items: unknown[]): ContainerDefinition[] {
  return normalizeContainers(validateContainers(structuredClone({ items })).items);
}

export function views(...items: unknown[]): ViewDefinition[] {
  return normalizeViews(validateViews(structuredClone({ items })).items);
}

export class MemorySchema implements SchemaSource {
  readonly containers = new Map<string, ContainerDefinition>();
  readonly views = new Map<string, ViewDefinition>();

  constructor(c: ContainerDefinition[] = [], v: ViewDefinition[] = []) {
    for (const x of c) this.containers.set(containerKey(x), x);
    for (const x of v) this.views.set(viewKey(x), x);
  }

  container(id: ContainerId): ContainerDefinition | undefined {
    return this.containers.get(containerKey(id));
  }

  view(id: ViewId): ViewDefinition | undefined {
    return this.views.get(viewKey(id));
  }

  resolver(): ViewResolver {
    return new ViewResolver(this);
  }

  resolve(id: ViewId): ResolvedView {
    const v = this.resolver().view(id);
    if (!v) throw new Error(`no view ${viewKey(id)}`);
    return v;
  }
}

/** Runs `fn`, which must throw an ApiError of `status` whose message contains every one of `parts`. */
export function expectApiError(fn: () => unknown, status: number, ...parts: string[]): ApiError {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected an ApiError').toBeInstanceOf(ApiError);
  const api = error as ApiError;
  expect(api.status, api.message).toBe(status);
  for (const part of parts) expect(api.message).toContain(part);
  return api;
}

export const containerRefOf = (space: string, externalId: string) => ({ type: 'container' as const, space, externalId });
export const viewRefOf = (space: string, externalId: string, version = 'v1') => ({ type: 'view' as const, space, externalId, version });
