/**
 * Search and aggregate over the instances of one view. The text query is split into lower-cased tokens
 * (runs of letters, digits and `_`); an instance matches when, in the searched text properties, every token
 * but the last equals a word and the last begins one (`AND`: all tokens; `OR`: any). SQL narrows the
 * candidates (the view, the filter, and for ASCII tokens a case-insensitive substring test) and the words are
 * then matched here; results are ranked by the number of tokens matched, or ordered by the request's sort.
 * Aggregates run in SQL over the same instances: count, avg, min, max, sum and histograms, per group.
 */
import { badRequest } from '../../http/errors.js';
import { FloatValue } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import { pause } from '../../storage/event-loop.js';
import { likeLiteral, Sql, sql } from '../../storage/sql.js';
import { fromColumn } from './container-tables.js';
import { FilterBudget, parseFilter, type FilterOptions } from './filter.js';
import { fail, viewRef, type Path } from './identifiers.js';
import { globalInstancesCondition } from './global-instances.js';
import { aggregatedBaseProperty, checkAggregate, checkSearch, checkTargetUnits, requireViews, type SourceRead } from './instance-reads.js';
import { ReadShape } from './instance-reads-store.js';
import type { AggregateInstancesBody, SearchInstancesBody } from './instance-schema.js';
import { InstanceSql, requestScope } from './instance-sql.js';
import { kindOf } from './instance-writes-store.js';
import { DM_LIMITS } from './limits.js';
import type { ProjectSchema } from './schema-store.js';
import { visibleSchema } from './space-access.js';
import type { ResolvedView } from './view-resolution.js';
import { renderValue, type StoredValue } from './values.js';

/** The tokens of a text: lower-cased runs of letters, digits and underscores. */
export function tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).filter((t) => t.length > 0);
}

/** How many of the query's tokens the words match: every token but the last as a whole word, the last as a prefix. */
function matched(query: readonly string[], words: ReadonlySet<string>, wordList: readonly string[]): number {
  let n = 0;
  query.forEach((t, i) => {
    if (i === query.length - 1 ? wordList.some((w) => w.startsWith(t)) : words.has(t)) n++;
  });
  return n;
}

interface Scope {
  schema: ProjectSchema;
  view: ResolvedView;
  q: InstanceSql;
  conditions: Sql[];
  source: SourceRead;
}

/** The instances of the view the request reads (its filter, the view's own, the request's scope). */
async function viewScope(services: Services, projectId: number, body: { view: SearchInstancesBody['view']; instanceType?: 'node' | 'edge'; filter?: unknown; targetUnits?: SearchInstancesBody['targetUnits'] }, path: Path) {
  const schema = await visibleSchema(services, projectId);
  const [view] = requireViews([body.view], schema.resolver);
  const instanceType = body.instanceType ?? 'node';
  const options: FilterOptions = { schema: schema.resolver, instanceType, view: view.id, purpose: 'search', budget: new FilterBudget() };
  const q = new InstanceSql(requestScope(services, projectId, schema));
  const conditions = [q.visible(), sql`i.kind = ${kindOf(instanceType)}`, Sql.raw('i.deleted_time IS NULL')];
  conditions.push(q.compile(parseFilter({ hasData: [viewRef(view.id)] }, { schema: schema.resolver, budget: options.budget }, [...path, 'view'])));
  const filter = body.filter !== undefined ? parseFilter(body.filter, options, [...path, 'filter']) : undefined;
  if (filter) conditions.push(q.compile(filter));
  conditions.push(globalInstancesCondition(filter, 'i.space'));
  const source: SourceRead = { view, units: checkTargetUnits(view, body.targetUnits, [...path, 'targetUnits']) };
  return { schema, view, q, conditions, source, options } satisfies Scope & { options: FilterOptions };
}

/** The columns of the searched properties, and the SQL narrowing candidates to those that may match. */
function textMatch(s: Scope, properties: readonly string[], query: readonly string[], operator: 'AND' | 'OR'): { columns: Sql[]; narrow?: Sql } {
  const columns = properties.map((id) => {
    const p = s.view.properties.get(id)!;
    if (p.kind !== 'mapped') throw new Error('unreachable: searched connection');
    return s.q.column({ kind: 'container', container: p.container, property: p.containerPropertyIdentifier, type: p.definition.type });
  });
  if (query.length === 0) return { columns };
  if (columns.length === 0) return { columns, narrow: Sql.raw('FALSE') };
  const ascii = [...new Set(query.filter((t) => /^[\x20-\x7e]+$/.test(t)))];
  // A few words narrow enough, and each costs a parameter per searched property: with AND any of the words
  // narrows, with OR only all of them (past a few, OR narrows too little to pay).
  const like = (words: readonly string[]) =>
    words.map((t) => Sql.or(columns.map((c) => sql`lower(${c}) LIKE ${`%${likeLiteral(t)}%`} ESCAPE '\\'`)).wrap());
  if (ascii.length === 0) return { columns };
  if (operator === 'AND') return { columns, narrow: Sql.and(like(ascii.slice(0, NARROWING_WORDS))) };
  return ascii.length === query.length && ascii.length <= NARROWING_WORDS ? { columns, narrow: Sql.or(like(ascii)).wrap() } : { columns };
}

/** Words of a query that narrow the candidates in SQL. */
const NARROWING_WORDS = 8;

function wordsOf(values: unknown[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof v === 'string' && v.startsWith('[')) {
      try {
        for (const e of JSON.parse(v) as unknown[]) if (typeof e === 'string') out.push(...tokens(e));
        continue;
      } catch {
        // Not a list: a text that starts with a bracket.
      }
    }
    out.push(...tokens(String(v)));
  }
  return out;
}

/** Candidates read per statement: the most a search holds in memory at once, whatever the view holds. */
export const SEARCH_BATCH = 1000;

/** The tokens of a search or aggregate `query`; a 400 past the most a query may have. */
function queryTokens(text: string | undefined): string[] {
  const query = tokens(text ?? '');
  if (query.length > DM_LIMITS.searchQueryWords) fail(['query'], `has ${query.length} words; at most ${DM_LIMITS.searchQueryWords} are allowed`);
  return query;
}

/**
 * The instances the text query (one word at least) matches, batch by batch in id order, with the number of
 * its tokens each matched. Each batch is one statement of at most SEARCH_BATCH candidates, read on a worker
 * (the narrowing may pass over many rows to find them) and continued after the last id read; the event loop
 * gets a turn between batches. So memory holds one batch of candidates, not the view.
 */
async function* searchMatches(services: Services, s: Scope, properties: readonly string[], query: readonly string[], operator: 'AND' | 'OR'): AsyncGenerator<Array<{ id: number; score: number }>> {
  const { columns, narrow } = textMatch(s, properties, query, operator);
  const selected = columns.map((c, i) => sql`, ${c} AS ${Sql.raw(`t${i}`)}`);
  const where = Sql.and([...s.conditions, ...(narrow ? [narrow] : [])]);
  for (let after = 0; ; ) {
    const rows = await services.reads.all<Record<string, unknown>>(
      sql`SELECT i.id${Sql.join(selected, '')} FROM ${s.q.fromAfter(after)} WHERE ${where} AND i.id > ${after} ORDER BY i.id LIMIT ${SEARCH_BATCH}`,
      { scan: true },
    );
    const out: Array<{ id: number; score: number }> = [];
    for (const r of rows) {
      const list = wordsOf(columns.map((_, i) => r[`t${i}`]));
      const n = matched(query, new Set(list), list);
      if (operator === 'AND' ? n === query.length : n > 0) out.push({ id: Number(r.id), score: n });
    }
    yield out;
    if (rows.length < SEARCH_BATCH) return;
    after = Number(rows[rows.length - 1].id);
    await pause();
  }
}

/**
 * The `limit` best of matches given in id order: the most tokens matched first, then in id order. Kept per
 * score, at most `limit` in all: once full, a match displaces the worst kept (the last of the lowest score)
 * when it has a higher score.
 */
class BestMatches {
  private readonly byScore: number[][] = [];
  private kept = 0;

  constructor(private readonly limit: number) {}

  add(id: number, score: number): void {
    if (this.kept < this.limit) {
      (this.byScore[score] ??= []).push(id);
      this.kept++;
      return;
    }
    let low = 0;
    while (!this.byScore[low]?.length) low++;
    if (score <= low) return;
    this.byScore[low].pop();
    (this.byScore[score] ??= []).push(id);
  }

  ids(): number[] {
    return [...this.byScore].reverse().flatMap((ids) => ids ?? []);
  }
}

export async function searchInstances(services: Services, projectId: number, body: SearchInstancesBody) {
  const s = await viewScope(services, projectId, body, []);
  const { properties, sort } = checkSearch(body, s.view, s.options);
  const query = queryTokens(body.query);
  const order = Sql.join(
    [
      ...sort.flatMap((k) => {
        const c = s.q.column(k.target);
        return [sql`(CASE WHEN ${c} IS NULL THEN 1 ELSE 0 END)`, sql`${c} ${Sql.raw(k.direction === 'descending' ? 'DESC' : 'ASC')}`];
      }),
      Sql.raw('i.id'),
    ],
    ', ',
  );
  const limit = body.limit ?? 1000;
  const first = (where: Sql) => services.reads.all<{ id: number }>(sql`SELECT i.id FROM ${s.q.from()} WHERE ${where} ORDER BY ${order} LIMIT ${limit}`, { scan: true });
  let ids: number[];
  if (query.length === 0) {
    // Without words every candidate matches, in order: the first `limit` are the answer.
    ids = (await first(Sql.and(s.conditions))).map((r) => Number(r.id));
  } else if (sort.length > 0) {
    // The first `limit` in the sort's order, of those kept so far and the batch's matches, by the engine.
    ids = [];
    for await (const batch of searchMatches(services, s, properties, query, body.operator ?? 'OR')) {
      if (batch.length === 0) continue;
      const candidates = [...ids, ...batch.map((m) => m.id)];
      ids = (await first(sql`${s.q.visible()} AND i.id IN (${services.db.dialect.idList(candidates)})`)).map((r) => Number(r.id));
    }
  } else {
    const best = new BestMatches(limit);
    for await (const batch of searchMatches(services, s, properties, query, body.operator ?? 'OR')) for (const m of batch) best.add(m.id, m.score);
    ids = best.ids();
  }
  const q = s.q.under('i');
  const shape = new ReadShape(q, [s.source]);
  const rows = ids.length
    ? await services.reads.all<Record<string, unknown>>(sql`SELECT ${shape.select()} FROM ${q.from()} WHERE ${q.visible()} AND i.id IN (${services.db.dialect.idList(ids)})`)
    : [];
  await shape.complete(services.reads, rows);
  const byId = new Map(rows.map((r) => [Number(r.id), r]));
  return { items: ids.flatMap((id) => (byId.has(id) ? [shape.render(byId.get(id)!)] : [])), ...(body.includeTyping ? { typing: shape.typing() } : {}) };
}

export async function aggregateInstances(services: Services, projectId: number, body: AggregateInstancesBody) {
  const s = await viewScope(services, projectId, body, []);
  const { properties, groupBy, aggregates } = checkAggregate(body, s.view, s.options);
  const conditions = [...s.conditions];
  const query = queryTokens(body.query);
  if (query.length > 0) {
    // The ids of the matches, not their text: a few bytes each.
    const ids: number[] = [];
    for await (const batch of searchMatches(services, s, properties, query, body.operator ?? 'OR')) for (const m of batch) ids.push(m.id);
    conditions.push(ids.length ? sql`i.id IN (${services.db.dialect.idList(ids)})` : Sql.raw('FALSE'));
  }
  const prop = (id: string) => {
    const base = aggregatedBaseProperty(s.view, id, s.options, []);
    if (base) return { column: s.q.column(base), type: base.type };
    const p = s.view.properties.get(id)!;
    if (p.kind !== 'mapped') throw badRequest(`${JSON.stringify(id)} is a connection`);
    return { column: s.q.column({ kind: 'container', container: p.container, property: p.containerPropertyIdentifier, type: p.definition.type }), type: p.definition.type };
  };
  const groups = groupBy.map((id, i) => ({ id, ...prop(id), alias: `g${i}` }));
  const selects: Sql[] = groups.map((g) => sql`${g.column} AS ${Sql.raw(g.alias)}`);
  aggregates.forEach((a, i) => {
    if (a.aggregate === 'histogram') return;
    const expr = a.aggregate === 'count' ? (a.property ? sql`count(${prop(a.property).column})` : Sql.raw('count(*)')) : sql`${Sql.raw(a.aggregate)}(${prop(a.property).column})`;
    selects.push(sql`${expr} AS ${Sql.raw(`a${i}`)}`);
    if (a.aggregate === 'sum' || a.aggregate === 'avg') selects.push(sql`count(${prop(a.property).column}) AS ${Sql.raw(`n${i}`)}`);
  });
  if (selects.length === groups.length) selects.push(Sql.raw('count(*) AS n'));
  const where = Sql.and(conditions);
  const groupSql = groups.length ? sql` GROUP BY ${Sql.join(groups.map((g) => Sql.raw(g.alias)), ', ')} ORDER BY ${Sql.join(groups.map((g) => Sql.raw(g.alias)), ', ')} LIMIT ${body.limit ?? 100}` : Sql.raw('');
  const rows = await services.reads.all<Record<string, unknown>>(sql`SELECT ${Sql.join(selects, ', ')} FROM ${s.q.from()} WHERE ${where}${groupSql}`, { scan: true });
  const answered = rows.filter((r) => groups.length === 0 || groups.every((g) => r[g.alias] !== null && r[g.alias] !== undefined));

  const groupKey = (r: Record<string, unknown>) => JSON.stringify(groups.map((g) => r[g.alias] ?? null));
  const histograms = new Map<number, Map<string, Array<{ start: number; count: number }>>>();
  for (const [i, a] of aggregates.entries()) {
    if (a.aggregate !== 'histogram') continue;
    histograms.set(i, await histogram(services, s, where, groups, new Set(answered.map(groupKey)), groupKey, prop(a.property).column, a.interval, ['aggregates', i, 'histogram']));
  }

  const unit = (id: string) => s.source.units.get(id);
  const items = answered.map((r) => {
    const out: Record<string, unknown> = { instanceType: body.instanceType ?? 'node' };
    if (groups.length) {
      const group: Record<string, unknown> = {};
      for (const g of groups) group[g.id] = renderValue(fromColumn(r[g.alias], g.type) as StoredValue, g.type);
      out.group = group;
    }
    out.aggregates = aggregates.map((a, i) => {
      if (a.aggregate === 'histogram') return { aggregate: 'histogram', interval: a.interval, property: a.property, buckets: histograms.get(i)!.get(groupKey(r)) ?? [] };
      const raw = r[`a${i}`];
      const entry: Record<string, unknown> = { aggregate: a.aggregate };
      if (a.property !== undefined) entry.property = a.property;
      if (raw === null || raw === undefined) return entry;
      let value = Number(raw);
      const u = a.aggregate !== 'count' && a.property ? unit(a.property) : undefined;
      if (u) value = a.aggregate === 'sum' ? u.sum(value, Number(r[`n${i}`])) : u.value(value);
      // Counts are integers; the other aggregates are floating-point numbers, as the reference gives them.
      entry.value = a.aggregate === 'count' ? value : new FloatValue(value);
      return entry;
    });
    return out;
  });
  return { items };
}

/**
 * The buckets of a histogram in each answered group: a bucket of `interval` width per value range that holds
 * a value, at most `DM_LIMITS.histogramBuckets` in all (a 400 naming the limit past it). Read in the order
 * of the groups (the order that chose the answered groups, so theirs come first) and cut past the limit, so
 * the work and the answer stay bounded whatever the interval. A bucket's start is a whole multiple of the
 * interval, which must stay exact: a value more than 2^53 intervals from zero is a 400 too.
 */
async function histogram(
  services: Services,
  s: Scope,
  where: Sql,
  groups: ReadonlyArray<{ column: Sql; alias: string }>,
  answered: ReadonlySet<string>,
  groupKey: (r: Record<string, unknown>) => string,
  column: Sql,
  interval: number,
  path: Path,
): Promise<Map<string, Array<{ start: number; count: number }>>> {
  const max = DM_LIMITS.histogramBuckets;
  const exact = interval * 2 ** 53;
  // Past that the bucket number is not exact, and its computation may overflow (an error on PostgreSQL).
  const bucket = Number.isFinite(exact)
    ? sql`(CASE WHEN abs(${column}) <= ${exact} THEN floor(${column} * 1.0 / ${interval}) * ${interval} END)`
    : sql`(floor(${column} * 1.0 / ${interval}) * ${interval})`;
  const order = Sql.join([...groups.map((g) => Sql.raw(g.alias)), Sql.raw('b')], ', ');
  const named = groups.map((g) => sql`${g.column} IS NOT NULL`);
  const rows = await services.reads.all<Record<string, unknown>>(
    sql`SELECT ${Sql.join([...groups.map((g) => sql`${g.column} AS ${Sql.raw(g.alias)}`), sql`${bucket} AS b`, Sql.raw('count(*) AS c')], ', ')} FROM ${s.q.from()} WHERE ${Sql.and([
      where,
      sql`${column} IS NOT NULL`,
      ...named,
    ])} GROUP BY ${order} ORDER BY ${order} LIMIT ${max + 1}`,
    { scan: true },
  );
  const byGroup = new Map<string, Array<{ start: number; count: number }>>();
  let buckets = 0;
  for (const r of rows) {
    const key = groupKey(r);
    // The answered groups come first; the rows after them belong to groups the answer leaves out.
    if (!answered.has(key)) break;
    if (++buckets > max) fail(path, `the histogram has more than ${max} buckets; use a larger interval or a narrower filter`);
    if (r.b === null || r.b === undefined) fail([...path, 'interval'], `${interval} is too small for the values of the property: a bucket would start more than 2^53 intervals from zero`);
    let list = byGroup.get(key);
    if (!list) byGroup.set(key, (list = []));
    list.push({ start: Number(r.b), count: Number(r.c) });
  }
  return byGroup;
}
