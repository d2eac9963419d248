/**
 * Global instances: the nodes the system keeps in its own spaces (system-nodes.ts), which
 * every project reads as its own. As in the reference, a list, a search or an aggregate leaves them out unless
 * its filter asks for their space by `equals` on the space property, at the top of the filter or as a
 * condition of a top-level `and` (an `in` does not): a project's listing is its own data, and the unit
 * catalog's thousand nodes are there when asked for. By ids, query and sync read them like any other node.
 */
import { Sql, sql } from '../../storage/sql.js';
import type { DmFilter } from './filter.js';
import { SYSTEM_SPACE_PREFIX } from './identifiers.js';

/** The spaces a filter asks for by `equals`, at its top or in a top-level `and`. */
function spacesAskedFor(filter: DmFilter): string[] {
  if (filter.op === 'and') return filter.args.flatMap(spacesAskedFor);
  if (filter.op === 'equals' && filter.target.kind === 'base' && filter.target.field === 'space' && filter.value.kind === 'value') {
    return typeof filter.value.value === 'string' ? [filter.value.value] : [];
  }
  return [];
}

/** The condition on `column` (an instance's space) of an instance outside the system spaces: a project's own. */
export function inUserSpace(column: string): Sql {
  return sql`${Sql.raw(column)} NOT LIKE ${`${SYSTEM_SPACE_PREFIX.replace('_', '\\_')}%`} ESCAPE '\\'`;
}

/** The condition on `column` (an instance's space) that keeps global instances out unless `filter` asks for their space. */
export function globalInstancesCondition(filter: DmFilter | undefined, column: string): Sql {
  const outside = inUserSpace(column);
  const asked = filter ? spacesAskedFor(filter) : [];
  return asked.length ? Sql.or([outside, sql`${Sql.raw(column)} IN (${asked})`]).wrap() : outside;
}
