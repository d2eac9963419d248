/**
 * Filters that name assets, shared by every resource that points at assets (an event's `assetIds`, a time
 * series' `assetId`, an asset's own `id`): `assetExternalIds` resolved to ids, and `assetSubtreeIds` expanded
 * to the named assets and all their descendants.
 *
 * The asset hierarchy is stored as a materialized path: each asset row carries `path`, the ids from its root
 * down to itself (`/1/5/9/`). A subtree is then one range of an index on (project_id, path), whatever its
 * depth, and the encoding lives here because both the assets resource (writing) and every filter (reading)
 * depend on it.
 */
import { badRequest, formatPath } from '../http/errors.js';
import { all, get, type Db } from '../storage/db.js';
import { Sql, sql } from '../storage/sql.js';
import { and, propertyTarget } from './basic.js';
import { isScalar, type ResourceCatalog } from './catalog.js';
import { prefixUpperBound, type FilterNode, type LeafNode } from './filter.js';
import type { RefInput } from './refs.js';
import { resolveReferences } from './references.js';

export const ASSETS_TABLE = 'assets';

/** Most assets the subtrees of one filter may hold together (reference: 100,000). */
export const MAX_SUBTREE_ASSETS = 100_000;

type Path = Array<string | number>;

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
 * The assets named by `refs` and all their descendants, as a subquery of their ids (one index range per
 * subtree). Unknown assets are a 400 with `missing`; subtrees holding more than `limit` assets together are
 * refused.
 */
export function subtreeAssetIds(db: Db, projectId: number, refs: readonly RefInput[], path: Path, limit = MAX_SUBTREE_ASSETS): Sql {
  const rootIds = resolveReferences(db, ASSETS_TABLE, projectId, refs, path);
  const paths = all<{ path: string }>(db, sql`SELECT path FROM assets WHERE project_id = ${projectId} AND id IN (${rootIds})`).map(
    (r) => r.path,
  );
  // A path inside another one adds nothing; dropping it keeps the subtrees disjoint and the count exact.
  const sorted = [...new Set(paths)].sort();
  const tops = sorted.filter((p, i) => !sorted.slice(0, i).some((q) => p.startsWith(q)));
  const ranges = Sql.or(
    tops.map((p) => {
      const { from, to } = subtreeBounds(p);
      return sql`(path >= ${from} AND path < ${to})`;
    }),
  );
  const where = sql`project_id = ${projectId} AND ${ranges.wrap()}`;
  const { n } = get<{ n: number }>(db, sql`SELECT count(*) AS n FROM (SELECT 1 FROM assets WHERE ${where} LIMIT ${limit + 1})`)!;
  if (n > limit) throw badRequest(`${formatPath(path)}: the given subtrees hold more than ${limit} assets; at most ${limit} are allowed`);
  return sql`SELECT id FROM assets WHERE ${where}`;
}

/** Asset external ids as ids; unknown ones are a 400 with `missing`. */
export function assetIdsOfExternalIds(db: Db, projectId: number, externalIds: readonly string[], path: Path): number[] {
  return resolveReferences(
    db,
    ASSETS_TABLE,
    projectId,
    externalIds.map((externalId) => ({ externalId })),
    path,
  );
}

/** "`property` refers to one of these assets": `containsAny` on an array of asset ids, `in` on a single one. */
export function refersToAssetsNode(catalog: ResourceCatalog, property: string, assetIds: readonly number[]): LeafNode {
  const target = propertyTarget(catalog, property);
  const values = [...assetIds];
  return isScalar(catalog.properties[property]) ? { op: 'in', target, values } : { op: 'containsAny', target, values };
}

/** "`property` refers to an asset in these subtrees". */
function inSubtreesNode(catalog: ResourceCatalog, property: string, ids: Sql): LeafNode {
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
 * The filter nodes for `assetExternalIds` and `assetSubtreeIds` on `property` of `catalog`, each resolved
 * in the project (`path` names the filter object in messages).
 */
export function assetScopeNode(
  db: Db,
  projectId: number,
  catalog: ResourceCatalog,
  property: string,
  f: AssetScopeFilter,
  path: Path = ['filter'],
): FilterNode | undefined {
  return and([
    f.assetExternalIds &&
      refersToAssetsNode(catalog, property, assetIdsOfExternalIds(db, projectId, f.assetExternalIds, [...path, 'assetExternalIds'])),
    f.assetSubtreeIds && inSubtreesNode(catalog, property, subtreeAssetIds(db, projectId, f.assetSubtreeIds, [...path, 'assetSubtreeIds'])),
    f.rootAssetIds &&
      inSubtreesNode(
        catalog,
        property,
        sql`SELECT id FROM assets WHERE project_id = ${projectId} AND root_id IN (${resolveReferences(
          db,
          ASSETS_TABLE,
          projectId,
          f.rootAssetIds.map((id) => ({ id })),
          [...path, 'rootAssetIds'],
        )})`,
      ),
  ]);
}
