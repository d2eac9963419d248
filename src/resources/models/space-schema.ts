/**
 * Request and response shapes of the space operations: apply, list, by ids, delete.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Description, Name, SpaceId } from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { LIST_QUERY_FIELDS } from './list-params.js';

const strict = { additionalProperties: false } as const;

export const SpaceCreate = Type.Object({ space: SpaceId, name: Type.Optional(Name), description: Type.Optional(Description) }, strict);
export type SpaceCreate = Static<typeof SpaceCreate>;

export const ApplySpacesBody = Type.Object({ items: Type.Array(SpaceCreate, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) }, strict);
export type ApplySpacesBody = Static<typeof ApplySpacesBody>;

/** By ids and delete. */
export const SpaceIdsBody = Type.Object(
  { items: Type.Array(Type.Object({ space: SpaceId }, strict), { minItems: 1, maxItems: DM_LIMITS.schemaItems }) },
  strict,
);
export type SpaceIdsBody = Static<typeof SpaceIdsBody>;

export const ListSpacesQuery = Type.Object(
  LIST_QUERY_FIELDS,
  strict,
);
export type ListSpacesQuery = Static<typeof ListSpacesQuery>;

export const SpaceRead = Type.Object(
  {
    space: SpaceId,
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    createdTime: Type.Integer(),
    lastUpdatedTime: Type.Integer(),
    isGlobal: Type.Boolean(),
  },
  strict,
);
export type SpaceRead = Static<typeof SpaceRead>;
