/**
 * Assets as the API returns them. Stored rows hold what the asset is; a response adds what depends on other
 * assets at read time: the parent's current external id, and on request the `aggregates` (child count,
 * depth, path from the root).
 *
 * All of it is what the request sees (`assets`): an asset whose parent it cannot see reads as a root (no
 * parentId, its own rootId, depth 0), its descendants' path starts there, and only visible children count.
 */
import { PARENT_INDEX, visiblePaths } from '../../query/assets-scope.js';
import type { Visible } from '../../query/visibility.js';
import type { Queryable } from '../../storage/store.js';
import type { Item } from '../../storage/items.js';
import { Sql, sql } from '../../storage/sql.js';
import type { AggregatedProperty } from './schema.js';

interface Aggregates {
  childCount?: number;
  depth?: number;
  path?: Array<{ id: number }>;
}

async function externalIdsOf(db: Queryable, projectId: number, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.all<{ id: number; externalId: string }>(sql`SELECT id, external_id AS "externalId" FROM assets WHERE project_id = ${projectId} AND id IN (${[...new Set(ids)]}) AND external_id IS NOT NULL`,
  );
  return new Map(rows.map((r) => [r.id, r.externalId]));
}

async function childCounts(db: Queryable, assets: Visible, projectId: number, ids: readonly number[]): Promise<Map<number, number>> {
  const seen = assets.where ? sql` AND ${assets.where}` : sql``;
  const counts = await db.all<{ id: number; n: number }>(// The visibility test must not lead SQLite to count through a data set's assets instead of the parents' children.
    sql`SELECT parent_id AS id, count(*) AS n FROM assets${Sql.raw(db.dialect.indexedBy(PARENT_INDEX))} WHERE project_id = ${projectId} AND parent_id IN (${ids})${seen} GROUP BY parent_id`,
  );
  return new Map(counts.map((c) => [c.id, c.n]));
}

/** Response form of stored assets: labels as `{externalId}` objects, hierarchy as seen, `parentExternalId`, and `aggregates`. */
export async function presentAssets(db: Queryable, assets: Visible, projectId: number, items: readonly Item[], aggregated: readonly AggregatedProperty[] = []): Promise<Item[]> {
  const wanted = new Set(aggregated);
  const ids = items.map((i) => i.id);
  // Stored parents and roots stand as they are when every asset is visible; paths are read only when asked for.
  const paths = assets.where || wanted.has('path') || wanted.has('depth') ? await visiblePaths(db, assets, projectId, ids) : undefined;
  const parentOf = (item: Item): number | undefined => {
    if (!paths) return typeof item.parentId === 'number' ? item.parentId : undefined;
    const path = paths.get(item.id)!;
    return path.length > 1 ? path[path.length - 2] : undefined;
  };
  const parents = await externalIdsOf(db, projectId, items.map(parentOf).filter((p): p is number => p !== undefined));
  const counts = wanted.has('childCount') && ids.length ? await childCounts(db, assets, projectId, ids) : undefined;
  return items.map((item) => {
    const { createdTime, lastUpdatedTime, ...fields } = item;
    const out: Record<string, unknown> = { ...fields };
    const parentId = parentOf(item);
    if (paths) {
      const path = paths.get(item.id)!;
      if (parentId === undefined) delete out.parentId;
      else out.parentId = parentId;
      out.rootId = path[0];
    }
    if (Array.isArray(item.labels)) out.labels = (item.labels as string[]).map((externalId) => ({ externalId }));
    const parentExternalId = parentId === undefined ? undefined : parents.get(parentId);
    if (parentExternalId !== undefined) out.parentExternalId = parentExternalId;
    if (wanted.size) {
      const a: Aggregates = {};
      if (counts) a.childCount = counts.get(item.id) ?? 0;
      if (wanted.has('depth')) a.depth = paths!.get(item.id)!.length - 1;
      if (wanted.has('path')) a.path = paths!.get(item.id)!.map((id) => ({ id }));
      out.aggregates = a;
    }
    return { ...out, createdTime, lastUpdatedTime } as Item;
  });
}
