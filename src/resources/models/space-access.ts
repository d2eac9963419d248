/**
 * Scoped access to data modeling: `dataModelsAcl` and `dataModelInstancesAcl` are granted for all spaces or
 * for listed ones (`spaceIdScope`). Reads see only the spaces in scope (as if nothing else existed); a
 * write that touches a space outside the scope is refused (403) before anything is written.
 *
 * Schema (containers, views, data models) is seen in the spaces of the principal's `dataModelsAcl` grants
 * and in the system spaces, whose core data model every principal that reads data modeling sees. What a
 * request draws on (the views a view implements, the containers it maps, the views and containers an
 * instance request names) is resolved in the schema seen from there (`visibleSchema`), so hidden schema
 * answers as absent schema does and leaves no trace in what visible schema shows.
 */
import { describeScope, type Access } from '../../auth/access.js';
import { formatCapability } from '../../auth/principal.js';
import { forbidden, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { FALSE, Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { isSystemSpace, UNITS_SPACE, type Path } from './identifiers.js';
import { GLOBAL_PROJECT_ID, readSchema, type ProjectSchema, type SpaceSet } from './schema-store.js';

/** The ACL of definitions, whose grants decide which spaces' schema a request sees. */
const SCHEMA_ACL = 'dataModelsAcl';

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

/**
 * The system spaces holding instances the service keeps (the unit nodes): every principal that reads
 * instances reads them, as it reads the system schema, so that a writer scoped to its own spaces can point
 * a time series at a unit. Nobody writes them.
 */
const SYSTEM_INSTANCE_SPACES: readonly string[] = [UNITS_SPACE];

/** An instance in `space` is read under `access`: the space is in scope, or a system space. */
export function inInstanceReadScope(access: Access | undefined, space: string): boolean {
  return isSystemSpace(space) || inSpaceScope(access, space);
}

/** The instance rows whose `column` names a space read under `access` (see `inInstanceReadScope`); undefined when every space is. */
export function instanceSpaceCondition(access: Access | undefined, column: string): Sql | undefined {
  if (access === undefined || access.all) return undefined;
  return sql`${Sql.raw(column)} IN (${[...access.spaces, ...SYSTEM_INSTANCE_SPACES]})`;
}

/** Schema in `space` is in the scope of `access`: the space is in scope, or a system space. */
export function inSchemaScope(access: Access | undefined, space: string): boolean {
  return isSystemSpace(space) || inSpaceScope(access, space);
}

/**
 * The catalog rows (`dm_spaces`, `dm_containers`, `dm_views`, `dm_data_models`, under `alias`) in the scope
 * of `access`: those of the spaces in scope, and the global layer's, which holds the system spaces' schema.
 * Undefined when every row is.
 */
export function schemaCondition(access: Access | undefined, alias = ''): Sql | undefined {
  const spaces = spaceCondition(access, `${alias}space`);
  return spaces && Sql.or([spaces, sql`${Sql.raw(`${alias}project_id`)} = ${GLOBAL_PROJECT_ID}`]).wrap();
}

/**
 * The spaces whose schema a request sees: those of any of its `dataModelsAcl` grants (a writer learns what
 * it writes) and the system spaces. Undefined when it sees every space, and outside requests.
 */
export function schemaSpaces(request: Pick<Services, 'reach'>): SpaceSet | undefined {
  const access = request.reach?.(SCHEMA_ACL);
  if (access === undefined || access.all) return undefined;
  return { key: access.spaces.join(' '), has: (space) => inSchemaScope(access, space) };
}

/** The project's schema as the request sees it (see `ProjectSchema.restrictedTo`), read from `db`. */
export async function visibleSchema(services: Pick<Services, 'reach' | 'reads'>, projectId: number, db: Pick<Queryable, 'all'> = services.reads): Promise<ProjectSchema> {
  return (await readSchema(db, projectId)).restrictedTo(schemaSpaces(services));
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
