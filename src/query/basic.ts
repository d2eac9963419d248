/**
 * Building blocks that translate the basic (exact-match) `filter` objects of the API into the advanced
 * filter AST, so both forms share one compiler, one evaluator and one set of semantics.
 */
import { badRequest } from '../http/errors.js';
import type { ResourceCatalog, Target } from './catalog.js';
import type { FilterNode, LeafNode, Primitive } from './filter.js';

export interface TimeRange {
  min?: number;
  max?: number;
}

export function propertyTarget(catalog: ResourceCatalog, name: string): Target {
  const def = catalog.properties[name];
  if (!def) throw new Error(`unknown property ${name} in ${catalog.noun} catalog`);
  return { type: 'property', name, def };
}

export function and(nodes: Array<FilterNode | undefined>): FilterNode | undefined {
  const present = nodes.filter((n): n is FilterNode => n !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return { op: 'and', args: present };
}

export function rangeLeaf(catalog: ResourceCatalog, name: string, range: TimeRange | undefined): LeafNode | undefined {
  if (!range || (range.min === undefined && range.max === undefined)) return undefined;
  return {
    op: 'range',
    target: propertyTarget(catalog, name),
    ...(range.min !== undefined ? { gte: range.min } : {}),
    ...(range.max !== undefined ? { lte: range.max } : {}),
  };
}

export function equalsLeaf(catalog: ResourceCatalog, name: string, value: Primitive | undefined): LeafNode | undefined {
  return value === undefined ? undefined : { op: 'equals', target: propertyTarget(catalog, name), value };
}

export function inLeaf(catalog: ResourceCatalog, name: string, values: Primitive[] | undefined): LeafNode | undefined {
  return values === undefined ? undefined : { op: 'in', target: propertyTarget(catalog, name), values };
}

export function prefixLeaf(catalog: ResourceCatalog, name: string, value: string | undefined): LeafNode | undefined {
  return value === undefined ? undefined : { op: 'prefix', target: propertyTarget(catalog, name), value };
}

export function containsAnyLeaf(catalog: ResourceCatalog, name: string, values: Primitive[] | undefined): LeafNode | undefined {
  return values === undefined ? undefined : { op: 'containsAny', target: propertyTarget(catalog, name), values };
}

export function isNullNode(catalog: ResourceCatalog, name: string, isNull: boolean): FilterNode {
  const exists: LeafNode = { op: 'exists', target: propertyTarget(catalog, name) };
  return isNull ? { op: 'not', arg: exists } : exists;
}

/** The `labels` filter on the label list `name`: the item has any, or all, of the labels given. */
export function labelsNode(
  catalog: ResourceCatalog,
  name: string,
  labels: { containsAny?: ReadonlyArray<{ externalId: string }>; containsAll?: ReadonlyArray<{ externalId: string }> } | undefined,
): LeafNode | undefined {
  if (!labels) return undefined;
  const { containsAny, containsAll } = labels;
  if ((containsAny === undefined) === (containsAll === undefined)) {
    throw badRequest('filter.labels: give exactly one of "containsAny" and "containsAll"');
  }
  const target = propertyTarget(catalog, name);
  return containsAny ? { op: 'containsAny', target, values: containsAny.map((l) => l.externalId) } : { op: 'containsAll', target, values: containsAll!.map((l) => l.externalId) };
}

/** Every given key must have the given value (keys and values case-insensitive, as all metadata filters). */
export function metadataNode(catalog: ResourceCatalog, metadata: Record<string, string> | undefined): FilterNode | undefined {
  if (!metadata || !catalog.metadata) return undefined;
  const store = catalog.metadata;
  return and(
    Object.entries(metadata).map(([key, value]): LeafNode => ({ op: 'equals', target: { type: 'metadataKey', key, store }, value })),
  );
}
