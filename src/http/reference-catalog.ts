/**
 * The reference's operations, from catalog/reference/operations.tsv (generated from the reference document
 * by scripts/reference-catalog.mjs): the 501 for an operation Strata lacks, the operation ids and tags of
 * GET /openapi.json, and the coverage table (docs/coverage.md) are built from it.
 */
import { readFileSync } from 'node:fs';
import { API_PREFIX, templatePath } from './route.js';

export interface ReferenceOperation {
  /** Where a user looks for it: `Events`, `Data points`, `Data modeling`, ... */
  area: string;
  /** The reference's tag. */
  tag: string;
  method: string;
  /** Relative to a project's address (`/files/{id}`), or whole when outside it (`/api/v1/token/inspect`). */
  path: string;
  operationId: string;
}

/** The same relative path from src and from dist. */
const CATALOG_URL = new URL('../../catalog/reference/operations.tsv', import.meta.url);

export function readReferenceCatalog(): ReferenceOperation[] {
  const operations: ReferenceOperation[] = [];
  for (const line of readFileSync(CATALOG_URL, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [area, tag, method, path, operationId] = line.split('\t');
    operations.push({ area, tag, method, path, operationId: operationId ?? '' });
  }
  return operations;
}

/** The address of a project as a template: `/api/v1/projects/{project}`. */
export const PROJECT_TEMPLATE = templatePath(API_PREFIX);

/** A catalog path in whole: `/files/{id}` -> `/api/v1/projects/{project}/files/{id}`. */
export function wholePath(path: string): string {
  return path.startsWith('/api/') ? path : `${PROJECT_TEMPLATE}${path}`;
}

/**
 * What two spellings of one operation have in common, whatever the names and syntax of their parameters
 * (`:id`, `{id}`) and a trailing slash: `POST /api/v1/projects/{}/events/{}`.
 */
export function operationKey(method: string, wholeTemplate: string): string {
  const path = templatePath(wholeTemplate)
    .replace(/\{[^}/]*\}/g, '{}')
    .replace(/(.)\/$/, '$1');
  return `${method.toUpperCase()} ${path}`;
}
