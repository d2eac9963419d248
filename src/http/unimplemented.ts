/**
 * The answer to a request that no route serves. An operation of the reference that Strata does not
 * implement yet is a 501 naming it, so that a client learns it met a missing feature rather than a wrong
 * address; anything else is a 404. The method and the path alone decide, matched as the router matches (a
 * literal segment before a parameter, a trailing slash ignored): no token is read (the reference's operations
 * are public), no project looked up, no body read.
 */
import { notFound, notImplemented, type ApiError } from './errors.js';
import { readReferenceCatalog, wholePath, type ReferenceOperation } from './reference-catalog.js';

interface Template {
  op: ReferenceOperation;
  /** The path's segments; null for a parameter. */
  segments: ReadonlyArray<string | null>;
}

/** The reference's operations by their number of path segments. */
const BY_LENGTH = new Map<number, Template[]>();
for (const op of readReferenceCatalog()) {
  const segments = segmentsOf(wholePath(op.path)).map((s) => (/^\{.*\}$/.test(s) ? null : s));
  const list = BY_LENGTH.get(segments.length) ?? [];
  list.push({ op, segments });
  BY_LENGTH.set(segments.length, list);
}

function segmentsOf(path: string): string[] {
  return path.replace(/(.)\/$/, '$1').split('/').slice(1);
}

function matches(template: Template, segments: readonly string[]): boolean {
  return template.segments.every((s, i) => (s === null ? segments[i] !== '' : s === segments[i]));
}

/** The template the router would pick: at the first segment where they differ, a literal beats a parameter. */
function moreLiteral(a: Template, b: Template): Template {
  const i = a.segments.findIndex((s, j) => (s === null) !== (b.segments[j] === null));
  return i >= 0 && a.segments[i] === null ? b : a;
}

export function noOperation(method: string, url: string): ApiError {
  const path = url.split('?')[0];
  const segments = segmentsOf(path);
  const candidates = (BY_LENGTH.get(segments.length) ?? []).filter((t) => matches(t, segments));
  // A HEAD asks what the GET would answer.
  const wanted = method === 'HEAD' ? 'GET' : method;
  const same = candidates.filter((t) => t.op.method === wanted);
  if (same.length > 0) {
    const { op } = same.reduce(moreLiteral);
    return notImplemented(
      `Strata does not implement ${op.method} ${op.path} yet: GET /openapi.json lists the operations it serves, and docs/coverage.md in its source those it lacks`,
    );
  }
  if (!path.startsWith('/api/')) return notFound(`Not found: ${path}`);
  const methods = [...new Set(candidates.map((t) => t.op.method))];
  return notFound(`No operation ${method} ${path}${methods.length > 0 ? `; the path takes ${methods.join(', ')}` : ''}`);
}
