/** Tables and request shapes of the organization and identity service. */
import { Type } from '@sinclair/typebox';
import { Cursor } from '../../http/common-schemas.js';
import type { TableDef } from '../../storage/schema.js';
import { CLUSTER_PATTERN, ORG_ID_PATTERN } from './settings.js';

export const identityTables: readonly TableDef[] = [
  {
    // Child organizations; the root organization is the server's setting (settings.ts), not a row.
    name: 'organizations',
    columns: {
      id: { type: 'text', notNull: true },
      parent_id: { type: 'text', notNull: true },
      admin_group_id: { type: 'text' },
      orgs_in_subtree: { type: 'integer', notNull: true },
      projects_in_subtree: { type: 'integer', notNull: true },
      allowed_clusters: { type: 'text', notNull: true },
      idp: { type: 'text', notNull: true },
      created_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['id'],
    indexes: [{ name: 'organizations_parent', columns: ['parent_id', 'id'] }],
  },
];

export const OrgId = Type.String({ minLength: 3, maxLength: 64, pattern: ORG_ID_PATTERN });
const AdminGroupId = Type.String({ minLength: 3, maxLength: 64 });
const ClusterName = Type.String({ minLength: 1, maxLength: 32, pattern: CLUSTER_PATTERN });

export const OrgParams = Type.Object({ org: OrgId });
export const PrincipalParams = Type.Object({ org: OrgId, principal: Type.String({ minLength: 1, maxLength: 255 }) });

/** An external identity provider, as the reference describes one; Strata keeps it and verifies its own tokens only. */
const Idp = Type.Object(
  {
    issuer: Type.String({ minLength: 1, maxLength: 2048 }),
    idpVendor: Type.Optional(Type.Union(['AZURE_AD', 'AUTH0', 'KEYCLOAK', 'SAUTH', 'GENERIC'].map((v) => Type.Literal(v)))),
  },
  { additionalProperties: true },
);

export const CreateOrgBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          id: OrgId,
          idp: Idp,
          adminGroupId: Type.Optional(Type.Union([AdminGroupId, Type.Null()])),
          adminsCanCreateOrgsInSubtree: Type.Optional(Type.Boolean()),
          adminsCanCreateProjectsInSubtree: Type.Optional(Type.Boolean()),
          allowedClusters: Type.Optional(Type.Array(ClusterName, { maxItems: 100, uniqueItems: true })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1 },
    ),
  },
  { additionalProperties: false },
);

export const CreateProjectBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 3, maxLength: 32, pattern: '^[a-z0-9][a-z0-9-]*$' }),
          clusterName: ClusterName,
          projectAdminGroupId: Type.Optional(Type.Union([AdminGroupId, Type.Null()])),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1 },
    ),
  },
  { additionalProperties: false },
);

export const ListProjectsQuery = Type.Object({ includeAdminProperties: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

const PRINCIPAL_TYPES = ['SERVICE_ACCOUNT', 'USER'] as const;
const PrincipalType = Type.Union(PRINCIPAL_TYPES.map((t) => Type.Literal(t)));

export const ListPrincipalsQuery = Type.Object(
  {
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    // The Python SDK sends `types` once per type.
    types: Type.Optional(Type.Union([PrincipalType, Type.Array(PrincipalType, { minItems: 1, maxItems: 2 })])),
  },
  { additionalProperties: false },
);

export const PrincipalsByIdsBody = Type.Object(
  {
    items: Type.Array(
      Type.Union([
        Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
        Type.Object({ externalId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
      ]),
      { minItems: 1, maxItems: 100 },
    ),
    ignoreUnknownIds: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ListLoginSessionsQuery = Type.Object(
  { cursor: Type.Optional(Cursor), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) },
  { additionalProperties: false },
);

export const RevokeLoginSessionsBody = Type.Object(
  {
    items: Type.Array(Type.Object({ id: Type.String({ minLength: 1, maxLength: 20, pattern: '^[1-9][0-9]*$' }) }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 10,
    }),
  },
  { additionalProperties: false },
);
