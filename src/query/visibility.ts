/**
 * What a request may see of the resources it reads and names. A principal sees an item when one of its
 * grants on the item's ACL covers it, whatever the grant's action (its reach, see auth/access.ts); it sees
 * a data set also when the request's own scope names it (scope `all` names every data set).
 *
 * Items a request does not see behave as if they did not exist: references to them, in filters and in
 * writes, resolve like unknown ones (400 `missing`), and what an item it sees shows of them (an asset's
 * parent, root and path) is read as if they were absent (`ResourceCatalog.visibleValues`).
 */
import { dataSetsOf, scopeCondition, unionAccess, type Access } from '../auth/access.js';
import type { Services } from '../http/services.js';
import type { Sql } from '../storage/sql.js';
import type { ResourceCatalog } from './catalog.js';

/** The part of a request's services that says what it may reach and see. */
export type RequestScope = Pick<Services, 'access' | 'reach'>;

/** The items of `catalog` the request sees; undefined when it sees them all (and outside a request). */
export function visibleAccess(request: RequestScope, catalog: ResourceCatalog): Access | undefined {
  const { access, reach } = request;
  if (!reach) return undefined;
  const granted = reach(catalog.acl);
  const visible = catalog.dataSetColumn === 'id' && access ? unionAccess(granted, dataSetsOf(access)) : granted;
  // Scope `all` hides nothing, unless the resource's items can be in security categories the principal is not in.
  const hides = !visible.all || (visible.memberOf !== undefined && catalog.categoryCondition !== undefined);
  return hides ? visible : undefined;
}

/** The items of one resource a request may name. */
export interface Visible {
  table: string;
  noun: string;
  /** The condition on a row of `table` (named by the table's name) that the request sees it; absent: every row. */
  where?: Sql;
}

export function visibleIn(request: RequestScope, catalog: ResourceCatalog): Visible {
  const where = scopeCondition(visibleAccess(request, catalog), catalog, catalog.table);
  return { table: catalog.table, noun: catalog.noun, ...(where ? { where } : {}) };
}

/** The expressions that replace properties depending on hidden items (see `ResourceCatalog.visibleValues`). */
export function visibleValues(request: RequestScope, catalog: ResourceCatalog, projectId: number): Readonly<Record<string, Sql>> | undefined {
  if (!catalog.visibleValues) return undefined;
  const visible = visibleAccess(request, catalog);
  return visible && catalog.visibleValues((alias) => scopeCondition(visible, catalog, alias)!, projectId);
}
