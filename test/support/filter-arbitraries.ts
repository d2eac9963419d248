/**
 * fast-check generators of valid advanced filters and sort specifications, driven by the evaluator's
 * property-kind table plus per-resource value domains (small, so that filters actually hit).
 */
import fc, { type Arbitrary } from 'fast-check';
import { SCORE, leafNodes, type Filter, type Primitive, type ResourceModel, type SortSpec } from './evaluator.js';

export interface Domains {
  /** Values for equals / in / range on a scalar path or a metadata path (`["metadata"]` or `["metadata", k]`). */
  value(path: string[]): Arbitrary<Primitive>;
  /** Values for prefix on a string or metadata path. */
  prefix(path: string[]): Arbitrary<string>;
  /** Elements for containsAny / containsAll on an array property. */
  element(path: string[]): Arbitrary<Primitive>;
  /** Query text for search leaves (1 to 128 characters, not blank). */
  searchText: Arbitrary<string>;
  /** Metadata keys to filter and sort on: mixed casing, and some that no item has. */
  metadataKey: Arbitrary<string>;
}

export interface FilterOptions {
  /** Levels of and/or/not above the leaves (the leaf is one more level). */
  maxBooleanDepth?: number;
  maxSearchLeaves?: number;
}

export function leafArbitrary(model: ResourceModel, d: Domains): Arbitrary<Filter> {
  const byKind = (...kinds: string[]) => model.properties.filter((p) => kinds.includes(p.kind) && !p.searchOnly).map((p) => p.name);
  const scalar = byKind('integer', 'string', 'boolean');
  const strings = byKind('string');
  const arrays = byKind('integerArray', 'stringArray');
  const metadata = byKind('metadata');
  const searchable = model.properties.filter((p) => p.searchable).map((p) => p.name);

  const metaKeyPath = (names: string[]) =>
    names.length === 0 ? [] : [fc.tuple(fc.constantFrom(...names), d.metadataKey).map(([m, k]) => [m, k])];
  const metaAnyPath = (names: string[]) => (names.length === 0 ? [] : [fc.constantFrom(...names).map((m) => [m])]);
  const pick = (names: string[]) => (names.length === 0 ? [] : [fc.constantFrom(...names).map((n) => n.split('.'))]);

  const valuePath = fc.oneof(...pick(scalar), ...metaKeyPath(metadata), ...metaAnyPath(metadata));
  const stringPath = fc.oneof(...pick(strings), ...metaKeyPath(metadata), ...metaAnyPath(metadata));
  const anyPath = fc.oneof(...pick(scalar), ...pick(arrays), ...metaKeyPath(metadata), ...metaAnyPath(metadata));
  const isMetadata = (path: string[]) => metadata.includes(path[0]);

  const equals = valuePath.chain((property) => d.value(property).map((value) => ({ equals: { property, value } })));
  const inLeaf = valuePath.chain((property) =>
    fc.array(d.value(property), { minLength: 1, maxLength: 4 }).map((values) => ({ in: { property, values } })),
  );
  const range = valuePath.chain((property) => {
    const bound = (ops: [string, string]) => fc.option(fc.tuple(fc.constantFrom(...ops), d.value(property)), { nil: undefined });
    return fc
      .tuple(bound(['gt', 'gte']), bound(['lt', 'lte']))
      .filter(([lo, hi]) => (isMetadata(property) ? lo !== undefined && hi !== undefined : lo !== undefined || hi !== undefined))
      .map(([lo, hi]) => ({ range: { property, ...(lo ? { [lo[0]]: lo[1] } : {}), ...(hi ? { [hi[0]]: hi[1] } : {}) } }));
  });
  const prefix = stringPath.chain((property) => d.prefix(property).map((value) => ({ prefix: { property, value } })));
  const exists = anyPath.map((property) => ({ exists: { property } }));
  const contains = (op: 'containsAny' | 'containsAll') =>
    fc
      .constantFrom(...arrays)
      .chain((name) => fc.array(d.element([name]), { minLength: 1, maxLength: 4 }).map((values) => ({ [op]: { property: [name], values } })));
  const search = fc
    .tuple(fc.constantFrom(...searchable), d.searchText)
    .map(([name, value]) => ({ search: { property: name.split('.'), value } }));

  return fc.oneof(
    { arbitrary: equals, weight: 3 },
    { arbitrary: inLeaf, weight: 2 },
    { arbitrary: range, weight: 3 },
    { arbitrary: prefix, weight: 2 },
    { arbitrary: exists, weight: 2 },
    ...(arrays.length ? [{ arbitrary: contains('containsAny'), weight: 1 }, { arbitrary: contains('containsAll'), weight: 1 }] : []),
    ...(searchable.length ? [{ arbitrary: search, weight: 1 }] : []),
  );
}

export function filterArbitrary(model: ResourceModel, d: Domains, options: FilterOptions = {}): Arbitrary<Filter> {
  const { maxBooleanDepth = 3, maxSearchLeaves = 2 } = options;
  const leaf = leafArbitrary(model, d);
  const { node } = fc.letrec<{ node: Filter; and: Filter; or: Filter; not: Filter }>((tie) => ({
    node: fc.oneof(
      { maxDepth: maxBooleanDepth, depthIdentifier: 'filter' },
      { arbitrary: leaf, weight: 3 },
      { arbitrary: tie('and'), weight: 1 },
      { arbitrary: tie('or'), weight: 1 },
      { arbitrary: tie('not'), weight: 1 },
    ),
    and: fc.array(tie('node'), { minLength: 1, maxLength: 3, depthIdentifier: 'filter' }).map((args) => ({ and: args })),
    or: fc.array(tie('node'), { minLength: 1, maxLength: 3, depthIdentifier: 'filter' }).map((args) => ({ or: args })),
    not: tie('node').map((arg) => ({ not: arg })),
  }));
  return node.filter((f) => leafNodes(f).filter(([op]) => op === 'search').length <= maxSearchLeaves);
}

/** 0 to 2 sort specifications on distinct sortable properties, `_score_` and metadata keys included. */
export function sortArbitrary(model: ResourceModel, d: Domains): Arbitrary<SortSpec[]> {
  const sortable = model.properties.filter((p) => p.sortable);
  const plain = sortable.filter((p) => p.kind !== 'metadata').map((p) => p.name.split('.'));
  const metadata = sortable.filter((p) => p.kind === 'metadata').map((p) => p.name);
  const paths = [
    { arbitrary: fc.constantFrom(...plain), weight: 6 },
    ...(metadata.length ? [{ arbitrary: fc.tuple(fc.constantFrom(...metadata), d.metadataKey).map(([m, k]) => [m, k]), weight: 3 }] : []),
    { arbitrary: fc.constant<string[]>([SCORE]), weight: 1 },
  ];
  const spec: Arbitrary<SortSpec> = fc
    .record({
      property: fc.oneof(...paths),
      order: fc.option(fc.constantFrom('asc' as const, 'desc' as const), { nil: undefined, freq: 3 }),
      nulls: fc.option(fc.constantFrom('auto' as const, 'first' as const, 'last' as const), { nil: undefined, freq: 3 }),
    })
    .map((s) => {
      const out: SortSpec = { property: s.property };
      if (s.order) out.order = s.order;
      if (s.nulls) out.nulls = s.nulls;
      return out;
    });
  return fc.uniqueArray(spec, { minLength: 0, maxLength: 2, selector: (s) => JSON.stringify(s.property) });
}

/** All code-point prefixes of the given strings (the empty one included). */
export function prefixesOf(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    const chars = [...v];
    for (let i = 0; i <= chars.length; i++) out.add(chars.slice(0, i).join(''));
  }
  return [...out];
}
