/**
 * Request shapes of 3D, from the declarations where they can be, with the reference's limits.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, InternalId, Limit, ListCursor, Partition } from '../../http/common-schemas.js';
import { mappingModel, revisionModel, THREED_LIMITS, threedModel } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number = THREED_LIMITS.items) => Type.Array(item, { minItems: 1, maxItems });
const IdRef = Type.Object({ id: InternalId }, { additionalProperties: false });
const Id64 = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const ModelCreate = threedModel.createSchema;
export type ModelCreate = Static<typeof ModelCreate>;
export const CreateModelsBody = Type.Object({ items: items(ModelCreate) }, { additionalProperties: false });
export const UpdateModelsBody = threedModel.updateBody(THREED_LIMITS.items);
export const DeleteByIdBody = Type.Object({ items: items(IdRef) }, { additionalProperties: false });

export const ListModelsQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor), published: Type.Optional(Type.Boolean()), includeRevisionInfo: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const ModelParams = Type.Object({ project: Type.String(), modelId: Id64 });
export const RevisionParams = Type.Object({ project: Type.String(), modelId: Id64, revisionId: Id64 });
export const NodeParams = Type.Object({ project: Type.String(), modelId: Id64, revisionId: Id64, nodeId: Id64 });
export const AssetParams = Type.Object({ project: Type.String(), assetId: Id64 });
export const FileParams = Type.Object({ project: Type.String(), threedFileId: Id64 });
export const SubPathParams = Type.Object({ project: Type.String(), threedFileId: Id64, subPath: Type.String({ minLength: 1, maxLength: 1024 }) });

// What processing sets is not a request's to give.
export const RevisionCreate = Type.Omit(revisionModel.createSchema, ['status', 'thumbnailThreedFileId', 'thumbnailURL', 'assetMappingCount'], { additionalProperties: false });
export type RevisionCreate = Static<typeof RevisionCreate>;
export const CreateRevisionsBody = Type.Object({ items: items(RevisionCreate) }, { additionalProperties: false });
export const UpdateRevisionsBody = revisionModel.updateBody(THREED_LIMITS.items);
export const ListRevisionsQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor), published: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const LogsQuery = Type.Object({ severity: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })) }, { additionalProperties: false });
export const OutputsQuery = Type.Object({ format: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false });
export const ThumbnailBody = Type.Object({ fileId: InternalId }, { additionalProperties: false });

const PageQuery = { limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) };
export const ListNodesQuery = Type.Object(
  {
    ...PageQuery,
    partition: Type.Optional(Partition),
    depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
    nodeId: Type.Optional(Id64),
    sortByNodeId: Type.Optional(Type.Boolean()),
    // A JSON object of categories of properties: `{"category": {"key": "value"}}`, read by the service.
    properties: Type.Optional(Type.String({ maxLength: 100_000 })),
  },
  { additionalProperties: false },
);
export type ListNodesQuery = Static<typeof ListNodesQuery>;
export const PageOnlyQuery = Type.Object(PageQuery, { additionalProperties: false });

const PropertyText = Type.String({ maxLength: THREED_LIMITS.propertyText });
/** Categories of properties, each property with the values any of which it may have. */
export const PropertiesFilter = Type.Record(PropertyText, Type.Record(PropertyText, Type.Array(PropertyText, { minItems: 1, maxItems: THREED_LIMITS.propertyValues })));
export const FilterNodesBody = Type.Object(
  {
    filter: Type.Optional(
      Type.Object(
        { properties: Type.Optional(PropertiesFilter), names: Type.Optional(Type.Array(Type.String({ maxLength: THREED_LIMITS.propertyText }), { maxItems: 1000 })) },
        { additionalProperties: false },
      ),
    ),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(ListCursor),
    partition: Type.Optional(Partition),
  },
  { additionalProperties: false },
);
export type FilterNodesBody = Static<typeof FilterNodesBody>;
export const NodeIdsBody = Type.Object({ items: items(IdRef) }, { additionalProperties: false });

export const MappingCreate = Type.Object({ nodeId: InternalId, assetId: InternalId }, { additionalProperties: false });
export type MappingCreate = Static<typeof MappingCreate>;
export const CreateMappingsBody = Type.Object({ items: items(MappingCreate) }, { additionalProperties: false });
export const DeleteMappingsBody = Type.Object({ items: items(mappingModel.refSchema) }, { additionalProperties: false });
export const ListMappingsQuery = Type.Object(
  {
    ...PageQuery,
    nodeId: Type.Optional(InternalId),
    assetId: Type.Optional(InternalId),
    intersectsBoundingBox: Type.Optional(Type.String({ maxLength: 1000 })),
    getDmsInstances: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ListMappingsQuery = Static<typeof ListMappingsQuery>;
const IdList = Type.Array(InternalId, { maxItems: 100 });
export const FilterMappingsBody = Type.Object(
  {
    filter: Type.Optional(
      Type.Union([
        Type.Object({ assetIds: IdList }, { additionalProperties: false }),
        Type.Object({ nodeIds: IdList }, { additionalProperties: false }),
        Type.Object({ treeIndexes: Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 100 }) }, { additionalProperties: false }),
      ]),
    ),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(ListCursor),
    getDmsInstances: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type FilterMappingsBody = Static<typeof FilterMappingsBody>;

export const DmInstance = Type.Object({ space: Type.String({ minLength: 1, maxLength: 43 }), externalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const Coordinate = Type.Number();
export const NodesInBoxBody = Type.Object(
  {
    model: Type.Object({ instanceId: DmInstance }, { additionalProperties: false }),
    revision: Type.Object({ instanceId: DmInstance }, { additionalProperties: false }),
    filterNodesByBoundingBox: Type.Object(
      {
        boundingBox: Type.Object(
          { xMin: Coordinate, xMax: Coordinate, yMin: Coordinate, yMax: Coordinate, zMin: Coordinate, zMax: Coordinate },
          { additionalProperties: false },
        ),
        nodeIds: Type.Array(Id64, { maxItems: THREED_LIMITS.items }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type NodesInBoxBody = Static<typeof NodesInBoxBody>;
