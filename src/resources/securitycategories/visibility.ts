/**
 * Which items of a resource with a `securityCategories` list (JSON text of ids, `[1,2]`) a principal sees:
 * those whose every category is one it is a member of. A category id that names no category of the
 * project (deleted, or never created) restricts nothing.
 */
import { Sql, sql } from '../../storage/sql.js';

export function inCategoriesOf(column: string) {
  return (alias: string, memberOf: readonly number[]): Sql => {
    const list = Sql.raw(`${alias}.${column}`);
    const others = memberOf.length ? sql` AND sc.id NOT IN (${memberOf})` : sql``;
    // `[1,2]` read as `,1,2,`: a category is in the list when `,<id>,` occurs in it (the same on both dialects).
    return sql`NOT EXISTS (SELECT 1 FROM security_categories sc WHERE sc.project_id = ${Sql.raw(`${alias}.project_id`)}${others}
      AND ',' || substr(${list}, 2, length(${list}) - 2) || ',' LIKE '%,' || CAST(sc.id AS TEXT) || ',%')`;
  };
}
