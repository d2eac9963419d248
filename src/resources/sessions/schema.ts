/**
 * Request shapes of the sessions resource and of the session token exchange.
 */
import { Type } from '@sinclair/typebox';
import { Cursor, InternalId } from '../../http/common-schemas.js';

const Secret = Type.String({ minLength: 1, maxLength: 4096 });

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

export const SessionTokenBody = Type.Union([
  Type.Object(
    { nonce: Secret, maxExpirationSeconds: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])) },
    { additionalProperties: false },
  ),
  Type.Object({ sessionId: InternalId, sessionKey: Secret }, { additionalProperties: false }),
]);
