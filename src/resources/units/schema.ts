/**
 * Shapes of the units catalog: a unit, a unit system (what the catalog files hold and the API returns), and
 * the request bodies of the units operations.
 */
import { Type, type Static } from '@sinclair/typebox';
import { orNull } from '../../http/common-schemas.js';

/** Units are addressed by externalId only; the catalog's longest is 53 characters. */
const UnitExternalId = Type.String({ minLength: 1, maxLength: 255 });

export const UnitSchema = Type.Object(
  {
    externalId: UnitExternalId,
    name: Type.String(),
    longName: Type.String(),
    symbol: Type.String(),
    aliasNames: Type.Array(Type.String()),
    quantity: Type.String({ minLength: 1 }),
    conversion: Type.Object(
      // A multiplier of 0 would make every value of the unit the same base value: no unit, and no way back.
      { multiplier: Type.Number({ exclusiveMinimum: 0 }), offset: Type.Number() },
      { additionalProperties: false },
    ),
    source: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    sourceReference: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);
export type Unit = Static<typeof UnitSchema>;

export const UnitSystemSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    quantities: Type.Array(Type.Object({ name: Type.String(), unitExternalId: UnitExternalId }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export type UnitSystem = Static<typeof UnitSystemSchema>;

export const UNIT_LIMITS = { byIds: 1000 } as const;

export const UnitsByIdsBody = Type.Object(
  {
    items: Type.Array(Type.Object({ externalId: UnitExternalId }, { additionalProperties: false }), { minItems: 1, maxItems: UNIT_LIMITS.byIds }),
    // The reference allows null here, meaning false.
    ignoreUnknownIds: Type.Optional(orNull(Type.Boolean())),
  },
  { additionalProperties: false },
);

export const UnitParams = Type.Object({ externalId: UnitExternalId });
