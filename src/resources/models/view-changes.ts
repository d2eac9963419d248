/**
 * What may change when a view version that exists is applied again. A view version is a contract with its
 * readers, so a change that alters the shape they read needs a new version; applying it to the same version
 * is refused (409, naming the view and the property).
 *
 * Allowed within a version: name, description and filter; a property's name and description; mapping a
 * property to another container property of the same type; adding a nullable property from a container the
 * view already maps, under an identifier no implemented view gives; adding edge connections and reverse
 * direct relations. Everything else needs a new version: another `implements`, removing a property, a
 * property of another kind or type, another source hint, edge type, direction, connection type or target
 * view, a non-nullable property, a property that maps a container the view did not map.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError, formatPath } from '../../http/errors.js';
import { containerKey, sameView, viewKey, type Path } from './identifiers.js';
import { sameStorageType } from './property-types.js';
import type { ResolvedView, SchemaSource } from './view-resolution.js';
import type { ViewDefinition, ViewProperty } from './views.js';

function conflict(path: Path, message: string): never {
  throw new ApiError(409, `${formatPath(path)}: ${message}; apply it as a new version of the view`);
}


/** The fields of a property that readers depend on (all but name and description, and for mapped ones, the mapping). */
function shape(p: ViewProperty): unknown {
  switch (p.kind) {
    case 'mapped':
      return ['mapped', p.source ?? null];
    case 'edge':
      return ['edge', p.connectionType, p.type, p.source, p.edgeSource ?? null, p.direction];
    case 'reverse':
      return ['reverse', p.connectionType, p.source, p.through];
  }
}

/**
 * Checks that `next` may replace the stored view version `stored` (resolved against the current schema);
 * `source` gives the containers of `next`'s mappings. Returns whether anything changed.
 */
export function checkViewUpdate(stored: ResolvedView, next: ViewDefinition, source: SchemaSource, path: Path): boolean {
  const before = stored.definition;
  const key = viewKey(stored.id);
  if (before.implements.length !== next.implements.length || !before.implements.every((v, i) => sameView(v, next.implements[i]))) {
    conflict([...path, 'implements'], `the views ${key} implements cannot change within a version`);
  }
  for (const [id, p] of Object.entries(before.properties)) {
    const where = [...path, 'properties', id];
    if (!Object.hasOwn(next.properties, id)) conflict(where, `the property ${JSON.stringify(id)} of ${key} cannot be removed within a version`);
    const n = next.properties[id];
    if (p.kind !== n.kind) conflict(where, `the property ${JSON.stringify(id)} cannot change from ${p.kind} to ${n.kind}`);
    if (!isDeepStrictEqual(shape(p), shape(n))) conflict(where, `the ${p.kind === 'mapped' ? 'source hint' : 'connection'} of ${JSON.stringify(id)} cannot change within a version`);
    if (p.kind === 'mapped' && n.kind === 'mapped' && (containerKey(p.container) !== containerKey(n.container) || p.containerPropertyIdentifier !== n.containerPropertyIdentifier)) {
      const was = source.container(p.container)?.properties[p.containerPropertyIdentifier];
      const now = source.container(n.container)?.properties[n.containerPropertyIdentifier];
      if (was && now && (!sameStorageType(was.type, now.type) || was.nullable !== now.nullable)) {
        conflict(where, `${JSON.stringify(id)} can be mapped to another container property only of the same type and nullability`);
      }
    }
  }
  const inherited = new Set([...stored.properties.entries()].filter(([id]) => !Object.hasOwn(before.properties, id)).map(([id]) => id));
  const mapped = new Set(stored.mappedContainers.map(containerKey));
  for (const [id, p] of Object.entries(next.properties)) {
    if (Object.hasOwn(before.properties, id)) continue;
    const where = [...path, 'properties', id];
    if (inherited.has(id)) conflict(where, `${JSON.stringify(id)} would override a property the view inherits`);
    if (p.kind !== 'mapped') continue;
    if (!mapped.has(containerKey(p.container))) conflict(where, `${JSON.stringify(id)} maps the container ${containerKey(p.container)}, which the view does not map yet`);
    const cp = source.container(p.container)?.properties[p.containerPropertyIdentifier];
    if (cp && !cp.nullable) conflict(where, `${JSON.stringify(id)} is not nullable, and adding a required property changes what writers must send`);
  }
  return !isDeepStrictEqual(before, next);
}
