/**
 * `POST /streams/{streamId}/records/aggregate`: a tree of named aggregates over the records a filter and a
 * `lastUpdatedTime` range select.
 *
 * - Metrics: `count` (of records, or of the values of a property), `sum`, `avg`, `min`, `max`. An empty set
 *   has count 0 and sum 0, and `null` for the others.
 * - Buckets, each of which may hold further aggregates over its records: `uniqueValues` (the `size` most
 *   frequent values, ties by value), `numberHistogram` (buckets of `interval` width), `timeHistogram`
 *   (`calendarInterval` months, quarters, years and ISO weeks in UTC, or a `fixedInterval`), `filters` (a
 *   bucket per filter). Histograms answer every bucket from the first to the last holding a record, empty
 *   ones included, within `hardBounds` (inclusive for numbers, `[min, max)` for times).
 * - Pipeline: `movingFunction`, inside a histogram, over a window of the buckets before each one (the
 *   bucket itself excluded): `bucketsPath` `_count` or the identifier of a sibling metric.
 *
 * A tree has at most 5 aggregates on a level, 5 levels and 16 aggregates in all, and its `filters` at most 30
 * buckets in all. Identifiers follow the rule of the request's version (dated-changes.ts): from 20260325 they
 * hold no `[`, `]`, `>` or `.`, are not `_count` or `_bucket_count`, and are unique in the tree; before, any
 * text of 1 to 255 characters.
 *
 * Each aggregate is one SQL statement grouped by the bucket keys of the aggregates above it (a `filters`
 * bucket adds its filter to the statement instead), so the statements of a tree are as many as its
 * aggregates (times its filter buckets), however many buckets they answer.
 */
import { badRequest } from '../../http/errors.js';
import type { DatedValue } from '../../http/dated-changes.js';
import type { Services } from '../../http/services.js';
import { isPlainObject } from '../../query/filter.js';
import { Sql, sql } from '../../storage/sql.js';
import { fromColumn } from '../models/container-tables.js';
import type { ContainerDefinition } from '../models/containers.js';
import { describeTarget, parsePropertyReference, type DmFilter, type FilterSchema, type PropertyTarget } from '../models/filter.js';
import { fail, type ContainerId, type Path } from '../models/identifiers.js';
import { isList, isNumericType } from '../models/property-types.js';
import { parseTimestamp } from '../models/timestamps.js';
import { describeType, renderValue } from '../models/values.js';
import type { UnitConversion } from '../units/conversion.js';
import { liveRecords, recordFilter, recordOptions, recordSchema, RecordUnits, typingOf } from './record-reads.js';
import { RecordSql } from './record-sql.js';
import { RECORD_LIMITS, type AggregateRecordsBody } from './schema.js';
import { readableStream } from './streams.js';

type IdentifierRule = DatedValue<'recordAggregateIdentifiers'>;

type Metric = 'avg' | 'sum' | 'min' | 'max' | 'count';
const MOVING_FUNCTIONS = ['MovingFunctions.max', 'MovingFunctions.min', 'MovingFunctions.sum', 'MovingFunctions.unweightedAvg', 'MovingFunctions.linearWeightedAvg'] as const;
const CALENDAR = ['1s', '1m', '1h', '1d', '1w', '1M', '1q', '1y'] as const;
const KINDS = ['avg', 'count', 'min', 'max', 'sum', 'uniqueValues', 'numberHistogram', 'timeHistogram', 'filters', 'movingFunction'];

/** A property an aggregate reads, with the conversion its values answer in. */
interface Operand {
  target: PropertyTarget;
  unit?: UnitConversion;
}

type Node =
  | { kind: Metric; operand?: Operand }
  | { kind: 'uniqueValues'; operand: Operand; size: number; subs: Named[] }
  | { kind: 'numberHistogram'; operand: Operand; interval: number; min?: number; max?: number; subs: Named[] }
  | { kind: 'timeHistogram'; operand: Operand; interval: TimeInterval; min?: number; max?: number; subs: Named[] }
  | { kind: 'filters'; filters: DmFilter[]; subs: Named[] }
  | { kind: 'movingFunction'; bucketsPath: string; window: number; fn: (typeof MOVING_FUNCTIONS)[number] };

interface Named {
  id: string;
  node: Node;
}

type TimeInterval = { fixed: number; offset: number } | { calendar: 'month' | 'quarter' | 'year' };

/** Kept unique values that the statements of the aggregates inside name; past it they read every value. */
const KEPT_VALUES_NAMED = 1000;
const DAY = 86_400_000;
/** 1970-01-05, the first Monday after the epoch: ISO weeks start on Mondays. */
const FIRST_MONDAY = 4 * DAY;
const FIXED_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY };

// ---------------------------------------------------------------------------------------------------------
// The request, checked

interface ParseState {
  rule: IdentifierRule;
  schema: FilterSchema;
  units: RecordUnits;
  ids: Set<string>;
  total: number;
  filterBuckets: number;
  /** The container properties read, for `typing`. */
  read: Map<string, { id: ContainerId; definition: ContainerDefinition; property: string; unit?: UnitConversion }>;
}

function checkIdentifier(id: string, state: ParseState, path: Path): void {
  if (id.length < 1 || id.length > 255) fail(path, `an aggregate identifier has 1 to 255 characters, got ${id.length}`);
  if (state.rule === 'lenient') return;
  if (/[[\]>.]/.test(id)) fail(path, `the aggregate identifier ${JSON.stringify(id)} holds one of "[", "]", ">", "."; from version 20260325 identifiers cannot (they are the separators of bucketsPath)`);
  if (id === '_count' || id === '_bucket_count') fail(path, `${JSON.stringify(id)} is reserved and cannot be an aggregate identifier`);
  if (state.ids.has(id)) fail(path, `the aggregate identifier ${JSON.stringify(id)} is used twice in the tree; from version 20260325 identifiers are unique in the whole tree`);
  state.ids.add(id);
}

function fields(raw: unknown, allowed: readonly string[], required: readonly string[], path: Path): Record<string, unknown> {
  if (!isPlainObject(raw)) fail(path, raw === null ? 'null is not allowed' : 'expected an object');
  for (const k of Object.keys(raw)) {
    if (!allowed.includes(k)) fail(path, `unknown property ${JSON.stringify(k)} (allowed: ${allowed.join(', ')})`);
    if (raw[k] === null) fail([...path, k], 'null is not allowed');
  }
  for (const k of required) if (!(k in raw)) fail(path, `missing required property "${k}"`);
  return raw;
}

function operand(raw: unknown, state: ParseState, path: Path, accepts: (t: PropertyTarget) => boolean, wanted: string): Operand {
  const target = parsePropertyReference(raw, recordOptions(state.schema), path);
  if (isList(target.type) || !accepts(target)) fail(path, `${describeTarget(target)} is ${target.kind === 'base' ? 'a field of the record' : describeType(target.type)}; this aggregate takes ${wanted}`);
  if (target.kind === 'base') return { target };
  const definition = state.schema.container(target.container)!;
  const unit = state.units.of(target.container, target.property, target.type);
  state.read.set(`${target.container.space}:${target.container.externalId}.${target.property}`, { id: target.container, definition, property: target.property, unit });
  return { target, ...(unit ? { unit } : {}) };
}

const containerProperty = (t: PropertyTarget) => t.kind === 'container';
const numberProperty = (t: PropertyTarget) => t.kind === 'container' && isNumericType(t.type);
const orderedProperty = (t: PropertyTarget) =>
  t.kind === 'base' ? t.field === 'createdTime' || t.field === 'lastUpdatedTime' : isNumericType(t.type) || t.type.type === 'timestamp';
const timeProperty = (t: PropertyTarget) => (t.kind === 'base' ? t.field === 'createdTime' || t.field === 'lastUpdatedTime' : t.type.type === 'timestamp');
const groupable = (t: PropertyTarget) => (t.kind === 'base' ? t.field === 'space' : t.type.type !== 'json');

function parseTree(raw: unknown, state: ParseState, path: Path, depth: number, inHistogram: boolean): Named[] {
  if (!isPlainObject(raw)) fail(path, 'expected an object of aggregates by identifier');
  const entries = Object.entries(raw);
  if (entries.length < 1) fail(path, 'needs at least one aggregate');
  if (entries.length > RECORD_LIMITS.aggregatesPerLevel) fail(path, `at most ${RECORD_LIMITS.aggregatesPerLevel} aggregates on a level, got ${entries.length}`);
  if (depth > RECORD_LIMITS.aggregateDepth) fail(path, `aggregates nest at most ${RECORD_LIMITS.aggregateDepth} levels deep`);
  return entries.map(([id, body]) => {
    const where = [...path, id];
    checkIdentifier(id, state, where);
    if (++state.total > RECORD_LIMITS.aggregatesInAll) fail(where, `a request has at most ${RECORD_LIMITS.aggregatesInAll} aggregates in all`);
    if (!isPlainObject(body) || Object.keys(body).length !== 1 || !KINDS.includes(Object.keys(body)[0])) {
      fail(where, `expected exactly one of ${KINDS.join(', ')}`);
    }
    const kind = Object.keys(body)[0];
    return { id, node: parseNode(kind, body[kind], state, [...where, kind], depth, inHistogram) };
  });
}

function subAggregates(f: Record<string, unknown>, state: ParseState, path: Path, depth: number, histogram: boolean): Named[] {
  return f.aggregates === undefined ? [] : parseTree(f.aggregates, state, [...path, 'aggregates'], depth + 1, histogram);
}

function parseNode(kind: string, raw: unknown, state: ParseState, path: Path, depth: number, inHistogram: boolean): Node {
  const at = (k: string) => [...path, k];
  switch (kind) {
    case 'avg':
    case 'sum': {
      const f = fields(raw, ['property'], ['property'], path);
      return { kind, operand: operand(f.property, state, at('property'), numberProperty, 'a number property of a container') };
    }
    case 'min':
    case 'max': {
      const f = fields(raw, ['property'], ['property'], path);
      return { kind, operand: operand(f.property, state, at('property'), orderedProperty, 'a number or timestamp property, or ["createdTime"] or ["lastUpdatedTime"]') };
    }
    case 'count': {
      const f = fields(raw ?? {}, ['property'], [], path);
      return { kind, ...(f.property === undefined ? {} : { operand: operand(f.property, state, at('property'), containerProperty, 'a property of a container') }) };
    }
    case 'uniqueValues': {
      const f = fields(raw, ['property', 'aggregates', 'size'], ['property'], path);
      const size = f.size ?? RECORD_LIMITS.uniqueValuesDefault;
      if (!Number.isInteger(size) || (size as number) < 1 || (size as number) > RECORD_LIMITS.uniqueValuesMax) fail(at('size'), `expected a whole number from 1 to ${RECORD_LIMITS.uniqueValuesMax}`);
      const op = operand(f.property, state, at('property'), groupable, 'a single-valued property of a container (not json) or ["space"]');
      return { kind, operand: op, size: size as number, subs: subAggregates(f, state, path, depth, false) };
    }
    case 'numberHistogram': {
      const f = fields(raw, ['property', 'interval', 'hardBounds', 'aggregates'], ['property', 'interval'], path);
      const interval = typeof f.interval === 'string' && f.interval.trim() !== '' ? Number(f.interval) : f.interval;
      if (typeof interval !== 'number' || !Number.isFinite(interval) || interval <= 0) fail(at('interval'), 'expected a positive number');
      const op = operand(f.property, state, at('property'), numberProperty, 'a number property of a container');
      const bounds = hardBounds(f.hardBounds, at('hardBounds'), (v, p) => (typeof v === 'number' && Number.isFinite(v) ? v : fail(p, 'expected a number')));
      return { kind, operand: op, interval, ...bounds, subs: subAggregates(f, state, path, depth, true) };
    }
    case 'timeHistogram': {
      const f = fields(raw, ['property', 'calendarInterval', 'fixedInterval', 'hardBounds', 'aggregates'], ['property'], path);
      if ((f.calendarInterval === undefined) === (f.fixedInterval === undefined)) fail(path, 'give exactly one of calendarInterval and fixedInterval');
      const op = operand(f.property, state, at('property'), timeProperty, 'a timestamp property, or ["createdTime"] or ["lastUpdatedTime"]');
      const bounds = hardBounds(f.hardBounds, at('hardBounds'), (v, p) => {
        const ms = typeof v === 'string' ? parseTimestamp(v) : undefined;
        return ms ?? fail(p, 'expected an ISO 8601 time with its offset, such as "2024-05-15T20:00:00Z" (epoch milliseconds are not taken here)');
      });
      return { kind, operand: op, interval: timeInterval(f, path), ...bounds, subs: subAggregates(f, state, path, depth, true) };
    }
    case 'filters': {
      const f = fields(raw, ['filters', 'aggregates'], ['filters'], path);
      if (!Array.isArray(f.filters) || f.filters.length < 1 || f.filters.length > 10) fail(at('filters'), 'expected 1 to 10 filters');
      state.filterBuckets += f.filters.length;
      if (state.filterBuckets > RECORD_LIMITS.filterBuckets) fail(at('filters'), `a request has at most ${RECORD_LIMITS.filterBuckets} filters buckets in all`);
      const filters = f.filters.map((x, i) => recordFilter(x, state.schema, [...at('filters'), i])!);
      return { kind, filters, subs: subAggregates(f, state, path, depth, false) };
    }
    default: {
      const f = fields(raw, ['bucketsPath', 'window', 'function'], ['bucketsPath', 'window', 'function'], path);
      if (!inHistogram) fail(path, 'a movingFunction goes among the aggregates of a numberHistogram or timeHistogram');
      if (typeof f.bucketsPath !== 'string' || f.bucketsPath.length < 1 || f.bucketsPath.length > 1280) fail(at('bucketsPath'), 'expected text of 1 to 1280 characters');
      if (!Number.isInteger(f.window) || (f.window as number) < 1) fail(at('window'), 'expected a whole number of at least 1');
      if (!(MOVING_FUNCTIONS as readonly unknown[]).includes(f.function)) fail(at('function'), `expected one of ${MOVING_FUNCTIONS.join(', ')}`);
      return { kind: 'movingFunction', bucketsPath: f.bucketsPath, window: f.window as number, fn: f.function as (typeof MOVING_FUNCTIONS)[number] };
    }
  }
}

function hardBounds(raw: unknown, path: Path, value: (v: unknown, p: Path) => number): { min?: number; max?: number } {
  if (raw === undefined) return {};
  const f = fields(raw, ['min', 'max'], [], path);
  if (f.min === undefined && f.max === undefined) fail(path, 'give min, max or both');
  return { ...(f.min !== undefined ? { min: value(f.min, [...path, 'min']) } : {}), ...(f.max !== undefined ? { max: value(f.max, [...path, 'max']) } : {}) };
}

function timeInterval(f: Record<string, unknown>, path: Path): TimeInterval {
  if (f.calendarInterval !== undefined) {
    const c = f.calendarInterval;
    if (!(CALENDAR as readonly unknown[]).includes(c)) fail([...path, 'calendarInterval'], `expected one of ${CALENDAR.join(', ')}`);
    if (c === '1M') return { calendar: 'month' };
    if (c === '1q') return { calendar: 'quarter' };
    if (c === '1y') return { calendar: 'year' };
    if (c === '1w') return { fixed: 7 * DAY, offset: FIRST_MONDAY };
    return { fixed: FIXED_UNITS[(c as string).slice(1)], offset: 0 };
  }
  const m = typeof f.fixedInterval === 'string' ? /^(\d{1,12})(ms|s|m|h|d)$/.exec(f.fixedInterval) : null;
  if (!m || Number(m[1]) === 0) fail([...path, 'fixedInterval'], 'expected a length of time such as "30s", "15m", "12h" or "7d" (units ms, s, m, h, d)');
  return { fixed: Number(m[1]) * FIXED_UNITS[m[2]], offset: 0 };
}

// ---------------------------------------------------------------------------------------------------------
// The answer

/** The bucket keys of the aggregates above one, each a column of the statements below it. */
interface Context {
  keys: Array<{ expr: Sql; kind: 'number' | 'text' }>;
  where: Sql[];
}

type Results = Map<string, unknown>;

class Evaluator {
  constructor(
    private readonly services: Services,
    private readonly q: RecordSql,
    private readonly base: Sql[],
  ) {}

  /** The answers of `named` for each bucket above (by the JSON of its keys), in the order they are named. */
  async tree(named: readonly Named[], ctx: Context): Promise<Map<string, Record<string, unknown>>> {
    const results: Array<[string, Results]> = [];
    for (const { id, node } of named) if (node.kind !== 'movingFunction') results.push([id, await this.node(node, ctx)]);
    const parents = new Set(results.flatMap(([, r]) => [...r.keys()]));
    const out = new Map<string, Record<string, unknown>>();
    for (const parent of parents) {
      const answer = this.empty(named);
      for (const [id, r] of results) if (r.has(parent)) answer[id] = r.get(parent);
      out.set(parent, answer);
    }
    return out;
  }

  /** What the aggregates answer in a bucket that none of their statements reached: nothing counted. */
  empty(named: readonly Named[]): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const { id, node } of named) {
      if (node.kind === 'movingFunction') continue;
      out[id] = emptyResult(node);
    }
    return out;
  }

  private async rows(select: Sql[], ctx: Context, extra: Sql[] = []): Promise<Array<Record<string, unknown>>> {
    const keys = ctx.keys.map((k, i) => sql`${k.expr} AS ${Sql.raw(`k${i}`)}`);
    const columns = [...keys, ...select];
    const group = ctx.keys.length + extra.length;
    const groupBy = group ? sql` GROUP BY ${Sql.raw(Array.from({ length: group }, (_, i) => String(i + 1)).join(', '))}` : sql``;
    return this.services.reads.all(sql`SELECT ${Sql.join(columns, ', ')} FROM records r WHERE ${Sql.and([...this.base, ...ctx.where])}${groupBy}`);
  }

  private parentKey(row: Record<string, unknown>, ctx: Context): string {
    return JSON.stringify(ctx.keys.map((k, i) => normalizeKey(row[`k${i}`], k.kind)));
  }

  private async node(node: Exclude<Node, { kind: 'movingFunction' }>, ctx: Context): Promise<Results> {
    switch (node.kind) {
      case 'avg':
      case 'sum':
      case 'min':
      case 'max':
      case 'count':
        return this.metric(node, ctx);
      case 'uniqueValues':
        return this.uniqueValues(node, ctx);
      case 'numberHistogram':
      case 'timeHistogram':
        return this.histogram(node, ctx);
      case 'filters':
        return this.filters(node, ctx);
    }
  }

  private async metric(node: { kind: Metric; operand?: Operand }, ctx: Context): Promise<Results> {
    const value = node.operand ? this.q.column(node.operand.target) : undefined;
    const select = [value ? sql`${Sql.raw(node.kind)}(${value}) AS v` : sql`count(*) AS v`, value ? sql`count(${value}) AS n` : sql`count(*) AS n`];
    const out: Results = new Map();
    for (const row of await this.rows(select, ctx)) out.set(this.parentKey(row, ctx), metricResult(node.kind, row.v, Number(row.n), node.operand?.unit));
    return out;
  }

  private async uniqueValues(node: Extract<Node, { kind: 'uniqueValues' }>, ctx: Context): Promise<Results> {
    const value = this.q.column(node.operand.target);
    const kind = keyKind(node.operand.target);
    const keys = ctx.keys.map((_, i) => `k${i}`);
    const partition = keys.length ? `PARTITION BY ${keys.join(', ')} ` : '';
    const inner = sql`SELECT ${Sql.join([...ctx.keys.map((k, i) => sql`${k.expr} AS ${Sql.raw(`k${i}`)}`), sql`${value} AS v`, sql`count(*) AS c`], ', ')}
      FROM records r WHERE ${Sql.and([...this.base, ...ctx.where, sql`${value} IS NOT NULL`])} GROUP BY ${Sql.raw(Array.from({ length: keys.length + 1 }, (_, i) => String(i + 1)).join(', '))}`;
    const rows = await this.services.reads.all<Record<string, unknown>>(
      sql`SELECT * FROM (SELECT g.*, row_number() OVER (${Sql.raw(partition)}ORDER BY g.c DESC, g.v) AS rn FROM (${inner}) g) t WHERE t.rn <= ${node.size} ORDER BY t.rn`,
    );
    // The aggregates inside are computed for the values kept only (when they are few enough to name), not
    // for every value of a property that may have millions.
    const kept = [...new Set(rows.map((r) => normalizeKey(r.v, kind)))];
    const within = kept.length <= KEPT_VALUES_NAMED ? [sql`${value} IN (${kept.length ? sql`${kept}` : Sql.raw('NULL')})`] : [];
    const subs = node.subs.length ? await this.tree(node.subs, { keys: [...ctx.keys, { expr: value, kind }], where: [...ctx.where, ...within] }) : undefined;
    const out = new Map<string, Array<Record<string, unknown>>>();
    for (const row of rows) {
      const parent = this.parentKey(row, ctx);
      const key = normalizeKey(row.v, kind);
      const bucket: Record<string, unknown> = { count: Number(row.c), value: keyValue(key, node.operand) };
      if (subs) bucket.aggregates = subs.get(JSON.stringify([...JSON.parse(parent), key])) ?? this.empty(node.subs);
      (out.get(parent) ?? out.set(parent, []).get(parent)!).push(bucket);
    }
    return new Map([...out].map(([parent, buckets]) => [parent, { uniqueValueBuckets: buckets }]));
  }

  private bucketExpr(node: Extract<Node, { kind: 'numberHistogram' | 'timeHistogram' }>): Sql {
    const x = this.q.column(node.operand.target);
    if (node.kind === 'numberHistogram') {
      const v = node.operand.unit ? sql`(${x} * ${node.operand.unit.scale} + ${node.operand.unit.shift})` : x;
      return sql`(floor(${v} / ${node.interval}) * ${node.interval})`;
    }
    const i = node.interval;
    if ('calendar' in i) return this.q.dialect.calendarStart(x, i.calendar);
    return sql`(floor((${x} - ${i.offset}) / ${i.fixed}) * ${i.fixed} + ${i.offset})`;
  }

  private async histogram(node: Extract<Node, { kind: 'numberHistogram' | 'timeHistogram' }>, ctx: Context): Promise<Results> {
    const bucket = this.bucketExpr(node);
    const bounds: Sql[] = [];
    if (node.min !== undefined) bounds.push(sql`${bucket} >= ${node.min}`);
    if (node.max !== undefined) bounds.push(node.kind === 'numberHistogram' ? sql`${bucket} <= ${node.max}` : sql`${bucket} < ${node.max}`);
    const where = [...ctx.where, sql`${bucket} IS NOT NULL`, ...bounds];
    const rows = await this.rows([sql`${bucket} AS b`, sql`count(*) AS c`], { keys: ctx.keys, where }, [bucket]);
    const counts = new Map<string, Map<number, number>>();
    for (const row of rows) {
      const parent = this.parentKey(row, ctx);
      (counts.get(parent) ?? counts.set(parent, new Map()).get(parent)!).set(Number(row.b), Number(row.c));
    }
    const filled = new Map<string, number[]>();
    let total = 0;
    for (const [parent, byKey] of counts) {
      const keys = fillBuckets([...byKey.keys()], node);
      total += keys.length;
      if (total > RECORD_LIMITS.histogramBuckets) {
        throw badRequest(`${node.kind}: the histogram has more than ${RECORD_LIMITS.histogramBuckets} buckets; use a larger interval, hardBounds or a narrower filter`);
      }
      filled.set(parent, keys);
    }
    const subs = node.subs.length ? await this.tree(node.subs, { keys: [...ctx.keys, { expr: bucket, kind: 'number' }], where }) : undefined;
    const moving = node.subs.filter((n) => n.node.kind === 'movingFunction');
    const out: Results = new Map();
    for (const [parent, keys] of filled) {
      const byKey = counts.get(parent)!;
      const buckets = keys.map((key) => {
        const b: Record<string, unknown> = { intervalStart: node.kind === 'numberHistogram' ? key : isoTime(key), count: byKey.get(key) ?? 0 };
        if (subs) b.aggregates = subs.get(JSON.stringify([...JSON.parse(parent), key])) ?? this.empty(node.subs);
        return b;
      });
      for (const m of moving) applyMovingFunction(m, buckets);
      out.set(parent, { [node.kind === 'numberHistogram' ? 'numberHistogramBuckets' : 'timeHistogramBuckets']: buckets });
    }
    return out;
  }

  private async filters(node: Extract<Node, { kind: 'filters' }>, ctx: Context): Promise<Results> {
    const perFilter: Array<{ counts: Map<string, number>; subs?: Map<string, Record<string, unknown>> }> = [];
    const parents = new Set<string>();
    for (const f of node.filters) {
      const where = [...ctx.where, this.q.compile(f)];
      const counts = new Map<string, number>();
      for (const row of await this.rows([sql`count(*) AS c`], { keys: ctx.keys, where })) {
        const parent = this.parentKey(row, ctx);
        counts.set(parent, Number(row.c));
        parents.add(parent);
      }
      perFilter.push({ counts, ...(node.subs.length ? { subs: await this.tree(node.subs, { keys: ctx.keys, where }) } : {}) });
    }
    // Every bucket above has its filter buckets, empty ones too.
    if (ctx.keys.length === 0) parents.add('[]');
    const out: Results = new Map();
    for (const parent of parents) {
      out.set(parent, {
        filterBuckets: perFilter.map((p) => ({
          count: p.counts.get(parent) ?? 0,
          ...(p.subs ? { aggregates: p.subs.get(parent) ?? this.empty(node.subs) } : {}),
        })),
      });
    }
    return out;
  }
}

function emptyResult(node: Exclude<Node, { kind: 'movingFunction' }>): unknown {
  switch (node.kind) {
    case 'count':
      return { count: 0 };
    case 'sum':
      return { sum: 0 };
    case 'avg':
    case 'min':
    case 'max':
      return { [node.kind]: null };
    case 'uniqueValues':
      return { uniqueValueBuckets: [] };
    case 'numberHistogram':
      return { numberHistogramBuckets: [] };
    case 'timeHistogram':
      return { timeHistogramBuckets: [] };
    case 'filters':
      return { filterBuckets: node.filters.map(() => ({ count: 0 })) };
  }
}

function metricResult(kind: Metric, raw: unknown, n: number, unit: UnitConversion | undefined): unknown {
  if (kind === 'count') return { count: Number(raw) };
  if (raw === null || raw === undefined || n === 0) return emptyResult({ kind } as { kind: Metric });
  const v = Number(raw);
  const converted = unit ? (kind === 'sum' ? unit.sum(v, n) : unit.value(v)) : v;
  return { [kind]: converted };
}

const keyKind = (t: PropertyTarget): 'number' | 'text' => (t.kind === 'base' ? (t.field === 'space' || t.field === 'externalId' ? 'text' : 'number') : isNumericType(t.type) || ['timestamp', 'boolean'].includes(t.type.type) ? 'number' : 'text');

function normalizeKey(v: unknown, kind: 'number' | 'text'): number | string | null {
  if (v === null || v === undefined) return null;
  return kind === 'number' ? Number(v) : String(v);
}

/** A unique value as clients read it: in the property's form and units. */
function keyValue(key: number | string | null, op: Operand): unknown {
  if (key === null) return null;
  if (op.target.kind === 'base') return key;
  const stored = fromColumn(key, op.target.type);
  if (stored === null) return null;
  return renderValue(op.unit ? op.unit.value(stored as number) : stored, op.target.type);
}

/** Every bucket from the first to the last key, in order. */
function fillBuckets(keys: number[], node: Extract<Node, { kind: 'numberHistogram' | 'timeHistogram' }>): number[] {
  if (keys.length === 0) return [];
  const first = Math.min(...keys);
  const last = Math.max(...keys);
  const out: number[] = [];
  const limit = RECORD_LIMITS.histogramBuckets + 1;
  if (node.kind === 'numberHistogram') {
    const start = Math.round(first / node.interval);
    for (let i = 0; start + i <= Math.round(last / node.interval) && out.length < limit; i++) out.push((start + i) * node.interval);
    return out;
  }
  const interval = node.interval;
  if ('fixed' in interval) {
    for (let t = first; t <= last && out.length < limit; t += interval.fixed) out.push(t);
    return out;
  }
  const months = interval.calendar === 'month' ? 1 : interval.calendar === 'quarter' ? 3 : 12;
  const d = new Date(first);
  for (let i = 0; out.length < limit; i++) {
    const t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + i * months, 1);
    if (t > last) break;
    out.push(t);
  }
  return out;
}

/** A bucket's start as the reference writes it: ISO 8601 UTC, milliseconds only where there are some. */
function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Sets `fnValue` of a moving function in each of a histogram's buckets, from the window of buckets before it. */
function applyMovingFunction(m: Named, buckets: Array<Record<string, unknown>>): void {
  const node = m.node as Extract<Node, { kind: 'movingFunction' }>;
  const series = buckets.map((b) => bucketValue(b, node.bucketsPath, m.id));
  buckets.forEach((b, i) => {
    const window = series.slice(Math.max(0, i - node.window), i).filter((v): v is number => v !== null && Number.isFinite(v));
    const value = movingValue(node.fn, window);
    ((b.aggregates ??= {}) as Record<string, unknown>)[m.id] = { fnValue: value === null || Number.isNaN(value) ? null : value };
  });
}

function bucketValue(bucket: Record<string, unknown>, path: string, id: string): number | null {
  if (path === '_count') return Number(bucket.count);
  const sibling = (bucket.aggregates as Record<string, Record<string, unknown>> | undefined)?.[path];
  if (sibling === undefined) {
    throw badRequest(`${id}.movingFunction.bucketsPath: ${JSON.stringify(path)} is neither "_count" nor the identifier of a metric aggregate beside it`);
  }
  const value = sibling.avg ?? sibling.sum ?? sibling.min ?? sibling.max ?? sibling.count;
  if (value === undefined) throw badRequest(`${id}.movingFunction.bucketsPath: ${JSON.stringify(path)} names a bucket aggregate; name "_count" or a metric aggregate (avg, sum, min, max, count)`);
  return value === null ? null : Number(value);
}

function movingValue(fn: (typeof MOVING_FUNCTIONS)[number], values: number[]): number | null {
  switch (fn) {
    case 'MovingFunctions.sum':
      return values.reduce((a, b) => a + b, 0);
    case 'MovingFunctions.max':
      return values.length ? Math.max(...values) : null;
    case 'MovingFunctions.min':
      return values.length ? Math.min(...values) : null;
    case 'MovingFunctions.unweightedAvg':
      return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
    case 'MovingFunctions.linearWeightedAvg': {
      if (!values.length) return null;
      // The newest value weighs most: weights 1, 2, ..., n from the oldest.
      const weights = values.map((_, i) => i + 1);
      return values.reduce((sum, v, i) => sum + v * weights[i], 0) / weights.reduce((a, b) => a + b, 0);
    }
  }
}

export async function aggregateRecords(services: Services, projectId: number, streamExternalId: string, body: AggregateRecordsBody, rule: IdentifierRule) {
  const stream = await readableStream(services.reads, projectId, streamExternalId);
  const schema = await recordSchema(services, projectId);
  const units = new RecordUnits(body.targetUnits, schema);
  const state: ParseState = { rule, schema, units, ids: new Set(), total: 0, filterBuckets: 0, read: new Map() };
  const named = parseTree(body.aggregates, state, ['aggregates'], 1, false);
  const q = new RecordSql(services.db.dialect, services.access);
  const filter = recordFilter(body.filter, schema);
  const base = [...liveRecords(q, projectId, stream, body.lastUpdatedTime, services.now()), ...(filter ? [q.compile(filter)] : [])];
  const evaluator = new Evaluator(services, q, base);
  const answers = await evaluator.tree(named, { keys: [], where: [] });
  const aggregates = answers.get('[]') ?? evaluator.empty(named);
  return { aggregates, ...(body.includeTyping ? { typing: typingOf(state.read.values()) } : {}) };
}
