/**
 * Scoped access to data modeling: `dataModelsAcl` and `dataModelInstancesAcl` are granted for all spaces or
 * for listed ones (`spaceIdScope`). Reads see only the spaces in scope (as if nothing else existed); a
 * write that touches a space outside the scope is refused (403) before anything is written.
 */
import { describeScope, type Access } from '../../auth/access.js';
import { formatCapability } from '../../auth/principal.js';
import { forbidden, formatPath } from '../../http/errors.js';
import { FALSE, Sql, sql } from '../../storage/sql.js';
import type { Path } from './identifiers.js';

/** The ACL of instances, whose scope is by space. */
export const INSTANCES_ACL = 'dataModelInstancesAcl';

export function inSpaceScope(access: Access | undefined, space: string): boolean {
  return access === undefined || access.all || access.spaces.includes(space);
}

/** The rows whose `column` (a column's name, or an expression) names a space in scope; undefined when every space is. */
export function spaceCondition(access: Access | undefined, column: string | Sql): Sql | undefined {
  if (access === undefined || access.all) return undefined;
  return access.spaces.length ? sql`${typeof column === 'string' ? Sql.raw(column) : column} IN (${access.spaces})` : FALSE;
}

export function requireSpacesWritable(access: Access | undefined, targets: ReadonlyArray<{ space: string; path: Path }>): void {
  if (access === undefined || access.all) return;
  for (const { space, path } of targets) {
    if (access.spaces.includes(space)) continue;
    throw forbidden(
      `${formatPath(path)}: ${formatCapability(access.capability)} is granted only in ${describeScope(access)}, and this is in the space ${JSON.stringify(space)}; ` +
        `this needs ${formatCapability(access.capability)} with scope all or a spaceIdScope that lists it`,
    );
  }
}

/**
 * A 403 when a write would have effects in `space`, beyond its own items (the edges deleted with a node, the
 * paths of a node's descendants), and the write scope `access` does not cover it. The message names the
 * request's item (`path`, `subject`) and what would follow (`consequence`), never the instances affected,
 * which the caller need not be able to see.
 */
export function requireEffectWritable(access: Access | undefined, space: string, path: Path, subject: string, consequence: string): void {
  if (access === undefined || access.all || access.spaces.includes(space)) return;
  throw forbidden(
    `${formatPath(path)}: ${subject} in a space outside the scope of ${formatCapability(access.capability)} (granted only in ${describeScope(access)}); ` +
      `${consequence}, and a request changes nothing outside its scope`,
  );
}
