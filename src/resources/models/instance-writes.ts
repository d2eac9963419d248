/**
 * An instance apply request checked against the schema: every item's identity and edge ends, every value
 * it writes mapped from its view (or container) property to the container property and checked against that
 * property's type, gathered per container. What depends on stored instances (versions, whether an instance
 * already has data in a container, constraints across instances) is the storage layer's, with
 * `requiredMissing` and `valuesForNewData` for the rules on first data and on replace.
 */
import { isDeepStrictEqual } from 'node:util';
import { badRequest } from '../../http/errors.js';
import type { ContainerDefinition } from './containers.js';
import type { FilterSchema } from './filter.js';
import { hierarchyOf, maintainedProperties } from './instance-hierarchy.js';
import {
  checkNoDuplicates,
  containerKey,
  fail,
  instanceKey,
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
import type { ApplyInstancesBody, InstanceDeleteItem, InstanceWriteItem } from './instance-schema.js';
import { normalizePropertyValue, type StoredValue } from './values.js';

/** The values one item writes to one container, by container property; null clears. */
export interface ContainerWrite {
  container: ContainerId;
  values: Record<string, StoredValue | null>;
}

export interface InstanceWrite {
  instanceType: InstanceType;
  space: string;
  externalId: string;
  existingVersion?: number;
  type?: DirectRelationReference;
  startNode?: DirectRelationReference;
  endNode?: DirectRelationReference;
  /**
   * Per container written, in the order first written. A source sent with no properties gives the instance
   * data in its container(s) (a view's: every container it maps) with no values.
   */
  data: ContainerWrite[];
  /** Every container the item's sources reach (a view reaches all it maps): what `replace` rewrites. */
  reached: ContainerId[];
}

export interface InstanceApply {
  items: InstanceWrite[];
  delete: InstanceDeleteItem[];
  options: { autoCreateDirectRelations: boolean; autoCreateStartNodes: boolean; autoCreateEndNodes: boolean; skipOnVersionConflict: boolean; replace: boolean };
}

const idOf = (i: { instanceType: InstanceType; space: string; externalId: string }) => ({ instanceType: i.instanceType, space: i.space, externalId: i.externalId });

/** The views and containers an apply request writes through, so the caller can load them first. */
export function writeSources(body: ApplyInstancesBody): { views: ViewId[]; containers: ContainerId[] } {
  const views = new Map<string, ViewId>();
  const containers = new Map<string, ContainerId>();
  for (const item of body.items) {
    for (const s of item.sources ?? []) {
      if (s.source.type === 'view') views.set(viewKey(s.source), { space: s.source.space, externalId: s.source.externalId, version: s.source.version });
      else containers.set(containerKey(s.source), { space: s.source.space, externalId: s.source.externalId });
    }
  }
  return { views: [...views.values()], containers: [...containers.values()] };
}

/** The apply request with its values checked and gathered per container; a 400 naming the place otherwise. */
export function normalizeInstanceApply(body: ApplyInstancesBody, schema: FilterSchema): InstanceApply {
  const deletes = body.delete ?? [];
  if (body.items.length + deletes.length > DM_LIMITS.instanceItems) {
    fail(['delete'], `items and delete together hold at most ${DM_LIMITS.instanceItems} instances, got ${body.items.length + deletes.length}`);
  }
  checkNoDuplicates(body.items, instanceKey, idOf);
  checkNoDuplicates(deletes, instanceKey, idOf);
  const written = new Set(body.items.map(instanceKey));
  const both = deletes.filter((d) => written.has(instanceKey(d))).map(idOf);
  if (both.length > 0) throw badRequest('The request both writes and deletes the same instance', { duplicated: both });

  const { views, containers } = writeSources(body);
  const unknownViews = views.filter((v) => !schema.view(v));
  if (unknownViews.length > 0) throw missingViews(unknownViews);
  const unknownContainers = containers.filter((c) => !schema.container(c));
  if (unknownContainers.length > 0) throw missingContainers(unknownContainers);
  return {
    items: body.items.map((item, i) => normalizeItem(item, schema, ['items', i])),
    delete: deletes,
    options: {
      autoCreateDirectRelations: body.autoCreateDirectRelations ?? true,
      autoCreateStartNodes: body.autoCreateStartNodes ?? false,
      autoCreateEndNodes: body.autoCreateEndNodes ?? false,
      skipOnVersionConflict: body.skipOnVersionConflict ?? false,
      replace: body.replace ?? false,
    },
  };
}

function normalizeItem(item: InstanceWriteItem, schema: FilterSchema, path: Path): InstanceWrite {
  const out: InstanceWrite = { ...idOf(item), data: [], reached: [] };
  if (item.existingVersion !== undefined) out.existingVersion = item.existingVersion;
  if (item.type) out.type = { ...item.type };
  if (item.instanceType === 'edge') {
    if (item.type === null) fail([...path, 'type'], 'null is not allowed: an edge has a type');
    for (const key of ['type', 'startNode', 'endNode'] as const) {
      if (!item[key]) fail(path, `missing required property "${key}" (an edge has a type, a start node and an end node)`);
    }
    out.startNode = { ...item.startNode! };
    out.endNode = { ...item.endNode! };
  } else {
    for (const key of ['startNode', 'endNode'] as const) if (item[key]) fail([...path, key], 'only edges have start and end nodes');
  }

  const byContainer = new Map<string, ContainerWrite>();
  const reached = new Map<string, ContainerId>();
  const entry = (container: ContainerDefinition, where: Path): ContainerWrite => {
    if (container.usedFor !== 'all' && container.usedFor !== item.instanceType) {
      fail(where, `the container ${containerKey(container)} holds ${container.usedFor} data, and this is ${item.instanceType === 'edge' ? 'an edge' : 'a node'}`);
    }
    const key = containerKey(container);
    let write = byContainer.get(key);
    if (!write) {
      write = { container: { space: container.space, externalId: container.externalId }, values: {} };
      byContainer.set(key, write);
    }
    return write;
  };
  const put = (container: ContainerDefinition, property: string, value: unknown, where: Path) => {
    if (maintainedProperties(container).includes(property)) {
      fail(where, `the property ${property} of the container ${containerKey(container)} is set by the service from ${hierarchyOf(container)!.parent}; write the parent instead`);
    }
    const write = entry(container, where);
    const stored = normalizePropertyValue(value, container.properties[property], where);
    if (Object.hasOwn(write.values, property) && !isDeepStrictEqual(write.values[property], stored)) {
      fail(where, `the container property ${containerKey(container)}.${property} is written twice in this item, with different values`);
    }
    write.values[property] = stored;
  };

  (item.sources ?? []).forEach((s, j) => {
    const where = [...path, 'sources', j];
    const values = Object.entries(s.properties ?? {});
    if (s.source.type === 'container') {
      const container = schema.container(s.source)!;
      reached.set(containerKey(container), { space: container.space, externalId: container.externalId });
      if (values.length === 0) entry(container, where);
      for (const [p, v] of values) {
        if (!Object.hasOwn(container.properties, p)) fail([...where, 'properties', p], `the container ${containerKey(container)} has no property ${JSON.stringify(p)}`);
        put(container, p, v, [...where, 'properties', p]);
      }
      return;
    }
    // Written through a view, an instance has data in every container the view maps (so it is in the view,
    // and the containers' requires constraints among themselves hold), whichever properties are given.
    const view = schema.view(s.source)!;
    for (const [p, v] of values) {
      const at = [...where, 'properties', p];
      const vp = view.properties.get(p);
      if (!vp) fail(at, `the view ${viewKey(view.id)} has no property ${JSON.stringify(p)}`);
      if (vp.kind !== 'mapped') fail(at, `${JSON.stringify(p)} of ${viewKey(view.id)} is a connection, which is written as edges or as the direct relations it reads, not as a value`);
      put(schema.container(vp.container)!, vp.containerPropertyIdentifier, v, at);
    }
    for (const c of view.mappedContainers) {
      reached.set(containerKey(c), c);
      entry(schema.container(c)!, where);
    }
  });
  out.data = [...byContainer.values()];
  out.reached = [...reached.values()];
  return out;
}

/**
 * The non-nullable properties that would be left without a value when `values` are written to `container`
 * as the instance's first data there, or as a replacement of its data there: those not given, with no
 * default and not auto-incremented.
 */
export function requiredMissing(container: ContainerDefinition, values: Readonly<Record<string, StoredValue | null>>): string[] {
  return Object.entries(container.properties)
    .filter(([id, p]) => !p.nullable && !p.autoIncrement && p.defaultValue === undefined && (values[id] === undefined || values[id] === null))
    .map(([id]) => id);
}

/**
 * The values an instance gets in a container when `values` are its first data there (or replace its data
 * there): the given ones, each other property's default, and null for the rest. Auto-incremented properties
 * not given are left out, for the storage layer to number.
 */
export function valuesForNewData(container: ContainerDefinition, values: Readonly<Record<string, StoredValue | null>>): Record<string, StoredValue | null> {
  const out: Record<string, StoredValue | null> = {};
  for (const [id, p] of Object.entries(container.properties)) {
    if (values[id] !== undefined) out[id] = values[id];
    else if (p.defaultValue !== undefined) out[id] = structuredClone(p.defaultValue);
    else if (!p.autoIncrement) out[id] = null;
  }
  return out;
}
