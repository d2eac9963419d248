/**
 * The data modeling filter language: a request's filter checked against the schema and turned into an AST
 * whose leaves name container properties (a view's property resolves to the container property it maps)
 * and carry values in the form the service keeps them (values.ts).
 *
 * The AST shares its boolean nodes (`BooleanNode`) and its leaves' names and fields (`equals` with `target`
 * and `value`, `in` with `values`, `range` with `gt`/`gte`/`lt`/`lte`, ...) with the resources' advanced
 * filter (query/filter.ts). It differs where the languages differ: a leaf's property is a container property
 * or a base field of the instance rather than a catalog column, values are typed by the property (and may be
 * another property of the same instance), and there are leaves the other language lacks (`matchAll`,
 * `nested`, `overlaps`, `hasData`, `instanceReferences`).
 *
 * Semantics (also those of the evaluator the tests use): two-valued logic, so a leaf on a missing value is
 * false and `not` inverts it; `equals` on a list property compares whole lists; `in` on a list property
 * matches when any element is one of the values; `exists` is true for an empty list (in search: false);
 * `prefix` on a list property is a prefix of elements (in search: any element has the text prefix);
 * `overlaps` treats a missing start or end as open, and never matches when both are missing; `hasData` on a
 * view with a filter is that filter, otherwise data in every container the view maps. Text compares by
 * code point; numbers and timestamps numerically; dates as text.
 *
 * How the storage layer compiles it (one compiler for both engines, with a container table per container):
 * every leaf becomes a predicate that is never NULL, so `not` can be a plain NOT; a container target is a
 * column of that container's table, joined once per container; `hasData` on a container is an EXISTS on its
 * table (or the inner join already made), on a view the conjunction over `containers` or the compiled
 * `filter`; `nested` an IN over the visible instances matching the inner filter; `instanceReferences` a
 * row-value IN; list leaves go through the engine's array operators (or an inverted index's side table);
 * text `prefix` a range `[p, prefixUpperBound(p))` so a btree serves it; a property operand a column
 * comparison; base `type`, `startNode` and `endNode` values, like direct relation values, compare the
 * reference as stored, so a leaf naming a node answers alike whether the node exists, is hidden from the
 * caller, or was never written. Values arrive already typed and converted (timestamps as milliseconds).
 *
 * Records (resources/streams) are filtered in the same language with `records` set: a property is a
 * container property `[space, container, property]` or one of the record's own fields `["space"]`,
 * `["externalId"]`, `["createdTime"]`, `["lastUpdatedTime"]` (which leaves take which is `RECORD_FIELDS`);
 * `hasData` names containers; `nested`, `overlaps` and `instanceReferences`, which are about the graph, are
 * refused.
 */
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import { isPlainObject, type BooleanNode } from '../../query/filter.js';
import type { ContainerDefinition } from './containers.js';
import {
  fail,
  missingContainers,
  missingViews,
  viewKey,
  type ContainerId,
  type DirectRelationReference,
  type InstanceType,
  type Path,
  type ViewId,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { isList, type PropertyType } from './property-types.js';
import type { ResolvedView } from './view-resolution.js';
import { describeType, describeValue, nodeReference, normalizeValue, type StoredScalar, type StoredValue } from './values.js';

export const BASE_FIELDS = [
  'instanceType',
  'version',
  'space',
  'externalId',
  'type',
  'createdTime',
  'lastUpdatedTime',
  'deletedTime',
  'startNode',
  'endNode',
] as const;
export type BaseField = (typeof BASE_FIELDS)[number];
const EDGE_ONLY: ReadonlySet<BaseField> = new Set(['startNode', 'endNode']);

/** The type of each base field, so that base fields and container properties take values the same way. */
export const BASE_FIELD_TYPES: Record<BaseField, PropertyType> = {
  instanceType: { type: 'enum', values: { node: {}, edge: {} } },
  version: { type: 'int64', list: false },
  space: { type: 'text', list: false, collation: 'ucs_basic' },
  externalId: { type: 'text', list: false, collation: 'ucs_basic' },
  type: { type: 'direct', list: false },
  createdTime: { type: 'timestamp', list: false },
  lastUpdatedTime: { type: 'timestamp', list: false },
  deletedTime: { type: 'timestamp', list: false },
  startNode: { type: 'direct', list: false },
  endNode: { type: 'direct', list: false },
};

/** What a filter property names. */
export type PropertyTarget =
  | { kind: 'base'; instanceType: InstanceType | 'record'; field: BaseField; type: PropertyType }
  | {
      kind: 'container';
      container: ContainerId;
      property: string;
      type: PropertyType;
      /** The view and view property it was named through, if it was. */
      view?: { id: ViewId; property: string };
    };

/** A value a leaf compares with: a literal in stored form (an array where the leaf takes a list), or another property. */
export type Operand = { kind: 'value'; value: StoredValue } | { kind: 'property'; target: PropertyTarget };

export type HasDataSource =
  | { type: 'container'; container: ContainerId }
  /** A view: its filter when it has one, otherwise data in every container it maps. */
  | { type: 'view'; view: ViewId; containers: ContainerId[]; filter?: DmFilter };

export type DmLeaf =
  | { op: 'equals'; target: PropertyTarget; value: Operand }
  | { op: 'in' | 'containsAny' | 'containsAll'; target: PropertyTarget; values: Operand }
  | { op: 'range'; target: PropertyTarget; gt?: Operand; gte?: Operand; lt?: Operand; lte?: Operand }
  | { op: 'prefix'; target: PropertyTarget; value: Operand }
  | { op: 'exists'; target: PropertyTarget }
  | { op: 'matchAll' }
  | { op: 'nested'; scope: PropertyTarget; filter: DmFilter }
  | { op: 'overlaps'; start: PropertyTarget; end: PropertyTarget; gt?: Operand; gte?: Operand; lt?: Operand; lte?: Operand }
  | { op: 'hasData'; sources: HasDataSource[] }
  | { op: 'instanceReferences'; refs: DirectRelationReference[] };

export type DmFilter = BooleanNode<DmLeaf>;

/** The schema objects a filter may name. */
export interface FilterSchema {
  container(id: ContainerId): ContainerDefinition | undefined;
  view(id: ViewId): ResolvedView | undefined;
}

export interface FilterOptions {
  schema: FilterSchema;
  /** The instances filtered; base properties must name the same kind. Unknown (both allowed) in view filters. */
  instanceType?: InstanceType;
  /** The view that one-element property references name a property of (search, aggregate, a list of one source). */
  view?: ViewId;
  /** Values of `{"parameter": name}` (query and sync); without them a parameter is refused. */
  parameters?: Readonly<Record<string, unknown>>;
  /** Search requests: no `overlaps`; `prefix` on a list tests each element. */
  purpose?: 'query' | 'search';
  /** What the request's filters may still hold, shared by all the filters of one request (one each by default). */
  budget?: FilterBudget;
  /** The filter is over records (see the top of this file). */
  records?: boolean;
}

/** The record fields each leaf of a records filter may name (as `["space"]`); the other leaves name container properties only. */
export const RECORD_FIELDS: Readonly<Record<string, readonly BaseField[]>> = {
  equals: ['space', 'externalId', 'createdTime', 'lastUpdatedTime'],
  in: ['space', 'externalId', 'createdTime', 'lastUpdatedTime'],
  prefix: ['space', 'externalId'],
  range: ['createdTime', 'lastUpdatedTime'],
};

/** Leaves about the graph, which records do not have. */
const GRAPH_LEAVES: ReadonlySet<string> = new Set(['nested', 'overlaps', 'instanceReferences']);

/**
 * The size of all the filters of one request, the filters of the views their `hasData` names included (a
 * view's filter can name other views in turn): values and clauses in all, and how deep the filters nest
 * with the views' filters in them. Bounded so that no statement a request compiles to passes what the
 * engines take (32,766 parameters on SQLite, an expression nested 1000 deep), and so that views naming
 * views cannot make a filter grow without end.
 */
export class FilterBudget {
  values = 0;
  clauses = 0;
}

interface State {
  options: FilterOptions;
  clauses: number;
  /** Views whose filter is being expanded for `hasData`: inside it, `hasData` on the same view means its containers. */
  expanding: ReadonlySet<string>;
  budget: FilterBudget;
  /** Where the request's filter is, for the messages of the budget (a view's filter has its own paths). */
  root: Path;
  /** The depth the filter starts at: that of the `hasData` leaf inside a view's filter. */
  base: number;
}

/** Past a limit of the budget; thrown from inside a view's filter as it is, not as a fault of that filter. */
class OverBudget extends ApiError {}

function spend(state: State, what: 'values' | 'clauses', n: number): void {
  const b = state.budget;
  b[what] += n;
  const max = what === 'values' ? DM_LIMITS.requestFilterValues : DM_LIMITS.requestFilterClauses;
  if (b[what] > max) {
    const noun = what === 'values' ? 'values (of in, containsAny, containsAll, instanceReferences and list operands)' : 'filters';
    throw new OverBudget(400, `${formatPath(state.root)}: the request's filters hold more than ${max} ${noun} in all, with the filters of the views that hasData names; at most ${max} are allowed`);
  }
}

const BOOL_OPS = ['and', 'or', 'not'];
const LEAF_OPS = ['equals', 'in', 'range', 'prefix', 'exists', 'containsAny', 'containsAll', 'matchAll', 'nested', 'overlaps', 'hasData', 'instanceReferences'];
const ALL_OPS = [...BOOL_OPS, ...LEAF_OPS];

const LEAF_FIELDS: Record<string, { required: string[]; optional: string[] }> = {
  equals: { required: ['property', 'value'], optional: [] },
  in: { required: ['property', 'values'], optional: [] },
  containsAny: { required: ['property', 'values'], optional: [] },
  containsAll: { required: ['property', 'values'], optional: [] },
  range: { required: ['property'], optional: ['gt', 'gte', 'lt', 'lte'] },
  prefix: { required: ['property', 'value'], optional: [] },
  exists: { required: ['property'], optional: [] },
  matchAll: { required: [], optional: [] },
  nested: { required: ['scope', 'filter'], optional: [] },
  overlaps: { required: ['startProperty', 'endProperty'], optional: ['gt', 'gte', 'lt', 'lte'] },
};

/** The AST of a request's filter; a 400 naming the place (`filter.and[1].equals.value: ...`) when it is not valid. */
export function parseFilter(raw: unknown, options: FilterOptions, path: Path = ['filter']): DmFilter {
  const state: State = { options, clauses: 0, expanding: new Set(), budget: options.budget ?? new FilterBudget(), root: path, base: 0 };
  const node = parseNode(raw, state, path, 1);
  if (state.clauses > DM_LIMITS.filterClauses) fail(path, `has ${state.clauses} clauses; at most ${DM_LIMITS.filterClauses} are allowed`);
  return node;
}

function parseNode(raw: unknown, state: State, path: Path, depth: number): DmFilter {
  if (depth > DM_LIMITS.filterDepth) fail(path, `the filter is nested deeper than ${DM_LIMITS.filterDepth} levels`);
  if (state.base + depth > DM_LIMITS.expandedFilterDepth) {
    throw new OverBudget(400, `${formatPath(state.root)}: with the filters of the views that hasData names, the filter nests deeper than ${DM_LIMITS.expandedFilterDepth} levels`);
  }
  if (!isPlainObject(raw)) fail(path, raw === null ? 'null is not allowed' : 'expected a filter object');
  const keys = Object.keys(raw);
  if (keys.length !== 1 || !ALL_OPS.includes(keys[0])) {
    const unknown = keys.find((k) => !ALL_OPS.includes(k));
    fail(
      path,
      unknown !== undefined
        ? `unknown filter ${JSON.stringify(unknown)} (expected one of ${ALL_OPS.join(', ')})`
        : `expected exactly one of ${ALL_OPS.join(', ')}, got ${keys.length === 0 ? 'none' : keys.join(', ')}`,
    );
  }
  const op = keys[0];
  const body = raw[op];
  const here = [...path, op];
  if (state.options.records && GRAPH_LEAVES.has(op)) fail(here, `records have no ${op} filter (it is about instances of the graph)`);
  state.clauses++;
  spend(state, 'clauses', 1);
  if (op === 'and' || op === 'or') {
    if (!Array.isArray(body)) fail(here, body === null ? 'null is not allowed' : 'expected an array of filters');
    if (body.length < 1) fail(here, 'must contain at least 1 filter');
    return { op, args: body.map((child, i) => parseNode(child, state, [...here, i], depth + 1)) };
  }
  if (op === 'not') return { op, arg: parseNode(body, state, here, depth + 1) };
  if (op === 'hasData') return parseHasData(body, state, here, depth);
  if (op === 'instanceReferences') return parseInstanceReferences(body, state, here);
  return parseLeaf(op, body, state, here, depth);
}

function checkFields(op: string, body: unknown, path: Path): Record<string, unknown> {
  if (!isPlainObject(body)) fail(path, body === null ? 'null is not allowed' : 'expected an object');
  const { required, optional } = LEAF_FIELDS[op];
  for (const k of Object.keys(body)) {
    if (!required.includes(k) && !optional.includes(k)) {
      fail(path, `unknown property ${JSON.stringify(k)}${required.length + optional.length ? ` (allowed: ${[...required, ...optional].join(', ')})` : ''}`);
    }
    if (body[k] === null) fail([...path, k], 'null is not allowed');
  }
  for (const k of required) if (!(k in body)) fail(path, `missing required property "${k}"`);
  return body;
}

function parseLeaf(op: string, raw: unknown, state: State, path: Path, depth: number): DmFilter {
  const body = checkFields(op, raw, path);
  const search = state.options.purpose === 'search';
  switch (op) {
    case 'matchAll':
      return { op };
    case 'nested': {
      const scope = parseTarget(body.scope, state, [...path, 'scope']);
      if (scope.type.type !== 'direct' || isList(scope.type)) {
        fail([...path, 'scope'], `nested applies to a single direct relation, not a ${describeType(scope.type)} property`);
      }
      const hint = scope.kind === 'container' && scope.view ? state.options.schema.view(scope.view.id)?.properties.get(scope.view.property) : undefined;
      const inner: State = {
        ...state,
        options: { ...state.options, instanceType: 'node', view: hint?.kind === 'mapped' ? hint.source : undefined },
      };
      const filter = parseNode(body.filter, inner, [...path, 'filter'], depth + 1);
      state.clauses = inner.clauses;
      return { op, scope, filter };
    }
    case 'overlaps': {
      if (search) fail(path, 'overlaps is not available in search requests');
      const start = parseTarget(body.startProperty, state, [...path, 'startProperty']);
      const end = parseTarget(body.endProperty, state, [...path, 'endProperty']);
      for (const [t, key] of [[start, 'startProperty'], [end, 'endProperty']] as const) {
        if (!OVERLAP_TYPES.has(t.type.type) || isList(t.type)) fail([...path, key], `overlaps applies to number, timestamp and date properties, not ${describeType(t.type)}`);
      }
      if (family(start.type) !== family(end.type)) {
        fail(path, `startProperty (${describeType(start.type)}) and endProperty (${describeType(end.type)}) must be of the same kind`);
      }
      return { op, start, end, ...bounds(body, start, state, path, true) };
    }
  }

  const target = parseTarget(body.property, state, [...path, 'property']);
  if (target.kind === 'base' && target.instanceType === 'record' && !(RECORD_FIELDS[op] ?? []).includes(target.field)) {
    const fields = RECORD_FIELDS[op] ?? [];
    fail([...path, 'property'], `${op} on records takes ${fields.length ? `${fields.map((f) => JSON.stringify([f])).join(', ')} or ` : ''}a container property [space, container, property]`);
  }
  const t = target.type;
  if (t.type === 'json' && op !== 'exists') fail(path, `${op} does not apply to json properties (only exists does)`);
  const element = elementType(t);
  switch (op) {
    case 'exists':
      return { op, target };
    case 'equals':
      return { op, target, value: operand(body.value, t, state, [...path, 'value']) };
    case 'in':
    case 'containsAny':
    case 'containsAll': {
      if (op !== 'in' && !isList(t)) fail(path, `${op} applies to list properties, not a ${describeType(t)} property; use in`);
      return { op, target, values: listOperand(body.values, element, state, [...path, 'values']) };
    }
    case 'range': {
      if (isList(t)) fail(path, `range does not apply to the list property ${describeTarget(target)}`);
      if (!RANGE_TYPES.has(t.type)) fail(path, `range does not apply to ${describeType(t)} properties`);
      return { op, target, ...bounds(body, target, state, path, false) };
    }
    case 'prefix': {
      if (isList(t) && !search) return { op, target, value: operand(body.value, t, state, [...path, 'value']) };
      if (!PREFIX_TYPES.has(element.type)) fail(path, `prefix applies to text properties and lists, not ${describeType(t)}`);
      return { op, target, value: operand(body.value, TEXT, state, [...path, 'value']) };
    }
  }
  throw new Error(`unreachable: ${op}`);
}

const TEXT: PropertyType = { type: 'text', list: false, collation: 'ucs_basic' };

const RANGE_TYPES: ReadonlySet<string> = new Set(['int32', 'int64', 'float32', 'float64', 'timestamp', 'date', 'text', 'enum', 'timeseries', 'file', 'sequence']);
const OVERLAP_TYPES: ReadonlySet<string> = new Set(['int32', 'int64', 'float32', 'float64', 'timestamp', 'date']);
const PREFIX_TYPES: ReadonlySet<string> = new Set(['text', 'enum', 'timeseries', 'file', 'sequence']);

/** Kinds of values that compare with each other. */
function family(t: PropertyType): string {
  if (['int32', 'int64', 'float32', 'float64'].includes(t.type)) return 'number';
  if (PREFIX_TYPES.has(t.type)) return 'text';
  return t.type;
}

function elementType(t: PropertyType): PropertyType {
  return t.type === 'enum' || !t.list ? t : ({ ...t, list: false } as PropertyType);
}

function bounds(body: Record<string, unknown>, target: PropertyTarget, state: State, path: Path, forOverlaps: boolean) {
  const given = (['gt', 'gte', 'lt', 'lte'] as const).filter((b) => b in body);
  if (given.length === 0) fail(path, 'needs at least one of gt, gte, lt, lte');
  if ('gt' in body && 'gte' in body) fail(path, 'gt and gte cannot be combined');
  if ('lt' in body && 'lte' in body) fail(path, 'lt and lte cannot be combined');
  const out: Partial<Record<'gt' | 'gte' | 'lt' | 'lte', Operand>> = {};
  // Bounds of text-like properties are any text: an enum's bound need not be one of its values.
  const type = PREFIX_TYPES.has(target.type.type) ? TEXT : target.type;
  for (const b of given) out[b] = operand(body[b], type, state, [...path, b], forOverlaps ? 'overlaps' : 'range');
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Properties

export function describeTarget(t: PropertyTarget): string {
  if (t.kind === 'base') return JSON.stringify(t.instanceType === 'record' ? [t.field] : [t.instanceType, t.field]);
  if (t.view) return JSON.stringify([t.view.id.space, `${t.view.id.externalId}/${t.view.id.version}`, t.view.property]);
  return JSON.stringify([t.container.space, t.container.externalId, t.property]);
}

const raise = (e: Error): never => {
  throw e;
};

function viewProperty(view: ResolvedView, property: string, path: Path): PropertyTarget {
  const p = view.properties.get(property);
  if (p === undefined) {
    fail(path, `the view ${viewKey(view.id)} has no property ${JSON.stringify(property)}`);
  }
  if (p.kind !== 'mapped') fail(path, `${JSON.stringify(property)} of ${viewKey(view.id)} is a connection, which filters cannot test; filter on the other end's properties`);
  return {
    kind: 'container',
    container: p.container,
    property: p.containerPropertyIdentifier,
    type: p.definition.type,
    view: { id: view.id, property },
  };
}

/** What a property reference (`["node", "space"]`, `[space, "view/version", prop]`, `[space, container, prop]`, `[prop]`) names. */
export function parsePropertyReference(raw: unknown, options: FilterOptions, path: Path): PropertyTarget {
  return parseTarget(raw, { options, clauses: 0, expanding: new Set(), budget: new FilterBudget(), root: path, base: 0 }, path);
}

/** The record fields a records filter, sort or aggregate may name as `[field]`. */
const RECORD_BASE: readonly BaseField[] = ['space', 'externalId', 'createdTime', 'lastUpdatedTime'];

/** A property of a record: one of its own fields, `[field]`, or a container property `[space, container, property]`. */
function recordTarget(raw: unknown, state: State, path: Path): PropertyTarget {
  if (!Array.isArray(raw) || (raw.length !== 1 && raw.length !== 3) || !raw.every((e) => typeof e === 'string' && e.length > 0)) {
    fail(path, `expected a record property: [space, container, property], or one of ${RECORD_BASE.map((f) => JSON.stringify([f])).join(', ')}; got ${JSON.stringify(raw)}`);
  }
  const parts = raw as string[];
  if (parts.length === 1) {
    const field = parts[0] as BaseField;
    if (!RECORD_BASE.includes(field)) fail(path, `records have no field ${JSON.stringify(parts[0])} (they have ${RECORD_BASE.join(', ')})`);
    return { kind: 'base', instanceType: 'record', field, type: BASE_FIELD_TYPES[field] };
  }
  const [space, externalId, property] = parts;
  if (externalId.includes('/')) fail(path, `records are filtered on container properties, not on views: ${JSON.stringify(raw)}`);
  const id = { space, externalId };
  const container = state.options.schema.container(id) ?? raise(missingContainers([id], path));
  requireRecordContainer(container, path);
  if (!Object.hasOwn(container.properties, property)) fail(path, `the container ${space}:${externalId} has no property ${JSON.stringify(property)}`);
  return { kind: 'container', container: id, property, type: container.properties[property].type };
}

/** Records have data in record containers only. */
export function requireRecordContainer(container: ContainerDefinition, path: Path): void {
  if (container.usedFor !== 'record') {
    fail(path, `the container ${container.space}:${container.externalId} holds data of ${container.usedFor === 'all' ? 'nodes and edges' : `${container.usedFor}s`}; records have data in containers with usedFor "record"`);
  }
}

function parseTarget(raw: unknown, state: State, path: Path): PropertyTarget {
  if (state.options.records) return recordTarget(raw, state, path);
  const { schema, instanceType, view } = state.options;
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > 3 || !raw.every((e) => typeof e === 'string' && e.length > 0)) {
    fail(path, `expected a property reference: ["node" or "edge", field], [space, "view/version", property], [space, container, property] or [property], got ${JSON.stringify(raw)}`);
  }
  const parts = raw as string[];
  if (parts.length === 2) {
    const [kind, field] = parts;
    if (kind !== 'node' && kind !== 'edge') fail(path, `a property of two elements is a base property: ["node" or "edge", field], got ${JSON.stringify(raw)}`);
    if (instanceType !== undefined && kind !== instanceType) fail(path, `this request is about ${instanceType}s; name their base properties as ["${instanceType}", ...]`);
    if (!(BASE_FIELDS as readonly string[]).includes(field) || (kind === 'node' && EDGE_ONLY.has(field as BaseField))) {
      const fields = BASE_FIELDS.filter((f) => kind === 'edge' || !EDGE_ONLY.has(f));
      fail(path, `${kind}s have no base property ${JSON.stringify(field)} (they have ${fields.join(', ')})`);
    }
    return { kind: 'base', instanceType: kind, field: field as BaseField, type: BASE_FIELD_TYPES[field as BaseField] };
  }
  if (parts.length === 1) {
    if (!view) fail(path, `a property of one element names a property of the request's view, and this request has none; use [space, "view/version", property]`);
    const resolved = schema.view(view) ?? raise(missingViews([view]));
    return viewProperty(resolved, parts[0], path);
  }
  const [space, source, property] = parts;
  const slash = source.indexOf('/');
  if (slash >= 0) {
    const id = { space, externalId: source.slice(0, slash), version: source.slice(slash + 1) };
    const resolved = schema.view(id) ?? raise(missingViews([id]));
    return viewProperty(resolved, property, path);
  }
  const id = { space, externalId: source };
  const container = schema.container(id) ?? raise(missingContainers([id]));
  const def = container.properties[property];
  if (!Object.hasOwn(container.properties, property)) fail(path, `the container ${space}:${source} has no property ${JSON.stringify(property)}`);
  return { kind: 'container', container: id, property, type: def.type };
}

// ---------------------------------------------------------------------------------------------------------
// Values

/** A literal checked against a type, in stored form; timestamps may also be given as epoch milliseconds. */
function literal(v: unknown, t: PropertyType, path: Path): StoredValue {
  if (t.type === 'timestamp' && typeof v === 'number' && !isList(t)) {
    if (!Number.isInteger(v)) fail(path, `expected a timestamp (ISO 8601 text or epoch milliseconds), got ${describeValue(v)}`);
    return v;
  }
  if (t.type === 'enum' && typeof v === 'string' && v === t.unknownValue) return v;
  return normalizeValue(v, t, path);
}

/** `{"parameter": name}` replaced by the parameter's value, or `{"property": [...]}` as a property operand. */
function special(raw: unknown, state: State, path: Path): { value: unknown } | { target: PropertyTarget } | undefined {
  if (!isPlainObject(raw) || Object.keys(raw).length !== 1) return undefined;
  if (typeof raw.parameter === 'string') {
    const { parameters } = state.options;
    if (!parameters) fail(path, 'parameters can only be used in query and sync requests');
    if (!Object.hasOwn(parameters, raw.parameter)) fail(path, `the parameter ${JSON.stringify(raw.parameter)} is not given in "parameters"`);
    return { value: parameters[raw.parameter] };
  }
  if (Array.isArray(raw.property)) return { target: parseTarget(raw.property, state, [...path, 'property']) };
  return undefined;
}

function comparable(a: PropertyType, b: PropertyType): boolean {
  return family(a) === family(b);
}

function operand(raw: unknown, t: PropertyType, state: State, path: Path, what = 'the property'): Operand {
  const s = special(raw, state, path);
  if (s && 'target' in s) {
    if (!comparable(elementType(s.target.type), elementType(t)) || isList(s.target.type) !== isList(t)) {
      fail(path, `${describeTarget(s.target)} (${describeType(s.target.type)}) cannot be compared with ${what} (${describeType(t)})`);
    }
    return { kind: 'property', target: s.target };
  }
  const value = s ? s.value : raw;
  if (value === null) fail(path, 'null is not allowed; use exists to test for a value');
  const checked = literal(value, t, path);
  if (Array.isArray(checked)) spend(state, 'values', checked.length);
  return { kind: 'value', value: checked };
}

/** The values of `in`, `containsAny`, `containsAll`: a list of elements, or a list property of the same elements. */
function listOperand(raw: unknown, element: PropertyType, state: State, path: Path): Operand {
  const s = special(raw, state, path);
  if (s && 'target' in s) {
    if (!isList(s.target.type) || !comparable(elementType(s.target.type), element)) {
      fail(path, `${describeTarget(s.target)} must be a list of ${describeType(element)} to give the values`);
    }
    return { kind: 'property', target: s.target };
  }
  const values = s ? s.value : raw;
  if (!Array.isArray(values)) fail(path, `expected a list of values, got ${describeValue(values)}`);
  if (values.length > DM_LIMITS.filterValues) fail(path, `at most ${DM_LIMITS.filterValues} values are allowed, got ${values.length}`);
  spend(state, 'values', values.length);
  return {
    kind: 'value',
    value: values.map((v, i) => {
      if (v === null) fail([...path, i], 'null is not allowed');
      return literal(v, element, [...path, i]) as StoredScalar;
    }),
  };
}

// ---------------------------------------------------------------------------------------------------------
// hasData, instanceReferences

function parseHasData(body: unknown, state: State, path: Path, depth: number): DmFilter {
  if (!Array.isArray(body)) fail(path, 'expected a list of view and container references');
  if (body.length > DM_LIMITS.hasDataSources) fail(path, `at most ${DM_LIMITS.hasDataSources} views and containers are allowed, got ${body.length}`);
  const { schema } = state.options;
  const missingV: ViewId[] = [];
  const missingC: ContainerId[] = [];
  const sources: HasDataSource[] = [];
  body.forEach((ref, i) => {
    const where = [...path, i];
    if (!isPlainObject(ref) || typeof ref.space !== 'string' || typeof ref.externalId !== 'string') {
      fail(where, 'expected {"type": "view", "space", "externalId", "version"} or {"type": "container", "space", "externalId"}');
    }
    if (ref.type === 'container') {
      const id = { space: ref.space, externalId: ref.externalId };
      const container = schema.container(id);
      if (container && state.options.records) requireRecordContainer(container, where);
      if (container) sources.push({ type: 'container', container: id });
      else missingC.push(id);
      return;
    }
    if (state.options.records) fail(where, 'records have data in containers: expected {"type": "container", "space", "externalId"}');
    if (ref.type !== 'view' || typeof ref.version !== 'string') fail(where, 'expected "type": "view" with a "version", or "type": "container"');
    const id = { space: ref.space, externalId: ref.externalId, version: ref.version };
    const view = schema.view(id);
    if (!view) {
      missingV.push(id);
      return;
    }
    sources.push(hasDataOfView(view, state, depth));
  });
  if (missingV.length > 0) throw missingViews(missingV);
  if (missingC.length > 0) throw missingContainers(missingC);
  return { op: 'hasData', sources };
}

/** `hasData` on a view: its filter, parsed in the request's budget, its root at the depth of the `hasData` leaf. */
function hasDataOfView(view: ResolvedView, state: State, depth: number): HasDataSource {
  const source: HasDataSource = { type: 'view', view: view.id, containers: view.mappedContainers };
  const key = viewKey(view.id);
  if (view.definition.filter === undefined || state.expanding.has(key)) return source;
  const inner: State = {
    options: { ...state.options, instanceType: undefined, view: view.id, parameters: undefined },
    clauses: 0,
    expanding: new Set([...state.expanding, key]),
    budget: state.budget,
    root: state.root,
    // The view's filter stands in the place of the hasData leaf, at its depth.
    base: state.base + depth - 1,
  };
  try {
    source.filter = parseNode(view.definition.filter, inner, ['filter'], 1);
  } catch (e) {
    if (e instanceof ApiError && e.status === 400 && !(e instanceof OverBudget)) throw badRequest(`the filter of the view ${key} no longer holds: ${e.message}`, e.extras);
    throw e;
  }
  return source;
}

function parseInstanceReferences(body: unknown, state: State, path: Path): DmFilter {
  if (!Array.isArray(body)) fail(path, 'expected a list of {"space", "externalId"}');
  if (body.length > DM_LIMITS.filterValues) fail(path, `at most ${DM_LIMITS.filterValues} references are allowed, got ${body.length}`);
  spend(state, 'values', body.length);
  return { op: 'instanceReferences', refs: body.map((r, i) => nodeReference(r, [...path, i], 'an instance reference')) };
}

/** The views and containers a request's filter names, so the caller can load them before parsing; malformed parts are skipped. */
export function filterSources(raw: unknown): { views: ViewId[]; containers: ContainerId[] } {
  const views = new Map<string, ViewId>();
  const containers = new Map<string, ContainerId>();
  const property = (p: unknown) => {
    if (!Array.isArray(p) || p.length !== 3 || !p.every((e) => typeof e === 'string')) return;
    const [space, source] = p as string[];
    const slash = source.indexOf('/');
    if (slash >= 0) {
      const id = { space, externalId: source.slice(0, slash), version: source.slice(slash + 1) };
      views.set(viewKey(id), id);
    } else containers.set(`${space}:${source}`, { space, externalId: source });
  };
  const visit = (node: unknown, depth: number): void => {
    if (depth > DM_LIMITS.filterDepth + 2 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((n) => visit(n, depth + 1));
      return;
    }
    const obj = node as Record<string, unknown>;
    for (const key of ['property', 'startProperty', 'endProperty', 'scope']) property(obj[key]);
    if (Array.isArray(obj.hasData)) {
      for (const ref of obj.hasData) {
        if (!isPlainObject(ref) || typeof ref.space !== 'string' || typeof ref.externalId !== 'string') continue;
        if (ref.type === 'view' && typeof ref.version === 'string') {
          const id = { space: ref.space, externalId: ref.externalId, version: ref.version };
          views.set(viewKey(id), id);
        } else if (ref.type === 'container') containers.set(`${ref.space}:${ref.externalId}`, { space: ref.space, externalId: ref.externalId });
      }
    }
    for (const value of Object.values(obj)) if (value !== null && typeof value === 'object') visit(value, depth + 1);
  };
  visit(raw, 0);
  return { views: [...views.values()], containers: [...containers.values()] };
}
