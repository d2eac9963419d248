/**
 * Aggregates shared by every resource: `count`, `cardinalityValues`, `uniqueValues`, `cardinalityProperties`
 * and `uniqueProperties`, over the same filters as list, with an optional filter on the bucket values. The
 * deprecated forms some resources still take (`fields`, `metadataKeys`, `metadataValues` with `keys`) are
 * read as the current ones.
 */
import { badRequest, formatPath } from '../http/errors.js';
import type { Services } from '../http/services.js';
import { Sql, sql } from '../storage/sql.js';
import { col, findProperty, isScalar, maxPropertyElementLength, pluralNoun, propertyPath, type ResourceCatalog } from './catalog.js';
import { FILTER_LIMITS, prefixUpperBound, propertyValue, type CompileContext, type FilterNode } from './filter.js';
import { parseQuery } from './list.js';

export const MAX_BUCKETS = 1000;

export type AggregateKind = 'count' | 'cardinalityValues' | 'cardinalityProperties' | 'uniqueValues' | 'uniqueProperties';
/** Deprecated kinds: `metadataKeys` is `uniqueProperties` on metadata, `metadataValues` is `uniqueValues` on one key. */
type MetadataAggregateKind = 'metadataKeys' | 'metadataValues';

export interface AggregateRequest {
  aggregate?: AggregateKind | MetadataAggregateKind;
  filter?: FilterNode;
  advancedFilter?: unknown;
  aggregateFilter?: unknown;
  properties?: Array<{ property: string[]; filter?: unknown }>;
  path?: string[];
  /** Deprecated form of `properties` for `uniqueValues`: a field name, `metadata.<key>` for a metadata key. */
  fields?: string[];
  /** The metadata key of `metadataValues`. */
  keys?: string[];
}

/**
 * A bucket holds its value in `values`, and once more in the deprecated `value` that the official JavaScript
 * client reads (`aggregate.uniqueValues` returns `{count, value}`).
 */
export type AggregateItem = { count: number } | { count: number; values: [unknown]; value: unknown };

/** The request in its current form, and whether metadata keys come back as text (`metadataKeys`) or as properties. */
function currentForm(req: AggregateRequest): { kind: AggregateKind; properties?: AggregateRequest['properties']; keysAsText: boolean } {
  const { aggregate, fields, keys } = req;
  if (keys !== undefined && aggregate !== 'metadataValues') throw badRequest('keys: only used by the metadataValues aggregate');
  if (fields !== undefined) {
    if (aggregate !== 'uniqueValues') throw badRequest('fields: only used by the uniqueValues aggregate');
    if (req.properties) throw badRequest('give "properties" or the deprecated "fields", not both');
    const [field] = fields;
    const property = field.startsWith('metadata.') ? ['metadata', field.slice('metadata.'.length)] : [field];
    return { kind: 'uniqueValues', properties: [{ property }], keysAsText: false };
  }
  if (aggregate === 'metadataKeys') return { kind: 'uniqueProperties', keysAsText: true };
  if (aggregate === 'metadataValues') {
    if (keys === undefined) throw badRequest('keys: metadataValues needs "keys" naming the metadata key');
    if (req.properties) throw badRequest('properties: not used by metadataValues; it aggregates the key named in "keys"');
    return { kind: 'uniqueValues', properties: [{ property: ['metadata', keys[0]] }], keysAsText: false };
  }
  return { kind: aggregate ?? 'count', properties: req.properties, keysAsText: false };
}

/** How to reach the values of one aggregated property: extra join, the value expression, and result form. */
interface ValueSource {
  join: Sql;
  value: Sql;
  /** Items with several values (arrays, metadata) are counted once by distinct item id. */
  multi: boolean;
  toBucket: (v: unknown) => unknown;
}

function valueSource(ctx: CompileContext, property: string[], path: Array<string | number>): ValueSource {
  const { catalog } = ctx;
  const fail = (): never => {
    const names = Object.entries(catalog.properties)
      .filter(([, d]) => d.aggregatable)
      .map(([n]) => JSON.stringify(propertyPath(n)));
    if (catalog.metadata) names.push('["metadata"]', '["metadata", <key>]');
    throw badRequest(`${formatPath(path)}: cannot aggregate ${pluralNoun(catalog)} on ${JSON.stringify(property)} (supported: ${names.join(', ')})`);
  };
  const [head, key] = property;
  const id = col(catalog, 'id');
  if (head === 'metadata' && catalog.metadata) {
    const m = catalog.metadata;
    const on = key === undefined ? sql`m.${Sql.raw(m.itemColumn)} = ${Sql.raw(id)}` : sql`m.${Sql.raw(m.itemColumn)} = ${Sql.raw(id)} AND m.key_lc = ${key.toLowerCase()}`;
    return { join: sql` JOIN ${Sql.raw(m.table)} m ON ${on}`, value: Sql.raw('m.value'), multi: true, toBucket: (v) => v };
  }
  const def = findProperty(catalog, property);
  if (!def || !def.aggregatable) fail();
  if (isScalar(def!)) return { join: Sql.raw(''), value: propertyValue(ctx, property.join('.'), def!), multi: false, toBucket: (v) => v };
  const arr = def as Exclude<typeof def, undefined | { column: string }>;
  return {
    // Not `a`: that is the assets' own alias.
    join: Sql.raw(` JOIN ${arr.table} av ON av.${arr.itemColumn} = ${id}`),
    value: Sql.raw(`av.${arr.valueColumn}`),
    multi: true,
    // Side tables declare their value column INTEGER, which keeps a numeric-looking text as a number.
    toBucket: arr.kind === 'stringArray' ? (v) => String(v) : (v) => v,
  };
}

function metadataKeySource(catalog: ResourceCatalog, keysAsText: boolean): ValueSource {
  const m = catalog.metadata;
  if (!m) throw badRequest(`${pluralNoun(catalog)} have no metadata to aggregate properties of`);
  return {
    join: Sql.raw(` JOIN ${m.table} m ON m.${m.itemColumn} = ${col(catalog, 'id')}`),
    value: Sql.raw('m.key_lc'),
    multi: true,
    toBucket: keysAsText ? (k) => k : (k) => ({ property: ['metadata', k] }),
  };
}

/** The filter on bucket values: `and`/`or`/`not` over `in`, `prefix` and `range`, without `property`. */
function compileValueFilter(raw: unknown, value: Sql, path: Array<string | number>, depth = 1): Sql {
  const fail = (p: Array<string | number>, msg: string): never => {
    throw badRequest(`${formatPath(p)}: ${msg}`);
  };
  if (depth > FILTER_LIMITS.maxDepth) fail(path, `the filter is nested deeper than ${FILTER_LIMITS.maxDepth} levels`);
  const ops = ['and', 'or', 'not', 'in', 'prefix', 'range'];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(path, 'expected a filter object');
  const keys = Object.keys(raw as object);
  if (keys.length !== 1 || !ops.includes(keys[0])) fail(path, `expected exactly one of ${ops.join(', ')}`);
  const op = keys[0];
  const body = (raw as Record<string, unknown>)[op];
  const here = [...path, op];
  const primitive = (v: unknown, p: Array<string | number>) => {
    if (typeof v !== 'string' && (typeof v !== 'number' || !Number.isFinite(v))) fail(p, 'expected a string or a number');
    return v as string | number;
  };
  const fields = (allowed: string[]) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) fail(here, 'expected an object');
    for (const k of Object.keys(body as object)) if (!allowed.includes(k)) fail(here, `unknown property "${k}" (allowed: ${allowed.join(', ')})`);
    return body as Record<string, unknown>;
  };
  switch (op) {
    case 'and':
    case 'or': {
      if (!Array.isArray(body) || body.length === 0) fail(here, 'expected a non-empty array of filters');
      const parts = (body as unknown[]).map((b, i) => compileValueFilter(b, value, [...here, i], depth + 1));
      return (op === 'and' ? Sql.and(parts) : Sql.or(parts)).wrap();
    }
    case 'not':
      return sql`NOT coalesce(${compileValueFilter(body, value, here, depth + 1)}, FALSE)`;
    case 'in': {
      const f = fields(['values']);
      if (!Array.isArray(f.values) || f.values.length < 1 || f.values.length > FILTER_LIMITS.maxValues) {
        fail([...here, 'values'], `expected 1 to ${FILTER_LIMITS.maxValues} values`);
      }
      const values = (f.values as unknown[]).map((v, i) => primitive(v, [...here, 'values', i]));
      return sql`${value} IN (${values})`;
    }
    case 'prefix': {
      const f = fields(['value']);
      if (typeof f.value !== 'string') fail([...here, 'value'], 'expected a string');
      const prefix = f.value as string;
      const upper = prefixUpperBound(prefix);
      return upper === undefined ? sql`${value} >= ${prefix}` : sql`(${value} >= ${prefix} AND ${value} < ${upper})`;
    }
    default: {
      const f = fields(['gt', 'gte', 'lt', 'lte']);
      const parts: Sql[] = [];
      if ('gt' in f && 'gte' in f) fail(here, 'gt and gte cannot be combined');
      if ('lt' in f && 'lte' in f) fail(here, 'lt and lte cannot be combined');
      for (const [k, opSql] of [
        ['gt', '>'],
        ['gte', '>='],
        ['lt', '<'],
        ['lte', '<='],
      ] as const) {
        if (k in f) parts.push(sql`${value} ${Sql.raw(opSql)} ${primitive(f[k], [...here, k])}`);
      }
      if (parts.length === 0) fail(here, 'needs at least one of gt, gte, lt, lte');
      return Sql.and(parts).wrap();
    }
  }
}

/** Takes the request's `services` (not just the database) so the aggregate sees only what the request may read. */
export async function runAggregate(services: Services, catalog: ResourceCatalog, projectId: number, req: AggregateRequest): Promise<{ items: AggregateItem[] }> {
  const { db } = services;
  const { kind, properties, keysAsText } = currentForm(req);
  const { ctx, where } = parseQuery(catalog, projectId, req.filter, req.advancedFilter, services);
  const from = Sql.raw(`${catalog.table} ${catalog.alias}`);
  const id = Sql.raw(col(catalog, 'id'));

  let source: ValueSource | undefined;
  if (kind === 'cardinalityProperties' || kind === 'uniqueProperties') {
    if (properties) throw badRequest(`properties: not used by ${kind}; it aggregates the keys under "path"`);
    source = metadataKeySource(catalog, keysAsText);
  } else if (properties) {
    const property = properties[0].property;
    const maxLength = maxPropertyElementLength(catalog);
    property.forEach((p, i) => {
      if (p.length > maxLength) throw badRequest(`${formatPath(['properties', 0, 'property', i])}: must be at most ${maxLength} characters`);
    });
    source = valueSource(ctx, property, ['properties', 0, 'property']);
  } else if (kind !== 'count') {
    throw badRequest(`properties: ${kind} needs "properties" naming the property to aggregate`);
  }
  if (kind === 'count' && req.aggregateFilter !== undefined) throw badRequest('aggregateFilter: not used by count');

  const conditions = [where];
  if (source) conditions.push(sql`${source.value} IS NOT NULL`);
  if (source && req.aggregateFilter !== undefined) conditions.push(compileValueFilter(req.aggregateFilter, source.value, ['aggregateFilter']));
  const propertyFilter = properties?.[0]?.filter;
  if (source && propertyFilter !== undefined) conditions.push(compileValueFilter(propertyFilter, source.value, ['properties', 0, 'filter']));
  const whereAll = Sql.and(conditions);
  const join = source?.join ?? Sql.raw('');

  if (kind === 'count') {
    const counted = source?.multi ? sql`count(DISTINCT ${id})` : Sql.raw('count(*)');
    const row = await db.get<{ n: number }>(sql`SELECT ${counted} AS n FROM ${from}${join} WHERE ${whereAll}`);
    return { items: [{ count: row?.n ?? 0 }] };
  }
  if (kind === 'cardinalityValues' || kind === 'cardinalityProperties') {
    const row = await db.get<{ n: number }>(sql`SELECT count(DISTINCT ${source!.value}) AS n FROM ${from}${join} WHERE ${whereAll}`);
    return { items: [{ count: row?.n ?? 0 }] };
  }
  // Each item counts once per distinct value it holds.
  // Grouped over a subquery: a value read through an expression (visibleValues) is then a plain column to group by.
  const rows = await db.all<{ v: unknown; n: number }>(
    sql`SELECT v, count(DISTINCT i) AS n FROM (SELECT ${source!.value} AS v, ${id} AS i FROM ${from}${join} WHERE ${whereAll}) x
        GROUP BY v ORDER BY n DESC, v ASC LIMIT ${MAX_BUCKETS}`,
  );
  return {
    items: rows.map((r) => {
      const value = source!.toBucket(r.v);
      return { count: r.n, values: [value], value };
    }),
  };
}
