/**
 * Request value shapes shared by every resource (ids, references, timestamps, paging, patches), declared once.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SCALARS_AS_TEXT } from './validation.js';

export const MAX_SAFE_ID = Number.MAX_SAFE_INTEGER;

export const InternalId = Type.Integer({ minimum: 1, maximum: MAX_SAFE_ID });
/**
 * An id a filter matches items against. No item has id 0, so a filter on 0 matches nothing; clients send it
 * for "no such item" and expect an empty result, not a refusal.
 */
export const FilterId = Type.Integer({ minimum: 0, maximum: MAX_SAFE_ID });
export const ExternalId = Type.String({ maxLength: 255 });
export const Timestamp = Type.Integer({ minimum: 0, maximum: MAX_SAFE_ID });
export const TimestampRange = Type.Object(
  { min: Type.Optional(Timestamp), max: Type.Optional(Timestamp) },
  { additionalProperties: false },
);
export const Limit = Type.Integer({ minimum: 1, maximum: 1000 });
export const Cursor = Type.String({ minLength: 1, maxLength: 4096 });
/**
 * A field that may also be sent as null, meaning the same as leaving it out, where existing clients send
 * null for "not given". Everywhere else a null is refused, as the spec asks.
 */
export function orNull<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/**
 * The cursor of a list request body. `null` asks for the first page, as leaving it out does: the official
 * Python SDK sends `"cursor": null` with the first page of every list and of every partition.
 */
export const ListCursor = orNull(Cursor);
export const Partition = Type.String({ maxLength: 16 });
export const IgnoreUnknownIds = Type.Optional(Type.Boolean());

export interface MetadataLimits {
  keyLength: number;
  valueLength: number;
  keys: number;
  /** Keys and values together, in UTF-8 bytes. */
  totalBytes: number;
}

/** The limits of event metadata; other resources declare their own. */
export const METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 128_000, keys: 256, totalBytes: 200_000 };

/** A metadata map; values sent as numbers or booleans are kept as their text, and the limits apply to that. */
export const metadataSchema = (limits: MetadataLimits) =>
  Type.Record(Type.String(), Type.String({ maxLength: limits.valueLength }), {
    maxProperties: limits.keys,
    propertyNames: { maxLength: limits.keyLength },
    [SCALARS_AS_TEXT]: true,
  });

export const Metadata = metadataSchema(METADATA_LIMITS);

/** `{id}` or `{externalId}`; exactly one is checked when the reference is resolved. */
export const ItemRef = Type.Object(
  { id: Type.Optional(InternalId), externalId: Type.Optional(ExternalId) },
  { additionalProperties: false },
);
export const ItemRefs = (maxItems: number) => Type.Array(ItemRef, { minItems: 1, maxItems });
/** `{id}` or `{externalId}` in a filter, where id 0 matches nothing (see FilterId). */
export const FilterRef = Type.Object(
  { id: Type.Optional(FilterId), externalId: Type.Optional(ExternalId) },
  { additionalProperties: false },
);

/** All fields optional, no others allowed. */
export function partialObject<T extends Record<string, TSchema>>(fields: T) {
  return Type.Partial(Type.Object(fields), { additionalProperties: false });
}

/** `{set: value}` or `{setNull: true}` on a single-valued field. */
export function nullablePatch<T extends TSchema>(schema: T) {
  return Type.Optional(
    Type.Object({ set: Type.Optional(schema), setNull: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  );
}

/** `{set: value}` on a field that cannot be removed. */
export function requiredPatch<T extends TSchema>(schema: T) {
  return Type.Optional(Type.Object({ set: schema }, { additionalProperties: false }));
}

export const metadataPatchSchema = (limits: MetadataLimits) =>
  Type.Optional(
    Type.Object(
      {
        // An empty array is an empty map here: the official Python SDK's 7.x "replace" updates clear metadata
        // with {"set": []}.
        set: Type.Optional(Type.Union([metadataSchema(limits), Type.Array(Type.Never(), { maxItems: 0 })])),
        add: Type.Optional(metadataSchema(limits)),
        remove: Type.Optional(Type.Array(Type.String({ maxLength: limits.keyLength }), { maxItems: limits.keys * 4 })),
      },
      { additionalProperties: false },
    ),
  );

export const SortSpec = Type.Object(
  {
    property: Type.Array(Type.String(), { minItems: 1, maxItems: 2 }),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    nulls: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('first'), Type.Literal('last')])),
  },
  { additionalProperties: false },
);
/** Sort specifications; the older `"field:order"` strings are accepted too. */
export const SortSpecs = Type.Array(Type.Union([SortSpec, Type.String({ minLength: 1, maxLength: 300 })]), { maxItems: 2 });

export const AggregateKind = Type.Union([
  Type.Literal('count'),
  Type.Literal('cardinalityValues'),
  Type.Literal('cardinalityProperties'),
  Type.Literal('uniqueValues'),
  Type.Literal('uniqueProperties'),
]);

export const AggregateRequestFields = {
  aggregate: Type.Optional(AggregateKind),
  advancedFilter: Type.Optional(Type.Unknown()),
  aggregateFilter: Type.Optional(Type.Unknown()),
  properties: Type.Optional(
    Type.Array(
      Type.Object(
        {
          // Each element's longest length is the resource's (256 for time series), checked where it is known.
          property: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 2 }),
          filter: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1 },
    ),
  ),
  path: Type.Optional(Type.Array(Type.Literal('metadata'), { minItems: 1, maxItems: 1 })),
};

/** Deprecated `uniqueValues` form of events: the field to aggregate by name (`type`, `metadata.<key>`). */
export const AggregateFields = Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: 1 }));

/** Deprecated aggregates of assets: the metadata keys, or the values of the metadata key named in `keys`. */
export const MetadataAggregateFields = {
  aggregate: Type.Optional(Type.Union([...AggregateKind.anyOf, Type.Literal('metadataKeys'), Type.Literal('metadataValues')])),
  keys: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: 1 })),
};

/** The body of a `POST /<resource>/list`: the resource's basic filter plus the shared query fields. */
export function listBodySchema<F extends TSchema, X extends Record<string, TSchema> = Record<string, never>>(filter: F, extra?: X) {
  return Type.Object(
    {
      filter: Type.Optional(filter),
      advancedFilter: Type.Optional(Type.Unknown()),
      sort: Type.Optional(SortSpecs),
      limit: Type.Optional(Limit),
      cursor: Type.Optional(ListCursor),
      partition: Type.Optional(Partition),
      ...((extra ?? {}) as X),
    },
    { additionalProperties: false },
  );
}
