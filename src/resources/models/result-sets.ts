/**
 * Result set expressions (the `with` of query and sync): checked against the schema into a plan, then
 * evaluated set by set, each set after those it chains from.
 *
 * Every set is read as one page through the shared pager (query/paging.ts): its filter, its sort (the
 * select's, else `postSort` for edges, else `sort`), its limit and its cursor. A chained set reads from the
 * page of the set it names, not from all that set could hold:
 * - nodes `from` nodes: those nodes; with `through`, the nodes their direct relation names (`outwards`) or
 *   the nodes whose direct relation names one of them (`inwards`);
 * - nodes `from` edges: the node at the chosen end of each edge (`chainTo`, relative to the edges' direction);
 * - edges `from` nodes (or from edges, through the chosen end): a breadth-first traversal, level by level, of
 *   edges leaving (`outwards`) or reaching (`inwards`) the nodes reached so far; an edge is followed when it
 *   matches `filter` and the node at its other end is visible and matches `nodeFilter`; that node is
 *   traversed further unless it matches `terminationFilter`, was reached before, or `maxDistance` levels are
 *   done; `limitEach` (one level) keeps that many edges per start node, in `sort` order;
 * - set operations: the instances of their members' pages, combined, less those of `except` (a nested
 *   operation's `limit` keeps its first instances in creation order).
 * A chained set is the instances so reached, read as a page like any other set. Instances in spaces the
 * principal cannot read are missing everywhere, also in the middle of a traversal.
 *
 * What query and sync share: `planResultSets` (the checked `with`), `selectedSources` (a set's `select`), and
 * the conditions that hold a set to what it reaches (`candidates`). Query reads each set as a page
 * (`evaluateResultSets`, with the cursors); sync follows a set's changes, so it asks `memberConditions` for
 * the instances the set holds as the graph stands now, reached from the sets it reads from taken whole.
 */
import { ApiError } from '../../http/errors.js';
import type { CursorCodec } from '../../query/cursor.js';
import { fetchPage } from '../../query/paging.js';
import type { Reader } from '../../storage/read-pool.js';
import { Sql, sql } from '../../storage/sql.js';
import { fromColumn } from './container-tables.js';
import type { DebugReads } from './debug-info.js';
import { FilterBudget, parseFilter, parsePropertyReference, type DmFilter, type FilterOptions, type PropertyTarget } from './filter.js';
import { fail, viewKey, type InstanceType, type Path } from './identifiers.js';
import { checkSort, checkSources, type SortKey, type SourceRead } from './instance-reads.js';
import { pageKeys, ReadShape, sortNotice } from './instance-reads-store.js';
import { InstanceSql, type InstanceScope } from './instance-sql.js';
import { findInstances, kindOf } from './instance-writes-store.js';
import { isList } from './property-types.js';
import type { ResultSetExpression, SelectedSource, SetOperation, SetSelection } from './query-schema.js';
import { DM_LIMITS } from './limits.js';
import type { ProjectSchema } from './schema-store.js';
import { inInstanceReadScope } from './space-access.js';
import { decodeRef, encodeRef, REF_SEPARATOR } from './store-schema.js';

type Direction = 'outwards' | 'inwards';
type ChainTo = 'source' | 'destination';
type SetOp = 'union' | 'unionAll' | 'intersection';

/** A set operation: its members (set names or nested operations) combined, less the sets of `except`. */
export interface SetOperationPlan {
  op: SetOp;
  members: Array<string | SetOperationPlan>;
  except: string[];
  /** Of a nested operation: the first this many of its instances, in creation order. */
  limit?: number;
}

interface PlanCommon {
  name: string;
  instanceType: InstanceType;
  /** The sets this one reads from. */
  dependsOn: string[];
  /** The page's order and size. */
  sort: SortKey[];
  requestedSort: unknown;
  limit: number;
}

export type ResultSetPlan =
  | (PlanCommon & {
      kind: 'nodes';
      filter?: DmFilter;
      from?: string;
      through?: { target: PropertyTarget; direction: Direction };
      chainTo: ChainTo;
    })
  | (PlanCommon & {
      kind: 'edges';
      filter?: DmFilter;
      nodeFilter?: DmFilter;
      terminationFilter?: DmFilter;
      from?: string;
      chainTo: ChainTo;
      direction: Direction;
      maxDistance?: number;
      limitEach?: number;
      /** The `sort` of the expression, which orders the edges `limitEach` keeps. */
      eachSort: SortKey[];
    })
  | (PlanCommon & { kind: 'set'; operation: SetOperationPlan });

export interface ResultSetsPlan {
  /** In evaluation order: every set after the sets it reads from. */
  sets: ResultSetPlan[];
  byName: Map<string, ResultSetPlan>;
}

export interface ResultSetsRequest {
  with: Record<string, ResultSetExpression>;
  select: Record<string, SetSelection>;
  parameters?: Record<string, unknown>;
}

const SET_OPS: readonly SetOp[] = ['union', 'unionAll', 'intersection'];
const EXPRESSION_KINDS = ['nodes', 'edges', ...SET_OPS] as const;

/** The plan of `with`, checked: every 400 (unknown set, cycle, bad filter, sort or `through`) names its place. */
export function planResultSets(request: ResultSetsRequest, schema: ProjectSchema): ResultSetsPlan {
  const raw = request.with;
  for (const name of Object.keys(request.select)) {
    if (!Object.hasOwn(raw, name)) fail(['select', name], `there is no result set expression ${JSON.stringify(name)} in "with"`);
  }
  const kinds = new Map<string, (typeof EXPRESSION_KINDS)[number]>();
  const deps = new Map<string, Array<{ name: string; path: Path }>>();
  for (const [name, e] of Object.entries(raw)) {
    const given = EXPRESSION_KINDS.filter((k) => e[k] !== undefined);
    if (given.length !== 1) fail(['with', name], `expected exactly one of ${EXPRESSION_KINDS.join(', ')}, got ${given.length ? given.join(', ') : 'none'}`);
    const kind = given[0];
    if ((kind === 'nodes' || kind === 'edges') && e.except !== undefined) fail(['with', name, 'except'], 'except belongs to set operations');
    if (kind !== 'edges' && e.postSort !== undefined) fail(['with', name, 'postSort'], `postSort orders edge traversals; order ${kind === 'nodes' ? 'nodes' : 'a set operation'} with sort`);
    kinds.set(name, kind);
    const refs: Array<{ name: string; path: Path }> = [];
    if (kind === 'nodes' || kind === 'edges') {
      const from = e[kind]!.from;
      if (from !== undefined) refs.push({ name: from, path: ['with', name, kind, 'from'] });
    } else {
      collectMembers(e as SetOperation, ['with', name], refs);
    }
    for (const r of refs) {
      if (!Object.hasOwn(raw, r.name)) fail(r.path, `there is no result set expression ${JSON.stringify(r.name)} in "with"`);
    }
    deps.set(name, refs);
  }
  if (kinds.size === 0) fail(['with'], 'name at least one result set expression');

  const order = evaluationOrder(deps);
  const byName = new Map<string, ResultSetPlan>();
  const parameters = request.parameters ?? {};
  // One budget for the filters of every set: a traversal's statement holds three of them, sync's two.
  const budget = new FilterBudget();
  for (const name of order) {
    const e = raw[name];
    const kind = kinds.get(name)!;
    const selection = request.select[name];
    const limit = selection?.limit ?? e.limit ?? DM_LIMITS.querySetLimitDefault;
    const dependsOn = [...new Set(deps.get(name)!.map((d) => d.name))];
    const at = (...p: Array<string | number>): Path => ['with', name, ...p];
    if (kind === 'nodes' || kind === 'edges') {
      const instanceType: InstanceType = kind === 'nodes' ? 'node' : 'edge';
      const options: FilterOptions = { schema: schema.resolver, instanceType, parameters, budget };
      const nodeOptions: FilterOptions = { ...options, instanceType: 'node' };
      const common = { name, instanceType, dependsOn, limit, ...pageSort(name, e, selection, options) };
      if (kind === 'nodes') {
        const n = e.nodes!;
        const from = n.from !== undefined ? byName.get(n.from)! : undefined;
        let through: { target: PropertyTarget; direction: Direction } | undefined;
        if (n.through !== undefined) {
          if (!from) fail(at('nodes', 'through'), 'through follows direct relations from the nodes of "from"; name the set in "from"');
          if (from.instanceType !== 'node') fail(at('nodes', 'through'), `through follows direct relations of nodes, and ${JSON.stringify(from.name)} is a set of edges`);
          through = { target: throughTarget(n.through, schema, at('nodes', 'through')), direction: n.direction ?? 'inwards' };
        }
        const filter = n.filter !== undefined ? parseFilter(n.filter, options, at('nodes', 'filter')) : undefined;
        byName.set(name, { ...common, kind, filter, from: from?.name, through, chainTo: n.chainTo ?? 'destination' });
      } else {
        const x = e.edges!;
        const parse = (f: unknown, o: FilterOptions, key: string) => (f !== undefined ? parseFilter(f, o, at('edges', key)) : undefined);
        byName.set(name, {
          ...common,
          kind,
          filter: parse(x.filter, options, 'filter'),
          nodeFilter: parse(x.nodeFilter, nodeOptions, 'nodeFilter'),
          terminationFilter: parse(x.terminationFilter, nodeOptions, 'terminationFilter'),
          from: x.from,
          chainTo: x.chainTo ?? 'destination',
          direction: x.direction ?? 'outwards',
          maxDistance: x.maxDistance,
          limitEach: x.limitEach,
          eachSort: checkSort(e.sort, options, at('sort')),
        });
      }
      continue;
    }
    const operation = operationPlan(e as SetOperation, at(), true);
    const types = new Set(membersOf(operation).map((m) => byName.get(m)!.instanceType));
    if (types.size > 1) fail(at(kind), 'a set operation combines sets of one kind: all nodes or all edges');
    const instanceType = [...types][0] ?? 'node';
    const options: FilterOptions = { schema: schema.resolver, instanceType, parameters };
    byName.set(name, { name, instanceType, dependsOn, limit, ...pageSort(name, e, selection, options), kind: 'set', operation });
  }
  return { sets: order.map((n) => byName.get(n)!), byName };
}

/**
 * The order of a set's page: the select entry's sort, else (edges) `postSort`, else `sort`. An empty list
 * (clients send them) is no sort, and leaves the choice to the next.
 */
function pageSort(name: string, e: ResultSetExpression, selection: SetSelection | undefined, options: FilterOptions): { sort: SortKey[]; requestedSort: unknown } {
  const [requested, path]: [ResultSetExpression['sort'], Path] = selection?.sort?.length
    ? [selection.sort, ['select', name, 'sort']]
    : e.postSort?.length
      ? [e.postSort, ['with', name, 'postSort']]
      : [e.sort, ['with', name, 'sort']];
  return { sort: checkSort(requested, options, path), requestedSort: requested ?? [] };
}

function collectMembers(op: SetOperation, path: Path, out: Array<{ name: string; path: Path }>): void {
  for (const k of SET_OPS) {
    op[k]?.forEach((m, i) => (typeof m === 'string' ? out.push({ name: m, path: [...path, k, i] }) : collectMembers(m, [...path, k, i], out)));
  }
  op.except?.forEach((m, i) => out.push({ name: m, path: [...path, 'except', i] }));
}

function operationPlan(op: SetOperation, path: Path, top: boolean): SetOperationPlan {
  const given = SET_OPS.filter((k) => op[k] !== undefined);
  if (given.length !== 1) fail(path, `expected exactly one of ${SET_OPS.join(', ')}, got ${given.length ? given.join(', ') : 'none'}`);
  if (!top) {
    const extra = (['nodes', 'edges', 'sort', 'postSort'] as const).find((k) => op[k] !== undefined);
    if (extra) fail([...path, extra], 'a nested set operation takes its members, except and limit only');
  }
  const k = given[0];
  return {
    op: k,
    members: op[k]!.map((m, i) => (typeof m === 'string' ? m : operationPlan(m, [...path, k, i], false))),
    except: op.except ?? [],
    ...(!top && op.limit !== undefined ? { limit: op.limit } : {}),
  };
}

function membersOf(op: SetOperationPlan): string[] {
  return op.members.flatMap((m) => (typeof m === 'string' ? [m] : membersOf(m)));
}

/** The sets in an order where each comes after those it reads from; a 400 naming a cycle. */
function evaluationOrder(deps: ReadonlyMap<string, ReadonlyArray<{ name: string; path: Path }>>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, chain: string[]): void => {
    const s = state.get(name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...chain.slice(chain.indexOf(name)), name];
      const first = deps.get(cycle[0])!.find((d) => d.name === cycle[1])!;
      fail(first.path, `the result sets form a cycle: ${cycle.join(' -> ')}`);
    }
    state.set(name, 'visiting');
    for (const d of deps.get(name)!) visit(d.name, [...chain, name]);
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of deps.keys()) visit(name, []);
  return order;
}

/** The direct relation property `through` names: `{source: view or container, identifier}` (or `{view, identifier}`). */
function throughTarget(t: { source?: { type: string; space: string; externalId: string; version?: string }; view?: { space: string; externalId: string; version: string }; identifier: string }, schema: ProjectSchema, path: Path): PropertyTarget {
  const source = t.source ?? (t.view ? { type: 'view', ...t.view } : undefined);
  if (!source || (t.source && t.view)) fail(path, 'give exactly one of source and view');
  const reference = source.type === 'view' ? [source.space, `${source.externalId}/${source.version}`, t.identifier] : [source.space, source.externalId, t.identifier];
  const target = parsePropertyReference(reference, { schema: schema.resolver, instanceType: 'node' }, [...path, 'identifier']);
  if (target.type.type !== 'direct') fail([...path, 'identifier'], `${JSON.stringify(t.identifier)} is not a direct relation property; through follows direct relations`);
  return target;
}

/** The views of a set's `select.sources`, each with the properties named (all of them for `"*"`). */
export function selectedSources(sources: readonly SelectedSource[] | undefined, schema: ProjectSchema, path: Path): SourceRead[] {
  const reads = checkSources(sources, schema.resolver, path);
  return reads.map((read, i) => {
    const names = sources![i].properties;
    if (names.includes('*')) return read;
    names.forEach((p, j) => {
      if (!read.view.properties.has(p)) fail([...path, i, 'properties', j], `the view ${viewKey(read.view.id)} has no property ${JSON.stringify(p)}`);
    });
    return { ...read, properties: new Set(names) };
  });
}

// ---------------------------------------------------------------------------------------------------------
// Evaluation

export interface ResultSetContext extends InstanceScope {
  reads: Reader;
  cursors: CursorCodec;
  /** Hears which set the reads that follow are for (debug answers). */
  debug?: Pick<DebugReads, 'readingFor'>;
}

export interface EvaluateOptions {
  /** The operation the cursors are bound to (`instances/query`), with the request parts that shape every page. */
  binding: { op: string; with: unknown; select: unknown; parameters: unknown };
  /** Cursors of the request, by set. */
  cursors?: Readonly<Record<string, string | null>>;
  /** The views read of each set, rendered with its rows. */
  sources: ReadonlyMap<string, readonly SourceRead[]>;
  /** The sets wanted; those they read from are evaluated too, the others not. All of them when absent. */
  wanted?: Iterable<string>;
}

/** What a set holds when another set reads from it: its rows (id, space, external id and edge ends at least). */
export interface SetRows {
  set: ResultSetPlan;
  rows: Array<Record<string, unknown>>;
}

export interface ResultSetPage extends SetRows {
  shape: ReadShape;
  /** The cursor of the page after this one, when there is more. */
  nextCursor?: string;
}

type Row = Record<string, unknown>;

/** Each set's page, in evaluation order. */
export async function evaluateResultSets(ctx: ResultSetContext, plan: ResultSetsPlan, options: EvaluateOptions): Promise<Map<string, ResultSetPage>> {
  const pages = new Map<string, ResultSetPage>();
  const cursors = options.cursors ?? {};
  const needed = options.wanted ? upstreamOf(plan, options.wanted) : undefined;
  const bindingOf = (set: ResultSetPlan) => ({ ...options.binding, set: set.name, upstream: upstreamCursors(plan, set, cursors) });
  // Every cursor is checked before anything is read, also those of sets not evaluated.
  const positions = new Map<string, unknown>();
  for (const set of plan.sets) {
    const cursor = cursors[set.name];
    if (cursor !== undefined && cursor !== null) positions.set(set.name, decodeCursor(ctx, cursor, bindingOf(set), set.name));
  }
  // Instances the request may still read: the sets' pages together hold at most DM_LIMITS.queryInstances.
  let budget = DM_LIMITS.queryInstances;
  for (const set of plan.sets) {
    if (needed && !needed.has(set.name)) continue;
    ctx.debug?.readingFor(set.name);
    const q = new InstanceSql(ctx);
    const shape = new ReadShape(q, options.sources.get(set.name) ?? []);
    const conditions = await setConditions(ctx, set, q, pages);
    const keys = pageKeys(q, set.sort, new Set());
    const select = shape.select();
    const page = await fetchPage<Row>(ctx.reads, {
      dialect: ctx.dialect,
      select,
      from: q.table(),
      joins: q.joins(),
      where: Sql.and(conditions),
      scope: sql`i.project_id = ${ctx.projectId}`,
      keys,
      idExpr: 'i.id',
      // A page that would pass the budget is read one instance past it, not whole.
      limit: Math.min(set.limit, budget + 1),
      after: positions.get(set.name),
    });
    if (page.rows.length > budget) {
      fail(['with', set.name], `the result sets hold more than ${DM_LIMITS.queryInstances} instances in all (this one passes it); lower the sets' limits and page with the cursors`);
    }
    budget -= page.rows.length;
    await shape.complete(ctx.reads, page.rows);
    pages.set(set.name, { set, rows: page.rows, shape, ...(page.next ? { nextCursor: ctx.cursors.encode(page.next, bindingOf(set)) } : {}) });
  }
  return pages;
}

/** The visible, live instances of a set's kind that it reaches from the rows of the sets it reads from. */
async function setConditions(ctx: ResultSetContext, set: ResultSetPlan, q: InstanceSql, from: ReadonlyMap<string, SetRows>): Promise<Sql[]> {
  return [q.visible(), sql`i.kind = ${kindOf(set.instanceType)}`, Sql.raw('i.deleted_time IS NULL'), ...(await candidates(ctx, set, q, from))];
}

/**
 * The conditions that hold `q`'s instances (alias `i`) to those `set` holds as the graph stands now: its
 * filter, and what it reaches from the sets it reads from, each of those read whole (every visible live
 * instance it holds, not one page) and in turn reached from theirs. Neither liveness nor the set's kind is
 * among them: sync, which asks, follows tombstones too. `whole` keeps the sets read so far, so that sets
 * reading from the same set read it once. A set read whole that holds more than
 * `DM_LIMITS.syncChainSource` instances is a 400 naming it.
 */
export async function memberConditions(ctx: ResultSetContext, plan: ResultSetsPlan, set: ResultSetPlan, q: InstanceSql, whole: Map<string, SetRows>): Promise<Sql[]> {
  const upstream = upstreamOf(plan, set.dependsOn);
  const max = DM_LIMITS.syncChainSource;
  for (const u of plan.sets) {
    if (!upstream.has(u.name) || whole.has(u.name)) continue;
    const uq = q.under('i');
    const where = Sql.and(await setConditions(ctx, u, uq, whole));
    const rows = await ctx.reads.all<Row>(sql`SELECT i.id, i.space, i.external_id, i.start_ref, i.end_ref FROM ${uq.from()} WHERE ${where} LIMIT ${Sql.raw(String(max + 1))}`, { scan: true });
    if (rows.length > max) fail(['with', u.name], `holds more than ${max} instances, and the sets chained from it read it whole; narrow it with a filter`);
    whole.set(u.name, { set: u, rows });
  }
  return candidates(ctx, set, q, whole);
}

/** The debug notices of the plan's sets (sorts no index serves), each naming its set. */
export function resultSetNotices(schema: ProjectSchema, plan: ResultSetsPlan): Array<Record<string, unknown>> {
  return plan.sets.flatMap((s) => {
    const notice = sortNotice(schema, s.sort, s.requestedSort, s.name);
    return notice ? [notice] : [];
  });
}

/** A set's cursor decoded against its binding; a 400 naming the set (`cursors.<name>`) when it is not one. */
export function decodeCursor(ctx: Pick<ResultSetContext, 'cursors'>, cursor: string, binding: unknown, name: string): unknown {
  try {
    return ctx.cursors.decode(cursor, binding);
  } catch (e) {
    if (e instanceof ApiError && e.status === 400) fail(['cursors', name], e.message.replace(/^cursor: /, ''));
    throw e;
  }
}

/** These sets and every set they read from, directly or not. */
export function upstreamOf(plan: ResultSetsPlan, names: Iterable<string>): Set<string> {
  const out = new Set<string>();
  const visit = (name: string) => {
    if (out.has(name)) return;
    out.add(name);
    plan.byName.get(name)!.dependsOn.forEach(visit);
  };
  for (const name of names) visit(name);
  return out;
}

/** The cursors of every set this one reads from, directly or not: its candidates depend on their pages. */
function upstreamCursors(plan: ResultSetsPlan, set: ResultSetPlan, cursors: Readonly<Record<string, string | null>>): Record<string, string> {
  return Object.fromEntries([...upstreamOf(plan, set.dependsOn)].flatMap((d) => (cursors[d] ? [[d, cursors[d]]] : [])));
}

const idsIn = (ctx: ResultSetContext, ids: Iterable<number>): Sql => sql`i.id IN (${ctx.dialect.idList([...ids])})`;

const rowRef = (r: Row): string => encodeRef({ space: r.space as string, externalId: r.external_id as string });

/** The column of the end an edge chains to: its end node when followed outwards to its destination, or inwards from its source. */
const chainedEnd = (direction: Direction, chainTo: ChainTo) => ((direction === 'outwards') === (chainTo === 'destination') ? 'end_ref' : 'start_ref');

function directionOf(set: ResultSetPlan): Direction {
  return set.kind === 'edges' ? set.direction : 'outwards';
}

/** The conditions that restrict a set to its filter and the instances it reaches from the rows of the sets it names. */
async function candidates(ctx: ResultSetContext, set: ResultSetPlan, q: InstanceSql, pages: ReadonlyMap<string, SetRows>): Promise<Sql[]> {
  if (set.kind === 'set') return [idsIn(ctx, operationIds(set.operation, pages))];
  const own = set.filter ? [q.compile(set.filter)] : [];
  if (set.from === undefined) return own;
  const from = pages.get(set.from)!;
  if (set.kind === 'nodes') {
    if (set.through) return [...own, await throughCondition(ctx, q, set.through, from.rows)];
    if (from.set.instanceType === 'node') return [...own, idsIn(ctx, from.rows.map((r) => Number(r.id)))];
    const end = chainedEnd(directionOf(from.set), set.chainTo);
    return [...own, idsIn(ctx, await visibleNodes(ctx, from.rows.map((r) => r[end] as string)))];
  }
  const seeds =
    from.set.instanceType === 'node' ? from.rows.map(rowRef) : await visibleNodeRefs(ctx, from.rows.map((r) => r[chainedEnd(directionOf(from.set), set.chainTo)] as string));
  return [idsIn(ctx, await traverse(ctx, set, seeds))];
}

function operationIds(op: SetOperationPlan, pages: ReadonlyMap<string, SetRows>): Set<number> {
  const ids = (m: string | SetOperationPlan) => (typeof m === 'string' ? new Set(pages.get(m)!.rows.map((r) => Number(r.id))) : operationIds(m, pages));
  const sets = op.members.map(ids);
  let out: Set<number>;
  if (op.op === 'intersection') out = sets.reduce((a, b) => new Set([...a].filter((x) => b.has(x))));
  else out = new Set(sets.flatMap((s) => [...s]));
  for (const e of op.except) for (const r of pages.get(e)!.rows) out.delete(Number(r.id));
  return op.limit === undefined ? out : new Set([...out].sort((a, b) => a - b).slice(0, op.limit));
}

/** The ids of the visible nodes among these references (existing, not deleted, in a space the principal reads). */
async function visibleNodes(ctx: ResultSetContext, refs: readonly string[]): Promise<number[]> {
  return (await visibleRows(ctx, refs)).map((r) => r.id);
}

async function visibleNodeRefs(ctx: ResultSetContext, refs: readonly string[]): Promise<string[]> {
  return (await visibleRows(ctx, refs)).map((r) => encodeRef({ space: r.space, externalId: r.external_id }));
}

async function visibleRows(ctx: ResultSetContext, refs: readonly string[]) {
  const wanted = [...new Set(refs.filter((r): r is string => typeof r === 'string'))].map((r) => ({ instanceType: 'node' as const, ...decodeRef(r) }));
  const found = await findInstances(ctx.reads, ctx.projectId, wanted.filter((w) => inInstanceReadScope(ctx.access, w.space)));
  return [...found.values()].filter((r) => r.deleted_time === null).map((r) => ({ ...r, id: Number(r.id) }));
}

/** Nodes reached through a direct relation from `rows`: those it names (outwards), or those naming one of them (inwards). */
async function throughCondition(ctx: ResultSetContext, q: InstanceSql, through: { target: PropertyTarget; direction: Direction }, rows: readonly Row[]): Promise<Sql> {
  const { target } = through;
  if (through.direction === 'inwards') {
    const refs = rows.map((r) => ({ space: r.space as string, externalId: r.external_id as string }));
    return q.compile({ op: 'in', target, values: { kind: 'value', value: refs } });
  }
  if (rows.length === 0) return idsIn(ctx, []);
  const source = q.under('t');
  const column = source.column(target);
  const values = await ctx.reads.all<{ v: unknown }>(sql`SELECT ${column} AS v FROM ${source.from()} WHERE ${source.visible()} AND t.id IN (${ctx.dialect.idList(rows.map((r) => Number(r.id)))})`);
  const refs = values.flatMap(({ v }) => {
    const value = fromColumn(v, target.type);
    if (value === null) return [];
    const list = (isList(target.type) ? value : [value]) as Array<{ space: string; externalId: string }>;
    return list.map(encodeRef);
  });
  return idsIn(ctx, await visibleNodes(ctx, refs));
}

/** Nodes a traversal level starts from past which its statement is read on a worker. */
const WIDE_LEVEL = 1000;

/** The ids of the edges a traversal from `seeds` (node references) follows. */
async function traverse(ctx: ResultSetContext, set: Extract<ResultSetPlan, { kind: 'edges' }>, seeds: readonly string[]): Promise<number[]> {
  const near = set.direction === 'outwards' ? 'start_ref' : 'end_ref';
  const far = set.direction === 'outwards' ? 'end_ref' : 'start_ref';
  const visited = new Set(seeds);
  const edges = new Set<number>();
  let frontier = [...visited];
  for (let level = 1; frontier.length > 0 && (set.maxDistance === undefined || level <= set.maxDistance); level++) {
    const e = new InstanceSql(ctx, 'e');
    const n = e.under('n');
    const conditions = [
      e.visible(),
      n.visible(),
      Sql.raw('e.kind = 1 AND e.deleted_time IS NULL'),
      sql`${Sql.raw(`e.${near}`)} IN (${ctx.dialect.jsonElements(sql`${JSON.stringify(frontier)}`, 'text')})`,
    ];
    if (set.filter) conditions.push(e.compile(set.filter));
    if (set.nodeFilter) conditions.push(n.compile(set.nodeFilter));
    const stop = set.terminationFilter ? sql`CASE WHEN ${n.compile(set.terminationFilter)} THEN 1 ELSE 0 END` : Sql.raw('0');
    let order: Sql | undefined;
    if (set.limitEach !== undefined && set.maxDistance === 1) {
      const keys = pageKeys(e, set.eachSort, new Set()).flatMap((k) => [
        ...(k.nullable ? [sql`(CASE WHEN ${k.expr} IS NULL THEN 1 ELSE 0 END) ${Sql.raw(k.nullsFirst ? 'DESC' : 'ASC')}`] : []),
        sql`${k.expr} ${Sql.raw(k.desc ? 'DESC' : 'ASC')}`,
      ]);
      order = Sql.join([...keys, Sql.raw('e.id ASC')], ', ');
    }
    const rank = order ? sql`, ROW_NUMBER() OVER (PARTITION BY ${Sql.raw(`e.${near}`)} ORDER BY ${order}) AS rn` : Sql.raw('');
    // The far node by its key (project, space, kind, external id), so that the key's index finds it.
    const farRef = Sql.raw(`e.${far}`);
    const join = sql`JOIN ${n.table()} ON n.project_id = e.project_id AND n.space = ${ctx.dialect.textBefore(farRef, REF_SEPARATOR)} AND n.kind = 0 AND n.external_id = ${ctx.dialect.textAfter(farRef, REF_SEPARATOR)} AND n.deleted_time IS NULL`;
    const inner = sql`SELECT e.id AS id, ${Sql.raw(`e.${far}`)} AS far, ${stop} AS stop${rank} FROM ${e.from()} ${join} ${n.joins()} WHERE ${Sql.and(conditions)}`;
    const query = order ? sql`SELECT id, far, stop FROM (${inner}) r WHERE rn <= ${set.limitEach!}` : inner;
    const next: string[] = [];
    // A wide level is a long statement; a narrow one (a chain, level after level) costs less in process.
    for (const r of await ctx.reads.all<{ id: number; far: string; stop: number }>(query, { scan: frontier.length > WIDE_LEVEL })) {
      edges.add(Number(r.id));
      if (!visited.has(r.far)) {
        visited.add(r.far);
        if (Number(r.stop) === 0) next.push(r.far);
      }
    }
    if (edges.size > DM_LIMITS.queryTraversalEdges) {
      fail(['with', set.name, 'edges'], `the traversal reaches more than ${DM_LIMITS.queryTraversalEdges} edges; narrow it with filter, maxDistance or a smaller "from" set`);
    }
    frontier = next;
  }
  return [...edges];
}
