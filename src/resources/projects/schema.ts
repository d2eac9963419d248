/**
 * Request shapes of the project operations: reading a project and updating its name, its OpenID Connect
 * configuration and its user profiles setting.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Url = Type.String({ minLength: 1, maxLength: 2048 });
const ClaimName = Type.Object({ claimName: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const ClaimNames = Type.Array(ClaimName, { maxItems: 100 });

export const OidcConfigurationSet = Type.Object(
  {
    jwksUrl: Type.Optional(Url),
    tokenUrl: Type.Optional(Url),
    issuer: Url,
    audience: Type.String({ minLength: 1, maxLength: 2048 }),
    skewMs: Type.Optional(Type.Integer()),
    accessClaims: ClaimNames,
    scopeClaims: ClaimNames,
    logClaims: ClaimNames,
    isGroupCallbackEnabled: Type.Optional(Type.Boolean()),
    identityProviderScope: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);

const set = <T extends TSchema>(schema: T) => Type.Object({ set: schema }, { additionalProperties: false });
const setOrNull = <T extends TSchema>(schema: T) =>
  Type.Union([set(schema), Type.Object({ setNull: Type.Literal(true) }, { additionalProperties: false })]);
const claimsPatch = Type.Union([
  Type.Object({ set: ClaimNames }, { additionalProperties: false }),
  Type.Object({ add: ClaimNames }, { additionalProperties: false }),
  Type.Object({ remove: ClaimNames }, { additionalProperties: false }),
]);

export const OidcConfigurationModify = Type.Object(
  {
    jwksUrl: Type.Optional(set(Url)),
    tokenUrl: Type.Optional(setOrNull(Url)),
    issuer: Type.Optional(set(Url)),
    audience: Type.Optional(set(Type.String({ minLength: 1, maxLength: 2048 }))),
    skewMs: Type.Optional(setOrNull(Type.Integer())),
    accessClaims: Type.Optional(claimsPatch),
    scopeClaims: Type.Optional(claimsPatch),
    logClaims: Type.Optional(claimsPatch),
    isGroupCallbackEnabled: Type.Optional(setOrNull(Type.Boolean())),
    identityProviderScope: Type.Optional(setOrNull(Type.String({ maxLength: 2048 }))),
  },
  { additionalProperties: false },
);

export const ProjectUpdateBody = Type.Object(
  {
    update: Type.Object(
      {
        name: Type.Optional(set(Type.String({ minLength: 1, maxLength: 255 }))),
        oidcConfiguration: Type.Optional(
          Type.Union([
            Type.Object({ modify: OidcConfigurationModify }, { additionalProperties: false }),
            Type.Object({ set: OidcConfigurationSet }, { additionalProperties: false }),
            Type.Object({ setNull: Type.Literal(true) }, { additionalProperties: false }),
          ]),
        ),
        userProfilesConfiguration: Type.Optional(
          Type.Union([
            Type.Object({ modify: Type.Object({ enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }) }, { additionalProperties: false }),
            Type.Object({ set: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }) }, { additionalProperties: false }),
          ]),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ProjectUpdateBody = Static<typeof ProjectUpdateBody>;
