/**
 * What may change when a container that exists is applied again. Containers are not versioned, so a change
 * the stored data cannot follow is refused (409, naming the container and what changed) rather than
 * applied. A property, index or constraint left out of the new definition is kept: properties cannot be
 * deleted, and indexes and constraints have their own delete operations.
 *
 * Allowed: name and description of the container and of its properties; new properties; a property's
 * `defaultValue` and `immutable`; `nullable` from true to false; a new or larger `maxListSize` or
 * `maxTextSize`; new enum values and another `unknownValue`; new indexes and constraints (what the stored
 * data may break of these is checked after the apply, see container-checks.ts).
 * Refused: `usedFor`; a property's type, `list`, collation, unit, target container or `autoIncrement`;
 * `nullable` from false to true; a smaller or removed size bound; removed enum values; any change to an
 * existing index or constraint.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError, formatPath } from '../../http/errors.js';
import { checkContainerSize, checkIndex, type Constraint, type ContainerDefinition, type ContainerProperty, type Index } from './containers.js';
import type { Path } from './identifiers.js';
import { listSizeLimit, sameStorageType, textSizeLimit, type PropertyType } from './property-types.js';
import { describeType } from './values.js';

export type Bound = 'nullability' | 'maxListSize' | 'maxTextSize';

/** What applying a definition to a stored container does, for the storage layer to carry out. */
export interface ContainerChange {
  /** The container after the apply: the stored one with the new definition's additions and changes. */
  definition: ContainerDefinition;
  /** Anything differs from what is stored (otherwise nothing is written and `lastUpdatedTime` stays). */
  changed: boolean;
  addedProperties: string[];
  addedIndexes: string[];
  addedConstraints: string[];
  /** Bounds that appeared or tightened, which existing data may break (their state must be computed). */
  revalidate: Array<{ property: string; bound: Bound }>;
}

function conflict(path: Path, message: string): never {
  throw new ApiError(409, `${formatPath(path)}: ${message}`);
}


/** The change of one property of both the stored and the new definition; pushes the bounds to revalidate. */
function propertyChange(id: string, stored: ContainerProperty, next: ContainerProperty, path: Path, revalidate: ContainerChange['revalidate']): void {
  const s = stored.type;
  const n = next.type;
  const where = [...path, 'type'];
  if (s.type !== n.type || (s.type !== 'enum' && n.type !== 'enum' && s.list !== n.list)) {
    conflict(where, `the type of an existing property cannot change (stored ${describeType(s)}, given ${describeType(n)})`);
  }
  if (s.type === 'text' && n.type === 'text' && s.collation !== n.collation) {
    conflict([...where, 'collation'], `the collation cannot change (stored ${JSON.stringify(s.collation)}, given ${JSON.stringify(n.collation)})`);
  }
  if (s.type === 'enum' && n.type === 'enum') {
    const removed = Object.keys(s.values).filter((v) => !Object.hasOwn(n.values, v));
    if (removed.length > 0) conflict([...where, 'values'], `enum values cannot be removed (${removed.map((v) => JSON.stringify(v)).join(', ')})`);
  } else if (!sameStorageType(s, n)) {
    const field = s.type === 'direct' ? 'container' : 'unit';
    conflict([...where, field], `the ${field === 'container' ? 'target container' : 'unit'} of an existing property cannot change`);
  }
  if (stored.autoIncrement !== next.autoIncrement) conflict([...path, 'autoIncrement'], 'autoIncrement cannot change on an existing property');
  if (!stored.nullable && next.nullable) conflict([...path, 'nullable'], 'a non-nullable property cannot become nullable');
  if (stored.nullable && !next.nullable) revalidate.push({ property: id, bound: 'nullability' });
  checkBound(id, 'maxListSize', s, n, listSizeLimit, where, revalidate);
  checkBound(id, 'maxTextSize', s, n, textSizeLimit, where, revalidate);
}

function declared(t: PropertyType, bound: 'maxListSize' | 'maxTextSize'): number | undefined {
  return (t as { maxListSize?: number; maxTextSize?: number })[bound];
}

/** A bound may appear (then stored data is checked) or grow; it cannot shrink or go away. */
function checkBound(
  id: string,
  bound: 'maxListSize' | 'maxTextSize',
  s: PropertyType,
  n: PropertyType,
  limit: (t: PropertyType) => number,
  path: Path,
  revalidate: ContainerChange['revalidate'],
): void {
  const before = declared(s, bound);
  const after = declared(n, bound);
  if (before === after) return;
  if (before === undefined) {
    revalidate.push({ property: id, bound });
    return;
  }
  if (after === undefined) conflict([...path, bound], `${bound} cannot be removed once set (it is ${before}); it can only grow`);
  if (limit(n) < limit(s)) conflict([...path, bound], `${bound} can only grow (stored ${before}, given ${after})`);
}

function indexOrConstraintChange<T extends Index | Constraint>(kind: 'index' | 'constraint', stored: T, next: T, path: Path): void {
  if (!isDeepStrictEqual(stored, next)) conflict(path, `an existing ${kind} cannot change; delete it and create a new one under another identifier`);
}

/**
 * The effect of applying `next` (normalized with `stored` known) to the stored container `stored`: a 409
 * naming the place when the change is one the stored data cannot follow, a 400 when the merged container
 * breaks an index rule (a list grown past what its btree index holds).
 */
export function planContainerUpdate(stored: ContainerDefinition, next: ContainerDefinition, path: Path): ContainerChange {
  if (stored.usedFor !== next.usedFor) {
    conflict([...path, 'usedFor'], `usedFor cannot change on an existing container (stored ${JSON.stringify(stored.usedFor)}, given ${JSON.stringify(next.usedFor)})`);
  }
  const definition: ContainerDefinition = structuredClone(stored);
  const change: ContainerChange = { definition, changed: false, addedProperties: [], addedIndexes: [], addedConstraints: [], revalidate: [] };
  definition.name = next.name;
  definition.description = next.description;
  if (next.name === undefined) delete definition.name;
  if (next.description === undefined) delete definition.description;

  for (const [id, p] of Object.entries(next.properties)) {
    const where = [...path, 'properties', id];
    if (Object.hasOwn(stored.properties, id)) propertyChange(id, stored.properties[id], p, where, change.revalidate);
    else change.addedProperties.push(id);
    definition.properties[id] = structuredClone(p);
  }
  for (const [id, c] of Object.entries(next.constraints)) {
    const where = [...path, 'constraints', id];
    if (Object.hasOwn(stored.constraints, id)) indexOrConstraintChange('constraint', stored.constraints[id], c, where);
    else change.addedConstraints.push(id);
    definition.constraints[id] = structuredClone(c);
  }
  for (const [id, x] of Object.entries(next.indexes)) {
    const where = [...path, 'indexes', id];
    if (Object.hasOwn(stored.indexes, id)) indexOrConstraintChange('index', stored.indexes[id], x, where);
    else change.addedIndexes.push(id);
    definition.indexes[id] = structuredClone(x);
  }
  for (const [id, x] of Object.entries(definition.indexes)) checkIndex(x, definition.properties, [...path, 'indexes', id]);
  checkContainerSize(definition, path);
  change.changed = !isDeepStrictEqual(stored, definition);
  return change;
}
