/**
 * Request and response shapes of the data model operations: apply, list, by ids, delete.
 */
import { Type, type Static } from '@sinclair/typebox';
import { SpaceId, ViewReference } from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { LIST_QUERY_FIELDS } from './list-params.js';
import { MaybeVersionedId, VERSIONED_FIELDS, ViewCreate, ViewRead } from './view-schema.js';

const strict = { additionalProperties: false } as const;

/**
 * A data model lists views by reference (`{"type": "view", ...}`) or by definition (a view to apply with
 * the data model). Which one an entry is follows its `type`, checked by `normalizeDataModel`.
 */
export const DataModelCreate = Type.Object(
  { ...VERSIONED_FIELDS, views: Type.Optional(Type.Array(Type.Union([ViewReference, ViewCreate]))) },
  strict,
);
export type DataModelCreate = Static<typeof DataModelCreate>;

export const ApplyDataModelsBody = Type.Object({ items: Type.Array(DataModelCreate, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) }, strict);
export type ApplyDataModelsBody = Static<typeof ApplyDataModelsBody>;

/** By ids; `inlineViews` is a query parameter. */
export const DataModelIdsBody = Type.Object({ items: Type.Array(MaybeVersionedId, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) }, strict);
export type DataModelIdsBody = Static<typeof DataModelIdsBody>;

export const DataModelByIdsQuery = Type.Object({ inlineViews: Type.Optional(Type.Boolean()) }, strict);
export type DataModelByIdsQuery = Static<typeof DataModelByIdsQuery>;

export const ListDataModelsQuery = Type.Object(
  { ...LIST_QUERY_FIELDS, inlineViews: Type.Optional(Type.Boolean()), space: Type.Optional(SpaceId), allVersions: Type.Optional(Type.Boolean()) },
  strict,
);
export type ListDataModelsQuery = Static<typeof ListDataModelsQuery>;

export const DataModelRead = Type.Object(
  {
    ...VERSIONED_FIELDS,
    views: Type.Array(Type.Union([ViewReference, ViewRead])),
    createdTime: Type.Integer(),
    lastUpdatedTime: Type.Integer(),
    isGlobal: Type.Boolean(),
  },
  strict,
);
export type DataModelRead = Static<typeof DataModelRead>;
