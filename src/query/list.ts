/**
 * The list operation every resource shares: basic filter AND advanced filter, sort (with `_score_` and
 * nulls), partition, limit and a keyset cursor bound to the query.
 */
import { scopeCondition } from '../auth/access.js';
import { badRequest, formatPath } from '../http/errors.js';
import type { Services } from '../http/services.js';
import type { Dialect } from '../storage/dialect.js';
import { Sql, sql } from '../storage/sql.js';
import { col, type ResourceCatalog } from './catalog.js';
import { and } from './basic.js';
import { compileFilter, leaves, parseAdvancedFilter, requiredIdSets, type CompileContext, type FilterNode } from './filter.js';
import { fetchPage } from './paging.js';
import { parsePartition, partitionCondition } from './partition.js';
import { resolveSort, SCORE, sortKeys, type SortSpecInput } from './sort.js';
import { visibleValues, type RequestScope } from './visibility.js';

export const DEFAULT_LIMIT = 100;

export interface ListRequest {
  /** The basic filter, already translated to the filter AST by the resource. */
  filter?: FilterNode;
  advancedFilter?: unknown;
  sort?: Array<SortSpecInput | string>;
  limit?: number;
  cursor?: string;
  partition?: string;
  /** Everything that defines the result (the request minus cursor and limit); a cursor is bound to it. */
  fingerprint: unknown;
  /** A text column of `select` to give joined, as `ListResult.joined`, instead of rows (see PageQuery.join). */
  join?: string;
}

export interface ListResult<Row> {
  rows: Row[];
  /** With `join`: the page's values of that column, comma-separated UTF-8, in pieces to be joined by commas. */
  joined: Buffer[];
  nextCursor?: string;
}

/** The older `"field"` / `"field:asc|desc"` sort strings, as sort specifications. */
function normalizeSort(sort: Array<SortSpecInput | string>): SortSpecInput[] {
  return sort.map((s, i) => {
    if (typeof s !== 'string') return s;
    const match = /^([^:]+?)(?::(asc|desc))?$/i.exec(s);
    if (!match) throw badRequest(`${formatPath(['sort', i])}: expected "property" or "property:asc|desc", got ${JSON.stringify(s)}`);
    const [head, ...rest] = match[1].split('.');
    const property = head === 'metadata' && rest.length ? ['metadata', rest.join('.')] : [match[1]];
    return { property, ...(match[2] ? { order: match[2].toLowerCase() as 'asc' | 'desc' } : {}) };
  });
}

export interface ParsedQuery {
  ctx: CompileContext;
  /** The combined filter (basic AND advanced), or undefined for everything. */
  node?: FilterNode;
  /** The advanced filter alone: its leaves are what `_score_` counts. */
  advanced?: FilterNode;
  where: Sql;
}

/**
 * Validates and compiles the filter part of a request; shared by list, search and aggregate. `request`
 * carries the request's scope (`services.access`): items outside it are never selected, and properties
 * that depend on what the request can see are read as it sees them (`ResourceCatalog.visibleValues`). It is
 * a required argument so that no query path can forget it; its fields are absent outside a request, where
 * everything is reachable.
 */
export function parseQuery(
  catalog: ResourceCatalog,
  projectId: number,
  filter: FilterNode | undefined,
  advancedFilter: unknown,
  request: RequestScope & { db: { dialect: Dialect } },
): ParsedQuery {
  const ctx: CompileContext = { catalog, projectId, dialect: request.db.dialect, values: visibleValues(request, catalog, projectId) };
  const advanced = advancedFilter === undefined ? undefined : parseAdvancedFilter(advancedFilter, catalog);
  const node = and([filter, advanced]);
  const conditions = [sql`${Sql.raw(col(catalog, 'project_id'))} = ${projectId}`];
  const scope = scopeCondition(request.access, catalog);
  if (scope) conditions.push(scope);
  if (node) conditions.push(compileFilter(node, ctx));
  return { ctx, node, advanced, where: Sql.and(conditions) };
}

/** An id set this small is read item by item; past it, scanning an index in sort order is left to the planner. */
const SMALL_ID_SET = 5000;

/**
 * Whether a page should be picked by looking up the items of the filter's one required id set (a metadata
 * or search leaf, an asset subtree...) rather than by scanning an index in sort order while testing each
 * entry against the set. SQLite cannot tell which is cheaper: it does not know how large the set is, nor
 * where its items sit in sort order, and when they all sit at the far end (an asset subtree whose events
 * are the newest of a million) the scan reads the whole index for one page. A set of at most SMALL_ID_SET
 * items costs at most that many lookups, whatever the order, so it is looked up. A larger one is left to
 * SQLite: its scan ends early when the set's items are spread through the sort order (a 2% metadata match
 * reads ~50,000 entries for 1000 rows, faster than 20,000 lookups), though not when they are bunched at the
 * far end. With two or more sets SQLite could look up the larger one, so the choice stays its own.
 */
async function startsFromSmallSet(services: Services, node: FilterNode | undefined, ctx: CompileContext, parallel: boolean): Promise<boolean> {
  // An engine without the hint (PostgreSQL) plans from its own statistics of the tables.
  if (!ctx.dialect.notIndexed) return false;
  const sets = requiredIdSets(node, ctx);
  if (sets.length !== 1) return false;
  const [counted] = await services.reads.all<{ n: number }>(sql`SELECT count(*) AS n FROM (${sets[0]} LIMIT ${SMALL_ID_SET + 1}) small`, { parallel });
  return counted.n <= SMALL_ID_SET;
}

export async function runList<Row extends Record<string, unknown>>(
  services: Services,
  catalog: ResourceCatalog,
  projectId: number,
  select: string,
  req: ListRequest,
): Promise<ListResult<Row>> {
  const { ctx, node, advanced, where } = parseQuery(catalog, projectId, req.filter, req.advancedFilter, services);
  const explicit = req.sort?.length ? resolveSort(normalizeSort(req.sort), catalog) : undefined;
  // Without an explicit sort: relevance when the advanced filter searches, otherwise creation time ascending.
  const hasSearch = advanced !== undefined && leaves(advanced).some((l) => l.op === 'search');
  const sorts =
    explicit ??
    resolveSort([hasSearch ? { property: [SCORE] } : { property: ['createdTime'] }], catalog);
  const partition = parsePartition(req.partition);
  const partitionWhere = partitionCondition(partition, col(catalog, 'id'));
  const limit = req.limit ?? DEFAULT_LIMIT;
  const after = req.cursor === undefined ? undefined : services.cursors.decode(req.cursor, req.fingerprint);
  const page = await fetchPage<Row>(services.reads, {
    dialect: ctx.dialect,
    select: Sql.raw(select),
    from: Sql.raw(`${catalog.table} ${catalog.alias}`),
    pick: (await startsFromSmallSet(services, node, ctx, partition !== undefined)) ? Sql.raw(`${catalog.table} ${catalog.alias}${ctx.dialect.notIndexed}`) : undefined,
    where: partitionWhere ? Sql.and([where, partitionWhere]) : where,
    scope: sql`${Sql.raw(col(catalog, 'project_id'))} = ${projectId}`,
    keys: sortKeys(sorts, ctx, advanced, (column) => catalog.indexedColumns?.has(column) ?? false),
    idExpr: col(catalog, 'id'),
    limit,
    after,
    join: req.join,
    parallel: partition !== undefined,
  });
  return {
    rows: page.rows,
    joined: page.joined,
    nextCursor: page.next ? services.cursors.encode(page.next, req.fingerprint) : undefined,
  };
}
