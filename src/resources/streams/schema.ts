/**
 * Request shapes of the streams and records operations. Filters and aggregates are checked by their own
 * parsers (models/filter.ts, record-aggregates.ts), which name the place of a problem better than a schema.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ContainerReference, InstanceExternalId, PropertyId, SpaceId } from '../models/identifiers.js';

const strict = { additionalProperties: false } as const;

/** Limits of the records operations, as the reference states them. */
export const RECORD_LIMITS = {
  writeItems: 1000,
  writeSources: 100,
  readSources: 10,
  selectedProperties: 1000,
  readDefault: 10,
  readMax: 1000,
  sortKeys: 5,
  aggregatesPerLevel: 5,
  aggregateDepth: 5,
  aggregatesInAll: 16,
  filterBuckets: 30,
  uniqueValuesDefault: 10,
  uniqueValuesMax: 2000,
  /** Buckets of one histogram, over all its parents' buckets (Strata's own, as for instances). */
  histogramBuckets: 10_000,
  targetUnits: 100,
} as const;

export const StreamId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z]([a-z0-9_-]{0,98}[a-z0-9])?$' });

export const CreateStreamsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          externalId: StreamId,
          settings: Type.Object({ template: Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) }, strict) }, strict),
        },
        strict,
      ),
      { minItems: 1, maxItems: 1 },
    ),
  },
  strict,
);
export type CreateStreamsBody = Static<typeof CreateStreamsBody>;

export const DeleteStreamsBody = Type.Object({ items: Type.Array(Type.Object({ externalId: StreamId }, strict), { minItems: 1, maxItems: 1 }) }, strict);
export const StreamParams = Type.Object({ streamId: StreamId });
export const RetrieveStreamQuery = Type.Object({ includeStatistics: Type.Optional(Type.Boolean()) }, strict);

const RecordWriteItem = Type.Object(
  {
    space: SpaceId,
    externalId: InstanceExternalId,
    sources: Type.Array(Type.Object({ source: ContainerReference, properties: Type.Record(Type.String(), Type.Unknown()) }, strict), {
      minItems: 1,
      maxItems: RECORD_LIMITS.writeSources,
    }),
  },
  strict,
);
export type RecordWriteItem = Static<typeof RecordWriteItem>;

export const WriteRecordsBody = Type.Object({ items: Type.Array(RecordWriteItem, { minItems: 1, maxItems: RECORD_LIMITS.writeItems }) }, strict);
export type WriteRecordsBody = Static<typeof WriteRecordsBody>;

export const DeleteRecordsBody = Type.Object(
  { items: Type.Array(Type.Object({ space: SpaceId, externalId: InstanceExternalId }, strict), { minItems: 1, maxItems: RECORD_LIMITS.writeItems }) },
  strict,
);
export type DeleteRecordsBody = Static<typeof DeleteRecordsBody>;

const TimeBound = Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Integer()]);
export const LastUpdatedTime = Type.Object(
  { gt: Type.Optional(TimeBound), gte: Type.Optional(TimeBound), lt: Type.Optional(TimeBound), lte: Type.Optional(TimeBound) },
  strict,
);
export type LastUpdatedTime = Static<typeof LastUpdatedTime>;

export const RecordSources = Type.Array(
  Type.Object(
    {
      source: ContainerReference,
      properties: Type.Array(Type.Union([Type.Literal('*'), PropertyId]), { minItems: 1, maxItems: RECORD_LIMITS.selectedProperties }),
    },
    strict,
  ),
  { minItems: 1, maxItems: RECORD_LIMITS.readSources },
);
export type RecordSources = Static<typeof RecordSources>;

const UnitTarget = Type.Object({ externalId: Type.Optional(InstanceExternalId), unitSystemName: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, strict);
export const RecordTargetUnits = Type.Object(
  {
    properties: Type.Optional(
      Type.Array(Type.Object({ property: Type.Array(Type.String({ minLength: 1 }), { minItems: 3, maxItems: 3 }), unit: UnitTarget }, strict), {
        minItems: 1,
        maxItems: RECORD_LIMITS.targetUnits,
      }),
    ),
    unitSystemName: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  strict,
);
export type RecordTargetUnits = Static<typeof RecordTargetUnits>;

const RecordSort = Type.Object(
  {
    property: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 3 }),
    direction: Type.Optional(Type.Union([Type.Literal('ascending'), Type.Literal('descending')])),
    /** The official Python SDK sends a sort as it sends an instance sort. */
    nullsFirst: Type.Optional(Type.Boolean()),
  },
  strict,
);

const readFields = {
  filter: Type.Optional(Type.Unknown()),
  targetUnits: Type.Optional(RecordTargetUnits),
  includeTyping: Type.Optional(Type.Boolean()),
};

export const FilterRecordsBody = Type.Object(
  {
    ...readFields,
    lastUpdatedTime: Type.Optional(LastUpdatedTime),
    sources: Type.Optional(RecordSources),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: RECORD_LIMITS.readMax })),
    sort: Type.Optional(Type.Array(RecordSort, { minItems: 1, maxItems: RECORD_LIMITS.sortKeys })),
  },
  strict,
);
export type FilterRecordsBody = Static<typeof FilterRecordsBody>;

export const SyncRecordsBody = Type.Object(
  {
    ...readFields,
    sources: Type.Optional(RecordSources),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 100_000 })),
    initializeCursor: Type.Optional(Type.String({ minLength: 6, maxLength: 100 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: RECORD_LIMITS.readMax })),
  },
  strict,
);
export type SyncRecordsBody = Static<typeof SyncRecordsBody>;

export const AggregateRecordsBody = Type.Object(
  {
    ...readFields,
    lastUpdatedTime: Type.Optional(LastUpdatedTime),
    aggregates: Type.Record(Type.String(), Type.Unknown(), { minProperties: 1, maxProperties: RECORD_LIMITS.aggregatesPerLevel }),
  },
  strict,
);
export type AggregateRecordsBody = Static<typeof AggregateRecordsBody>;
