/**
 * Request shapes of the sessions resource (the session token exchange is the authentication layer's).
 */
import { Type } from '@sinclair/typebox';
import { SessionSecret as Secret } from '../../auth/sessions.js';
import { Cursor, InternalId } from '../../http/common-schemas.js';

export const SessionCredentials = Type.Union([
  Type.Object({ clientId: Type.String({ minLength: 1, maxLength: 255 }), clientSecret: Secret }, { additionalProperties: false }),
  Type.Object({ tokenExchange: Type.Literal(true) }, { additionalProperties: false }),
  Type.Object({ oneshotTokenExchange: Type.Literal(true) }, { additionalProperties: false }),
]);

export const CreateSessionsBody = Type.Object(
  { items: Type.Array(SessionCredentials, { minItems: 1, maxItems: 1 }) },
  { additionalProperties: false },
);

export const SESSION_STATUSES = ['ready', 'active', 'cancelled', 'revoked', 'access_lost', 'expired'] as const;

export const ListSessionsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(SESSION_STATUSES.map((s) => Type.Literal(s)))),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 25 })),
  },
  { additionalProperties: false },
);

export const SessionIdsBody = Type.Object(
  { items: Type.Array(Type.Object({ id: InternalId }, { additionalProperties: false }), { minItems: 1, maxItems: 1000 }) },
  { additionalProperties: false },
);
