/**
 * Request shapes of the groups resource. Capabilities are checked by the ACL registry (auth/capabilities.ts),
 * which names an unknown ACL, action or scope precisely; the schema only bounds their number.
 */
import { Type, type Static } from '@sinclair/typebox';
import { InternalId } from '../../http/common-schemas.js';

export const GROUP_LIMITS = { createItems: 100, members: 100, capabilities: 1000, metadataKeys: 16, metadataKeyBytes: 32, metadataValue: 512, metadataBytes: 4096, appIds: 255 } as const;

export const GroupCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    sourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    members: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: GROUP_LIMITS.members }), Type.Literal('allUserAccounts')]),
    ),
    capabilities: Type.Optional(Type.Array(Type.Unknown(), { maxItems: GROUP_LIMITS.capabilities })),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.String({ maxLength: GROUP_LIMITS.metadataValue }), { maxProperties: GROUP_LIMITS.metadataKeys }),
    ),
    attributes: Type.Optional(
      Type.Object(
        {
          token: Type.Optional(
            Type.Object(
              { appIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: GROUP_LIMITS.appIds })) },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type GroupCreate = Static<typeof GroupCreate>;

export const CreateGroupsBody = Type.Object(
  { items: Type.Array(GroupCreate, { minItems: 1, maxItems: GROUP_LIMITS.createItems }) },
  { additionalProperties: false },
);

export const ListGroupsQuery = Type.Object({ all: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const DeleteGroupsBody = Type.Object(
  { items: Type.Array(InternalId, { minItems: 1, maxItems: 1000, uniqueItems: true }) },
  { additionalProperties: false },
);
