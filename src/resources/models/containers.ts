/**
 * Container definitions: the rules a container must follow to be applied (properties, their types, defaults
 * and flags; constraints; indexes), the canonical form the service keeps, and the read form.
 *
 * What these functions cannot know is left to the caller: that the space exists, that the containers a
 * definition names exist (`containerDependencies`), and how a new definition relates to a stored one
 * (container-changes.ts).
 */
import type { ConstraintCreate, ContainerCreate, ContainerPropertyCreate, ContainerRead, PropertyConstraintState, State } from './container-schema.js';
import {
  checkNoDuplicates,
  checkPropertyId,
  checkSchemaExternalId,
  containerKey,
  containerRef,
  fail,
  missingContainers,
  sameContainer,
  type ContainerId,
  type Path,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import type { SchemaMetadata } from './metadata.js';
import { isList, normalizePropertyType, propertyTypeReadForm, type PropertyType } from './property-types.js';
import { checkRecordContainer } from './record-containers.js';
import { normalizeValue, renderValue, type StoredValue } from './values.js';

export type UsedFor = 'node' | 'edge' | 'all' | 'record';

export interface ContainerProperty {
  type: PropertyType;
  nullable: boolean;
  immutable: boolean;
  autoIncrement: boolean;
  /** In the form the service keeps values (values.ts). */
  defaultValue?: StoredValue;
  name?: string;
  description?: string;
}

export type Constraint =
  | { constraintType: 'uniqueness'; properties: string[]; bySpace: boolean }
  | { constraintType: 'requires'; require: ContainerId };

export type Index =
  | { indexType: 'btree'; properties: string[]; cursorable: boolean; bySpace: boolean }
  | { indexType: 'inverted'; properties: string[] };

export interface ContainerDefinition {
  space: string;
  externalId: string;
  name?: string;
  description?: string;
  usedFor: UsedFor;
  properties: Record<string, ContainerProperty>;
  constraints: Record<string, Constraint>;
  indexes: Record<string, Index>;
}

/**
 * The canonical definition of one container of an apply request; a 400 naming the place when it breaks a
 * rule. When the container exists, its stored properties are known to the new indexes and constraints too.
 */
export function normalizeContainer(raw: ContainerCreate, path: Path, stored?: ContainerDefinition): ContainerDefinition {
  checkSchemaExternalId(raw.externalId, [...path, 'externalId']);
  if (raw.usedFor === 'record') checkRecordContainer(raw, path);
  const ids = Object.keys(raw.properties);
  // Before any of them is read: the body may hold many.
  checkCount(ids.length, propertyCap(raw.usedFor), 'properties', path, 'properties');
  const properties: Record<string, ContainerProperty> = {};
  for (const id of ids) properties[id] = normalizeContainerProperty(raw.properties[id], [...path, 'properties', id], id);

  const def: ContainerDefinition = { space: raw.space, externalId: raw.externalId, usedFor: raw.usedFor ?? 'node', properties, constraints: {}, indexes: {} };
  if (raw.name !== undefined) def.name = raw.name;
  if (raw.description !== undefined) def.description = raw.description;

  const known = { ...stored?.properties, ...properties };
  for (const [id, c] of Object.entries(raw.constraints ?? {})) {
    def.constraints[id] = normalizeConstraint(c, def, known, [...path, 'constraints', id]);
  }
  const indexIds = Object.keys(raw.indexes ?? {});
  for (const id of indexIds) {
    const x = raw.indexes![id];
    const index: Index =
      (x.indexType ?? 'btree') === 'btree'
        ? { indexType: 'btree', properties: [...x.properties], cursorable: x.cursorable ?? false, bySpace: x.bySpace ?? false }
        : { indexType: 'inverted', properties: [...x.properties] };
    if (index.indexType === 'inverted' && (x.cursorable !== undefined || x.bySpace !== undefined)) {
      fail([...path, 'indexes', id], 'cursorable and bySpace apply to btree indexes only');
    }
    checkIndex(index, known, [...path, 'indexes', id]);
    def.indexes[id] = index;
  }
  checkContainerSize(def, path);
  return def;
}

/** The properties a container may hold: more for records, which have no table of their own per container. */
const propertyCap = (usedFor: string | undefined) => (usedFor === 'record' ? DM_LIMITS.recordContainerProperties : DM_LIMITS.containerProperties);

function checkCount(n: number, max: number, what: string, path: Path, field: string): void {
  if (n > max) fail([...path, field], `a container has at most ${max} ${what}, got ${n}`);
}

/**
 * A 400 when a container holds more properties, constraints or indexes than a container may: as applied, and
 * as it is after an apply adds to what is stored.
 */
export function checkContainerSize(def: ContainerDefinition, path: Path): void {
  const constraints = Object.values(def.constraints);
  const uniqueness = constraints.filter((c) => c.constraintType === 'uniqueness').length;
  checkCount(Object.keys(def.properties).length, propertyCap(def.usedFor), 'properties', path, 'properties');
  checkCount(uniqueness, DM_LIMITS.uniquenessConstraints, 'uniqueness constraints', path, 'constraints');
  checkCount(constraints.length - uniqueness, DM_LIMITS.requiresConstraints, 'requires constraints', path, 'constraints');
  checkCount(Object.keys(def.indexes).length, DM_LIMITS.indexes, 'indexes', path, 'indexes');
}

function normalizeContainerProperty(raw: ContainerPropertyCreate, path: Path, id: string): ContainerProperty {
  checkPropertyId(id, path);
  const type = normalizePropertyType(raw.type, [...path, 'type']);
  const prop: ContainerProperty = {
    type,
    nullable: raw.nullable ?? true,
    immutable: raw.immutable ?? false,
    autoIncrement: raw.autoIncrement ?? false,
  };
  if (raw.name !== undefined) prop.name = raw.name;
  if (raw.description !== undefined) prop.description = raw.description;
  if (prop.autoIncrement && ((type.type !== 'int32' && type.type !== 'int64') || isList(type))) {
    fail([...path, 'autoIncrement'], `only single int32 and int64 properties can auto-increment, not ${type.type}${isList(type) ? ' lists' : ''}`);
  }
  if (raw.defaultValue !== undefined) {
    const where = [...path, 'defaultValue'];
    if (raw.defaultValue === null) fail(where, 'null is not allowed (leave the default out instead)');
    if (isList(type)) fail(where, 'list properties cannot have a default value');
    if (prop.autoIncrement) fail(where, 'an auto-incremented property cannot also have a default value');
    prop.defaultValue = normalizeValue(raw.defaultValue, type, where);
  }
  return prop;
}

type Properties = Record<string, ContainerProperty>;

/** Names the properties an index or constraint lists: present in the container, none twice. */
function checkPropertyList(list: readonly string[], properties: Properties, path: Path): void {
  if (list.length === 0) fail(path, 'must name at least one property of the container');
  const seen = new Set<string>();
  list.forEach((p, i) => {
    if (!Object.hasOwn(properties, p)) {
      fail([...path, i], `the container has no property ${JSON.stringify(p)} (properties: ${Object.keys(properties).join(', ')})`);
    }
    if (seen.has(p)) fail([...path, i], `${JSON.stringify(p)} is listed twice`);
    seen.add(p);
  });
}

function normalizeConstraint(raw: ConstraintCreate, def: ContainerDefinition, properties: Properties, path: Path): Constraint {
  const kind = raw.constraintType ?? (raw.require !== undefined ? 'requires' : 'uniqueness');
  if (kind === 'requires') {
    if (raw.properties !== undefined || raw.bySpace !== undefined) {
      fail(path, 'a requires constraint takes "require" only (properties and bySpace belong to uniqueness constraints)');
    }
    if (raw.require === undefined) fail(path, 'missing required property "require" (the container that must also have data)');
    if (sameContainer(raw.require, def)) fail([...path, 'require'], 'a container cannot require itself');
    return { constraintType: 'requires', require: { space: raw.require.space, externalId: raw.require.externalId } };
  }
  if (raw.require !== undefined) fail(path, 'a uniqueness constraint takes "properties" and "bySpace" ("require" belongs to requires constraints)');
  if (raw.properties === undefined) fail(path, 'missing required property "properties" (the properties whose values must be unique)');
  checkPropertyList(raw.properties, properties, [...path, 'properties']);
  raw.properties.forEach((p, i) => {
    const t = properties[p].type;
    if (isList(t) || t.type === 'json') fail([...path, 'properties', i], `${JSON.stringify(p)} is a ${isList(t) ? 'list' : 'json'} property; uniqueness applies to single values`);
  });
  return { constraintType: 'uniqueness', properties: [...raw.properties], bySpace: raw.bySpace ?? false };
}

/**
 * The rules an index follows given the container's properties: which types each kind of index can hold, and
 * the list bounds of btree indexes. Checked when an index is declared and again when its properties change.
 */
export function checkIndex(index: Index, properties: Properties, path: Path): void {
  const list = [...path, 'properties'];
  checkPropertyList(index.properties, properties, list);
  if (index.indexType === 'inverted') {
    index.properties.forEach((p, i) => {
      if (!isList(properties[p].type)) fail([...list, i], `${JSON.stringify(p)} is not a list property; an inverted index indexes the elements of lists`);
    });
    return;
  }
  index.properties.forEach((p, i) => {
    const t = properties[p].type;
    if (t.type === 'json') fail([...list, i], `${JSON.stringify(p)} is a json property, which a btree index cannot hold`);
    if (t.type === 'enum' || !t.list) return;
    if (index.cursorable) fail([...list, i], `${JSON.stringify(p)} is a list property; a cursorable index orders single values`);
    if (t.maxListSize === undefined) fail([...list, i], `the list property ${JSON.stringify(p)} needs a maxListSize to be in a btree index`);
    const max = t.type === 'int32' ? DM_LIMITS.btreeInt32ListSize : t.type === 'int64' ? DM_LIMITS.btreeInt64ListSize : undefined;
    if (max !== undefined && t.maxListSize > max) {
      fail([...list, i], `the ${t.type} list ${JSON.stringify(p)} has maxListSize ${t.maxListSize}; in a btree index it can be at most ${max}`);
    }
  });
}

/**
 * The canonical definitions of an apply request, in order; a 400 when one breaks a rule or one repeats
 * another. `stored` gives the stored definition of a container that exists.
 */
export function normalizeContainers(items: readonly ContainerCreate[], stored: (id: ContainerId) => ContainerDefinition | undefined = () => undefined): ContainerDefinition[] {
  checkNoDuplicates(items, containerKey, (c) => ({ space: c.space, externalId: c.externalId }));
  return items.map((item, i) => normalizeContainer(item, ['items', i], stored(item)));
}

/** The other containers a definition names (required containers, direct relation targets), which must exist. */
export function containerDependencies(def: ContainerDefinition): ContainerId[] {
  const out = new Map<string, ContainerId>();
  const add = (id: ContainerId) => {
    if (!sameContainer(id, def)) out.set(containerKey(id), id);
  };
  for (const c of Object.values(def.constraints)) if (c.constraintType === 'requires') add(c.require);
  for (const p of Object.values(def.properties)) if (p.type.type === 'direct' && p.type.container) add(p.type.container);
  return [...out.values()];
}

/** A 400 listing the containers of `wanted` that `exists` does not know, in the reference form. */
export function requireContainers(wanted: readonly ContainerId[], exists: (id: ContainerId) => boolean): void {
  const missing = wanted.filter((id) => !exists(id));
  if (missing.length > 0) throw missingContainers(missing);
}

/** The validity state of each bound and index, kept by the storage layer; `current` where it has none. */
export interface ContainerStates {
  properties?: Record<string, PropertyConstraintState>;
  constraints?: Record<string, State>;
  indexes?: Record<string, State>;
}

/** The bounds a property declares, each with its state (a key only where the bound exists). */
export function propertyConstraintState(p: ContainerProperty, states?: PropertyConstraintState): PropertyConstraintState {
  const out: PropertyConstraintState = {};
  if (!p.nullable) out.nullability = states?.nullability ?? 'current';
  if (p.type.type !== 'enum' && p.type.maxListSize !== undefined) out.maxListSize = states?.maxListSize ?? 'current';
  if (p.type.type === 'text' && p.type.maxTextSize !== undefined) out.maxTextSize = states?.maxTextSize ?? 'current';
  return out;
}

/** Name, description, flags and default of a property, as read (containers, views, typing). */
export function propertyReadFields(p: ContainerProperty): Record<string, unknown> {
  const out: Record<string, unknown> = { nullable: p.nullable, immutable: p.immutable, autoIncrement: p.autoIncrement };
  if (p.defaultValue !== undefined) out.defaultValue = renderValue(p.defaultValue, p.type);
  if (p.name !== undefined) out.name = p.name;
  if (p.description !== undefined) out.description = p.description;
  return out;
}

export function containerReadForm(def: ContainerDefinition, meta: SchemaMetadata, states: ContainerStates = {}): ContainerRead {
  const properties: Record<string, unknown> = {};
  for (const [id, p] of Object.entries(def.properties)) {
    properties[id] = { type: propertyTypeReadForm(p.type), ...propertyReadFields(p), constraintState: propertyConstraintState(p, states.properties?.[id]) };
  }
  const constraints: Record<string, unknown> = {};
  for (const [id, c] of Object.entries(def.constraints)) {
    const state = states.constraints?.[id] ?? 'current';
    constraints[id] =
      c.constraintType === 'requires'
        ? { constraintType: 'requires', require: containerRef(c.require), state }
        : { constraintType: 'uniqueness', properties: [...c.properties], ...(c.bySpace ? { bySpace: true } : {}), state };
  }
  const indexes: Record<string, unknown> = {};
  for (const [id, x] of Object.entries(def.indexes)) {
    const state = states.indexes?.[id] ?? 'current';
    indexes[id] =
      x.indexType === 'btree'
        ? { indexType: 'btree', properties: [...x.properties], cursorable: x.cursorable, ...(x.bySpace ? { bySpace: true } : {}), state }
        : { indexType: 'inverted', properties: [...x.properties], state };
  }
  const out: Record<string, unknown> = { space: def.space, externalId: def.externalId };
  if (def.name !== undefined) out.name = def.name;
  if (def.description !== undefined) out.description = def.description;
  Object.assign(out, { usedFor: def.usedFor, properties, constraints, indexes, ...meta });
  return out as ContainerRead;
}
