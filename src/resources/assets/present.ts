/**
 * Assets as the API returns them. Stored rows hold what the asset is; a response adds what depends on other
 * assets at read time: the parent's current external id, and on request the `aggregates` (child count,
 * depth, path from the root).
 */
import { pathIds } from '../../query/assets-scope.js';
import { all, type Db } from '../../storage/db.js';
import type { Item } from '../../storage/items.js';
import { sql } from '../../storage/sql.js';
import type { AggregatedProperty } from './schema.js';

interface Aggregates {
  childCount?: number;
  depth?: number;
  path?: Array<{ id: number }>;
}

function parentExternalIds(db: Db, projectId: number, items: readonly Item[]): Map<number, string> {
  const parents = [...new Set(items.map((i) => i.parentId).filter((p): p is number => typeof p === 'number'))];
  if (parents.length === 0) return new Map();
  const rows = all<{ id: number; externalId: string }>(
    db,
    sql`SELECT id, external_id AS externalId FROM assets WHERE project_id = ${projectId} AND id IN (${parents}) AND external_id IS NOT NULL`,
  );
  return new Map(rows.map((r) => [r.id, r.externalId]));
}

function aggregates(db: Db, projectId: number, ids: readonly number[], wanted: ReadonlySet<AggregatedProperty>): Map<number, Aggregates> {
  const out = new Map<number, Aggregates>(ids.map((id) => [id, {}]));
  if (ids.length === 0) return out;
  if (wanted.has('childCount')) {
    const counts = all<{ id: number; n: number }>(
      db,
      sql`SELECT parent_id AS id, count(*) AS n FROM assets WHERE project_id = ${projectId} AND parent_id IN (${ids}) GROUP BY parent_id`,
    );
    const byId = new Map(counts.map((c) => [c.id, c.n]));
    for (const id of ids) out.get(id)!.childCount = byId.get(id) ?? 0;
  }
  if (wanted.has('depth') || wanted.has('path')) {
    const rows = all<{ id: number; depth: number; path: string }>(
      db,
      sql`SELECT id, depth, path FROM assets WHERE project_id = ${projectId} AND id IN (${ids})`,
    );
    for (const r of rows) {
      const a = out.get(r.id)!;
      if (wanted.has('depth')) a.depth = r.depth;
      if (wanted.has('path')) a.path = pathIds(r.path).map((id) => ({ id }));
    }
  }
  return out;
}

/** Response form of stored assets: labels as `{externalId}` objects, `parentExternalId`, and `aggregates`. */
export function presentAssets(db: Db, projectId: number, items: readonly Item[], aggregated: readonly AggregatedProperty[] = []): Item[] {
  const parents = parentExternalIds(db, projectId, items);
  const wanted = new Set(aggregated);
  const extra = wanted.size ? aggregates(db, projectId, items.map((i) => i.id), wanted) : undefined;
  return items.map((item) => {
    const { createdTime, lastUpdatedTime, ...fields } = item;
    const out: Record<string, unknown> = { ...fields };
    if (Array.isArray(item.labels)) out.labels = (item.labels as string[]).map((externalId) => ({ externalId }));
    const parentExternalId = typeof item.parentId === 'number' ? parents.get(item.parentId) : undefined;
    if (parentExternalId !== undefined) out.parentExternalId = parentExternalId;
    if (extra) out.aggregates = extra.get(item.id);
    return { ...out, createdTime, lastUpdatedTime } as Item;
  });
}
