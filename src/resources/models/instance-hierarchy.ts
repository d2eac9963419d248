/**
 * Hierarchies the service maintains: in a container declared here, users write a node's parent (a direct
 * relation), and the service keeps the node's root, its path (the nodes from the root down to the node
 * itself) and when the path last changed. The core data model's `cdf_cdm:CogniteAsset` is the one such
 * container: `assetHierarchy_parent` is written, `assetHierarchy_root`, `assetHierarchy_path` and
 * `assetHierarchy_path_last_updated_time` are the service's.
 *
 * The path follows `parent` from node to node while the nodes have data in the container. A parent that has
 * none (a node of another kind, one created on the fly as a missing direct relation target, or one deleted)
 * ends the path: it is the root. After an apply or a delete, in its transaction, `hierarchyUpdates` works
 * out the new values of every node whose path changed: the nodes written there, and the descendants of those
 * (and of the nodes deleted), found through the index on the parent. A parent that would make a cycle, or a
 * path longer than the path property's list size, is a 400 and the request changes nothing.
 *
 * This module reads; the storage layer (instance-writes-store.ts) writes what it returns, with a new version
 * and change feed position for every node whose values changed.
 */
import type { Access } from '../../auth/access.js';
import type { Dialect } from '../../storage/dialect.js';
import { Sql, sql, type SqlValue } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { fromColumn, toColumn } from './container-tables.js';
import { containerKey, fail, type ContainerId, type DirectRelationReference, type Path } from './identifiers.js';
import { listSizeLimit } from './property-types.js';
import type { ProjectSchema, StoredContainer } from './schema-store.js';
import { inSpaceScope, requireEffectWritable } from './space-access.js';
import { decodeRef, encodeRef, REF_SEPARATOR } from './store-schema.js';

/** A container whose hierarchy the service maintains, by its container property identifiers. */
export interface MaintainedHierarchy {
  container: ContainerId;
  /** Written by users: the parent node (a direct relation). */
  parent: string;
  /** Set by the service: the topmost node of the path. */
  root: string;
  /** Set by the service: the nodes from the root down to the node itself (a list of direct relations). */
  path: string;
  /** Set by the service: when the path last changed (a timestamp). */
  pathUpdated: string;
}

export const MAINTAINED_HIERARCHIES: readonly MaintainedHierarchy[] = [
  {
    container: { space: 'cdf_cdm', externalId: 'CogniteAsset' },
    parent: 'assetHierarchy_parent',
    root: 'assetHierarchy_root',
    path: 'assetHierarchy_path',
    pathUpdated: 'assetHierarchy_path_last_updated_time',
  },
];

const byContainer = new Map(MAINTAINED_HIERARCHIES.map((h) => [containerKey(h.container), h]));
const maintained = new Map(MAINTAINED_HIERARCHIES.map((h) => [containerKey(h.container), [h.root, h.path, h.pathUpdated] as const]));

/** The hierarchy maintained in the container, if any. */
export const hierarchyOf = (container: ContainerId): MaintainedHierarchy | undefined => byContainer.get(containerKey(container));

/** The properties of the container that the service sets and users cannot write (none for most containers). */
export const maintainedProperties = (container: ContainerId): readonly string[] => maintained.get(containerKey(container)) ?? [];

/**
 * A maintained root or path as a reader of some spaces only sees it (`visible` tests a space), as SQL over
 * the stored values (`column`): the path is the unbroken chain of nodes in those spaces that ends at the node
 * (the stored path less everything up to its last node in another space), the root its first node. A node
 * under a hidden one is the top of its hierarchy, as in a store of those spaces alone; reads, filters, sorts
 * and groups all see these values.
 */
export function visibleHierarchyValue(dialect: Dialect, h: MaintainedHierarchy, property: string, column: (property: string) => Sql, visible: (space: Sql) => Sql): Sql {
  const elements = dialect.jsonElementsNumbered(column(h.path));
  // The position of the last hidden node, read once per value (`lh.m`, null when every node is visible).
  const lastHidden = sql`(SELECT max(hx.i) AS m FROM (${elements}) hx WHERE NOT ${visible(dialect.textBefore(Sql.raw('hx.value'), REF_SEPARATOR)).wrap()}) lh`;
  const value =
    property === h.root
      ? sql`(SELECT he.value FROM (${elements}) he WHERE he.i = lh.m + 1)`
      : dialect.jsonTextArray(sql`SELECT he.i, he.value FROM (${elements}) he WHERE he.i > lh.m`);
  return sql`(SELECT CASE WHEN lh.m IS NULL THEN ${column(property)} ELSE ${value} END FROM ${lastHidden})`;
}

/** New values of the maintained properties of one node's row in the hierarchy's container. */
export interface HierarchyUpdate {
  container: StoredContainer;
  id: number;
  space: string;
  values: Record<string, SqlValue>;
}

/** A node's row in the container, its references in their stored text form. */
interface Row {
  id: number;
  space: string;
  ref: string;
  parent: string | null;
  /** The stored path (texts of the references), or null. */
  path: string[] | null;
  root: string | null;
}

const CHUNK = 500;

/** The request a hierarchy is kept for: where its nodes are in it, and what its principal sees and may change. */
export interface HierarchyWriter {
  /** The request item of a node the request writes or deletes, for messages. */
  place(node: DirectRelationReference): Path;
  /** The principal's reach in instances: messages name no node outside it. */
  sees: Access | undefined;
  /** Where it may change instances: every node whose path changes must be there, or the request is a 403. */
  writes: Access | undefined;
}

/**
 * The updates that keep every hierarchy right after a write: `written` are the ids of the nodes whose data in
 * a hierarchy's container the request wrote (by container key), `deleted` the nodes it deleted.
 */
export async function hierarchyUpdates(
  db: Pick<Queryable, 'all'>,
  projectId: number,
  schema: ProjectSchema,
  written: ReadonlyMap<string, readonly number[]>,
  deleted: readonly DirectRelationReference[],
  now: number,
  writer: HierarchyWriter,
): Promise<HierarchyUpdate[]> {
  const out: HierarchyUpdate[] = [];
  for (const h of MAINTAINED_HIERARCHIES) {
    const c = schema.stored(h.container);
    const ids = written.get(containerKey(h.container)) ?? [];
    if (!c || (ids.length === 0 && deleted.length === 0)) continue;
    out.push(...(await updatesOf(db, projectId, h, c, ids, deleted.map(encodeRef), now, writer)));
  }
  return out;
}

async function updatesOf(
  db: Pick<Queryable, 'all'>,
  projectId: number,
  h: MaintainedHierarchy,
  c: StoredContainer,
  writtenIds: readonly number[],
  deletedRefs: readonly string[],
  now: number,
  writer: HierarchyWriter,
): Promise<HierarchyUpdate[]> {
  const place = (ref: string) => writer.place(decodeRef(ref));
  const def = c.definition;
  const col = (p: string) => Sql.raw(`t.${c.layout.columns[p]}`);
  const maxDepth = listSizeLimit(def.properties[h.path].type);
  const select = sql`SELECT i.id, i.space, i.external_id, ${col(h.parent)} AS parent, ${col(h.path)} AS path, ${col(h.root)} AS root
    FROM ${Sql.raw(c.layout.table)} t JOIN dm_instances i ON i.project_id = t.project_id AND i.id = t.instance_id WHERE t.project_id = ${projectId} AND i.kind = 0 AND `;
  const toRow = (r: Record<string, unknown>): Row => ({
    id: Number(r.id),
    space: r.space as string,
    ref: encodeRef({ space: r.space as string, externalId: r.external_id as string }),
    parent: (r.parent as string | null) ?? null,
    path: (fromColumn(r.path, def.properties[h.path].type) as DirectRelationReference[] | null)?.map(encodeRef) ?? null,
    root: (r.root as string | null) ?? null,
  });

  // What is known of each node: its row, or null when it has no data in the container (or does not exist).
  const info = new Map<string, Row | null>();
  const load = async (refs: readonly string[]) => {
    for (let at = 0; at < refs.length; at += CHUNK) {
      const chunk = refs.slice(at, at + CHUNK).map(decodeRef);
      for (const ref of chunk) info.set(encodeRef(ref), null);
      const rows = await db.all<Record<string, unknown>>(sql`${select}(i.space, i.external_id) IN (VALUES ${Sql.join(chunk.map((r) => sql`(${r.space}, ${r.externalId})`), ', ')})`);
      for (const r of rows.map(toRow)) info.set(r.ref, r);
    }
  };
  const seeds = new Set<string>();
  for (let at = 0; at < writtenIds.length; at += CHUNK) {
    const rows = await db.all<Record<string, unknown>>(sql`${select}t.instance_id IN (${writtenIds.slice(at, at + CHUNK)})`);
    for (const r of rows.map(toRow)) {
      info.set(r.ref, r);
      seeds.add(r.ref);
    }
  }
  for (const ref of deletedRefs) info.set(ref, null);

  // A stored path can be relied on when it ends at its node and passes through no node written or deleted
  // here: only those changed their parent, so the nodes above it are as they were.
  const moved = new Set([...seeds, ...deletedRefs]);
  const reliable = (row: Row): boolean =>
    !seeds.has(row.ref) && row.path !== null && row.path.length > 0 && row.path[row.path.length - 1] === row.ref && row.path.every((p) => p === row.ref || !moved.has(p));

  // Load the ancestors of the written nodes, a level at a time, up to nodes whose paths can be relied on.
  for (;;) {
    const needed = new Set<string>();
    for (const seed of seeds) {
      const seen = new Set<string>();
      for (let ref: string | null = seed; ref !== null && !seen.has(ref) && seen.size <= maxDepth; ) {
        seen.add(ref);
        const row = info.get(ref);
        if (row === undefined) {
          needed.add(ref);
          break;
        }
        ref = row && !reliable(row) ? row.parent : null;
      }
    }
    if (needed.size === 0) break;
    await load([...needed]);
  }

  // Each written node's path, from its parent's; `origin` keeps the node of the request each new path follows from.
  const paths = new Map<string, string[]>();
  const origin = new Map<string, string>();
  const pathOf = (ref: string, trail: string[]): string[] => {
    const known = paths.get(ref);
    if (known) return known;
    const row = info.get(ref);
    if (!row) return [ref];
    if (reliable(row)) return row.path!;
    const seed = trail[0] ?? ref;
    const at = trail.indexOf(ref);
    if (at >= 0) {
      const cycle = [...trail.slice(at), ref];
      const start = cycle.find((n) => seeds.has(n)) ?? seed;
      const shown = cycle.every((n) => inSpaceScope(writer.sees, decodeRef(n).space)) ? `: ${cycle.map(refName).join(' -> ')}` : ' (through nodes outside what this principal can see)';
      fail(place(start), `the parent of ${refName(start)} would make a cycle in the hierarchy of ${containerKey(h.container)}${shown}`);
    }
    if (trail.length >= maxDepth) tooDeep(place(seed), seed, h, maxDepth);
    const path = row.parent === null ? [ref] : [...pathOf(row.parent, [...trail, ref]), ref];
    // A path too long is the seed's: it holds its ancestors' paths.
    if (path.length > maxDepth) tooDeep(place(seed), seed, h, maxDepth);
    paths.set(ref, path);
    origin.set(ref, seed);
    return path;
  };
  for (const seed of seeds) pathOf(seed, []);

  // Nodes whose paths change are changed by the request, so they must be where its principal may write.
  const mayChange = (row: Row) => {
    const from = origin.get(row.ref)!;
    requireEffectWritable(writer.writes, row.space, place(from), `the node ${refName(from)} has descendants in the hierarchy of ${containerKey(h.container)}`, 'this request would change their root and path');
  };

  // Down from every node whose path changed (and every node deleted), the descendants' paths.
  const changed = (ref: string): boolean => {
    const row = info.get(ref);
    return !row || !samePath(row.path, paths.get(ref)!);
  };
  let frontier = [...paths.keys()].filter(changed);
  for (const ref of deletedRefs) {
    paths.set(ref, [ref]);
    origin.set(ref, ref);
    frontier.push(ref);
  }
  while (frontier.length > 0) {
    const next: string[] = [];
    for (let at = 0; at < frontier.length; at += CHUNK) {
      const rows = await db.all<Record<string, unknown>>(sql`${select}${col(h.parent)} IN (${frontier.slice(at, at + CHUNK)})`);
      for (const row of rows.map(toRow)) {
        if (paths.has(row.ref)) continue;
        info.set(row.ref, row);
        origin.set(row.ref, origin.get(row.parent!)!);
        const path = [...paths.get(row.parent!)!, row.ref];
        paths.set(row.ref, path);
        if (!changed(row.ref)) continue;
        mayChange(row);
        if (path.length > maxDepth) tooDeep(place(origin.get(row.ref)!), row.ref, h, maxDepth);
        next.push(row.ref);
      }
    }
    frontier = next;
  }

  const updates: HierarchyUpdate[] = [];
  for (const [ref, path] of paths) {
    const row = info.get(ref);
    if (!row || (samePath(row.path, path) && row.root === path[0])) continue;
    mayChange(row);
    const refs = path.map(decodeRef);
    updates.push({
      container: c,
      id: row.id,
      space: row.space,
      values: {
        [h.root]: toColumn(refs[0], def.properties[h.root].type),
        [h.path]: toColumn(refs, def.properties[h.path].type),
        [h.pathUpdated]: toColumn(now, def.properties[h.pathUpdated].type),
      },
    });
  }
  return updates;
}

const samePath = (a: readonly string[] | null, b: readonly string[]): boolean => a !== null && a.length === b.length && a.every((x, i) => x === b[i]);

const refName = (ref: string) => {
  const n = decodeRef(ref);
  return `${n.space}:${n.externalId}`;
};

function tooDeep(path: Path, ref: string, h: MaintainedHierarchy, max: number): never {
  fail(path, `the path of ${refName(ref)} in the hierarchy of ${containerKey(h.container)} would hold more than ${max} nodes, the most ${h.path} takes`);
}
