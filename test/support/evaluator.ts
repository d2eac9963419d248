/**
 * A small, deliberately naive in-memory evaluator of the filter language: advanced filters, the relevance
 * score, sorting (order, nulls, id tie-break) and partitions. Property-based tests run the same query through
 * the SQL path and through this evaluator and require the answers to agree.
 *
 * It works on items as the API returns them (absent field = no value) and knows nothing of SQL. Everything
 * resource-specific is a table of property kinds, so time series and assets reuse it by declaring theirs.
 *
 * Semantics (the intended ones; where the SQL path disagrees, the SQL path has the bug):
 * - Two-valued logic: a leaf on a missing value is false, `not` inverts, `and`/`or` as usual.
 * - Strings compare by code point (binary), numbers numerically.
 * - Metadata keys and values match case-insensitively (both sides lower-cased); values longer than the
 *   filterable length never satisfy a value leaf but still count for `exists`. `["metadata"]` matches if any
 *   entry satisfies the leaf; `["metadata", k]` if any entry whose lower-cased key is k's does.
 * - `search` matches when the text shares a word (run of Unicode letters/digits, case-insensitive) with the query.
 * - `_score_` = number of leaves of the advanced filter the item satisfies, plus a fraction in [0, 1) for each
 *   matched search leaf (its full-text relevance, unknown here); so with search leaves only bounds are known.
 */
import { partitionOf } from '../../src/query/partition.js';

export type PropertyKind = 'integer' | 'string' | 'boolean' | 'integerArray' | 'stringArray' | 'metadata';

export interface PropertyDecl {
  /** A dotted name is a nested path: `instanceId.space` is `["instanceId", "space"]`, read from `item.instanceId.space`. */
  name: string;
  kind: PropertyKind;
  /** Target of `search` leaves. */
  searchable?: boolean;
  /** Only a `search` target (no other leaf applies to it). */
  searchOnly?: boolean;
  /** The fields a `search` leaf on this property looks at (default: the property itself); any of them may match. */
  searchOver?: readonly string[];
  /** Can be a sort key (metadata: `["metadata", key]`). */
  sortable?: boolean;
}

export interface ResourceModel {
  properties: readonly PropertyDecl[];
  /** Metadata values longer than this cannot be filtered (nor sorted) on. */
  maxFilterableMetadataLength: number;
  /** Order without an explicit sort (and without a search leaf, which orders by relevance). */
  defaultSort: readonly SortSpec[];
}

export type Primitive = string | number | boolean;
export interface Item {
  id: number;
  [field: string]: unknown;
}
/** A filter in its request form, e.g. `{ and: [{ equals: { property: ['type'], value: 'x' } }] }`. */
export type Filter = { [op: string]: any };

export interface SortSpec {
  property: string[];
  order?: 'asc' | 'desc';
  nulls?: 'auto' | 'first' | 'last';
}

export const SCORE = '_score_';

// ---------------------------------------------------------------------------------------------------------
// Values

/** Strings by code point (what SQLite's BINARY collation does on UTF-8), numbers numerically, false < true. */
export function compareValues(a: Primitive, b: Primitive): number {
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') {
    const x = [...a];
    const y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
      if (d !== 0) return d < 0 ? -1 : 1;
    }
    return x.length - y.length < 0 ? -1 : x.length > y.length ? 1 : 0;
  }
  throw new Error(`cannot compare ${JSON.stringify(a)} with ${JSON.stringify(b)}`);
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

export function words(text: string): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).map((w) => w.toLowerCase());
}

type Target =
  | { type: 'scalar'; decl: PropertyDecl }
  | { type: 'array'; decl: PropertyDecl }
  | { type: 'metadataKey'; decl: PropertyDecl; key: string }
  | { type: 'metadataAny'; decl: PropertyDecl };

function resolve(model: ResourceModel, property: string[]): Target {
  const meta = model.properties.find((p) => p.name === property[0] && p.kind === 'metadata');
  if (meta) return property.length === 1 ? { type: 'metadataAny', decl: meta } : { type: 'metadataKey', decl: meta, key: property[1] };
  const decl = model.properties.find((p) => p.name === property.join('.'));
  if (!decl) throw new Error(`evaluator: unknown property ${JSON.stringify(property)}`);
  return decl.kind === 'integerArray' || decl.kind === 'stringArray' ? { type: 'array', decl } : { type: 'scalar', decl };
}

/** An item's value of a (possibly nested, dotted) field. */
function fieldValue(item: Item, name: string): unknown {
  let v: unknown = item;
  for (const part of name.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** The metadata entries a target looks at: one key (any casing) or all of them. */
function metadataEntries(item: Item, target: Target): Array<[string, string]> {
  const map = (item[target.decl.name] ?? {}) as Record<string, string>;
  const entries = Object.entries(map);
  if (target.type === 'metadataAny') return entries;
  if (target.type !== 'metadataKey') throw new Error('unreachable');
  const key = target.key.toLowerCase();
  return entries.filter(([k]) => k.toLowerCase() === key);
}

// ---------------------------------------------------------------------------------------------------------
// Filters

function only(node: Filter): [string, any] {
  const keys = Object.keys(node);
  if (keys.length !== 1) throw new Error(`evaluator: not a filter node: ${JSON.stringify(node)}`);
  return [keys[0], node[keys[0]]];
}

export function leafMatches(model: ResourceModel, item: Item, op: string, body: any): boolean {
  const target = resolve(model, body.property);
  const name = target.decl.name;

  if (op === 'search') {
    const texts = (target.decl.searchOver ?? [name]).map((f) => fieldValue(item, f)).filter((t): t is string => typeof t === 'string');
    const have = new Set(texts.flatMap(words));
    return words(body.value).some((w) => have.has(w));
  }
  if (op === 'exists') {
    if (target.type === 'scalar') return present(fieldValue(item, name));
    if (target.type === 'array') return Array.isArray(item[name]) && (item[name] as unknown[]).length > 0;
    return metadataEntries(item, target).length > 0;
  }
  if (op === 'containsAny' || op === 'containsAll') {
    const have = (item[name] ?? []) as Primitive[];
    const want = body.values as Primitive[];
    return op === 'containsAny' ? want.some((v) => have.includes(v)) : want.every((v) => have.includes(v));
  }

  // Value leaves: does any candidate value satisfy it?
  const isMetadata = target.type === 'metadataKey' || target.type === 'metadataAny';
  const fold = (v: Primitive): Primitive => (isMetadata && typeof v === 'string' ? v.toLowerCase() : v);
  const candidates: Primitive[] = isMetadata
    ? metadataEntries(item, target)
        .filter(([, v]) => v.length <= model.maxFilterableMetadataLength)
        .map(([, v]) => v.toLowerCase())
    : present(fieldValue(item, name))
      ? [fieldValue(item, name) as Primitive]
      : [];
  const test = (c: Primitive): boolean => {
    switch (op) {
      case 'equals':
        return compareValues(c, fold(body.value)) === 0;
      case 'in':
        return (body.values as Primitive[]).some((v) => compareValues(c, fold(v)) === 0);
      case 'prefix':
        return typeof c === 'string' && c.startsWith(fold(body.value) as string);
      case 'range':
        return (
          (body.gt === undefined || compareValues(c, fold(body.gt)) > 0) &&
          (body.gte === undefined || compareValues(c, fold(body.gte)) >= 0) &&
          (body.lt === undefined || compareValues(c, fold(body.lt)) < 0) &&
          (body.lte === undefined || compareValues(c, fold(body.lte)) <= 0)
        );
      default:
        throw new Error(`evaluator: unknown leaf ${op}`);
    }
  };
  return candidates.some(test);
}

export function matches(model: ResourceModel, item: Item, node: Filter): boolean {
  const [op, body] = only(node);
  if (op === 'and') return (body as Filter[]).every((n) => matches(model, item, n));
  if (op === 'or') return (body as Filter[]).some((n) => matches(model, item, n));
  if (op === 'not') return !matches(model, item, body);
  return leafMatches(model, item, op, body);
}

export function leafNodes(node: Filter | undefined): Array<[string, any]> {
  if (!node) return [];
  const [op, body] = only(node);
  if (op === 'and' || op === 'or') return (body as Filter[]).flatMap(leafNodes);
  if (op === 'not') return leafNodes(body);
  return [[op, body]];
}

export function hasSearch(node: Filter | undefined): boolean {
  return leafNodes(node).some(([op]) => op === 'search');
}

/** The score is in [count, count + searches) when searches > 0, and exactly count otherwise. */
export interface ScoreBounds {
  count: number;
  searches: number;
}

export function scoreBounds(model: ResourceModel, item: Item, advancedFilter: Filter | undefined): ScoreBounds {
  let count = 0;
  let searches = 0;
  for (const [op, body] of leafNodes(advancedFilter)) {
    if (leafMatches(model, item, op, body)) {
      count++;
      if (op === 'search') searches++;
    }
  }
  return { count, searches };
}

/** -1 / 0 / 1, or undefined when the unknown search fractions could decide either way. */
function compareScores(a: ScoreBounds, b: ScoreBounds): number | undefined {
  if (a.searches === 0 && b.searches === 0) return Math.sign(a.count - b.count);
  const surelyBelow = (x: ScoreBounds, y: ScoreBounds) => (x.searches > 0 ? x.count + x.searches <= y.count : x.count < y.count);
  if (surelyBelow(a, b)) return -1;
  if (surelyBelow(b, a)) return 1;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Sorting

export interface ResolvedSort {
  property: string[];
  desc: boolean;
  /** Missing values first (spec: `auto` counts them as larger than any value). */
  nullsFirst: boolean;
}

export function resolveSorts(model: ResourceModel, sort: readonly SortSpec[] | undefined, advancedFilter: Filter | undefined): ResolvedSort[] {
  const specs: readonly SortSpec[] =
    sort && sort.length > 0 ? sort : hasSearch(advancedFilter) ? [{ property: [SCORE] }] : model.defaultSort;
  return specs.map((s) => {
    const isScore = s.property.length === 1 && s.property[0] === SCORE;
    const desc = (s.order ?? (isScore ? 'desc' : 'asc')) === 'desc';
    const nulls = s.nulls ?? 'auto';
    return { property: s.property, desc, nullsFirst: nulls === 'first' || (nulls === 'auto' && desc) };
  });
}

/**
 * The value an item is sorted by. For `["metadata", k]` with k present in several casings, the entry whose
 * key is smallest (code point order) counts; a value too long to filter on sorts as missing.
 */
export function sortValue(model: ResourceModel, item: Item, property: string[]): Primitive | undefined {
  const target = resolve(model, property);
  if (target.type === 'scalar') {
    const v = fieldValue(item, target.decl.name);
    return present(v) ? (v as Primitive) : undefined;
  }
  if (target.type !== 'metadataKey') throw new Error(`evaluator: cannot sort on ${JSON.stringify(property)}`);
  const entries = metadataEntries(item, target).sort(([a], [b]) => compareValues(a, b));
  if (entries.length === 0) return undefined;
  const value = entries[0][1];
  return value.length <= model.maxFilterableMetadataLength ? value : undefined;
}

/**
 * Where `a` goes relative to `b`: negative before, positive after; undefined when only unknown search
 * relevance could decide. Ties are broken by id in the direction of the last sort key.
 */
export function compareItems(
  model: ResourceModel,
  sorts: readonly ResolvedSort[],
  advancedFilter: Filter | undefined,
  a: Item,
  b: Item,
): number | undefined {
  for (const s of sorts) {
    let c: number | undefined;
    if (s.property.length === 1 && s.property[0] === SCORE) {
      c = compareScores(scoreBounds(model, a, advancedFilter), scoreBounds(model, b, advancedFilter));
      if (c === undefined) return undefined;
      if (s.desc) c = -c;
    } else {
      const va = sortValue(model, a, s.property);
      const vb = sortValue(model, b, s.property);
      if (va === undefined && vb === undefined) c = 0;
      else if (va === undefined) c = s.nullsFirst ? -1 : 1;
      else if (vb === undefined) c = s.nullsFirst ? 1 : -1;
      else c = s.desc ? -compareValues(va, vb) : compareValues(va, vb);
    }
    if (c !== 0) return c;
  }
  const lastDesc = sorts.length > 0 && sorts[sorts.length - 1].desc;
  return lastDesc ? b.id - a.id : a.id - b.id;
}

/** Whether the order of a query's result is fully known here (no relevance fractions involved). */
export function orderIsKnown(sorts: readonly ResolvedSort[], advancedFilter: Filter | undefined): boolean {
  return !hasSearch(advancedFilter) || !sorts.some((s) => s.property.length === 1 && s.property[0] === SCORE);
}

// ---------------------------------------------------------------------------------------------------------
// Queries

export interface Query {
  /** An extra predicate (e.g. the resource's basic filter), ANDed with the advanced filter. */
  where?: (item: Item) => boolean;
  advancedFilter?: Filter;
  sort?: readonly SortSpec[];
  partition?: { index: number; count: number };
}

/**
 * The expected result in order. When the order is not fully known (relevance fractions), the items come in
 * id order and callers compare sets and check the order with `compareItems` pairwise.
 */
export function evaluate(model: ResourceModel, items: readonly Item[], q: Query): Item[] {
  const sorts = resolveSorts(model, q.sort, q.advancedFilter);
  const result = items.filter(
    (it) =>
      (!q.where || q.where(it)) &&
      (!q.advancedFilter || matches(model, it, q.advancedFilter)) &&
      (!q.partition || partitionOf(it.id, q.partition.count) === q.partition.index),
  );
  if (!orderIsKnown(sorts, q.advancedFilter)) return result.sort((a, b) => a.id - b.id);
  return result.sort((a, b) => compareItems(model, sorts, q.advancedFilter, a, b)!);
}

// ---------------------------------------------------------------------------------------------------------
// Events

export const eventModel: ResourceModel = {
  properties: [
    { name: 'id', kind: 'integer' },
    { name: 'externalId', kind: 'string', sortable: true },
    { name: 'dataSetId', kind: 'integer', sortable: true },
    { name: 'startTime', kind: 'integer', sortable: true },
    { name: 'endTime', kind: 'integer', sortable: true },
    { name: 'createdTime', kind: 'integer', sortable: true },
    { name: 'lastUpdatedTime', kind: 'integer', sortable: true },
    { name: 'type', kind: 'string', sortable: true },
    { name: 'subtype', kind: 'string', sortable: true },
    { name: 'source', kind: 'string', sortable: true },
    { name: 'description', kind: 'string', searchable: true, sortable: true },
    { name: 'assetIds', kind: 'integerArray' },
    { name: 'metadata', kind: 'metadata', sortable: true },
  ],
  maxFilterableMetadataLength: 256,
  defaultSort: [{ property: ['createdTime'], order: 'asc' }],
};

export interface TimeRange {
  min?: number;
  max?: number;
}

export interface EventBasicFilter {
  startTime?: TimeRange;
  endTime?: TimeRange | { isNull: boolean };
  activeAtTime?: TimeRange;
  metadata?: Record<string, string>;
  assetIds?: number[];
  source?: string;
  type?: string;
  subtype?: string;
  createdTime?: TimeRange;
  lastUpdatedTime?: TimeRange;
  externalIdPrefix?: string;
  dataSetIds?: Array<{ id: number } | { externalId: string }>;
}

/** How a test resolves references to other resources (e.g. data set external ids) into ids. */
export interface References {
  dataSetId(ref: { id: number } | { externalId: string }): number;
}

function inRange(v: unknown, r: TimeRange | undefined): boolean {
  if (!r || (r.min === undefined && r.max === undefined)) return true;
  return typeof v === 'number' && (r.min === undefined || v >= r.min) && (r.max === undefined || v <= r.max);
}

/** The basic `filter` object of the events list: every given condition must hold. */
export function eventMatchesBasicFilter(e: Item, f: EventBasicFilter, refs?: References): boolean {
  const start = e.startTime as number | undefined;
  const end = e.endTime as number | undefined;
  if (!inRange(start, f.startTime)) return false;
  if (f.endTime && 'isNull' in f.endTime) {
    if (f.endTime.isNull === present(end)) return false;
  } else if (!inRange(end, f.endTime)) return false;
  const active = f.activeAtTime;
  if (active && (active.min !== undefined || active.max !== undefined)) {
    if (!present(start)) return false;
    if (active.max !== undefined && start! > active.max) return false;
    if (active.min !== undefined && present(end) && end! < active.min) return false;
  }
  for (const [key, value] of Object.entries(f.metadata ?? {})) {
    if (!leafMatches(eventModel, e, 'equals', { property: ['metadata', key], value })) return false;
  }
  if (f.assetIds !== undefined && !f.assetIds.some((a) => ((e.assetIds ?? []) as number[]).includes(a))) return false;
  for (const k of ['source', 'type', 'subtype'] as const) {
    if (f[k] !== undefined && e[k] !== f[k]) return false;
  }
  if (f.dataSetIds !== undefined) {
    if (!refs) throw new Error('evaluator: dataSetIds needs references');
    if (!f.dataSetIds.some((ref) => e.dataSetId === refs.dataSetId(ref))) return false;
  }
  if (!inRange(e.createdTime, f.createdTime) || !inRange(e.lastUpdatedTime, f.lastUpdatedTime)) return false;
  if (f.externalIdPrefix !== undefined && !(typeof e.externalId === 'string' && e.externalId.startsWith(f.externalIdPrefix))) {
    return false;
  }
  return true;
}
