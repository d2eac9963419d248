/**
 * The advanced filter language: validation of the request form into an AST, compilation of the AST to SQL,
 * and the relevance score used by `_score_` sorting. Basic `filter` objects are translated into the same AST
 * by each resource, so there is one filter semantics.
 *
 * Semantics are two-valued: a leaf on a missing (null) value is false, and `not` inverts that.
 */
import { badRequest, formatPath } from '../http/errors.js';
import type { Dialect, TextIndex, TextSearch } from '../storage/dialect.js';
import { FALSE, Sql, sql } from '../storage/sql.js';
import {
  col,
  findProperty,
  isScalar,
  maxPropertyElementLength,
  pluralNoun,
  propertyPath,
  type ResourceCatalog,
  type ScalarProperty,
  type Target,
} from './catalog.js';

export type Primitive = string | number;

/**
 * `and`, `or` and `not` over the leaves of a filter language. The resources' advanced filter and the data
 * modeling filter (resources/models/filter.ts) share this shape and their leaves' names and fields; they differ
 * in what a leaf's property is (a catalog column here, a container property there) and in its values.
 */
export type BooleanNode<L> = { op: 'and' | 'or'; args: Array<BooleanNode<L>> } | { op: 'not'; arg: BooleanNode<L> } | L;

export type FilterNode = BooleanNode<LeafNode>;

export type LeafNode =
  | { op: 'equals'; target: Target; value: Primitive }
  | { op: 'in'; target: Target; values: Primitive[] }
  | { op: 'range'; target: Target; gt?: Primitive; gte?: Primitive; lt?: Primitive; lte?: Primitive }
  | { op: 'prefix'; target: Target; value: string }
  | { op: 'exists'; target: Target }
  | { op: 'containsAny' | 'containsAll'; target: Target; values: Primitive[] }
  | { op: 'search'; target: Target; value: string }
  /**
   * The property holds (one of) the ids a subquery selects. Built by resources from their basic filters
   * (an asset subtree, say), never parsed from a request, so large id sets are never bound as parameters.
   * It tests the stored column, also where `CompileContext.values` replaces the property's value: the
   * resource builds the set for the column.
   */
  | { op: 'inSet'; target: Target; ids: Sql };

export const FILTER_LIMITS = {
  maxDepth: 10,
  maxClauses: 100,
  minValues: 1,
  maxValues: 100,
  maxSearchLeaves: 2,
  maxSearchLength: 128,
} as const;

const BOOL_OPS = ['and', 'or', 'not'] as const;
const LEAF_OPS = ['equals', 'in', 'range', 'prefix', 'exists', 'containsAny', 'containsAll', 'search'] as const;
const ALL_OPS = [...BOOL_OPS, ...LEAF_OPS];

const LEAF_FIELDS: Record<(typeof LEAF_OPS)[number], { required: string[]; optional: string[] }> = {
  equals: { required: ['property', 'value'], optional: [] },
  in: { required: ['property', 'values'], optional: [] },
  range: { required: ['property'], optional: ['gt', 'gte', 'lt', 'lte'] },
  prefix: { required: ['property', 'value'], optional: [] },
  exists: { required: ['property'], optional: [] },
  containsAny: { required: ['property', 'values'], optional: [] },
  containsAll: { required: ['property', 'values'], optional: [] },
  search: { required: ['property', 'value'], optional: [] },
};

type Path = Array<string | number>;

function fail(path: Path, message: string): never {
  throw badRequest(`${formatPath(path)}: ${message}`);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validates an `advancedFilter` request value against the spec's rules and the resource's catalog. */
export function parseAdvancedFilter(raw: unknown, catalog: ResourceCatalog, path: Path = ['advancedFilter']): FilterNode {
  const counters = { clauses: 0, searches: 0 };
  const node = parseNode(raw, catalog, path, 1, counters);
  if (counters.clauses > FILTER_LIMITS.maxClauses) {
    fail(path, `has ${counters.clauses} clauses; at most ${FILTER_LIMITS.maxClauses} are allowed`);
  }
  if (counters.searches > FILTER_LIMITS.maxSearchLeaves) {
    fail(path, `has ${counters.searches} search filters; at most ${FILTER_LIMITS.maxSearchLeaves} are allowed`);
  }
  return node;
}

function parseNode(
  raw: unknown,
  catalog: ResourceCatalog,
  path: Path,
  depth: number,
  counters: { clauses: number; searches: number },
): FilterNode {
  if (depth > FILTER_LIMITS.maxDepth) {
    fail(path, `the filter is nested deeper than ${FILTER_LIMITS.maxDepth} levels`);
  }
  if (!isPlainObject(raw)) fail(path, raw === null ? 'null is not allowed' : 'expected a filter object');
  const keys = Object.keys(raw);
  if (keys.length !== 1 || !(ALL_OPS as readonly string[]).includes(keys[0])) {
    const unknown = keys.find((k) => !(ALL_OPS as readonly string[]).includes(k));
    fail(
      path,
      unknown !== undefined
        ? `unknown filter "${unknown}" (expected one of ${ALL_OPS.join(', ')})`
        : `expected exactly one of ${ALL_OPS.join(', ')}, got ${keys.length === 0 ? 'none' : keys.join(', ')}`,
    );
  }
  const op = keys[0];
  const body = raw[op];
  const here = [...path, op];
  // Every filter counts as a clause: leaves and the and/or/not around them.
  counters.clauses++;
  if (op === 'and' || op === 'or') {
    if (!Array.isArray(body)) fail(here, body === null ? 'null is not allowed' : 'expected an array of filters');
    if (body.length < 1) fail(here, 'must contain at least 1 filter');
    return { op, args: body.map((child, i) => parseNode(child, catalog, [...here, i], depth + 1, counters)) };
  }
  if (op === 'not') {
    return { op, arg: parseNode(body, catalog, here, depth + 1, counters) };
  }
  return parseLeaf(op as (typeof LEAF_OPS)[number], body, catalog, here, counters);
}

function parseLeaf(
  op: (typeof LEAF_OPS)[number],
  body: unknown,
  catalog: ResourceCatalog,
  path: Path,
  counters: { searches: number },
): LeafNode {
  if (!isPlainObject(body)) fail(path, body === null ? 'null is not allowed' : 'expected an object');
  const { required, optional } = LEAF_FIELDS[op];
  for (const k of Object.keys(body)) {
    if (!required.includes(k) && !optional.includes(k)) {
      fail(path, `unknown property "${k}" (allowed: ${[...required, ...optional].join(', ')})`);
    }
    if (body[k] === null) fail([...path, k], 'null is not allowed');
  }
  for (const k of required) if (!(k in body)) fail(path, `missing required property "${k}"`);

  const target = parseProperty(body.property, catalog, [...path, 'property']);
  const isArrayTarget = target.type === 'property' && !isScalar(target.def);
  const kind = targetKind(target);

  const needsArray = op === 'containsAny' || op === 'containsAll';
  if (needsArray && !isArrayTarget) fail(path, `${op} applies only to array properties, not ${describe(target)}`);
  if (!needsArray && op !== 'exists' && isArrayTarget) {
    fail(path, `${op} does not apply to the array property ${describe(target)}; use containsAny or containsAll`);
  }
  if (op === 'prefix' && kind !== 'string') fail(path, `prefix applies only to string properties, not ${describe(target)}`);
  if (op !== 'search' && target.type === 'property' && isScalar(target.def) && target.def.searchOnly) {
    fail(path, `${describe(target)} can only be used in a search filter`);
  }
  if (op === 'search') {
    if (target.type !== 'property' || !isScalar(target.def) || !target.def.search) {
      const searchable = Object.entries(catalog.properties)
        .filter(([, d]) => isScalar(d) && d.search)
        .map(([n]) => JSON.stringify(propertyPath(n)));
      fail(path, `search applies only to ${searchable.join(', ')}`);
    }
    counters.searches++;
  }

  const value = (key: string): Primitive => checkValue(body[key], target, op, [...path, key]);

  switch (op) {
    case 'equals':
      return { op, target, value: value('value') };
    case 'prefix':
      return { op, target, value: value('value') as string };
    case 'search': {
      const v = value('value') as string;
      if (v.trim() === '') fail([...path, 'value'], 'must not be blank');
      return { op, target, value: v };
    }
    case 'exists':
      return { op, target };
    case 'in':
    case 'containsAny':
    case 'containsAll': {
      const raw = body.values;
      const vpath = [...path, 'values'];
      if (!Array.isArray(raw)) fail(vpath, 'expected an array');
      if (raw.length < FILTER_LIMITS.minValues || raw.length > FILTER_LIMITS.maxValues) {
        fail(vpath, `must have between ${FILTER_LIMITS.minValues} and ${FILTER_LIMITS.maxValues} values, got ${raw.length}`);
      }
      return { op, target, values: raw.map((v, i) => checkValue(v, target, op, [...vpath, i])) };
    }
    case 'range': {
      const bounds = ['gt', 'gte', 'lt', 'lte'].filter((b) => b in body);
      if (bounds.length === 0) fail(path, 'needs at least one of gt, gte, lt, lte');
      if ('gt' in body && 'gte' in body) fail(path, 'gt and gte cannot be combined');
      if ('lt' in body && 'lte' in body) fail(path, 'lt and lte cannot be combined');
      if (target.type !== 'property') {
        const lower = 'gt' in body || 'gte' in body;
        const upper = 'lt' in body || 'lte' in body;
        if (!lower || !upper) fail(path, 'a range on metadata needs both a lower bound (gt or gte) and an upper bound (lt or lte)');
      }
      const leaf: LeafNode = { op, target };
      for (const b of bounds) (leaf as Record<string, unknown>)[b] = value(b);
      return leaf;
    }
  }
}

function parseProperty(raw: unknown, catalog: ResourceCatalog, path: Path): Target {
  if (!Array.isArray(raw)) fail(path, 'expected an array of 1 or 2 strings');
  if (raw.length < 1 || raw.length > 2) fail(path, `must have 1 or 2 elements, got ${raw.length}`);
  const maxLength = maxPropertyElementLength(catalog);
  raw.forEach((el, i) => {
    if (typeof el !== 'string') fail([...path, i], 'expected a string');
    if (el.trim() === '') fail([...path, i], 'must not be blank');
    if (el.length > maxLength) fail([...path, i], `must be at most ${maxLength} characters`);
  });
  const [head, key] = raw as string[];
  if (head === 'metadata' && catalog.metadata) {
    return key === undefined
      ? { type: 'metadataAny', store: catalog.metadata }
      : { type: 'metadataKey', key, store: catalog.metadata };
  }
  const def = findProperty(catalog, raw as string[]);
  if (!def) fail(path, `unknown property ${JSON.stringify(raw)} for ${pluralNoun(catalog)} (known: ${knownProperties(catalog)})`);
  return { type: 'property', name: (raw as string[]).join('.'), def };
}

export function knownProperties(catalog: ResourceCatalog): string {
  const names = Object.keys(catalog.properties).map((n) => JSON.stringify(propertyPath(n)));
  if (catalog.metadata) names.push('["metadata"]', '["metadata", <key>]');
  return names.join(', ');
}

function targetKind(target: Target): 'integer' | 'string' | 'boolean' {
  if (target.type !== 'property') return 'string';
  const { kind } = target.def;
  return kind === 'integerArray' ? 'integer' : kind === 'stringArray' ? 'string' : kind;
}

/** `{"externalId": "x"}` as "x" where a property's values are external ids (the Python SDK sends labels so). */
function unwrapExternalIdRef(v: unknown, target: Target): unknown {
  if (target.type !== 'property' || isScalar(target.def) || !target.def.externalIdRefs) return v;
  if (isPlainObject(v) && Object.keys(v).length === 1 && typeof v.externalId === 'string') return v.externalId;
  return v;
}

export function describe(target: Target): string {
  if (target.type === 'metadataAny') return '["metadata"]';
  if (target.type === 'metadataKey') return JSON.stringify(['metadata', target.key]);
  return JSON.stringify(propertyPath(target.name));
}

function checkValue(given: unknown, target: Target, op: string, path: Path): Primitive {
  const kind = targetKind(target);
  const v = unwrapExternalIdRef(given, target);
  if (kind === 'integer') {
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, `expected a number for ${describe(target)}`);
    return v;
  }
  if (kind === 'boolean') {
    if (typeof v !== 'boolean') fail(path, `expected true or false for ${describe(target)}`);
    // Booleans are stored as 0 and 1.
    return v ? 1 : 0;
  }
  if (typeof v !== 'string') fail(path, `expected a string for ${describe(target)}`);
  const max =
    op === 'search' && target.type === 'property' && isScalar(target.def) && target.def.search
      ? target.def.search.maxValueLength
      : target.type === 'property'
        ? isScalar(target.def)
          ? target.def.maxValueLength
          : undefined
        : target.store.maxValueLength;
  if (max !== undefined && v.length > max) {
    fail(path, `must be at most ${max} characters for ${describe(target)}${op === 'search' ? ' in a search filter' : ''}`);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Compilation to SQL

export interface CompileContext {
  catalog: ResourceCatalog;
  projectId: number;
  /** The engine's SQL for what differs (full-text search). */
  dialect: Dialect;
  /** Properties read through an expression rather than their column, for this request (`ResourceCatalog.visibleValues`). */
  values?: Readonly<Record<string, Sql>>;
}

/** The value of a scalar property of the row, as this request sees it. */
export function propertyValue(ctx: CompileContext, name: string, def: ScalarProperty): Sql {
  return ctx.values?.[name] ?? Sql.raw(col(ctx.catalog, def.column));
}

/**
 * The SQL of a boolean tree whose leaves `leaf` compiles, in the two-valued logic of both filter languages: a
 * leaf may come out NULL where its value is missing (SQL's third value); AND and OR treat NULL as false
 * already, and `not` reads it as false before inverting.
 */
export function compileBoolean<L extends { op: string }>(node: BooleanNode<L>, leaf: (l: L) => Sql): Sql {
  const bool = node as { op: string; args?: Array<BooleanNode<L>>; arg?: BooleanNode<L> };
  switch (bool.op) {
    case 'and':
      return Sql.and(bool.args!.map((a) => compileBoolean(a, leaf)));
    case 'or':
      return Sql.or(bool.args!.map((a) => compileBoolean(a, leaf))).wrap();
    case 'not':
      return sql`NOT coalesce(${compileBoolean(bool.arg!, leaf).wrap()}, FALSE)`;
    default:
      return leaf(node as L);
  }
}

export function compileFilter(node: FilterNode, ctx: CompileContext): Sql {
  return compileBoolean(node, (l) => compileLeaf(l, ctx));
}

/** The smallest string greater than every string that starts with `prefix` (binary/code point order). */
export function prefixUpperBound(prefix: string): string | undefined {
  const chars = [...prefix];
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!;
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return chars.join('') + String.fromCodePoint(next);
  }
  return undefined;
}

function prefixCondition(value: Sql, prefix: string): Sql {
  const upper = prefixUpperBound(prefix);
  if (prefix === '') return sql`${value} IS NOT NULL`;
  return upper === undefined ? sql`${value} >= ${prefix}` : sql`${value} >= ${prefix} AND ${value} < ${upper}`;
}

/**
 * A number compared with an integer property, as the integer bound that selects the same integers (`> 1000.5`
 * is `> 1000`, `>= 1000.5` is `>= 1001`), clamped to the stored range: every engine then compares integers
 * with integers, through the column's index. Undefined for `equals` on a number no integer equals.
 */
function integerBound(v: Primitive, op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte'): Primitive | undefined {
  if (typeof v !== 'number' || Number.isSafeInteger(v)) return v;
  if (Number.isNaN(v)) return undefined;
  const clamped = Math.max(-Number.MAX_SAFE_INTEGER - 1, Math.min(Number.MAX_SAFE_INTEGER + 1, v));
  if (op === 'eq') return Number.isInteger(clamped) && Number.isSafeInteger(clamped) ? clamped : undefined;
  return op === 'gt' || op === 'lte' ? Math.floor(clamped) : Math.ceil(clamped);
}

function scalarCondition(leaf: LeafNode, value: Sql, fold: (v: Primitive) => Primitive, integer = false): Sql {
  const bound = (v: Primitive, op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte') => (integer ? integerBound(fold(v), op) : fold(v));
  switch (leaf.op) {
    case 'equals': {
      const v = bound(leaf.value, 'eq');
      return v === undefined ? FALSE : sql`${value} = ${v}`;
    }
    case 'in': {
      const values = leaf.values.map((v) => bound(v, 'eq')).filter((v): v is Primitive => v !== undefined);
      return values.length ? sql`${value} IN (${values})` : FALSE;
    }
    case 'range': {
      const parts: Sql[] = [];
      const edge = (v: Primitive | undefined, op: 'gt' | 'gte' | 'lt' | 'lte', symbol: string) => {
        if (v === undefined) return;
        const b = bound(v, op);
        parts.push(b === undefined ? FALSE : sql`${value} ${Sql.raw(symbol)} ${b}`);
      };
      edge(leaf.gt, 'gt', '>');
      edge(leaf.gte, 'gte', '>=');
      edge(leaf.lt, 'lt', '<');
      edge(leaf.lte, 'lte', '<=');
      return Sql.and(parts);
    }
    case 'prefix':
      return prefixCondition(value, fold(leaf.value) as string);
    case 'exists':
      return sql`${value} IS NOT NULL`;
    default:
      throw new Error(`unreachable: scalar ${leaf.op}`);
  }
}

const lower = (v: Primitive): Primitive => (typeof v === 'string' ? v.toLowerCase() : v);
const same = (v: Primitive): Primitive => v;

function compileLeaf(leaf: LeafNode, ctx: CompileContext): Sql {
  const { catalog } = ctx;
  const target = leaf.target;
  const set = idSetQuery(leaf, ctx);
  if (set) return sql`${Sql.raw(col(catalog, 'id'))} IN (${set})`;
  if (target.type === 'property' && isScalar(target.def)) {
    if (leaf.op === 'inSet') return sql`${Sql.raw(col(catalog, target.def.column))} IN (${leaf.ids})`;
    if (target.def.derived) return derivedCondition(leaf, col(catalog, target.def.column), target.def.derived);
    return scalarCondition(leaf, propertyValue(ctx, target.name, target.def), same, target.def.kind === 'integer');
  }
  throw new Error(`unreachable: ${leaf.op} on ${target.type}`);
}

/** Strings in the order SQL compares them (BINARY: UTF-8 bytes, which is code point order). */
const compareBinary = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Whether a derived property's value satisfies a leaf, with the semantics the SQL of a stored one has. */
function derivedMatches(leaf: LeafNode, value: string): boolean {
  switch (leaf.op) {
    case 'equals':
      return value === leaf.value;
    case 'in':
      return leaf.values.includes(value);
    case 'prefix':
      return value.startsWith(leaf.value);
    case 'exists':
      return true;
    case 'range': {
      const cmp = (bound: Primitive) => compareBinary(value, String(bound));
      return (
        (leaf.gt === undefined || cmp(leaf.gt) > 0) &&
        (leaf.gte === undefined || cmp(leaf.gte) >= 0) &&
        (leaf.lt === undefined || cmp(leaf.lt) < 0) &&
        (leaf.lte === undefined || cmp(leaf.lte) <= 0)
      );
    }
    default:
      throw new Error(`unreachable: ${leaf.op} on a derived property`);
  }
}

/** A leaf on a derived property, as the column values whose property value satisfies it. */
function derivedCondition(leaf: LeafNode, column: string, table: ReadonlyMap<string, string>): Sql {
  const sources = [...table].filter(([, value]) => derivedMatches(leaf, value)).map(([source]) => source);
  return sources.length ? new Sql(`${column} IN (${sources.map(() => '?').join(', ')})`, sources) : FALSE;
}

/**
 * The subquery selecting the ids of the items a leaf matches, for the leaves answered by a side table or the
 * full-text index (array values, metadata, search); undefined for a condition on a column of the row.
 */
function idSetQuery(leaf: LeafNode, ctx: CompileContext): Sql | undefined {
  const { catalog, projectId } = ctx;
  const target = leaf.target;

  if (leaf.op === 'search') return ctx.dialect.searchIds(textIndex(catalog), leafSearch(leaf, catalog), projectId);

  if (target.type === 'property') {
    if (isScalar(target.def)) return undefined;
    const def = target.def;
    const sub = (cond: Sql, having = '') =>
      sql`SELECT ${Sql.raw(def.itemColumn)} FROM ${Sql.raw(def.table)} WHERE project_id = ${projectId}${cond.text ? sql` AND ${cond}` : Sql.raw('')}${Sql.raw(
        having,
      )}`;
    if (leaf.op === 'inSet') return sub(sql`${Sql.raw(def.valueColumn)} IN (${leaf.ids})`);
    if (leaf.op === 'exists') return sub(Sql.raw(''));
    if (leaf.op === 'containsAny' || leaf.op === 'containsAll') {
      const distinct = [...new Set(leaf.values)];
      const cond = new Sql(`${def.valueColumn} IN (${distinct.map(() => '?').join(', ')})`, distinct);
      return leaf.op === 'containsAny' ? sub(cond) : sub(cond, ` GROUP BY ${def.itemColumn} HAVING count(*) = ${distinct.length}`);
    }
    throw new Error(`unreachable: array ${leaf.op}`);
  }

  // Metadata: keys and values are matched case-insensitively through the side table.
  if (leaf.op === 'inSet') throw new Error('unreachable: inSet on metadata');
  const store = target.store;
  const conds: Sql[] = [sql`project_id = ${projectId}`];
  if (target.type === 'metadataKey') conds.push(sql`key_lc = ${target.key.toLowerCase()}`);
  if (leaf.op !== 'exists') conds.push(scalarCondition(leaf, Sql.raw('value_lc'), lower));
  return sql`SELECT ${Sql.raw(store.itemColumn)} FROM ${Sql.raw(store.table)} WHERE ${Sql.and(conds)}`;
}

/**
 * The id sets every matching item must be in: those of the leaves the filter ANDs at its top. A query can
 * start from one of them (look its items up by id) instead of scanning an index for them.
 */
export function requiredIdSets(node: FilterNode | undefined, ctx: CompileContext): Sql[] {
  if (!node) return [];
  if (node.op === 'not') return [];
  if ('args' in node) return node.op === 'and' ? node.args.flatMap((a) => requiredIdSets(a, ctx)) : [];
  const set = idSetQuery(node, ctx);
  return set ? [set] : [];
}

/** The words of a search text: its runs of letters and digits (an item matches when it has any of them). */
export function searchWords(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The resource's full-text index, for the dialect's search SQL. */
export function textIndex(catalog: ResourceCatalog): TextIndex {
  const fts = catalog.fts!;
  return { table: catalog.table, alias: catalog.alias, fts: fts.table, columns: fts.columns ?? [] };
}

/**
 * A search matching items that match any of the given texts, each in the named index columns (all of them
 * when none are named); blank and absent (undefined or null) texts are skipped, and none at all gives
 * undefined (no text search).
 */
export function textSearchOf(catalog: ResourceCatalog, searches: ReadonlyArray<readonly [text: string | null | undefined, columns?: readonly string[]]>): TextSearch | undefined {
  const all = catalog.fts?.columns ?? [];
  const parts = searches.filter(([text]) => text != null && text.trim() !== '').map(([text, columns]) => ({ words: searchWords(text!), columns: columns ?? all }));
  return parts.length ? parts : undefined;
}

/** The search of assets, time series and sequences: `name`, `description`, and `query` in both. */
export function nameDescriptionSearch(
  catalog: ResourceCatalog,
  search: { name?: string | null; description?: string | null; query?: string | null } | undefined,
): TextSearch | undefined {
  return textSearchOf(catalog, [
    [search?.name, ['name']],
    [search?.description, ['description']],
    [search?.query, ['name', 'description']],
  ]);
}

/** A search leaf's text in the index columns of its property. */
function leafSearch(leaf: LeafNode & { op: 'search' }, catalog: ResourceCatalog): TextSearch {
  const def = leaf.target.type === 'property' ? leaf.target.def : undefined;
  const columns = def && isScalar(def) ? (def.search?.columns ?? [def.column]) : (catalog.fts?.columns ?? []);
  return [{ words: searchWords(leaf.value), columns }];
}

export function leaves<L extends { op: string }>(node: BooleanNode<L>): L[] {
  const bool = node as { op: string; args?: Array<BooleanNode<L>>; arg?: BooleanNode<L> };
  if (bool.op === 'and' || bool.op === 'or') return bool.args!.flatMap((a) => leaves(a));
  if (bool.op === 'not') return leaves(bool.arg!);
  return [node as L];
}

/**
 * Relevance for `_score_`: one point for every leaf filter an item matches, plus, for each `search` leaf,
 * a fraction in [0, 1) that grows with its full-text rank (so a search alone orders like the search endpoint).
 */
export function scoreExpression(node: FilterNode | undefined, ctx: CompileContext): Sql {
  // Not a bare `0`: SQLite reads a constant integer in ORDER BY as a result-column number.
  if (!node) return Sql.raw('CAST(0 AS INTEGER)');
  const terms = leaves(node).map((leaf) => {
    const matched = sql`(CASE WHEN ${compileLeaf(leaf, ctx)} THEN 1 ELSE 0 END)`;
    if (leaf.op !== 'search') return matched;
    return sql`${matched} + ${ctx.dialect.searchRank(textIndex(ctx.catalog), leafSearch(leaf, ctx.catalog))}`;
  });
  return Sql.join(terms, ' + ').wrap();
}
