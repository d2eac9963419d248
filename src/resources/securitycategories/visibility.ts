/**
 * Which items of a resource with `securityCategories` a principal sees: those whose every category is one
 * it is a member of. A category id that names no category of the project (deleted, or never created)
 * restricts nothing.
 */
import type { ArrayProperty } from '../../query/catalog.js';
import { Sql, sql } from '../../storage/sql.js';

/**
 * The condition (ResourceCatalog.categoryCondition) for categories kept either as JSON text of ids (`[1,2]`)
 * in a column of the item's row, or as rows of a side table (one per item and category).
 */
export function inCategoriesOf(list: string | ArrayProperty) {
  return (alias: string, memberOf: readonly number[]): Sql => {
    const own = (column: string) => Sql.raw(`${alias}.${column}`);
    const others = memberOf.length ? sql` AND sc.id NOT IN (${memberOf})` : sql``;
    if (typeof list !== 'string') {
      // From the item's own rows (most items have none), each checked against the project's categories.
      const value = Sql.raw(`c.${list.valueColumn}`);
      return sql`NOT EXISTS (SELECT 1 FROM ${Sql.raw(list.table)} c JOIN security_categories sc ON sc.project_id = c.project_id AND sc.id = ${value}
        WHERE ${Sql.raw(`c.${list.itemColumn}`)} = ${own('id')} AND c.project_id = ${own('project_id')}${others})`;
    }
    const text = own(list);
    // `[1,2]` read as `,1,2,`: a category is in the list when `,<id>,` occurs in it (the same on both dialects).
    return sql`NOT EXISTS (SELECT 1 FROM security_categories sc WHERE sc.project_id = ${own('project_id')}${others}
      AND ',' || substr(${text}, 2, length(${text}) - 2) || ',' LIKE '%,' || CAST(sc.id AS TEXT) || ',%')`;
  };
}
