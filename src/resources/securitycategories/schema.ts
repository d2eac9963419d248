/** Request shapes and table of security categories: named ids that files and time series can be put in. */
import { Type } from '@sinclair/typebox';
import { Cursor, InternalId } from '../../http/common-schemas.js';
import type { TableDef } from '../../storage/schema.js';

export const SECURITY_CATEGORY_LIMITS = { name: 255, createItems: 1000, deleteItems: 1000, listLimit: 1000, perProject: 1000 } as const;

export const CreateSecurityCategoriesBody = Type.Object(
  {
    items: Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: SECURITY_CATEGORY_LIMITS.name }) }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: SECURITY_CATEGORY_LIMITS.createItems,
    }),
  },
  { additionalProperties: false },
);

export const DeleteSecurityCategoriesBody = Type.Object(
  { items: Type.Array(InternalId, { minItems: 1, maxItems: SECURITY_CATEGORY_LIMITS.deleteItems, uniqueItems: true }) },
  { additionalProperties: false },
);

export const ListSecurityCategoriesQuery = Type.Object(
  {
    sort: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')])),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SECURITY_CATEGORY_LIMITS.listLimit })),
  },
  { additionalProperties: false },
);

export const securityCategoryTables: readonly TableDef[] = [
  {
    name: 'security_categories',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      name: { type: 'text', notNull: true },
    },
    indexes: [{ name: 'security_categories_project', columns: ['project_id', 'id'] }],
  },
];
