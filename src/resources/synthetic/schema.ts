/** Request shape of synthetic time series queries. */
import { Type, type Static } from '@sinclair/typebox';

export const SYNTHETIC_LIMITS = {
  /** Points per item, when it gives no limit and at most. */
  defaultLimit: 100,
  maxLimit: 10_000,
  /** Items (expressions) per request. */
  items: 10,
} as const;
const L = SYNTHETIC_LIMITS;

/** Milliseconds since the epoch, or a time relative to now such as "now" or "2d-ago". */
const TimeSpec = Type.Union([Type.Integer(), Type.String({ maxLength: 64 })]);

export const SyntheticQueryItem = Type.Object(
  {
    expression: Type.String({ minLength: 1 }),
    start: Type.Optional(TimeSpec),
    end: Type.Optional(TimeSpec),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: L.maxLimit })),
    timeZone: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const SyntheticQueryBody = Type.Object({ items: Type.Array(SyntheticQueryItem, { minItems: 1, maxItems: L.items }) }, { additionalProperties: false });
export type SyntheticQueryBody = Static<typeof SyntheticQueryBody>;
