/**
 * Request and response shapes of the data model operations: apply, list, by ids, delete.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor } from '../../http/common-schemas.js';
import { Description, DmsExternalId, DmsVersion, Name, SpaceId, ViewReference } from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { MaybeVersionedId, ViewCreate, ViewRead } from './view-schema.js';

const strict = { additionalProperties: false } as const;

/**
 * A data model lists views by reference (`{"type": "view", ...}`) or by definition (a view to apply with
 * the data model). Which one an entry is follows its `type`, checked by `normalizeDataModel`.
 */
export const DataModelCreate = Type.Object(
  {
    space: SpaceId,
    externalId: DmsExternalId,
    version: DmsVersion,
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    views: Type.Optional(Type.Array(Type.Union([ViewReference, ViewCreate]))),
  },
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
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.listMax, default: DM_LIMITS.listDefault })),
    cursor: Type.Optional(Cursor),
    inlineViews: Type.Optional(Type.Boolean()),
    space: Type.Optional(SpaceId),
    allVersions: Type.Optional(Type.Boolean()),
    includeGlobal: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type ListDataModelsQuery = Static<typeof ListDataModelsQuery>;

export const DataModelRead = Type.Object(
  {
    space: SpaceId,
    externalId: DmsExternalId,
    version: DmsVersion,
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    views: Type.Array(Type.Union([ViewReference, ViewRead])),
    createdTime: Type.Integer(),
    lastUpdatedTime: Type.Integer(),
    isGlobal: Type.Boolean(),
  },
  strict,
);
export type DataModelRead = Static<typeof DataModelRead>;
