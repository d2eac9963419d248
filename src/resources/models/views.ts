/**
 * View definitions as applied: each property sorted into its kind (mapped container property, edge
 * connection, reverse direct relation) with the rules of its kind, `implements` and the limits. What needs
 * other schema objects (containers, implemented views, the filter's properties) is checked when the view is
 * resolved (view-resolution.ts).
 */
import {
  checkNoDuplicates,
  checkPropertyId,
  checkSchemaExternalId,
  fail,
  viewKey,
  type ContainerId,
  type DirectRelationReference,
  type Path,
  type SourceReference,
  type ViewId,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { EDGE_CONNECTIONS, REVERSE_CONNECTIONS, type ViewCreate, type ViewPropertyCreate } from './view-schema.js';

export interface MappedProperty {
  kind: 'mapped';
  container: ContainerId;
  containerPropertyIdentifier: string;
  /** Hint: the view the node a direct relation points at is read through. */
  source?: ViewId;
  name?: string;
  description?: string;
}

export interface EdgeConnection {
  kind: 'edge';
  connectionType: (typeof EDGE_CONNECTIONS)[number];
  /** The type node of the edges. */
  type: DirectRelationReference;
  source: ViewId;
  edgeSource?: ViewId;
  direction: 'outwards' | 'inwards';
  name?: string;
  description?: string;
}

export interface ReverseRelation {
  kind: 'reverse';
  connectionType: (typeof REVERSE_CONNECTIONS)[number];
  source: ViewId;
  /** The direct relation property, of a view or a container, that points at instances of this view. */
  through: { source: SourceReference; identifier: string };
  name?: string;
  description?: string;
}

export type ViewProperty = MappedProperty | EdgeConnection | ReverseRelation;

export interface ViewDefinition {
  space: string;
  externalId: string;
  version: string;
  name?: string;
  description?: string;
  /** The filter as written; its meaning depends on the schema, so it is parsed when the view is resolved. */
  filter?: unknown;
  implements: ViewId[];
  properties: Record<string, ViewProperty>;
}

const toViewId = (r: ViewId): ViewId => ({ space: r.space, externalId: r.externalId, version: r.version });

const MAPPED_FIELDS = ['container', 'containerPropertyIdentifier', 'source', 'name', 'description'];
const EDGE_FIELDS = ['connectionType', 'type', 'source', 'edgeSource', 'direction', 'name', 'description'];
const REVERSE_FIELDS = ['connectionType', 'source', 'through', 'name', 'description'];

function onlyFields(raw: ViewPropertyCreate, allowed: readonly string[], kind: string, path: Path): void {
  const extra = Object.keys(raw).find((k) => !allowed.includes(k));
  if (extra !== undefined) fail([...path, extra], `not allowed on ${kind} (allowed: ${allowed.join(', ')})`);
}

function withText<T extends { name?: string; description?: string }>(target: T, raw: ViewPropertyCreate): T {
  if (raw.name !== undefined) target.name = raw.name;
  if (raw.description !== undefined) target.description = raw.description;
  return target;
}

function normalizeViewProperty(raw: ViewPropertyCreate, path: Path): ViewProperty {
  const reverse = raw.through !== undefined || (REVERSE_CONNECTIONS as readonly string[]).includes(raw.connectionType ?? '');
  if (raw.container !== undefined || raw.containerPropertyIdentifier !== undefined) {
    onlyFields(raw, MAPPED_FIELDS, 'a property mapped from a container', path);
    if (raw.container === undefined) fail(path, 'missing required property "container" (the container the property is mapped from)');
    if (raw.containerPropertyIdentifier === undefined) fail(path, 'missing required property "containerPropertyIdentifier"');
    const p: MappedProperty = {
      kind: 'mapped',
      container: { space: raw.container.space, externalId: raw.container.externalId },
      containerPropertyIdentifier: raw.containerPropertyIdentifier,
    };
    if (raw.source !== undefined) p.source = toViewId(raw.source);
    return withText(p, raw);
  }
  if (reverse) {
    onlyFields(raw, REVERSE_FIELDS, 'a reverse direct relation', path);
    if (raw.connectionType === undefined) {
      fail(path, `missing required property "connectionType" (${REVERSE_CONNECTIONS.map((c) => JSON.stringify(c)).join(' or ')})`);
    }
    if (raw.source === undefined) fail(path, 'missing required property "source" (the view of the instances holding the direct relation)');
    if (raw.through === undefined) fail(path, 'missing required property "through" (the direct relation property pointing here)');
    return withText(
      {
        kind: 'reverse',
        connectionType: raw.connectionType as ReverseRelation['connectionType'],
        source: toViewId(raw.source),
        through: { source: { ...raw.through.source }, identifier: raw.through.identifier },
      } as ReverseRelation,
      raw,
    );
  }
  if (raw.type !== undefined || raw.direction !== undefined || raw.edgeSource !== undefined || raw.connectionType !== undefined) {
    onlyFields(raw, EDGE_FIELDS, 'an edge connection', path);
    if (raw.type === undefined) fail(path, 'missing required property "type" (the type node of the edges)');
    if (raw.source === undefined) fail(path, 'missing required property "source" (the view of the nodes at the other end)');
    const p: EdgeConnection = {
      kind: 'edge',
      connectionType: (raw.connectionType ?? 'multi_edge_connection') as EdgeConnection['connectionType'],
      type: { space: raw.type.space, externalId: raw.type.externalId },
      source: toViewId(raw.source),
      direction: raw.direction ?? 'outwards',
    };
    if (raw.edgeSource !== undefined) p.edgeSource = toViewId(raw.edgeSource);
    return withText(p, raw);
  }
  return fail(
    path,
    'expected a mapped property ("container", "containerPropertyIdentifier"), an edge connection ("type", "source") or a reverse direct relation ("connectionType", "source", "through")',
  );
}

/** The definition of one view of an apply request; a 400 naming the place when it breaks a rule. */
export function normalizeView(raw: ViewCreate, path: Path): ViewDefinition {
  checkSchemaExternalId(raw.externalId, [...path, 'externalId']);
  const implementsList = raw.implements ?? [];
  if (implementsList.length > DM_LIMITS.implements) {
    fail([...path, 'implements'], `a view implements at most ${DM_LIMITS.implements} views, got ${implementsList.length}`);
  }
  const seen = new Set<string>();
  implementsList.forEach((ref, i) => {
    if (ref.space === raw.space && ref.externalId === raw.externalId && ref.version === raw.version) fail([...path, 'implements', i], 'a view cannot implement itself');
    if (seen.has(viewKey(ref))) fail([...path, 'implements', i], `${viewKey(ref)} is listed twice`);
    seen.add(viewKey(ref));
  });
  const ids = Object.keys(raw.properties ?? {});
  if (ids.length > DM_LIMITS.viewProperties) fail([...path, 'properties'], `a view has at most ${DM_LIMITS.viewProperties} properties, got ${ids.length}`);
  const properties: Record<string, ViewProperty> = {};
  for (const id of ids) {
    const where = [...path, 'properties', id];
    checkPropertyId(id, where);
    properties[id] = normalizeViewProperty(raw.properties![id], where);
  }
  const def: ViewDefinition = { space: raw.space, externalId: raw.externalId, version: raw.version, implements: implementsList.map(toViewId), properties };
  if (raw.name !== undefined) def.name = raw.name;
  if (raw.description !== undefined) def.description = raw.description;
  if (raw.filter !== undefined) def.filter = raw.filter;
  return def;
}

/** The definitions of an apply request, in order; a 400 when one breaks a rule or one repeats another. */
export function normalizeViews(items: readonly ViewCreate[], path: Path = ['items']): ViewDefinition[] {
  checkNoDuplicates(items, viewKey, (v) => ({ space: v.space, externalId: v.externalId, version: v.version }));
  return items.map((item, i) => normalizeView(item, [...path, i]));
}

/** The views and containers a definition names directly, which the resolver needs loaded. */
export function viewDependencies(def: ViewDefinition): { views: ViewId[]; containers: ContainerId[] } {
  const views: ViewId[] = [...def.implements];
  const containers: ContainerId[] = [];
  for (const p of Object.values(def.properties)) {
    if (p.kind === 'mapped') containers.push(p.container);
    if (p.kind === 'reverse') {
      if (p.through.source.type === 'view') views.push(toViewId(p.through.source));
      else containers.push({ space: p.through.source.space, externalId: p.through.source.externalId });
    }
  }
  return { views, containers };
}
