/**
 * Request shapes of the Postgres gateway, with the reference's item limits. Users are created from a
 * session's nonce and changed only by a new one; tables are either rows of a raw table or a data modeling
 * view's instances.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, IgnoreUnknownIds } from '../../http/common-schemas.js';
import { Columns, GATEWAY_LIMITS, Tablename, Username } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) => Type.Array(item, { minItems: 1, maxItems });

const Credentials = Type.Object({ nonce: Type.String({ minLength: 1, maxLength: GATEWAY_LIMITS.nonce }) }, { additionalProperties: false });
const UsernameRef = Type.Object({ username: Username }, { additionalProperties: false });
const TablenameRef = Type.Object({ tablename: Tablename }, { additionalProperties: false });

export const CreateUsersBody = Type.Object(
  { items: items(Type.Object({ credentials: Credentials }, { additionalProperties: false }), GATEWAY_LIMITS.userWriteItems) },
  { additionalProperties: false },
);
export const UpdateUsersBody = Type.Object(
  {
    items: items(
      Type.Object(
        {
          username: Username,
          update: Type.Object({ credentials: Type.Optional(Type.Object({ set: Credentials }, { additionalProperties: false })) }, { additionalProperties: false }),
        },
        { additionalProperties: false },
      ),
      GATEWAY_LIMITS.userWriteItems,
    ),
  },
  { additionalProperties: false },
);
export const UserIdsBody = Type.Object({ items: items(UsernameRef, GATEWAY_LIMITS.byIds), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
// The Python SDK sends `ignore_unknown_ids` in deletes; the reference service takes it as `ignoreUnknownIds`.
const deleteFlags = { ignoreUnknownIds: IgnoreUnknownIds, ignore_unknown_ids: IgnoreUnknownIds };
export const DeleteUsersBody = Type.Object({ items: items(UsernameRef, GATEWAY_LIMITS.userWriteItems), ...deleteFlags }, { additionalProperties: false });
export const ListUsersQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: GATEWAY_LIMITS.listLimit })), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export const FilterUsersBody = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: GATEWAY_LIMITS.filterLimit })), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

export const UserParams = Type.Object({ project: Type.String(), username: Username });

// One shape for both kinds of table, so that a refusal names the field at fault; the service checks the
// options a kind needs.
const Options = Type.Object(
  {
    space: Type.Optional(Type.String({ minLength: 1, maxLength: 43 })),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 43 })),
    database: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    table: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    primaryKey: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
  },
  { additionalProperties: false },
);
export const TableCreate = Type.Object(
  { type: Type.Union([Type.Literal('raw_rows'), Type.Literal('view')]), tablename: Tablename, options: Options, columns: Type.Optional(Columns) },
  { additionalProperties: false },
);
export type TableCreate = Static<typeof TableCreate>;

export const CreateTablesBody = Type.Object({ items: items(TableCreate, GATEWAY_LIMITS.tableWriteItems) }, { additionalProperties: false });
export const TableIdsBody = Type.Object({ items: items(TablenameRef, GATEWAY_LIMITS.tableWriteItems), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });
export const DeleteTablesBody = Type.Object({ items: items(TablenameRef, GATEWAY_LIMITS.tableWriteItems), ...deleteFlags }, { additionalProperties: false });
export const ListTablesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: GATEWAY_LIMITS.listLimit })),
    cursor: Type.Optional(Cursor),
    // The Python SDK sends `yes` and `no`; the reference a boolean.
    includeBuiltIns: Type.Optional(Type.Union([Type.Boolean(), Type.Literal('yes'), Type.Literal('no')])),
  },
  { additionalProperties: false },
);
