/**
 * Request shapes of the data point operations. Individual data points and the `start`/`end`/`before` times
 * are checked by the services rather than by the schema: a request may carry 100,000 points, which are
 * checked in one pass that also packs them, and those checks give messages that name the point and rule.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ExternalId, InternalId, ListCursor } from '../../http/common-schemas.js';
import { InstanceId } from '../timeseries/schema.js';
import { DATAPOINT_LIMITS as L } from './limits.js';

const RefFields = {
  id: Type.Optional(InternalId),
  externalId: Type.Optional(ExternalId),
  instanceId: Type.Optional(InstanceId),
};

/** Milliseconds since the epoch, or a time relative to now such as "now" or "2d-ago". */
const TimeSpec = Type.Unsafe<number | string>({});

export const AGGREGATES = [
  'average',
  'max',
  'maxDatapoint',
  'min',
  'minDatapoint',
  'count',
  'sum',
  'interpolation',
  'stepInterpolation',
  'totalVariation',
  'continuousVariance',
  'discreteVariance',
  'countGood',
  'countUncertain',
  'countBad',
  'durationGood',
  'durationUncertain',
  'durationBad',
] as const;
export type AggregateName = (typeof AGGREGATES)[number];

const Aggregates = Type.Array(Type.Union(AGGREGATES.map((a) => Type.Literal(a))), { minItems: 1, uniqueItems: true });

export const InsertDatapointsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object({ ...RefFields, datapoints: Type.Array(Type.Unknown(), { maxItems: L.insertPoints }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: L.insertItems },
    ),
  },
  { additionalProperties: false },
);
export type InsertDatapointsBody = Static<typeof InsertDatapointsBody>;

/** What a list query item may set, and the request's top level may default. */
const QueryFields = {
  start: Type.Optional(TimeSpec),
  end: Type.Optional(TimeSpec),
  // 0 asks for no points: with includeOutsidePoints, just the points around the range (the SDK asks so).
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: L.rawPoints })),
  aggregates: Type.Optional(Aggregates),
  granularity: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
  timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  targetUnit: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  targetUnitSystem: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  includeOutsidePoints: Type.Optional(Type.Boolean()),
  includeStatus: Type.Optional(Type.Boolean()),
  ignoreBadDataPoints: Type.Optional(Type.Boolean()),
  treatUncertainAsBad: Type.Optional(Type.Boolean()),
};

/** Gap filling, per item: the longest gap between points to interpolate across, such as "1h". */
const Fill = Type.Object({ limit: Type.String({ minLength: 1, maxLength: 32 }) }, { additionalProperties: false });

/** `cursor: null` is no cursor, as in list bodies: the official Python SDK sends it with a query's first page. */
export const ListQueryItem = Type.Object(
  { ...RefFields, ...QueryFields, fill: Type.Optional(Fill), cursor: Type.Optional(ListCursor) },
  { additionalProperties: false },
);
export type ListQueryItem = Static<typeof ListQueryItem>;

export const ListDatapointsBody = Type.Object(
  {
    items: Type.Array(ListQueryItem, { minItems: 1, maxItems: L.listItems }),
    ...QueryFields,
    ignoreUnknownIds: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ListDatapointsBody = Static<typeof ListDatapointsBody>;

export const LatestQueryItem = Type.Object(
  {
    ...RefFields,
    before: Type.Optional(TimeSpec),
    targetUnit: QueryFields.targetUnit,
    targetUnitSystem: QueryFields.targetUnitSystem,
    includeStatus: QueryFields.includeStatus,
    ignoreBadDataPoints: QueryFields.ignoreBadDataPoints,
    treatUncertainAsBad: QueryFields.treatUncertainAsBad,
  },
  { additionalProperties: false },
);
export type LatestQueryItem = Static<typeof LatestQueryItem>;

export const LatestDatapointsBody = Type.Object(
  { items: Type.Array(LatestQueryItem, { minItems: 1, maxItems: L.latestItems }), ignoreUnknownIds: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type LatestDatapointsBody = Static<typeof LatestDatapointsBody>;

const DeleteTime = Type.Integer({ minimum: L.minTimestamp, maximum: Number.MAX_SAFE_INTEGER });

export const DeleteDatapointsBody = Type.Object(
  {
    items: Type.Array(
      Type.Object({ ...RefFields, inclusiveBegin: DeleteTime, exclusiveEnd: Type.Optional(DeleteTime) }, { additionalProperties: false }),
      { minItems: 1, maxItems: L.deleteItems },
    ),
  },
  { additionalProperties: false },
);
export type DeleteDatapointsBody = Static<typeof DeleteDatapointsBody>;
