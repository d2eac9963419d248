/**
 * A small, deliberately naive in-memory evaluator of the data modeling filter language over instances, for
 * property-based tests: the list, search and query paths must give what this gives. It reads filters in
 * their request form and instances as plain objects, and shares no code with src/resources/models, so that
 * a mistake there does not hide here.
 *
 * Semantics (the intended ones; where the server disagrees, the server has the bug):
 * - Two-valued logic: a leaf on a missing (absent or null) value is false; `not` inverts; `and`/`or` as usual.
 * - Text compares by code point; numbers numerically; timestamps as instants (ISO text or epoch ms); dates as
 *   text; direct relations by space and external id.
 * - `equals` on a list compares whole lists; `in` on a list matches when an element is one of the values.
 * - `exists`: the value is not missing; an empty list exists, except in search.
 * - `prefix` on text is a text prefix; on a list, the list starts with the given elements (in search: some
 *   element has the text prefix).
 * - `overlaps`: the interval [start, end] meets the bounds; a missing start or end is open; both missing never matches.
 * - `hasData` on a container: the instance has data there; on a view: the view's filter when it has one
 *   (in which `hasData` on the same view means its containers), otherwise data in every container it maps.
 * - `nested`: the inner filter holds for the node the direct relation points at (false when there is none).
 */

/** An instance: base fields, and its data per container (`space:externalId`) in the form clients write it. */
export interface DmInstance {
  instanceType: 'node' | 'edge';
  space: string;
  externalId: string;
  version: number;
  type?: NodeRef;
  startNode?: NodeRef;
  endNode?: NodeRef;
  createdTime: number;
  lastUpdatedTime: number;
  deletedTime?: number;
  containers: Record<string, Record<string, unknown>>;
}
export interface NodeRef {
  space: string;
  externalId: string;
}

/** Container properties by container (`space:externalId`): type name and list-ness. */
export type ContainerTypes = Record<string, Record<string, { type: string; list?: boolean }>>;
/** Views by `space:externalId/version`: property -> [container key, container property], and the filter. */
export type ViewMappings = Record<string, { properties: Record<string, [string, string]>; filter?: Filter }>;

export interface DmWorld {
  containers: ContainerTypes;
  views: ViewMappings;
  /** Every instance, for `nested` to find the node a direct relation points at. */
  instances: readonly DmInstance[];
}

export interface EvalOptions {
  /** `space:externalId/version` of the view one-element properties belong to. */
  view?: string;
  parameters?: Record<string, unknown>;
  purpose?: 'query' | 'search';
}

export type Filter = { [op: string]: any };

type Value = unknown;
interface Prop {
  kind: string;
  list: boolean;
  read: (i: DmInstance) => Value;
}

const BASE_KINDS: Record<string, string> = {
  instanceType: 'text',
  version: 'int64',
  space: 'text',
  externalId: 'text',
  type: 'direct',
  startNode: 'direct',
  endNode: 'direct',
  createdTime: 'timestamp',
  lastUpdatedTime: 'timestamp',
  deletedTime: 'timestamp',
};

const missing = (v: Value) => v === undefined || v === null;

function property(world: DmWorld, ref: string[], opts: EvalOptions): Prop {
  if (ref.length === 2) return { kind: BASE_KINDS[ref[1]], list: false, read: (i) => (i as unknown as Record<string, Value>)[ref[1]] };
  let container: string;
  let prop: string;
  if (ref.length === 1) [container, prop] = world.views[opts.view!].properties[ref[0]];
  else if (ref[1].includes('/')) [container, prop] = world.views[`${ref[0]}:${ref[1]}`].properties[ref[2]];
  else [container, prop] = [`${ref[0]}:${ref[1]}`, ref[2]];
  const t = world.containers[container][prop];
  return { kind: t.type, list: t.list ?? false, read: (i) => i.containers[container]?.[prop] };
}

function timestampMs(v: Value): number {
  if (typeof v === 'number') return v;
  let text = String(v);
  if (!/(Z|[+-]\d\d(:?\d\d)?)$/.test(text)) text += 'Z';
  text = text.replace(/([+-]\d\d)(\d\d)$/, '$1:$2').replace(/([+-]\d\d)$/, '$1:00');
  return Date.parse(text);
}

/** A value comparable with `compare`: timestamps as ms, direct relations as text, the rest as is. */
function key(kind: string, v: Value): Value {
  if (kind === 'timestamp') return timestampMs(v);
  if (kind === 'direct') return `${(v as NodeRef).space}\u0000${(v as NodeRef).externalId}`;
  return v;
}

function compare(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const x = [...String(a)].map((c) => c.codePointAt(0)!);
  const y = [...String(b)].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

const same = (kind: string, a: Value, b: Value) => compare(key(kind, a), key(kind, b)) === 0;

export function dmMatches(world: DmWorld, instance: DmInstance, filter: Filter, opts: EvalOptions = {}, expanding: ReadonlySet<string> = new Set()): boolean {
  const [op] = Object.keys(filter);
  const body = filter[op];
  const recurse = (f: Filter) => dmMatches(world, instance, f, opts, expanding);
  switch (op) {
    case 'and':
      return (body as Filter[]).every(recurse);
    case 'or':
      return (body as Filter[]).some(recurse);
    case 'not':
      return !recurse(body);
    case 'matchAll':
      return true;
    case 'instanceReferences':
      return (body as NodeRef[]).some((r) => r.space === instance.space && r.externalId === instance.externalId);
    case 'hasData':
      return (body as Array<Record<string, string>>).every((ref) => {
        if (ref.type === 'container') return instance.containers[`${ref.space}:${ref.externalId}`] !== undefined;
        const viewKey = `${ref.space}:${ref.externalId}/${ref.version}`;
        const view = world.views[viewKey];
        if (view.filter && !expanding.has(viewKey)) return dmMatches(world, instance, view.filter, { ...opts, view: viewKey }, new Set([...expanding, viewKey]));
        return Object.values(view.properties).every(([c]) => instance.containers[c] !== undefined);
      });
    case 'nested': {
      const scope = property(world, body.scope, opts);
      const target = scope.read(instance) as NodeRef | undefined;
      if (missing(target)) return false;
      const node = world.instances.find((i) => i.instanceType === 'node' && i.space === target!.space && i.externalId === target!.externalId);
      return node !== undefined && dmMatches(world, node, body.filter, { ...opts, view: undefined }, expanding);
    }
    case 'overlaps': {
      const start = property(world, body.startProperty, opts);
      const end = property(world, body.endProperty, opts);
      const s = start.read(instance);
      const e = end.read(instance);
      if (missing(s) && missing(e)) return false;
      const bound = (b: Value) => key(start.kind, operand(world, instance, b, opts));
      const ks = missing(s) ? undefined : key(start.kind, s);
      const ke = missing(e) ? undefined : key(end.kind, e);
      return (
        (body.gt === undefined || ke === undefined || compare(ke, bound(body.gt)) > 0) &&
        (body.gte === undefined || ke === undefined || compare(ke, bound(body.gte)) >= 0) &&
        (body.lt === undefined || ks === undefined || compare(ks, bound(body.lt)) < 0) &&
        (body.lte === undefined || ks === undefined || compare(ks, bound(body.lte)) <= 0)
      );
    }
  }
  const p = property(world, body.property, opts);
  const v = p.read(instance);
  if (missing(v)) return false;
  const list = p.list ? (v as Value[]) : undefined;
  const arg = (name: string) => operand(world, instance, body[name], opts);
  switch (op) {
    case 'exists':
      return !(list && list.length === 0 && opts.purpose === 'search');
    case 'equals': {
      const want = arg('value');
      if (missing(want)) return false;
      if (!list) return same(p.kind, v, want);
      const w = want as Value[];
      return w.length === list.length && w.every((x, i) => same(p.kind, list[i], x));
    }
    case 'in':
    case 'containsAny':
    case 'containsAll': {
      const values = arg('values') as Value[] | undefined;
      if (missing(values)) return false;
      const have = list ?? [v];
      const has = (x: Value) => have.some((h) => same(p.kind, h, x));
      return op === 'containsAll' ? values!.every(has) : values!.some(has);
    }
    case 'range': {
      const k = key(p.kind, v);
      const at = (b: string) => key(p.kind, arg(b));
      return (
        (body.gt === undefined || compare(k, at('gt')) > 0) &&
        (body.gte === undefined || compare(k, at('gte')) >= 0) &&
        (body.lt === undefined || compare(k, at('lt')) < 0) &&
        (body.lte === undefined || compare(k, at('lte')) <= 0)
      );
    }
    case 'prefix': {
      const want = arg('value');
      if (missing(want)) return false;
      if (!list) return String(v).startsWith(String(want));
      if (opts.purpose === 'search') return list.some((e) => String(e).startsWith(String(want)));
      const w = want as Value[];
      return w.length <= list.length && w.every((x, i) => same(p.kind, list[i], x));
    }
  }
  throw new Error(`dm-evaluator: unknown filter ${op}`);
}

/** A filter value: a literal, a parameter's value, or another property of the same instance. */
function operand(world: DmWorld, instance: DmInstance, raw: Value, opts: EvalOptions): Value {
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const o = raw as Record<string, unknown>;
    if (typeof o.parameter === 'string') return opts.parameters![o.parameter];
    if (Array.isArray(o.property)) return property(world, o.property as string[], opts).read(instance);
  }
  return raw;
}

/** The instances a filter matches, in the given order. */
export function dmFilter(world: DmWorld, filter: Filter | undefined, opts: EvalOptions = {}): DmInstance[] {
  return world.instances.filter((i) => filter === undefined || dmMatches(world, i, filter, opts));
}
