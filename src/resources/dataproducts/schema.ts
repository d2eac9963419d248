/**
 * Request shapes of data products and their versions, from their declarations.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, IgnoreUnknownIds, Limit } from '../../http/common-schemas.js';
import { DATA_PRODUCT_LIMITS, DataProductExternalId, dataProductModel, dataProductVersionModel, SemanticVersion } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) => Type.Array(item, { minItems: 1, maxItems });

// `domains` is the service's to set.
export const DataProductCreate = Type.Omit(dataProductModel.createSchema, ['domains'], { additionalProperties: false });
export type DataProductCreate = Static<typeof DataProductCreate>;
export const CreateDataProductsBody = Type.Object({ items: items(DataProductCreate, DATA_PRODUCT_LIMITS.writeItems) }, { additionalProperties: false });
export const UpdateDataProductsBody = dataProductModel.updateBody(DATA_PRODUCT_LIMITS.writeItems);
export const DeleteDataProductsBody = Type.Object(
  { items: items(dataProductModel.refSchema, DATA_PRODUCT_LIMITS.writeItems), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);
export const DataProductIdsBody = Type.Object(
  { items: items(dataProductModel.refSchema, DATA_PRODUCT_LIMITS.byIds), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

export const ListQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
export const DataProductParams = Type.Object({ project: Type.String(), externalId: DataProductExternalId });
export const VersionParams = Type.Object({ project: Type.String(), externalId: DataProductExternalId, version: SemanticVersion });

export const VersionCreate = dataProductVersionModel.createSchema;
export type VersionCreate = Static<typeof VersionCreate>;
export const CreateVersionsBody = Type.Object({ items: items(VersionCreate, DATA_PRODUCT_LIMITS.versionWriteItems) }, { additionalProperties: false });
export const UpdateVersionsBody = dataProductVersionModel.updateBody<{ views?: { add?: VersionCreate['views'] } }>(DATA_PRODUCT_LIMITS.versionWriteItems);
export const DeleteVersionsBody = Type.Object(
  { items: items(dataProductVersionModel.refSchema, DATA_PRODUCT_LIMITS.versionDeleteItems), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);
