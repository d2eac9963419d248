/**
 * Space definitions: the rules of an apply request (reserved identifiers, the system spaces, no space twice)
 * and the read form.
 */
import type { SpaceCreate, SpaceRead } from './space-schema.js';
import { checkNoDuplicates, checkSpaceName } from './identifiers.js';
import type { SchemaMetadata } from './metadata.js';

export interface SpaceDefinition {
  space: string;
  name?: string;
  description?: string;
}

/**
 * The definitions of an apply request, in order; a 400 naming the place when one cannot be applied. `system`:
 * the system spaces are being seeded, so `cdf_` spaces are allowed.
 */
export function normalizeSpaces(items: readonly SpaceCreate[], system = false): SpaceDefinition[] {
  checkNoDuplicates(items, (s) => s.space, (s) => ({ space: s.space }));
  return items.map((item, i) => {
    if (!system) checkSpaceName(item.space, ['items', i, 'space']);
    const def: SpaceDefinition = { space: item.space };
    if (item.name !== undefined) def.name = item.name;
    if (item.description !== undefined) def.description = item.description;
    return def;
  });
}

export function spaceReadForm(def: SpaceDefinition, meta: SchemaMetadata): SpaceRead {
  return { ...def, ...meta };
}
