/**
 * A naive in-memory evaluator of query result set expressions (`with` of `/models/instances/query`), for
 * property-based tests: it reads the expressions in their request form and the instances as plain objects,
 * filters through dm-evaluator.ts, and shares no code with src/resources/models.
 *
 * Semantics (the intended ones; where the server disagrees, the server has the bug):
 * - Each set, in order, yields its candidates sorted (missing values last unless `nullsFirst`) and its page,
 *   the first `limit` of them; a chained set reads its parent's page.
 * - nodes `from` nodes: those nodes; `through` a direct relation: the nodes it names (`outwards`) or the
 *   nodes naming one of them (`inwards`, the default). nodes `from` edges: the node at the `chainTo` end.
 * - set operations (`union`, `unionAll`, `intersection` of set names, less `except`): the instances of those
 *   sets' pages, each once.
 * - `offsets` start a set's page further down its candidates, as a cursor does.
 * - edges `from` nodes (or from edges, by their `chainTo` end): breadth first, level by level up to
 *   `maxDistance`; an edge leaving (`outwards`) or reaching (`inwards`) a node of the current level is taken
 *   when it matches `filter` and its far node exists and matches `nodeFilter`; with `limitEach` (one level)
 *   only the first `limitEach` of each node's edges in `sort` order; a far node not reached before and not
 *   matching `terminationFilter` joins the next level.
 */
import { dmMatches, type DmInstance, type DmWorld, type Filter } from './dm-evaluator.js';

export interface SortSpec {
  property: string[];
  direction?: 'ascending' | 'descending';
  nullsFirst?: boolean;
}

export interface SetResult {
  all: DmInstance[];
  page: DmInstance[];
  direction: 'outwards' | 'inwards';
}

const refKey = (r: { space: string; externalId: string }) => `${r.space}:${r.externalId}`;

function read(world: DmWorld, i: DmInstance, property: string[]): unknown {
  if (property.length === 2) return (i as unknown as Record<string, unknown>)[property[1]];
  const [container, prop] = world.views[`${property[0]}:${property[1]}`].properties[property[2]];
  return i.containers[container]?.[prop];
}

function sortBy(world: DmWorld, items: DmInstance[], sort: readonly SortSpec[]): DmInstance[] {
  const cmp = (a: DmInstance, b: DmInstance) => {
    for (const s of sort) {
      const x = read(world, a, s.property);
      const y = read(world, b, s.property);
      const xm = x === undefined || x === null;
      const ym = y === undefined || y === null;
      if (xm || ym) {
        if (xm && ym) continue;
        return (xm ? -1 : 1) * (s.nullsFirst ? 1 : -1);
      }
      const c = typeof x === 'number' ? x - (y as number) : String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
      if (c !== 0) return s.direction === 'descending' ? -c : c;
    }
    return 0;
  };
  return [...items].sort(cmp);
}

/** Every set of `withSets`, evaluated in `order` (parents first). */
export function evaluateSets(world: DmWorld, withSets: Record<string, any>, order: readonly string[], offsets: Record<string, number> = {}): Record<string, SetResult> {
  const nodes = world.instances.filter((i) => i.instanceType === 'node');
  const edges = world.instances.filter((i) => i.instanceType === 'edge');
  const nodeByRef = new Map(nodes.map((n) => [refKey(n), n]));
  const matches = (i: DmInstance, f: Filter | undefined) => f === undefined || dmMatches(world, i, f);
  const out: Record<string, SetResult> = {};
  const endOf = (e: DmInstance, direction: string, chainTo: string | undefined) =>
    (direction === 'outwards') === ((chainTo ?? 'destination') === 'destination') ? e.endNode! : e.startNode!;
  for (const name of order) {
    const e = withSets[name];
    let candidates: DmInstance[];
    let direction: 'outwards' | 'inwards' = 'outwards';
    const op = ['union', 'unionAll', 'intersection'].find((k) => e[k] !== undefined);
    if (op) {
      const key = (i: DmInstance) => `${i.instanceType}:${refKey(i)}`;
      const pageOf = (name: string) => new Map(out[name].page.map((i) => [key(i), i]));
      const members = (e[op] as string[]).map(pageOf);
      const kept = op === 'intersection' ? members.reduce((a, b) => new Map([...a].filter(([k]) => b.has(k)))) : new Map(members.flatMap((m) => [...m]));
      for (const x of e.except ?? []) for (const k of pageOf(x).keys()) kept.delete(k);
      candidates = [...kept.values()];
    } else if (e.nodes) {
      const n = e.nodes;
      if (n.from === undefined) candidates = nodes;
      else {
        const parent = out[n.from];
        const isNodes = parent.page.every((p) => p.instanceType === 'node');
        if (n.through) {
          const [container, prop] = world.views[`${n.through.source.space}:${n.through.source.externalId}/${n.through.source.version}`].properties[n.through.identifier];
          const refsOf = (i: DmInstance): string[] => {
            const v = i.containers[container]?.[prop];
            if (v === undefined || v === null) return [];
            return (Array.isArray(v) ? v : [v]).map(refKey);
          };
          if ((n.direction ?? 'inwards') === 'outwards') {
            const wanted = new Set(parent.page.flatMap(refsOf));
            candidates = nodes.filter((x) => wanted.has(refKey(x)));
          } else {
            const from = new Set(parent.page.map(refKey));
            candidates = nodes.filter((x) => refsOf(x).some((r) => from.has(r)));
          }
        } else if (isNodes) {
          const keep = new Set(parent.page.map(refKey));
          candidates = nodes.filter((x) => keep.has(refKey(x)));
        } else {
          const keep = new Set(parent.page.map((p) => refKey(endOf(p, parent.direction, n.chainTo))));
          candidates = nodes.filter((x) => keep.has(refKey(x)));
        }
      }
      candidates = candidates.filter((i) => matches(i, n.filter));
    } else {
      const x = e.edges;
      direction = x.direction ?? 'outwards';
      if (x.from === undefined) candidates = edges.filter((i) => matches(i, x.filter));
      else {
        const parent = out[x.from];
        const seeds = parent.page.map((p) => (p.instanceType === 'node' ? refKey(p) : refKey(endOf(p, parent.direction, x.chainTo)))).filter((r) => nodeByRef.has(r));
        const near = (i: DmInstance) => refKey(direction === 'outwards' ? i.startNode! : i.endNode!);
        const far = (i: DmInstance) => refKey(direction === 'outwards' ? i.endNode! : i.startNode!);
        const visited = new Set(seeds);
        const taken = new Set<DmInstance>();
        let frontier = new Set(seeds);
        for (let level = 1; frontier.size > 0 && (x.maxDistance === undefined || level <= x.maxDistance); level++) {
          let step = edges.filter((i) => frontier.has(near(i)) && matches(i, x.filter) && nodeByRef.has(far(i)) && matches(nodeByRef.get(far(i))!, x.nodeFilter));
          if (x.limitEach !== undefined && x.maxDistance === 1) {
            const groups = new Map<string, DmInstance[]>();
            for (const i of step) groups.set(near(i), [...(groups.get(near(i)) ?? []), i]);
            step = [...groups.values()].flatMap((g) => sortBy(world, g, e.sort ?? []).slice(0, x.limitEach));
          }
          const next = new Set<string>();
          for (const i of step) {
            taken.add(i);
            const f = far(i);
            if (visited.has(f)) continue;
            visited.add(f);
            // Without a terminationFilter, every new node is traversed further.
            if (x.terminationFilter === undefined || !dmMatches(world, nodeByRef.get(f)!, x.terminationFilter)) next.add(f);
          }
          frontier = next;
        }
        candidates = [...taken];
      }
    }
    const sort: SortSpec[] = e.postSort ?? e.sort ?? [];
    const all = sortBy(world, candidates, sort);
    const start = offsets[name] ?? 0;
    out[name] = { all, page: all.slice(start, start + (e.limit ?? 100)), direction };
  }
  return out;
}
