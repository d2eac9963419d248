/**
 * A view's effective shape: its own properties and those of the views it implements, transitively, with
 * conflicts settled by precedence; the containers it maps; what it is used for; whether it can be written
 * and queried. Resolved from the stored definitions each time (nothing derived is stored), so deleting an
 * implemented view or a container changes the views built on it at their next read.
 *
 * Precedence: the view itself first, then the views it implements in a topological order in which, under
 * each view, later entries of its `implements` win over earlier ones (`B implements [C, D]` gives
 * `A, B, D, C`). The first of these to declare an identifier gives its property.
 *
 * `validate` checks a view being applied, strictly: what it implements and maps must exist, `implements`
 * must not form a cycle, its containers must agree on nodes or edges, and its filter must hold. Views it
 * merely inherits from are read leniently: a property whose container has gone is left out.
 */
import type { ContainerDefinition, ContainerProperty, ContainerStates, UsedFor } from './containers.js';
import { propertyConstraintState, propertyReadFields } from './containers.js';
import { parseFilter, type FilterSchema } from './filter.js';
import {
  containerKey,
  containerRef,
  fail,
  missingContainers,
  missingViews,
  viewKey,
  viewRef,
  type ContainerId,
  type Path,
  type ViewId,
} from './identifiers.js';
import type { SchemaMetadata } from './metadata.js';
import { isList, propertyTypeReadForm } from './property-types.js';
import type { ViewRead } from './view-schema.js';
import type { EdgeConnection, MappedProperty, ReverseRelation, ViewDefinition } from './views.js';

/** Where the resolver reads stored (and, while applying, just applied) definitions. */
export interface SchemaSource {
  container(id: ContainerId): ContainerDefinition | undefined;
  view(id: ViewId): ViewDefinition | undefined;
}

export type EffectiveProperty =
  | (MappedProperty & { definition: ContainerProperty; declaredIn: ViewId })
  | (EdgeConnection & { declaredIn: ViewId })
  | (ReverseRelation & { targetsList: boolean; declaredIn: ViewId });

export interface ResolvedView {
  id: ViewId;
  definition: ViewDefinition;
  /** Effective properties: inherited ones first, in `implements` order, then the view's own. */
  properties: ReadonlyMap<string, EffectiveProperty>;
  mappedContainers: ContainerId[];
  usedFor: UsedFor;
  /** Every non-nullable property of every mapped container is mapped, so instances can be written through it. */
  writable: boolean;
  /** It has a filter or maps at least one container property. */
  queryable: boolean;
}

/**
 * What the containers a view maps hold: the one kind when any holds only nodes or only edges, `all` when all
 * hold both, `node` for a view that maps none. Containers of both kinds are refused when the view is applied.
 */
function usedForOf(containers: readonly ContainerDefinition[]): UsedFor {
  const kinds = new Set(containers.map((c) => c.usedFor));
  if (kinds.has('edge') && !kinds.has('node')) return 'edge';
  if (kinds.size > 0 && !kinds.has('node')) return 'all';
  return 'node';
}

const idOf = (def: ViewDefinition): ViewId => ({ space: def.space, externalId: def.externalId, version: def.version });

export class ViewResolver implements FilterSchema {
  private readonly cache = new Map<string, ResolvedView | null>();

  constructor(private readonly source: SchemaSource) {}

  container(id: ContainerId): ContainerDefinition | undefined {
    return this.source.container(id);
  }

  /** The effective view, or undefined when there is no such view. */
  view(id: ViewId): ResolvedView | undefined {
    const key = viewKey(id);
    if (!this.cache.has(key)) {
      const def = this.source.view(id);
      this.cache.set(key, def ? this.resolve(def) : null);
    }
    return this.cache.get(key) ?? undefined;
  }

  /**
   * One walk of the implements graph from `def` (a view reached twice, or through a cycle, counts once): the
   * views in precedence order, starting with `def`, and the property identifiers in reading order, each
   * implemented view's (in `implements` order) before the view's own.
   */
  private walk(def: ViewDefinition): { precedence: ViewDefinition[]; display: string[] } {
    const postorder: ViewDefinition[] = [];
    const display = new Set<string>();
    const visited = new Set<string>();
    const visit = (v: ViewDefinition) => {
      visited.add(viewKey(v));
      for (const parentId of v.implements) {
        const parent = visited.has(viewKey(parentId)) ? undefined : this.source.view(parentId);
        if (parent) visit(parent);
      }
      postorder.push(v);
      for (const id of Object.keys(v.properties)) display.add(id);
    };
    visit(def);
    return { precedence: postorder.reverse(), display: [...display] };
  }

  /** The mapped container property an identifier of a view gives, by precedence, without resolving the whole view. */
  private mappedOf(viewId: ViewId, identifier: string): ContainerProperty | undefined {
    const def = this.source.view(viewId);
    if (!def) return undefined;
    for (const v of this.walk(def).precedence) {
      if (!Object.hasOwn(v.properties, identifier)) continue;
      const p = v.properties[identifier];
      return p.kind === 'mapped' ? this.source.container(p.container)?.properties[p.containerPropertyIdentifier] : undefined;
    }
    return undefined;
  }

  /** The container property a reverse relation's `through` names. */
  private throughProperty(p: ReverseRelation): ContainerProperty | undefined {
    const s = p.through.source;
    if (s.type === 'view') return this.mappedOf(s, p.through.identifier);
    const container = this.source.container(s);
    return container && Object.hasOwn(container.properties, p.through.identifier) ? container.properties[p.through.identifier] : undefined;
  }

  private resolve(def: ViewDefinition): ResolvedView {
    const { precedence, display } = this.walk(def);
    const winners = new Map<string, { p: MappedProperty | EdgeConnection | ReverseRelation; from: ViewId }>();
    for (const v of precedence) {
      for (const [id, p] of Object.entries(v.properties)) if (!winners.has(id)) winners.set(id, { p, from: idOf(v) });
    }
    const properties = new Map<string, EffectiveProperty>();
    const mapped = new Map<string, ContainerId>();
    for (const id of display) {
      const { p, from } = winners.get(id)!;
      if (p.kind === 'mapped') {
        const container = this.source.container(p.container);
        if (!container || !Object.hasOwn(container.properties, p.containerPropertyIdentifier)) continue;
        properties.set(id, { ...p, definition: container.properties[p.containerPropertyIdentifier], declaredIn: from });
        mapped.set(containerKey(p.container), p.container);
      } else if (p.kind === 'reverse') {
        const through = this.throughProperty(p);
        properties.set(id, { ...p, targetsList: through !== undefined && isList(through.type), declaredIn: from });
      } else {
        properties.set(id, { ...p, declaredIn: from });
      }
    }
    const mappedContainers = [...mapped.values()];
    const containers = mappedContainers.map((c) => this.source.container(c)!);
    return {
      id: idOf(def),
      definition: def,
      properties,
      mappedContainers,
      usedFor: usedForOf(containers),
      writable: this.writable(containers, properties),
      queryable: def.filter !== undefined || mappedContainers.length > 0,
    };
  }

  private writable(containers: ContainerDefinition[], properties: ReadonlyMap<string, EffectiveProperty>): boolean {
    const mappedProps = new Set<string>();
    for (const p of properties.values()) if (p.kind === 'mapped') mappedProps.add(`${containerKey(p.container)}.${p.containerPropertyIdentifier}`);
    return containers.every((c) => Object.entries(c.properties).every(([pid, cp]) => cp.nullable || mappedProps.has(`${containerKey(c)}.${pid}`)));
  }

  /**
   * The effective view of a definition being applied (the source must already give it), after the checks a
   * new or changed view must pass; a 400 naming the place otherwise.
   */
  validate(def: ViewDefinition, path: Path): ResolvedView {
    const unknownViews = def.implements.filter((id) => !this.source.view(id));
    const unknownContainers = new Map<string, ContainerId>();
    for (const p of Object.values(def.properties)) {
      if (p.kind === 'mapped' && !this.source.container(p.container)) unknownContainers.set(containerKey(p.container), p.container);
      if (p.kind === 'reverse') {
        const s = p.through.source;
        if (s.type === 'view' && !this.source.view(s)) unknownViews.push(s);
        if (s.type === 'container' && !this.source.container(s)) unknownContainers.set(containerKey(s), s);
      }
    }
    if (unknownViews.length > 0) throw missingViews(unknownViews, path);
    if (unknownContainers.size > 0) throw missingContainers([...unknownContainers.values()], path);
    this.checkNoCycle(def, [...path, 'implements']);

    for (const [id, p] of Object.entries(def.properties)) {
      const where = [...path, 'properties', id];
      if (p.kind === 'mapped') {
        const container = this.source.container(p.container)!;
        if (!Object.hasOwn(container.properties, p.containerPropertyIdentifier)) {
          fail([...where, 'containerPropertyIdentifier'], `the container ${containerKey(p.container)} has no property ${JSON.stringify(p.containerPropertyIdentifier)}`);
        }
        const t = container.properties[p.containerPropertyIdentifier].type;
        if (p.source && t.type !== 'direct') fail([...where, 'source'], `a source view applies to direct relations, and this property is ${t.type}`);
      }
      if (p.kind === 'reverse') {
        const through = this.throughProperty(p);
        if (!through) fail([...where, 'through', 'identifier'], `${JSON.stringify(p.through.identifier)} is not a property mapped from a container by ${sourceName(p.through.source)}`);
        if (through.type.type !== 'direct') {
          fail([...where, 'through', 'identifier'], `${JSON.stringify(p.through.identifier)} of ${sourceName(p.through.source)} is a ${through.type.type} property, not a direct relation`);
        }
      }
    }

    this.checkInheritedAgree(def, path);

    const resolved = this.view(idOf(def)) ?? fail(path, 'the view is not among the definitions being applied');
    const used = new Map<string, string[]>();
    for (const c of resolved.mappedContainers) {
      const u = this.source.container(c)!.usedFor;
      used.set(u, [...(used.get(u) ?? []), containerKey(c)]);
    }
    if (used.has('record')) {
      fail([...path, 'properties'], `the view maps record containers (${used.get('record')!.join(', ')}); records are read through their streams, and views map containers of nodes and edges`);
    }
    if (used.has('node') && used.has('edge')) {
      fail([...path, 'properties'], `the view maps containers for nodes (${used.get('node')!.join(', ')}) and containers for edges (${used.get('edge')!.join(', ')}); a view is used for one or the other`);
    }
    if (def.filter !== undefined) parseFilter(def.filter, { schema: this, view: resolved.id }, [...path, 'filter']);
    return resolved;
  }

  /**
   * The views a view implements must agree on the properties they share that the view does not declare
   * itself: an identifier that two of them map to container properties of different types (or one a list
   * and the other not), or that one maps from a container and another declares as a connection, has no
   * single meaning in the view. Declaring the property in the view settles it.
   */
  private checkInheritedAgree(def: ViewDefinition, path: Path): void {
    const seen = new Map<string, { p: MappedProperty | EdgeConnection | ReverseRelation; from: ViewId }>();
    for (const v of this.walk(def).precedence.slice(1)) {
      for (const [id, p] of Object.entries(v.properties)) {
        if (Object.hasOwn(def.properties, id)) continue;
        const first = seen.get(id);
        if (!first) {
          seen.set(id, { p, from: idOf(v) });
          continue;
        }
        const conflict = this.inheritedConflict(first.p, p);
        if (conflict) {
          fail(
            [...path, 'implements'],
            `the view ${viewKey(def)} inherits the property ${JSON.stringify(id)} from ${viewKey(first.from)} and from ${viewKey(idOf(v))}, which disagree: ${conflict}; declare ${JSON.stringify(id)} in the view to choose one`,
          );
        }
      }
    }
  }

  /** Why two inherited declarations of one identifier cannot be the same property, or undefined when they can. */
  private inheritedConflict(a: MappedProperty | EdgeConnection | ReverseRelation, b: MappedProperty | EdgeConnection | ReverseRelation): string | undefined {
    if (a.kind !== 'mapped' || b.kind !== 'mapped') {
      return a.kind === b.kind ? undefined : `${kindName(a)} against ${kindName(b)}`;
    }
    const pa = this.source.container(a.container)?.properties[a.containerPropertyIdentifier];
    const pb = this.source.container(b.container)?.properties[b.containerPropertyIdentifier];
    if (!pa || !pb) return undefined;
    const shape = (p: ContainerProperty) => `${p.type.type}${isList(p.type) ? ' list' : ''}`;
    if (shape(pa) === shape(pb)) return undefined;
    return `${containerKey(a.container)}.${a.containerPropertyIdentifier} is ${shape(pa)} and ${containerKey(b.container)}.${b.containerPropertyIdentifier} is ${shape(pb)}`;
  }

  private checkNoCycle(def: ViewDefinition, path: Path): void {
    const stack: string[] = [];
    const done = new Set<string>();
    const visit = (v: ViewDefinition): void => {
      const key = viewKey(v);
      if (stack.includes(key)) fail(path, `the views implement each other in a cycle: ${[...stack.slice(stack.indexOf(key)), key].join(' implements ')}`);
      if (done.has(key)) return;
      stack.push(key);
      for (const parentId of v.implements) {
        const parent = this.source.view(parentId);
        if (parent) visit(parent);
      }
      stack.pop();
      done.add(key);
    };
    visit(def);
  }
}

function kindName(p: MappedProperty | EdgeConnection | ReverseRelation): string {
  return p.kind === 'mapped' ? 'a property mapped from a container' : p.kind === 'edge' ? 'an edge connection' : 'a reverse direct relation';
}

function sourceName(s: ReverseRelation['through']['source']): string {
  return s.type === 'view' ? `the view ${viewKey(s)}` : `the container ${containerKey(s)}`;
}

/** Container property states, for the read form of mapped properties. */
export type StatesOf = (container: ContainerId) => ContainerStates | undefined;

function propertyReadForm(p: EffectiveProperty, states: StatesOf): Record<string, unknown> {
  const text: Record<string, unknown> = {};
  if (p.kind === 'mapped') {
    const cp = p.definition;
    const out: Record<string, unknown> = {
      container: containerRef(p.container),
      containerPropertyIdentifier: p.containerPropertyIdentifier,
      type: propertyTypeReadForm(cp.type, p.source),
      ...propertyReadFields(cp),
      constraintState: propertyConstraintState(cp, states(p.container)?.properties?.[p.containerPropertyIdentifier]),
    };
    // The view's own name and description win over the container property's.
    if (p.name !== undefined) out.name = p.name;
    if (p.description !== undefined) out.description = p.description;
    return out;
  }
  if (p.name !== undefined) text.name = p.name;
  if (p.description !== undefined) text.description = p.description;
  if (p.kind === 'edge') {
    const out: Record<string, unknown> = { connectionType: p.connectionType, type: { ...p.type }, source: viewRef(p.source), direction: p.direction, ...text };
    if (p.edgeSource) out.edgeSource = viewRef(p.edgeSource);
    return out;
  }
  return { connectionType: p.connectionType, source: viewRef(p.source), through: { source: { ...p.through.source }, identifier: p.through.identifier }, targetsList: p.targetsList, ...text };
}

export interface ViewReadOptions {
  /** All effective properties (default), or only those the view declares itself. */
  includeInheritedProperties?: boolean;
  states?: StatesOf;
}

export function viewReadForm(view: ResolvedView, meta: SchemaMetadata, options: ViewReadOptions = {}): ViewRead {
  const { definition: def } = view;
  const inherited = options.includeInheritedProperties ?? true;
  const states = options.states ?? (() => undefined);
  const properties: Record<string, unknown> = {};
  for (const [id, p] of view.properties) {
    if (inherited || Object.hasOwn(def.properties, id)) properties[id] = propertyReadForm(p, states);
  }
  const out: Record<string, unknown> = { space: def.space, externalId: def.externalId, version: def.version };
  if (def.name !== undefined) out.name = def.name;
  if (def.description !== undefined) out.description = def.description;
  if (def.filter !== undefined) out.filter = def.filter;
  Object.assign(out, {
    implements: def.implements.map(viewRef),
    properties,
    ...meta,
    writable: view.writable,
    queryable: view.queryable,
    usedFor: view.usedFor,
    mappedContainers: view.mappedContainers.map(containerRef),
  });
  return out as ViewRead;
}
