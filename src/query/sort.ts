/**
 * Sort specifications: validation against the catalog and translation into sort keys for the pager.
 */
import { badRequest, formatPath } from '../http/errors.js';
import { Sql, sql } from '../storage/sql.js';
import { col, findProperty, isScalar, maxPropertyElementLength, pluralNoun, propertyPath, type ResourceCatalog } from './catalog.js';
import { scoreExpression, type CompileContext, type FilterNode } from './filter.js';
import type { SortKey } from './paging.js';

export interface SortSpecInput {
  property: string[];
  order?: 'asc' | 'desc';
  nulls?: 'auto' | 'first' | 'last';
}

export const MAX_SORT_PROPERTIES = 2;
export const SCORE = '_score_';

export type SortTarget = { type: 'property'; name: string } | { type: 'metadataKey'; key: string } | { type: 'score' };

export interface ResolvedSort {
  target: SortTarget;
  desc: boolean;
  /** Whether missing values come before present ones (spec: `auto` counts them as larger than any value). */
  nullsFirst: boolean;
}

export function sortableProperties(catalog: ResourceCatalog): string[] {
  const names = Object.entries(catalog.properties)
    .filter(([, d]) => isScalar(d) && d.sortable)
    .map(([n]) => JSON.stringify(propertyPath(n)));
  if (catalog.metadata) names.push('["metadata", <key>]');
  names.push(`["${SCORE}"]`);
  return names;
}

export function resolveSort(specs: readonly SortSpecInput[], catalog: ResourceCatalog, path = ['sort']): ResolvedSort[] {
  if (specs.length > MAX_SORT_PROPERTIES) {
    throw badRequest(`${formatPath(path)}: at most ${MAX_SORT_PROPERTIES} sort properties are allowed`);
  }
  const seen = new Set<string>();
  return specs.map((spec, i) => {
    const here = [...path, i, 'property'];
    const target = resolveTarget(spec.property, catalog, here);
    const key = JSON.stringify(target);
    if (seen.has(key)) throw badRequest(`${formatPath(here)}: ${JSON.stringify(spec.property)} is sorted on twice`);
    seen.add(key);
    const desc = (spec.order ?? (target.type === 'score' ? 'desc' : 'asc')) === 'desc';
    const nulls = spec.nulls ?? 'auto';
    return { target, desc, nullsFirst: nulls === 'first' || (nulls === 'auto' && desc) };
  });
}

function resolveTarget(property: string[], catalog: ResourceCatalog, path: Array<string | number>): SortTarget {
  const fail = (): never => {
    throw badRequest(
      `${formatPath(path)}: cannot sort ${pluralNoun(catalog)} on ${JSON.stringify(property)} (sortable: ${sortableProperties(catalog).join(', ')})`,
    );
  };
  const maxLength = maxPropertyElementLength(catalog);
  property.forEach((el, i) => {
    if (el.trim() === '') throw badRequest(`${formatPath([...path, i])}: must not be blank`);
    if (el.length > maxLength) throw badRequest(`${formatPath([...path, i])}: must be at most ${maxLength} characters`);
  });
  const [head, key] = property;
  if (property.length === 1 && head === SCORE) return { type: 'score' };
  if (head === 'metadata' && catalog.metadata && property.length === 2) return { type: 'metadataKey', key };
  const def = findProperty(catalog, property);
  if (!def || !isScalar(def) || !def.sortable) fail();
  return { type: 'property', name: property.join('.') };
}

/**
 * Sort keys as SQL expressions, in order. `filter` is needed for `_score_`; `indexed` tells whether a column
 * has an index within the project (see SortKey.indexed).
 */
export function sortKeys(
  sorts: readonly ResolvedSort[],
  ctx: CompileContext,
  filter: FilterNode | undefined,
  indexed: (column: string) => boolean = () => false,
): SortKey[] {
  const { catalog } = ctx;
  return sorts.map(({ target, desc, nullsFirst }) => {
    if (target.type === 'score') return { expr: scoreExpression(filter, ctx), nullable: false, desc, nullsFirst };
    if (target.type === 'metadataKey') {
      const store = catalog.metadata!;
      const expr = sql`(SELECT value FROM ${Sql.raw(store.table)} m WHERE m.${Sql.raw(store.itemColumn)} = ${Sql.raw(
        col(catalog, 'id'),
      )} AND m.key_lc = ${target.key.toLowerCase()} ORDER BY m.key LIMIT 1)`;
      return { expr, nullable: true, desc, nullsFirst, blank: Sql.raw("''") };
    }
    const def = catalog.properties[target.name];
    if (!isScalar(def)) throw new Error('unreachable: array sort');
    const blank = Sql.raw(def.kind === 'string' ? "''" : '0');
    return { expr: Sql.raw(col(catalog, def.column)), nullable: def.nullable, desc, nullsFirst, indexed: indexed(def.column), blank };
  });
}
