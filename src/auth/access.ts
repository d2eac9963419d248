/**
 * Scoped access: what one request may read and change, derived from the grants that satisfied its route's
 * capability. The query layer turns it into a SQL condition (lists, search, aggregates, by-id reads,
 * cursors and partitions all share it) and the write paths check each item they create, change or delete.
 * Resources with their own SQL or write paths use `scopeCondition` and `requireWritable` from here.
 * Writes into a write-protected data set also need `datasetsAcl:OWNER` on it (`requireDataSetOwner`).
 *
 * A principal's reach (`reachOf`) is wider: what it can learn of a resource through any of its grants on
 * that resource. Items outside the reach are the ones that must behave as if they did not exist, also when
 * another resource's request names them (query/visibility.ts).
 */
import { forbidden, formatPath } from '../http/errors.js';
import type { ResourceCatalog } from '../query/catalog.js';
import { FALSE, Sql, sql } from '../storage/sql.js';
import { aclGrants, formatCapability, grantsFor, type Capability, type Grant, type Principal } from './principal.js';

export interface FullAccess {
  readonly all: true;
  /** The security categories the principal is a member of; absent: all of them (see `categoryCondition`). */
  readonly memberOf?: readonly number[];
}

export interface ScopedAccess {
  readonly all: false;
  /** The capability the scope belongs to (named in refusals). */
  readonly capability: Capability;
  /** Items in these data sets (by the catalog's `dataSetColumn`). */
  readonly dataSetIds: readonly number[];
  /** Items with these ids (`idscope`). */
  readonly itemIds: readonly number[];
  /** The grant is limited to the principal's own groups (`currentuserscope`). */
  readonly ownGroups: boolean;
  /** Data modeling spaces (`spaceIdScope`): schema and instances in these spaces. */
  readonly spaces: readonly string[];
  /** As in FullAccess. */
  readonly memberOf?: readonly number[];
}

/** Absent (outside a request: seeding, benchmarks, internal jobs) means everything. */
export type Access = FullAccess | ScopedAccess;

export const FULL_ACCESS: FullAccess = Object.freeze({ all: true });

const MEMBER_OF: Capability = { acl: 'securityCategoriesAcl', action: 'MEMBEROF' };

/**
 * The security categories a principal is a member of in a project (`securityCategoriesAcl:MEMBEROF`, by
 * `idscope`); undefined when it is a member of every one.
 */
export function securityCategoriesOf(principal: Principal, project: string): readonly number[] | undefined {
  const grants = grantsFor(principal, MEMBER_OF, project);
  if (grants.some((g) => 'all' in g.scope)) return undefined;
  return [...new Set(grants.flatMap((g) => ('idscope' in g.scope ? g.scope.idscope.ids : [])))].sort((a, b) => a - b);
}

/**
 * The union of the scopes of the grants that satisfy one capability, for a principal that is a member of
 * the security categories `memberOf` (all when undefined).
 */
export function accessFor(capability: Capability, grants: readonly Grant[], memberOf?: readonly number[]): Access {
  const dataSetIds = new Set<number>();
  const itemIds = new Set<number>();
  const spaces = new Set<string>();
  let ownGroups = false;
  for (const g of grants) {
    const s = g.scope;
    if ('all' in s) return memberOf === undefined ? FULL_ACCESS : { all: true, memberOf };
    if ('datasetScope' in s) for (const id of s.datasetScope.ids) dataSetIds.add(id);
    else if ('idscope' in s) for (const id of s.idscope.ids) itemIds.add(id);
    // Pipeline ids: the runs and configurations under a pipeline are reached through it (catalog.parentScope).
    else if ('extractionpipelinescope' in s) for (const id of s.extractionpipelinescope.ids) itemIds.add(id);
    else if ('spaceIdScope' in s) for (const space of s.spaceIdScope.spaceIds) spaces.add(space);
    else ownGroups = true;
  }
  return {
    all: false,
    capability,
    dataSetIds: [...dataSetIds].sort((a, b) => a - b),
    itemIds: [...itemIds].sort((a, b) => a - b),
    ownGroups,
    spaces: [...spaces].sort(),
    ...(memberOf !== undefined ? { memberOf } : {}),
  };
}

/**
 * The rows of `catalog` that `access` reaches, as a condition on its main table (or on its rows under
 * another `alias`); undefined when it reaches all of them. A resource without a data set column can only
 * be reached by item ids. Items under a parent are reached through it (`ResourceCatalog.parentScope`).
 */
export function scopeCondition(access: Access | undefined, catalog: ResourceCatalog, alias = catalog.alias): Sql | undefined {
  if (access === undefined) return undefined;
  const scope = access.all ? undefined : dataScopeCondition(access, catalog, alias);
  // Items in security categories the principal is not a member of are hidden, whatever its scope.
  const categories = access.memberOf !== undefined ? catalog.categoryCondition?.(alias, access.memberOf) : undefined;
  return scope && categories ? Sql.and([scope, categories]) : (scope ?? categories);
}

function dataScopeCondition(access: ScopedAccess, catalog: ResourceCatalog, alias: string): Sql {
  const via = catalog.parentScope;
  if (via) {
    const parent = `${alias}_parent`;
    const inParent = dataScopeCondition(access, via.catalog, parent);
    return sql`${Sql.raw(`${alias}.${via.column}`)} IN (SELECT ${Sql.raw(`${parent}.id`)} FROM ${Sql.raw(`${via.catalog.table} ${parent}`)} WHERE ${inParent})`;
  }
  const parts: Sql[] = [];
  if (catalog.dataSetColumn !== undefined && access.dataSetIds.length) {
    parts.push(sql`${Sql.raw(`${alias}.${catalog.dataSetColumn}`)} IN (${access.dataSetIds})`);
  }
  if (access.itemIds.length) parts.push(sql`${Sql.raw(`${alias}.id`)} IN (${access.itemIds})`);
  return parts.length ? Sql.or(parts).wrap() : FALSE;
}

const union = (a: readonly number[], b: readonly number[]) => [...new Set([...a, ...b])].sort((x, y) => x - y);

/** Everything either access reaches. */
export function unionAccess(a: Access, b: Access): Access {
  if (a.all) return a;
  if (b.all) return b;
  return {
    ...a,
    dataSetIds: union(a.dataSetIds, b.dataSetIds),
    itemIds: union(a.itemIds, b.itemIds),
    ownGroups: a.ownGroups || b.ownGroups,
    spaces: [...new Set([...a.spaces, ...b.spaces])].sort(),
  };
}

/**
 * The data sets an access names, as an access to data sets: all of them for scope `all`, the listed ones
 * for `datasetScope`, none for scopes by item.
 */
export function dataSetsOf(access: Access): Access {
  return access.all ? access : { ...access, itemIds: [], ownGroups: false, spaces: [] };
}

/** What a principal can learn of the items guarded by one ACL. */
export type Reach = (acl: string) => Access;

/**
 * The reach of a principal in a project: per ACL, the union of the scopes of all its grants on it, whatever
 * their actions. A write scope counts as much as a read scope: a write answers whether its target exists
 * and returns the item written.
 */
export function reachOf(principal: Principal, project: string): Reach {
  const byAcl = new Map<string, Access>();
  const memberOf = securityCategoriesOf(principal, project);
  return (acl) => {
    let access = byAcl.get(acl);
    if (!access) byAcl.set(acl, (access = accessFor({ acl, action: '*' }, aclGrants(principal, acl, project), memberOf)));
    return access;
  };
}

/** One item as scopes see it: its id (absent before it is created) and its data set (null when none). */
export interface ScopeTarget {
  id?: number;
  dataSetId: number | null;
}

export function inScope(access: Access | undefined, target: ScopeTarget): boolean {
  if (access === undefined || access.all) return true;
  if (target.dataSetId !== null && access.dataSetIds.includes(target.dataSetId)) return true;
  return target.id !== undefined && access.itemIds.includes(target.id);
}

export function describeScope(access: ScopedAccess): string {
  const parts: string[] = [];
  if (access.dataSetIds.length) parts.push(`datasetScope ${JSON.stringify(access.dataSetIds)}`);
  if (access.itemIds.length) parts.push(`idscope ${JSON.stringify(access.itemIds)}`);
  if (access.ownGroups) parts.push('currentuserscope');
  if (access.spaces.length) parts.push(`spaceIdScope ${JSON.stringify(access.spaces)}`);
  return parts.join(' and ') || 'an empty scope';
}

function describeTarget(noun: string, t: ScopeTarget): string {
  const which = t.id === undefined ? `the new ${noun}` : `${noun} ${t.id}`;
  return t.dataSetId === null ? `${which} is in no data set` : `${which} is in data set ${t.dataSetId}`;
}

/**
 * Refuses (403, before anything is written) a write that touches an item outside the scope: creating it,
 * changing or deleting it, or moving it into a data set outside the scope. `path` names the item.
 */
export function requireWritable(access: Access | undefined, noun: string, targets: ReadonlyArray<{ target: ScopeTarget; path: Array<string | number> }>): void {
  if (access === undefined || access.all) return;
  for (const { target, path } of targets) {
    if (inScope(access, target)) continue;
    throw forbidden(
      `${formatPath(path)}: ${formatCapability(access.capability)} is granted only in ${describeScope(access)}, and ${describeTarget(noun, target)}; ` +
        `this needs ${formatCapability(access.capability)} with scope all or a scope that includes it`,
    );
  }
}

/** The capability that writing into a write-protected data set needs, on that data set. */
export const DATA_SET_OWNER: Capability = { acl: 'datasetsAcl', action: 'OWNER' };

/** The data sets a principal owns in a project (its `datasetsAcl:OWNER` grants; ids of either scope kind). */
export function ownedDataSets(principal: Principal, project: string): Access {
  return accessFor(DATA_SET_OWNER, grantsFor(principal, DATA_SET_OWNER, project));
}

/**
 * Refuses (403, before anything is written) a write that touches an item in a write-protected data set the
 * principal does not own: creating it there, changing or deleting it, or moving it in or out. For a data
 * set itself (`noun` "data set", its own data set), any change while it is protected or that protects it
 * (`protects`). `writeProtected` holds the stored protected data sets among the targets'.
 */
export function requireDataSetOwner(
  owner: Access | undefined,
  writeProtected: ReadonlySet<number>,
  noun: string,
  targets: ReadonlyArray<{ target: ScopeTarget; path: Array<string | number>; protects?: boolean }>,
): void {
  if (owner === undefined || owner.all) return;
  for (const { target, path, protects } of targets) {
    const ds = target.dataSetId;
    if (ds === null || !(protects || writeProtected.has(ds))) continue;
    // A data set is an item of datasetsAcl: both scope kinds list it by its id.
    if (inScope(owner, { id: ds, dataSetId: ds })) continue;
    const where = 'scope all, or idscope or datasetScope listing it';
    throw forbidden(
      target.id === ds && noun === 'data set'
        ? `${formatPath(path)}: changing data set ${ds}, which is or becomes write-protected, needs ${formatCapability(DATA_SET_OWNER)} on it (${where})`
        : `${formatPath(path)}: ${describeTarget(noun, target)}, which is write-protected; writing there needs ${formatCapability(DATA_SET_OWNER)} on data set ${ds} (${where})`,
    );
  }
}
