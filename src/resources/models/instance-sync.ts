/**
 * `POST /models/instances/sync`: each result set of the request is a feed of the instances it matches,
 * read in the order of the project's change feed (changes.ts), with deleted instances as tombstones
 * (`deletedTime` set). A set's cursor is the feed position after the last instance returned (after a page
 * shorter than the limit, the feed position the request read at), so following it returns what was applied
 * or deleted since, each instance once per change.
 *
 * Modes: `onePhase` reads the feed from its beginning (existing instances first, in the order they last
 * changed, then whatever changes next); `twoPhase` first pages through the instances that existed at the
 * first request (in `backfillSort` order), then follows the feed from that request's position; `noBackfill`
 * starts at the feed's current position. Tombstones of instances deleted before the first request are left
 * out unless `skipAlreadyDeleted` is false.
 *
 * A deleted instance's properties are gone, so a filter cannot be tested on them: a tombstone is reported to
 * a set when the filter could have matched it, deciding conditions on the base fields (space, external id,
 * type, ...) and taking every condition on properties as possibly true. A set may therefore receive the
 * tombstone of an instance it never returned; deleting what one does not hold is a no-op for a client.
 *
 * Chained sets (`from`, with `through` and `direction` for nodes, `chainTo`, and for edges a traversal with
 * `direction`, `maxDistance`, `nodeFilter` and `terminationFilter`) are checked and reached as query reaches
 * them (result-sets.ts), with one difference: a chained set reads from everything the set it names holds
 * as the graph stands now (that set read whole), not from a page of that set's feed. A set's cursor is
 * therefore its own, whatever the cursors of the sets it reads from; it is bound to their expressions, which
 * decide what it holds. A live instance belongs to a chained set when it is
 * reached now; its changes are returned while it is. An instance that joins or leaves the set without
 * changing itself (an edge to it is created or deleted, a relation is set) is not returned for that: the
 * change that moved it is returned in the set that holds the edge or the relation. A deleted instance no
 * longer has edges or relations to be reached through, so chaining is decided for tombstones as property
 * conditions are: as possibly true. A chained set receives the tombstone of every instance its own filter
 * could have matched, which includes every one it returned. `limitEach` is refused: it keeps a number of
 * edges per start node in a sort order, which a feed of changes has not.
 */
import { ApiError } from '../../http/errors.js';
import { jsonInSlices, LazyList } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import { fetchPage, type PagePosition } from '../../query/paging.js';
import { Sql, sql } from '../../storage/sql.js';
import { lastChange } from './changes.js';
import { DebugReads } from './debug-info.js';
import { type DmFilter, type DmLeaf, type FilterOptions, type Operand, type PropertyTarget } from './filter.js';
import { fail, type InstanceType, type Path } from './identifiers.js';
import { checkSort } from './instance-reads.js';
import { pageKeys, ReadShape, sortNotice } from './instance-reads-store.js';
import { InstanceSql } from './instance-sql.js';
import { kindOf } from './instance-writes-store.js';
import { DM_LIMITS } from './limits.js';
import type { ResultSetExpression } from './query-schema.js';
import { decodeCursor, memberConditions, planResultSets, selectedSources, upstreamOf, type ResultSetPlan, type SetRows } from './result-sets.js';
import { visibleSchema } from './space-access.js';
import type { SyncExpression, SyncInstancesBody, SyncSelect } from './sync-schema.js';
import { modelsSettings } from './settings.js';

/** What a sync cursor carries: the phase, the position within it, the feed position of the first request, and when it was issued. */
interface SyncState {
  phase: 'backfill' | 'feed';
  at?: PagePosition;
  start: number;
  issued: number;
}

const FEED_END = Number.MAX_SAFE_INTEGER;

const isBase = (t: PropertyTarget) => t.kind === 'base';
const operandIsBase = (o: Operand | undefined) => o === undefined || o.kind === 'value' || isBase(o.target);

/** Whether a leaf reads only base fields, so that it can be decided for a deleted instance. */
function baseOnly(leaf: DmLeaf): boolean {
  switch (leaf.op) {
    case 'matchAll':
    case 'instanceReferences':
      return true;
    case 'equals':
    case 'prefix':
      return isBase(leaf.target) && operandIsBase(leaf.value);
    case 'in':
    case 'containsAny':
    case 'containsAll':
      return isBase(leaf.target) && operandIsBase(leaf.values);
    case 'range':
      return isBase(leaf.target) && [leaf.gt, leaf.gte, leaf.lt, leaf.lte].every(operandIsBase);
    case 'exists':
      return isBase(leaf.target);
    case 'overlaps':
      return isBase(leaf.start) && isBase(leaf.end) && [leaf.gt, leaf.gte, leaf.lt, leaf.lte].every(operandIsBase);
    default:
      return false;
  }
}

const ALL: DmFilter = { op: 'matchAll' };
const NONE: DmFilter = { op: 'not', arg: ALL };

/**
 * A filter that holds wherever `filter` may hold when property values are unknown (`widen`), or only where it
 * holds whatever they are (`!widen`): leaves on properties become true or false, the rest is kept.
 */
export function onBaseFields(filter: DmFilter, widen: boolean): DmFilter {
  if (filter.op === 'and' || filter.op === 'or') return { op: filter.op, args: filter.args.map((a) => onBaseFields(a, widen)) };
  if (filter.op === 'not') return { op: 'not', arg: onBaseFields(filter.arg, !widen) };
  return baseOnly(filter as DmLeaf) ? filter : widen ? ALL : NONE;
}

interface SetPlan {
  name: string;
  instanceType: InstanceType;
  expression: SyncExpression;
  /** The set as result-sets.ts checked it: its filter and what it chains from. */
  set: ResultSetPlan;
  /** The sets it reads from, directly or not, by name. */
  upstream: string[];
  options: FilterOptions;
  select?: SyncSelect;
  state?: SyncState;
}

/** The result set expression of a sync set: its `nodes` or `edges`, without what only sync takes. */
function expressionOf(e: SyncExpression): ResultSetExpression {
  return 'nodes' in e ? { nodes: e.nodes } : { edges: e.edges };
}

export async function syncInstances(services: Services, projectId: number, body: SyncInstancesBody) {
  const schema = await visibleSchema(services, projectId);
  const now = services.now();
  const maxAge = modelsSettings(services).syncCursorMaxAgeMs;
  for (const name of Object.keys(body.select)) if (!(name in body.with)) fail(['select', name], `names no result set of "with"`);
  for (const name of Object.keys(body.cursors ?? {})) if (!(name in body.with)) fail(['cursors', name], `names no result set of "with"`);

  for (const [name, expression] of Object.entries(body.with)) {
    if ('edges' in expression && expression.edges.limitEach !== undefined) {
      fail(['with', name, 'edges', 'limitEach'], 'sync does not take limitEach (it keeps a number of edges per start node in sort order, and a feed of changes has no such order); leave it out, or use query');
    }
  }
  const chain = planResultSets({ with: Object.fromEntries(Object.entries(body.with).map(([name, e]) => [name, expressionOf(e)])), select: {}, parameters: body.parameters }, schema);

  const plans: SetPlan[] = Object.entries(body.with).map(([name, expression]) => {
    const path: Path = ['with', name];
    const set = chain.byName.get(name)!;
    const { instanceType } = set;
    const upstream = [...upstreamOf(chain, set.dependsOn)].sort();
    const mode = expression.mode ?? 'onePhase';
    if (expression.backfillSort !== undefined && mode !== 'twoPhase') fail([...path, 'backfillSort'], 'is only taken with mode "twoPhase"');
    const options: FilterOptions = { schema: schema.resolver, instanceType, parameters: body.parameters, purpose: 'query' };
    let state: SyncState | undefined;
    const cursor = body.cursors?.[name];
    if (cursor !== undefined && cursor !== null) {
      state = decodeCursor(services, cursor, binding(name, body, upstream), name) as SyncState;
      if (now - state.issued > maxAge && !body.allowExpiredCursorsAndAcceptMissedDeletes) {
        throw new ApiError(
          400,
          `cursors.${name}: the cursor expired (it is older than ${describeAge(maxAge)}, after which deletes may have been missed); start a new sync, or set allowExpiredCursorsAndAcceptMissedDeletes to continue from it`,
        );
      }
    }
    return { name, instanceType, expression, set, upstream, options, select: body.select[name], state };
  });

  const debug = new DebugReads(services, body.debug);
  const feedNow = await lastChange(debug.reads, projectId);
  const items: Record<string, LazyList<Record<string, unknown>>> = {};
  const typing: Record<string, unknown> = {};
  const nextCursor: Record<string, string> = {};
  const notices: Array<Record<string, unknown>> = [];
  const ctx = { reads: debug.reads, dialect: services.db.dialect, projectId, schema, access: services.access, cursors: services.cursors };
  // The sets chained from, read whole once for every set that reads from them.
  const whole = new Map<string, SetRows>();

  for (const plan of plans) {
    const { name, expression, instanceType, options } = plan;
    debug.readingFor(name);
    const path: Path = ['with', name];
    const mode = expression.mode ?? 'onePhase';
    const limit = expression.limit ?? DM_LIMITS.syncSetDefault;
    const sources = selectedSources(plan.select?.sources, schema, ['select', name, 'sources']);
    const q = new InstanceSql(ctx);
    const shape = new ReadShape(q, sources);
    let state: SyncState =
      plan.state ?? (mode === 'noBackfill' ? { phase: 'feed', at: feedPosition(feedNow), start: feedNow, issued: now } : { phase: mode === 'twoPhase' ? 'backfill' : 'feed', start: feedNow, issued: now });
    // Where the cursor stays when the results are not emitted (see debug-info.ts).
    const from = state;

    const base = [q.visible(), sql`i.kind = ${kindOf(instanceType)}`];
    // The set's filter, and what it reaches now when chained; not tested on tombstones (see above).
    const members = debug.read ? await memberConditions(ctx, chain, plan.set, q, whole) : [];
    const live = Sql.and([Sql.raw('i.deleted_time IS NULL'), ...members]);
    const filter = plan.set.kind === 'set' ? undefined : plan.set.filter;
    const select = sql`${shape.select()}, i.deleted_time`;
    let rows: Array<Record<string, unknown>> = [];

    if (state.phase === 'backfill') {
      const sort = checkSort(expression.backfillSort, options, [...path, 'backfillSort']);
      const notice = body.debug ? sortNotice(schema, sort, expression.backfillSort, name) : undefined;
      if (notice) notices.push(notice);
      if (debug.read) {
        // The sort keys first: they join the containers they read, which `joins()` then lists.
        const keys = pageKeys(q, sort, new Set());
        const page = await fetchPage<Record<string, unknown>>(debug.reads, {
          dialect: services.db.dialect,
          select,
          from: q.table(),
          joins: q.joins(),
          where: Sql.and([...base, live, sql`i.change_seq <= ${state.start}`]),
          scope: sql`i.project_id = ${projectId}`,
          keys,
          idExpr: 'i.id',
          limit,
          after: state.at,
        });
        rows = page.rows;
        // A short page ends the backfill: the feed continues from the first request's position.
        state = page.next ? { ...state, at: page.next } : { ...state, phase: 'feed', at: feedPosition(state.start) };
      }
    } else if (debug.read) {
      const deleted = [Sql.raw('i.deleted_time IS NOT NULL')];
      if (filter) deleted.push(q.compile(onBaseFields(filter, true)));
      // Instances deleted before the sync began are not news, unless asked for (they never are past the backfill).
      if (expression.skipAlreadyDeleted ?? true) deleted.push(sql`i.change_seq > ${state.start}`);
      const page = await fetchPage<Record<string, unknown>>(debug.reads, {
        dialect: services.db.dialect,
        select,
        from: q.table(),
        joins: q.joins(),
        where: Sql.and([...base, Sql.or([live, Sql.and(deleted)]).wrap()]),
        scope: sql`i.project_id = ${projectId}`,
        keys: [{ expr: Sql.raw('i.change_seq'), nullable: false, desc: false, nullsFirst: false }],
        idExpr: 'i.id',
        limit,
        after: state.at,
      });
      rows = page.rows;
      const last = rows.at(-1);
      if (last) state = { ...state, at: { s: 0, v: [Number(last.__k0), Number(last.__k1)] } };
      // A page shorter than the limit has read every change up to this request's feed position (all of them
      // visible before the page was read): the cursor moves there, so that what the page left out, not the
      // set's, is not read again, also when it comes to belong to a chained set later without changing.
      if (rows.length < limit && (state.at ? Number(state.at.v[0]) : -1) < feedNow) state = { ...state, at: feedPosition(feedNow) };
    }

    if (!debug.emit) {
      rows = [];
      state = from;
    }
    await shape.complete(debug.reads, rows);
    items[name] = new LazyList(rows, (row) => render(shape, row));
    if (body.includeTyping) typing[name] = shape.typing();
    nextCursor[name] = services.cursors.encode({ ...state, issued: now }, binding(name, body, plan.upstream));
  }

  const shown = Object.fromEntries(Object.entries(items).filter(([name]) => name in body.select));
  return jsonInSlices({
    items: shown,
    ...(body.includeTyping ? { typing: Object.fromEntries(Object.entries(typing).filter(([name]) => name in body.select)) } : {}),
    nextCursor,
    ...(await debug.answer(notices)),
  });
}

function describeAge(ms: number): string {
  for (const [unit, size] of [['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000]] as const) {
    if (ms >= size) {
      const n = Math.round((ms / size) * 10) / 10;
      return `${n} ${unit}${n === 1 ? '' : 's'}`;
    }
  }
  return `${Math.round(ms / 1000)} seconds`;
}

/** The feed position just past `seq`: every change after it. */
function feedPosition(seq: number): PagePosition {
  return { s: 0, v: [seq, FEED_END] };
}

/**
 * A cursor belongs to its set's expression and to those of the sets it reads from, which decide what it
 * holds; the limit may change between requests.
 */
function binding(name: string, body: SyncInstancesBody, upstream: readonly string[]) {
  const { limit: _limit, ...rest } = body.with[name];
  const sources = upstream.map((n) => [n, expressionOf(body.with[n])]);
  return {
    op: 'instances/sync',
    set: name,
    expression: rest,
    parameters: body.parameters ?? {},
    ...(sources.length ? { upstream: Object.fromEntries(sources) } : {}),
  };
}

/** An instance as sync answers it: a tombstone with `deletedTime` and without properties. */
function render(shape: ReadShape, row: Record<string, unknown>): Record<string, unknown> {
  const out = shape.render(row);
  if (row.deleted_time !== null && row.deleted_time !== undefined) {
    out.deletedTime = Number(row.deleted_time);
    delete out.properties;
  }
  return out;
}
