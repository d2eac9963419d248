/**
 * The parts of instance reads (by ids, list, search, aggregate) that are checked against the schema: the
 * views read, the units to convert to, sort keys, the properties searched, grouped and aggregated. Each
 * gives a 400 naming the place, or what the storage layer needs to answer the request.
 */
import { unitCatalog } from '../units/catalog.js';
import { unitConversion, type UnitConversion } from '../units/conversion.js';
import { BASE_FIELDS, describeTarget, parsePropertyReference, type FilterOptions, type FilterSchema, type PropertyTarget } from './filter.js';
import { fail, missingViews, viewKey, type Path, type ViewId } from './identifiers.js';
import type { Aggregate, AggregateInstancesBody, PropertySort, SearchInstancesBody, SourceSelector, TargetUnit } from './instance-schema.js';
import { isList, isNumericType, type PropertyType } from './property-types.js';
import type { EffectiveProperty, ResolvedView } from './view-resolution.js';
import { describeType } from './values.js';

/** The views of `ids`, resolved; a 400 listing those that do not exist. */
export function requireViews(ids: readonly ViewId[], schema: FilterSchema): ResolvedView[] {
  const missing = ids.filter((id) => !schema.view(id));
  if (missing.length > 0) throw missingViews(missing);
  return ids.map((id) => schema.view(id)!);
}

export interface SourceRead {
  view: ResolvedView;
  /** Conversions of numeric properties, by view property. */
  units: Map<string, UnitConversion>;
  /** The view properties returned; all of them when absent. */
  properties?: ReadonlySet<string>;
}

/** `sources` of a read: the views (which must exist), with their target units checked. */
export function checkSources(sources: readonly SourceSelector[] | undefined, schema: FilterSchema, path: Path): SourceRead[] {
  const list = sources ?? [];
  const views = requireViews(list.map((s) => s.source), schema);
  const seen = new Set<string>();
  return list.map((s, i) => {
    const key = viewKey(s.source);
    if (seen.has(key)) fail([...path, i, 'source'], `the view ${key} is listed twice`);
    seen.add(key);
    return { view: views[i], units: checkTargetUnits(views[i], s.targetUnits, [...path, i, 'targetUnits']) };
  });
}

/** The conversion each target unit asks for; a 400 when a property has no unit or the target measures something else. */
export function checkTargetUnits(view: ResolvedView, targetUnits: readonly TargetUnit[] | undefined, path: Path): Map<string, UnitConversion> {
  const out = new Map<string, UnitConversion>();
  (targetUnits ?? []).forEach((t, i) => {
    const where = [...path, i];
    const p = mappedProperty(view, t.property, [...where, 'property']);
    const conversion = targetConversion(p.definition.type, t.unit, where, JSON.stringify(t.property));
    if (out.has(t.property)) fail(where, `${JSON.stringify(t.property)} is given a target unit twice`);
    out.set(t.property, conversion);
  });
  return out;
}

/**
 * The conversion of a float property with a unit (`type`) to a unit or to a unit system's unit of its
 * quantity; a 400 at `path` (`property`, `unit`) when the property has no unit or the target measures
 * something else. `name` is how the message names the property.
 */
export function targetConversion(type: PropertyType, unit: { externalId?: string; unitSystemName?: string }, path: Path, name: string): UnitConversion {
  if ((type.type !== 'float32' && type.type !== 'float64') || !type.unit) {
    fail([...path, 'property'], `${name} has no unit to convert from (only float properties declared with a unit convert)`);
  }
  const from = unitCatalog.unit(type.unit.externalId)!;
  const { externalId, unitSystemName } = unit;
  if ((externalId === undefined) === (unitSystemName === undefined)) fail([...path, 'unit'], 'give exactly one of externalId and unitSystemName');
  let to;
  if (externalId !== undefined) {
    to = unitCatalog.unit(externalId) ?? fail([...path, 'unit', 'externalId'], `${JSON.stringify(externalId)} is not a unit of the units catalog`);
  } else {
    const system = unitCatalog.system(unitSystemName!) ?? fail([...path, 'unit', 'unitSystemName'], `${JSON.stringify(unitSystemName)} is not a unit system of the units catalog`);
    to = unitCatalog.systemUnit(system, from.quantity) ?? fail([...path, 'unit', 'unitSystemName'], `the unit system ${system.name} has no unit for ${from.quantity}`);
  }
  if (to.quantity !== from.quantity) fail([...path, 'unit'], `${to.externalId} measures ${to.quantity}, and the property is in ${from.externalId} (${from.quantity})`);
  return unitConversion(from, to);
}

/** A view property that maps a container property; the service's "Unknown property" 400 otherwise. */
function mappedProperty(view: ResolvedView, id: string, path: Path): Extract<EffectiveProperty, { kind: 'mapped' }> {
  const p = view.properties.get(id);
  if (!p) fail(path, `Unknown property ${JSON.stringify(id)}: the view ${viewKey(view.id)} has no such property`);
  if (p.kind !== 'mapped') fail(path, `${JSON.stringify(id)} of ${viewKey(view.id)} is a connection, not a property with values`);
  return p;
}

export interface SortKey {
  target: PropertyTarget;
  direction: 'ascending' | 'descending';
  /** Nulls sort last in both directions unless this is set. */
  nullsFirst: boolean;
}

/** Sort keys: properties with single values (not lists, not json). */
export function checkSort(sort: ReadonlyArray<Pick<PropertySort, 'property' | 'direction' | 'nullsFirst'>> | undefined, options: FilterOptions, path: Path): SortKey[] {
  return (sort ?? []).map((s, i) => {
    const target = parsePropertyReference(s.property, options, [...path, i, 'property']);
    if (isList(target.type) || target.type.type === 'json') {
      fail([...path, i, 'property'], `${describeTarget(target)} is a ${describeType(target.type)} property; sorts order single values`);
    }
    return { target, direction: s.direction ?? 'ascending', nullsFirst: s.nullsFirst ?? false };
  });
}

const textProperties = (view: ResolvedView): string[] =>
  [...view.properties].filter(([, p]) => p.kind === 'mapped' && p.definition.type.type === 'text').map(([id]) => id);

/** The text properties a query searches: those named (each a text property of the view), or all of the view's. */
export function searchedProperties(view: ResolvedView, names: readonly string[] | undefined, path: Path): string[] {
  if (names === undefined) return textProperties(view);
  return names.map((id, i) => {
    const p = mappedProperty(view, id, [...path, i]);
    if (p.definition.type.type !== 'text') fail([...path, i], `${JSON.stringify(id)} is ${describeType(p.definition.type)}; only text properties are searched`);
    return id;
  });
}

/** The search request's view-relative parts: searched properties and sort keys. */
export function checkSearch(body: SearchInstancesBody, view: ResolvedView, options: FilterOptions): { properties: string[]; sort: SortKey[] } {
  return { properties: searchedProperties(view, body.properties, ['properties']), sort: checkSort(body.sort, options, ['sort']) };
}

const GROUPABLE: ReadonlySet<string> = new Set(['text', 'direct', 'int32', 'int64', 'float32', 'float64', 'boolean', 'enum']);

export type AggregateSpec =
  | { aggregate: 'avg' | 'min' | 'max' | 'sum'; property: string }
  | { aggregate: 'count'; property?: string }
  | { aggregate: 'histogram'; property: string; interval: number };

/**
 * A base property of the instances (`externalId`, `space`, ...) that an aggregate names in place of a view
 * property, as the clients do to count and group instances; undefined when the view has a property of that
 * name, which comes first, or when no base property has it.
 */
export function aggregatedBaseProperty(view: ResolvedView, id: string, options: FilterOptions, path: Path): PropertyTarget | undefined {
  if (view.properties.has(id) || !(BASE_FIELDS as readonly string[]).includes(id)) return undefined;
  return parsePropertyReference([options.instanceType ?? 'node', id], options, path);
}

/** The aggregate request's view-relative parts: searched properties, groups and aggregates. */
export function checkAggregate(body: AggregateInstancesBody, view: ResolvedView, options: FilterOptions): { properties: string[]; groupBy: string[]; aggregates: AggregateSpec[] } {
  const groupBy = (body.groupBy ?? []).map((id, i) => {
    const base = aggregatedBaseProperty(view, id, options, ['groupBy', i]);
    const t = base ? base.type : mappedProperty(view, id, ['groupBy', i]).definition.type;
    // The base direct relations (type, startNode, endNode) are kept in another form than a container's.
    if (base && t.type === 'direct') fail(['groupBy', i], `${JSON.stringify(id)} is a direct relation of the instance itself; groups are of its space, externalId, version and instanceType`);
    if (isList(t) || !GROUPABLE.has(t.type)) fail(['groupBy', i], `${JSON.stringify(id)} is ${describeType(t)}; groups are of text, direct relation, number, boolean and enum properties`);
    return id;
  });
  const aggregates = (body.aggregates ?? []).map((a, i) => checkAggregateItem(a, view, options, ['aggregates', i]));
  return { properties: searchedProperties(view, body.properties, ['properties']), groupBy, aggregates };
}

function checkAggregateItem(a: Aggregate, view: ResolvedView, options: FilterOptions, path: Path): AggregateSpec {
  const keys = Object.keys(a) as Array<keyof Aggregate>;
  if (keys.length !== 1) fail(path, `expected exactly one of avg, min, max, sum, count, histogram, got ${keys.length === 0 ? 'none' : keys.join(', ')}`);
  const kind = keys[0];
  const where = [...path, kind, 'property'];
  if (kind === 'count') {
    const property = a.count!.property;
    if (property === undefined) return { aggregate: 'count' };
    if (!aggregatedBaseProperty(view, property, options, where)) mappedProperty(view, property, where);
    return { aggregate: 'count', property };
  }
  const body = a[kind]!;
  const p = mappedProperty(view, body.property, where);
  if (!isNumericType(p.definition.type) || isList(p.definition.type)) {
    fail(where, `${kind} needs a number property, and ${JSON.stringify(body.property)} is ${describeType(p.definition.type)}`);
  }
  if (kind === 'histogram') return { aggregate: 'histogram', property: body.property, interval: a.histogram!.interval };
  return { aggregate: kind, property: body.property };
}
