/** Request shapes of SAP writeback, from its declarations. */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, IgnoreUnknownIds } from '../../http/common-schemas.js';
import { endpointModel, mappingModel, requestModel, WRITEBACK_LIMITS, WritebackId } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number = WRITEBACK_LIMITS.items) => Type.Array(item, { minItems: 1, maxItems });
const Credential = Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.credential });

export const InstanceCreate = Type.Object(
  {
    externalId: WritebackId,
    gatewayUrl: Type.String({ minLength: 1, maxLength: WRITEBACK_LIMITS.gatewayUrl }),
    client: Type.Integer({ minimum: 0, maximum: 999 }),
    username: Credential,
    password: Credential,
  },
  { additionalProperties: false },
);
export type InstanceCreate = Static<typeof InstanceCreate>;
export const CreateInstancesBody = Type.Object({ items: items(InstanceCreate) }, { additionalProperties: false });

export const EndpointCreate = Type.Object(endpointModel.createSchema.properties, { additionalProperties: false });
export type EndpointCreate = Static<typeof EndpointCreate>;
export const CreateEndpointsBody = Type.Object({ items: items(EndpointCreate) }, { additionalProperties: false });

export const MappingCreate = Type.Object(mappingModel.createSchema.properties, { additionalProperties: false });
export type MappingCreate = Static<typeof MappingCreate>;
export const CreateMappingsBody = Type.Object({ items: items(MappingCreate) }, { additionalProperties: false });

const ExternalIdRef = Type.Object({ externalId: WritebackId }, { additionalProperties: false });
export const ByIdsBody = Type.Object({ items: items(ExternalIdRef), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
export const DeleteBody = ByIdsBody;
export const DeleteInstancesBody = Type.Object(
  { items: items(ExternalIdRef), ignoreUnknownIds: IgnoreUnknownIds, force: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export const VerifyBody = Type.Object({ externalId: WritebackId }, { additionalProperties: false });

export const RequestItemCreate = Type.Object(
  {
    key: Type.Optional(WritebackId),
    fileId: Type.Optional(WritebackId),
    payload: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export type RequestItemCreate = Static<typeof RequestItemCreate>;
export const RequestCreate = Type.Object(
  { endpointId: WritebackId, request: Type.Array(RequestItemCreate, { minItems: 1, maxItems: WRITEBACK_LIMITS.requestItems }) },
  { additionalProperties: false },
);
export type RequestCreate = Static<typeof RequestCreate>;
export const CreateRequestsBody = Type.Object({ items: items(RequestCreate, 1) }, { additionalProperties: false });
export const RequestIdsBody = Type.Object(
  { items: items(Type.Object({ requestId: requestModel.schemas.requestId }, { additionalProperties: false })), ignoreUnknownIds: IgnoreUnknownIds },
  { additionalProperties: false },
);

export const ListQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: WRITEBACK_LIMITS.listLimit })), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
