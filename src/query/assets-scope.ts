/**
 * Filters that name assets, shared by every resource that points at assets (an event's `assetIds`, a time
 * series' `assetId`, an asset's own `id`): `assetExternalIds` resolved to ids, `assetSubtreeIds` expanded
 * to the named assets and all their descendants, `rootAssetIds` to whole hierarchies. All of them work on
 * the hierarchy as the request sees it (query/visibility.ts): a hidden asset is unknown, and the assets
 * below it are cut off from the ones above.
 *
 * The asset hierarchy is stored as a materialized path: each asset row carries `path`, the ids from its root
 * down to itself (`/1/5/9/`). A subtree is then one range of an index on (project_id, path), whatever its
 * depth, and the encoding lives here because both the assets resource (writing) and every filter (reading)
 * depend on it.
 */
import { badRequest, formatPath } from '../http/errors.js';
import type { Queryable } from '../storage/store.js';
import { Sql, sql } from '../storage/sql.js';
import { and, propertyTarget } from './basic.js';
import { isScalar, type ResourceCatalog } from './catalog.js';
import { prefixUpperBound, type FilterNode, type LeafNode } from './filter.js';
import { lookupRefs, type RefInput } from './refs.js';
import { resolveReferences } from './references.js';
import type { Visible } from './visibility.js';

/** Most assets the subtrees of one filter may hold together (reference: 100,000). */
export const MAX_SUBTREE_ASSETS = 100_000;

type Path = Array<string | number>;

/** The index on (project_id, parent_id), which walks down a hierarchy one level at a time. */
export const PARENT_INDEX = 'assets_parent';

/** What a root's path extends, as a child's path extends its parent's. */
export const ROOT_PARENT_PATH = '/';

/** The path of an asset whose parent has `parentPath`. */
export function childPath(parentPath: string, id: number): string {
  return `${parentPath}${id}/`;
}

/** Ids on a path, from the root down to the asset itself. */
export function pathIds(path: string): number[] {
  return path.split('/').filter((s) => s !== '').map(Number);
}

/** The half-open range [from, to) of paths in the subtree at `path` (the asset itself included). */
export function subtreeBounds(path: string): { from: string; to: string } {
  // Paths end in "/", so a prefix never matches a sibling whose id merely starts with the same digits.
  return { from: path, to: prefixUpperBound(path)! };
}

/**
 * The ids of the assets in the given subtrees, as a subquery: each root with all its descendants. For a
 * request that sees every asset, one index range of paths per subtree; otherwise the subtree as the request
 * sees it, walked down from the root through visible children only, so an asset below a hidden one is not in
 * it (it reads as the root of a hierarchy of its own; see present.ts). `limit` bounds what is walked.
 */
async function subtreesSql(assets: Visible, projectId: number, rootIds: readonly number[], db: Queryable, limit?: number): Promise<Sql> {
  const capped = limit === undefined ? Sql.raw('') : sql` LIMIT ${limit}`;
  if (assets.where) {
    // Each step goes from the queue into the parent index. Without both hints SQLite's planner may scan the
    // project's assets once per step, or walk the data set index the visibility test offers: seconds per
    // filter on a hierarchy of a few thousand assets.
    return sql`WITH RECURSIVE tree(id) AS (SELECT id FROM assets WHERE project_id = ${projectId} AND id IN (${rootIds})
      UNION SELECT assets.id FROM tree CROSS JOIN assets${Sql.raw(db.dialect.indexedBy(PARENT_INDEX))}
      WHERE assets.project_id = ${projectId} AND assets.parent_id = tree.id AND ${assets.where})
      SELECT id FROM tree${capped}`;
  }
  const paths = (await db.all<{ path: string }>(sql`SELECT path FROM assets WHERE project_id = ${projectId} AND id IN (${rootIds})`)).map((r) => r.path);
  // A path inside another one adds nothing; dropping it keeps the subtrees disjoint and the count exact.
  const sorted = [...new Set(paths)].sort();
  const tops = sorted.filter((p, i) => !sorted.slice(0, i).some((q) => p.startsWith(q)));
  const ranges = Sql.or(
    tops.map((p) => {
      const { from, to } = subtreeBounds(p);
      return sql`(path >= ${from} AND path < ${to})`;
    }),
  );
  return sql`SELECT id FROM assets WHERE project_id = ${projectId} AND ${ranges.wrap()}${capped}`;
}

/**
 * The assets named by `refs` and all their descendants, as a subquery of their ids. Assets the request does
 * not see are a 400 with `missing`, as unknown ones; subtrees holding more than `limit` assets together are
 * refused.
 */
export async function subtreeAssetIds(db: Queryable, assets: Visible, projectId: number, refs: readonly RefInput[], path: Path, limit = MAX_SUBTREE_ASSETS): Promise<Sql> {
  const rootIds = await resolveReferences(db, assets, projectId, refs, path);
  const { n } = (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM (${await subtreesSql(assets, projectId, rootIds, db, limit + 1)}) counted`))!;
  if (n > limit) throw badRequest(`${formatPath(path)}: the given subtrees hold more than ${limit} assets; at most ${limit} are allowed`);
  return subtreesSql(assets, projectId, rootIds, db);
}

/**
 * The assets in the hierarchies of the given roots, as a subquery of their ids. An asset that is not a root
 * (as the request sees it: one whose parent it cannot see is a root) has no hierarchy.
 */
export async function hierarchiesOf(db: Queryable, assets: Visible, projectId: number, rootIds: readonly number[]): Promise<Sql> {
  if (!assets.where) return sql`SELECT id FROM assets WHERE project_id = ${projectId} AND root_id IN (${rootIds})`;
  const roots = (
    await db.all<{ id: number }>(sql`SELECT id FROM assets WHERE project_id = ${projectId} AND id IN (${rootIds})
        AND (parent_id IS NULL OR parent_id NOT IN (SELECT id FROM assets WHERE project_id = ${projectId} AND ${assets.where}))`)
  ).map((r) => r.id);
  return subtreesSql(assets, projectId, roots, db);
}

/**
 * Asset external ids in a filter as the ids of those assets the request sees. One that names no such asset
 * names nothing, as in the reference service's filters, which match nothing for it rather than refuse it (its
 * official Python SDK lists events by `assetExternalIds` no project holds and expects none).
 */
export async function assetIdsOfExternalIds(db: Queryable, assets: Visible, projectId: number, externalIds: readonly string[]): Promise<number[]> {
  const { byExternalId } = await lookupRefs(db, assets.table, projectId, externalIds.map((externalId) => ({ externalId })), assets.where);
  return [...new Set(byExternalId.values())];
}

/**
 * An asset's parent and root as a request that does not see every asset sees them (`ResourceCatalog.
 * visibleValues` of the assets): the parent when it is visible, and the top of the unbroken chain of visible
 * ancestors. `visible(alias)` is the condition that the asset under `alias` is visible; `a` is the row.
 */
export function visibleHierarchyValues(visible: (alias: string) => Sql, projectId: number): Record<'parentId' | 'rootId', Sql> {
  // Most hierarchies hold no hidden asset at all; their stored root is the visible one and needs no walk.
  const mixed = sql`SELECT h.root_id FROM assets h WHERE h.project_id = ${projectId} AND NOT coalesce(${visible('h')}, FALSE)`;
  // Up through visible parents; the top is the one whose parent is none or hidden.
  const walk = sql`(WITH RECURSIVE up(id, parent) AS (SELECT a.id, a.parent_id
      UNION ALL SELECT p.id, p.parent_id FROM up CROSS JOIN assets p WHERE p.id = up.parent AND ${visible('p')})
    SELECT id FROM up WHERE parent IS NULL OR NOT EXISTS (SELECT 1 FROM assets q WHERE q.id = up.parent AND ${visible('q')}))`;
  return {
    parentId: sql`(SELECT p.id FROM assets p WHERE p.id = a.parent_id AND ${visible('p')})`,
    rootId: sql`(CASE WHEN a.root_id NOT IN (${mixed}) THEN a.root_id ELSE ${walk} END)`,
  };
}

const CHUNK = 500;

/**
 * Each asset's path as the request sees it: the ids from the top of its unbroken chain of visible ancestors
 * down to the asset itself. The first is its root, the one before the asset its parent; an asset whose parent
 * is hidden reads as a root. Assets not found are left out.
 */
export async function visiblePaths(db: Queryable, assets: Visible, projectId: number, ids: readonly number[]): Promise<Map<number, number[]>> {
  const paths = new Map<number, number[]>();
  const wanted = [...new Set(ids)];
  for (let i = 0; i < wanted.length; i += CHUNK) {
    const rows = await db.all<{ id: number; path: string }>(sql`SELECT id, path FROM assets WHERE project_id = ${projectId} AND id IN (${wanted.slice(i, i + CHUNK)})`);
    for (const r of rows) paths.set(r.id, pathIds(r.path));
  }
  if (!assets.where) return paths;
  const ancestors = [...new Set([...paths.values()].flatMap((p) => p.slice(0, -1)))];
  const seen = new Set<number>();
  for (let i = 0; i < ancestors.length; i += CHUNK) {
    const part = ancestors.slice(i, i + CHUNK);
    for (const r of await db.all<{ id: number }>(sql`SELECT id FROM assets WHERE project_id = ${projectId} AND id IN (${part}) AND ${assets.where}`)) seen.add(r.id);
  }
  for (const [id, path] of paths) {
    let top = path.length - 1;
    while (top > 0 && seen.has(path[top - 1])) top--;
    paths.set(id, path.slice(top));
  }
  return paths;
}

/** A filter no item matches (OR of nothing). */
const NO_ITEM: FilterNode = { op: 'or', args: [] };

/**
 * "`property` refers to one of these assets": `containsAny` on an array of asset ids, `in` on a single one;
 * no item refers to none.
 */
export function refersToAssetsNode(catalog: ResourceCatalog, property: string, assetIds: readonly number[]): FilterNode {
  if (assetIds.length === 0) return NO_ITEM;
  const target = propertyTarget(catalog, property);
  const values = [...assetIds];
  return isScalar(catalog.properties[property]) ? { op: 'in', target, values } : { op: 'containsAny', target, values };
}

/** "`property` refers to an asset in this set". */
export function inAssetSetNode(catalog: ResourceCatalog, property: string, ids: Sql): LeafNode {
  return { op: 'inSet', target: propertyTarget(catalog, property), ids };
}

/** The asset filters of a basic `filter` object, as they apply to any resource. */
export interface AssetScopeFilter {
  assetExternalIds?: string[];
  assetSubtreeIds?: RefInput[];
  /** Assets in the hierarchies under these roots. */
  rootAssetIds?: number[];
}

/**
 * The filter nodes for `assetExternalIds`, `assetSubtreeIds` and `rootAssetIds` on `property` of `catalog`,
 * each resolved among the assets the request sees (`assets`; `path` names the filter object in messages).
 */
export async function assetScopeNode(
  db: Queryable,
  assets: Visible,
  projectId: number,
  catalog: ResourceCatalog,
  property: string,
  f: AssetScopeFilter,
  path: Path = ['filter'],
): Promise<FilterNode | undefined> {
  // Resolved one after the other, so an unknown asset is reported for the first filter that names one.
  const byExternalId = f.assetExternalIds && (await assetIdsOfExternalIds(db, assets, projectId, f.assetExternalIds));
  const subtrees = f.assetSubtreeIds && (await subtreeAssetIds(db, assets, projectId, f.assetSubtreeIds, [...path, 'assetSubtreeIds']));
  const roots = f.rootAssetIds && (await resolveReferences(db, assets, projectId, f.rootAssetIds.map((id) => ({ id })), [...path, 'rootAssetIds']));
  return and([
    byExternalId && refersToAssetsNode(catalog, property, byExternalId),
    subtrees && inAssetSetNode(catalog, property, subtrees),
    roots && inAssetSetNode(catalog, property, await hierarchiesOf(db, assets, projectId, roots)),
  ]);
}
