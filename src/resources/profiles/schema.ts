/** Request shapes of the user profiles operations. */
import { Type } from '@sinclair/typebox';
import { Cursor } from '../../http/common-schemas.js';

const Limit = Type.Integer({ minimum: 1, maximum: 1000 });

export const ListProfilesQuery = Type.Object(
  {
    identityType: Type.Optional(Type.Union(['ALL', 'USER', 'SERVICE_PRINCIPAL', 'INTERNAL_SERVICE'].map((t) => Type.Literal(t)))),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);

const UserIdentifier = Type.String({ minLength: 1, maxLength: 1024 });

export const ProfilesByIdsBody = Type.Object(
  {
    items: Type.Array(Type.Object({ userIdentifier: UserIdentifier }, { additionalProperties: false }), { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
);

export const SearchProfilesBody = Type.Object(
  {
    search: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ maxLength: 1024 })) }, { additionalProperties: false })),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
