/**
 * The asset hierarchy's rules and its stored form (`parent_id`, `root_id`, `depth`, `path`), kept right in
 * the transaction of every create, move and delete:
 * - a parent is an asset that exists, or one created in the same request (in any order there);
 * - no cycles, whether within a create request or by a move under the asset's own subtree;
 * - an asset moves only within its hierarchy: the root is kept, and roots stay roots (the reference's rule);
 * - an asset with children is deleted only together with them, or with `recursive`.
 *
 * Each rule is applied to the hierarchy as the request sees it (`assets`, see present.ts): a parent it cannot
 * see is unknown, an asset whose parent it cannot see is a root, and no message names an asset it cannot see.
 */
import type { Access } from '../../auth/access.js';
import { formatCapability } from '../../auth/principal.js';
import { ApiError, badRequest, forbidden, formatPath, type IdentifierRef } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { ROOT_PARENT_PATH, childPath, pathIds, subtreeBounds, visiblePaths } from '../../query/assets-scope.js';
import { lookupRefs } from '../../query/refs.js';
import type { Visible } from '../../query/visibility.js';
import type { Queryable } from '../../storage/store.js';
import { deleteItem } from '../../storage/items.js';
import { Sql, sql } from '../../storage/sql.js';
import { requireWritableTargets } from '../crud.js';
import type { AssetCreate, AssetUpdateItem } from './schema.js';
import { assetTable } from './model.js';

type Path = Array<string | number>;

interface Placement {
  rootId: number;
  depth: number;
  path: string;
}

interface HierarchyRow extends Placement {
  id: number;
  externalId: string | null;
  parentId: number | null;
}

async function hierarchyRows(db: Queryable, projectId: number, ids: readonly number[]): Promise<Map<number, HierarchyRow>> {
  const rows = await db.all<HierarchyRow>(sql`SELECT id, external_id AS "externalId", parent_id AS "parentId", root_id AS "rootId", depth, path
        FROM assets WHERE project_id = ${projectId} AND id IN (${[...new Set(ids)]})`,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

function describeAsset(row: { id: number; externalId: string | null }): string {
  return row.externalId === null ? `asset ${row.id}` : `asset ${row.id} (${JSON.stringify(row.externalId)})`;
}

/** A reference an item makes that names no asset, with the 400 `missing` entry it contributes. */
interface Unknown {
  path: Path;
  message: string;
  ref: IdentifierRef;
}

function refuseUnknown(unknown: readonly Unknown[]): void {
  if (unknown.length === 0) return;
  const [first] = unknown;
  const more = unknown.length > 1 ? ` (and ${unknown.length - 1} more unknown parent${unknown.length > 2 ? 's' : ''})` : '';
  throw new ApiError(400, `${formatPath(first.path)}: ${first.message}${more}`, { missing: unknown.map((u) => u.ref) });
}

/** One parent reference (`parentId` or `parentExternalId`), of a create item or of an update. */
interface ParentRef {
  path: Path;
  id?: number;
  externalId?: string;
}

/** Resolves parent references to asset ids; any that names no visible asset refuses the whole request. */
async function resolveParents(db: Queryable, assets: Visible, projectId: number, refs: ReadonlyArray<ParentRef | undefined>): Promise<Array<number | undefined>> {
  const wanted = refs.filter((r): r is ParentRef => r !== undefined);
  const { byId, byExternalId } = await lookupRefs(
    db,
    assets.table,
    projectId,
    wanted.map((r) => (r.id !== undefined ? { id: r.id } : { externalId: r.externalId! })),
    assets.where,
  );
  const unknown: Unknown[] = [];
  const resolved = refs.map((r) => {
    if (!r) return undefined;
    if (r.id !== undefined) {
      if (!byId.has(r.id)) unknown.push({ path: r.path, message: `no asset with id ${r.id}`, ref: { id: r.id } });
      return r.id;
    }
    const id = byExternalId.get(r.externalId!);
    if (id === undefined) {
      unknown.push({ path: r.path, message: `no asset with externalId ${JSON.stringify(r.externalId)}`, ref: { externalId: r.externalId! } });
    }
    return id;
  });
  refuseUnknown(unknown);
  return resolved;
}

/**
 * An item may name its parent both ways when both name the same asset: the official SDKs send every field of
 * an asset they read, and an asset reads with both its parentId and parentExternalId. `parents[i]` is the
 * parent `parentId` named; `alsoNamed[i]` the item's `parentExternalId` when it gave both. The request is
 * refused when the two disagree, or when the external id names no asset.
 */
async function refuseDisagreeingParents(
  db: Queryable,
  assets: Visible,
  projectId: number,
  parents: ReadonlyArray<number | undefined>,
  alsoNamed: ReadonlyArray<ParentRef | undefined>,
): Promise<void> {
  if (alsoNamed.every((r) => r === undefined)) return;
  const named = await resolveParents(db, assets, projectId, alsoNamed);
  named.forEach((id, i) => {
    const ref = alsoNamed[i];
    if (ref !== undefined && id !== parents[i]) {
      throw badRequest(
        `${formatPath(ref.path.slice(0, -1))}: parentId ${parents[i]} and parentExternalId ${JSON.stringify(ref.externalId)} name different assets; give one of them`,
      );
    }
  });
}

async function place(db: Queryable, id: number, parentId: number | null, at: Placement): Promise<void> {
  await db.run(sql`UPDATE assets SET parent_id = ${parentId}, root_id = ${at.rootId}, depth = ${at.depth}, path = ${at.path} WHERE id = ${id}`);
}

/**
 * Puts just-created assets (`ids[i]` made from `items[i]`, all already stored) into the hierarchy. Parents
 * named by the request are placed before their children, whatever the request order.
 */
export async function placeCreatedAssets(db: Queryable, assets: Visible, projectId: number, items: readonly AssetCreate[], ids: readonly number[]): Promise<void> {
  const parentIds = await resolveParents(
    db,
    assets,
    projectId,
    items.map((item, i): ParentRef | undefined => {
      if (item.parentId !== undefined) return { path: ['items', i, 'parentId'], id: item.parentId };
      if (item.parentExternalId !== undefined) return { path: ['items', i, 'parentExternalId'], externalId: item.parentExternalId };
      return undefined;
    }),
  );
  await refuseDisagreeingParents(
    db,
    assets,
    projectId,
    parentIds,
    items.map((item, i) =>
      item.parentId !== undefined && item.parentExternalId !== undefined ? { path: ['items', i, 'parentExternalId'], externalId: item.parentExternalId } : undefined,
    ),
  );
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const storedParents = await hierarchyRows(
    db,
    projectId,
    parentIds.filter((p): p is number => p !== undefined && !indexOf.has(p)),
  );

  const placements: Array<Placement | undefined> = [];
  const visiting = new Set<number>();
  for (let i = 0; i < items.length; i++) {
    // Climb through parents created by this request until one is placed or lies outside it, then place downwards.
    const chain: number[] = [];
    for (let j: number | undefined = i; j !== undefined && placements[j] === undefined; ) {
      if (visiting.has(j)) throw cycleError(items, chain.slice(chain.indexOf(j)));
      visiting.add(j);
      chain.push(j);
      const parent: number | undefined = parentIds[j];
      j = parent === undefined ? undefined : indexOf.get(parent);
    }
    for (const j of chain.reverse()) {
      const parent = parentIds[j];
      const id = ids[j];
      let at: Placement;
      if (parent === undefined) at = { rootId: id, depth: 0, path: childPath(ROOT_PARENT_PATH, id) };
      else {
        const above = indexOf.has(parent) ? placements[indexOf.get(parent)!]! : storedParents.get(parent)!;
        at = { rootId: above.rootId, depth: above.depth + 1, path: childPath(above.path, id) };
      }
      placements[j] = at;
      await place(db, id, parent ?? null, at);
    }
  }
}

function cycleError(items: readonly AssetCreate[], cycle: readonly number[]): ApiError {
  const name = (j: number) => (items[j].externalId === undefined ? `items[${j}]` : JSON.stringify(items[j].externalId));
  const loop = [...cycle, cycle[0]].map(name).join(' -> ');
  const field = items[cycle[0]].parentExternalId !== undefined ? 'parentExternalId' : 'parentId';
  return badRequest(`${formatPath(['items', cycle[0], field])}: the parents form a cycle (${loop}); an asset cannot be its own ancestor`);
}

/**
 * Checks the parent changes of an update request (`ids[i]` is the asset of `items[i]`) against the
 * hierarchy they produce together, and returns them as asset id -> new parent id.
 */
export async function planMoves(db: Queryable, assets: Visible, projectId: number, items: readonly AssetUpdateItem[], ids: readonly number[]): Promise<Map<number, number>> {
  const byId = (item: AssetUpdateItem, i: number): ParentRef | undefined =>
    item.update.parentId && { path: ['items', i, 'update', 'parentId'], id: item.update.parentId.set };
  const byExternalId = (item: AssetUpdateItem, i: number): ParentRef | undefined =>
    item.update.parentExternalId && { path: ['items', i, 'update', 'parentExternalId'], externalId: item.update.parentExternalId.set };
  const refs = items.map((item, i) => byId(item, i) ?? byExternalId(item, i));
  const parents = await resolveParents(db, assets, projectId, refs);
  await refuseDisagreeingParents(db, assets, projectId, parents, items.map((item, i) => (item.update.parentId ? byExternalId(item, i) : undefined)));
  const moved = items.map((_, i) => i).filter((i) => parents[i] !== undefined);
  const moves = new Map(moved.map((i) => [ids[i], parents[i]!]));
  if (moves.size === 0) return moves;
  const rows = await hierarchyRows(db, projectId, [...moves.keys(), ...moves.values()]);
  const seen = await visiblePaths(db, assets, projectId, [...moves.keys(), ...moves.values()]);

  for (const i of moved) {
    const asset = rows.get(ids[i])!;
    const parent = rows.get(parents[i]!)!;
    const where = formatPath(refs[i]!.path);
    const [assetRoot] = seen.get(asset.id)!;
    const [parentRoot] = seen.get(parent.id)!;
    if (assetRoot === asset.id) {
      throw badRequest(`${where}: ${describeAsset(asset)} is the root of its hierarchy, and a root cannot be given a parent`);
    }
    // Equal roots as seen are equal stored roots too: the root seen is an ancestor of both.
    if (parentRoot !== assetRoot) {
      throw badRequest(
        `${where}: ${describeAsset(parent)} is in the hierarchy of root ${parentRoot}, and ${describeAsset(asset)} in that of root ${assetRoot}; an asset can move only within its own hierarchy`,
      );
    }
    if (finalAncestry(parent.id, moves, rows).includes(asset.id)) {
      throw badRequest(`${where}: ${describeAsset(parent)} is ${describeAsset(asset)} itself or below it; the move would make a cycle`);
    }
  }
  return moves;
}

/**
 * The asset and its ancestors up to the root (nearest first) once the moves are made. Stored paths give
 * the ancestors until a moved asset, whose new parent's path continues the chain.
 */
function finalAncestry(start: number, moves: ReadonlyMap<number, number>, rows: ReadonlyMap<number, HierarchyRow>): number[] {
  const out: number[] = [];
  const jumped = new Set<number>();
  let chain = pathIds(rows.get(start)!.path);
  let k = chain.length - 1;
  while (k >= 0) {
    const node = chain[k];
    out.push(node);
    const parent = moves.get(node);
    if (parent === undefined) {
      k--;
      continue;
    }
    // A loop among other moves ends the walk; the move that closes it is refused on its own item.
    if (jumped.has(node)) break;
    jumped.add(node);
    chain = pathIds(rows.get(parent)!.path);
    k = chain.length - 1;
  }
  return out;
}

/**
 * Rewrites `path` and `depth` of every moved asset and its subtree; `parent_id` is already stored. Assets are
 * moved from the top of the new hierarchy down, so each one's new parent already has its final path.
 */
export async function applyMoves(db: Queryable, projectId: number, moves: ReadonlyMap<number, number>): Promise<void> {
  if (moves.size === 0) return;
  const rows = await hierarchyRows(db, projectId, [...moves.values()]);
  const depthAfter = (id: number) => finalAncestry(moves.get(id)!, moves, rows).length;
  const order = [...moves.keys()].map((id) => ({ id, depth: depthAfter(id) })).sort((a, b) => a.depth - b.depth);
  for (const { id } of order) {
    const current = (await db.get<Placement>(sql`SELECT depth, path FROM assets WHERE id = ${id}`))!;
    const parent = (await db.get<Placement>(sql`SELECT depth, path FROM assets WHERE id = ${moves.get(id)!}`))!;
    const path = childPath(parent.path, id);
    if (path === current.path) continue;
    const { from, to } = subtreeBounds(current.path);
    await db.run(sql`UPDATE assets SET path = ${path} || substr(path, ${current.path.length + 1}), depth = depth + ${parent.depth + 1 - current.depth}
          WHERE project_id = ${projectId} AND path >= ${from} AND path < ${to}`,
    );
  }
}

/** Whether each asset is one the request sees, as a column `seen` (1 or 0). */
function seenColumn(assets: Visible): Sql {
  return assets.where ? sql`(CASE WHEN ${assets.where} THEN 1 ELSE 0 END) AS seen` : Sql.raw('1 AS seen');
}

/**
 * A delete that would take or orphan assets the principal cannot see is refused without naming them: it
 * cannot succeed, and it says no more than that they exist.
 */
async function refuseHiddenDescendants(db: Queryable, projectId: number, access: Access | undefined, ancestorId: number): Promise<never> {
  const asset = (await hierarchyRows(db, projectId, [ancestorId])).get(ancestorId)!;
  const needed = access && !access.all ? `${formatCapability(access.capability)} ` : '';
  throw forbidden(`${describeAsset(asset)} has descendants outside what this principal can see; only a principal whose ${needed}scope includes them can delete it`);
}

/** Refuses to delete an asset that keeps a child not deleted with it. */
export async function refuseOrphans(db: Queryable, assets: Visible, projectId: number, ids: readonly number[], access: Access | undefined): Promise<void> {
  if (ids.length === 0) return;
  const deleting = new Set(ids);
  const children = (await db.all<{ id: number; parentId: number; seen: number }>(sql`SELECT id, parent_id AS "parentId", ${seenColumn(assets)} FROM assets WHERE project_id = ${projectId} AND parent_id IN (${ids})`,
  )).filter((c) => !deleting.has(c.id));
  if (children.length === 0) return;
  const visible = children.filter((c) => c.seen);
  if (visible.length === 0) await refuseHiddenDescendants(db, projectId, access, children[0].parentId);
  const parentId = visible[0].parentId;
  const kept = visible.filter((c) => c.parentId === parentId).map((c) => c.id);
  const parent = (await hierarchyRows(db, projectId, [parentId])).get(parentId)!;
  const shown = kept.slice(0, 5).join(', ') + (kept.length > 5 ? `, and ${kept.length - 5} more` : '');
  throw badRequest(
    `${describeAsset(parent)} has children that this request does not delete (${shown}); delete them too, or set "recursive": true to delete its whole subtree`,
  );
}

/**
 * Deletes every descendant of the given assets (the assets themselves are left to the caller). The request
 * must be allowed to delete each of them (scope, write-protected data sets), as it must the assets it names.
 */
export async function deleteDescendants(services: Services, assets: Visible, projectId: number, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const { db, access } = services;
  const named = new Set(ids);
  const descendants = new Map<number, number | null>();
  for (const { id: top, path } of (await hierarchyRows(db, projectId, ids)).values()) {
    const { from, to } = subtreeBounds(path);
    const members = await db.all<{ id: number; dataSetId: number | null; seen: number }>(sql`SELECT id, data_set_id AS "dataSetId", ${seenColumn(assets)} FROM assets WHERE project_id = ${projectId} AND path >= ${from} AND path < ${to}`,
    );
    if (members.some((m) => !m.seen)) await refuseHiddenDescendants(db, projectId, access, top);
    for (const m of members) if (!named.has(m.id)) descendants.set(m.id, m.dataSetId);
  }
  await requireWritableTargets(
    services,
    projectId,
    'asset',
    [...descendants].map(([id, dataSetId]) => ({ target: { id, dataSetId }, path: ['items'] })),
  );
  for (const id of descendants.keys()) await deleteItem(db, assetTable, projectId, id);
}
