/**
 * The numbers that bound data point requests, in one place (spec "Limits" and the reference's schemas).
 */
export const DATAPOINT_LIMITS = {
  /** 1900-01-01T00:00:00Z: the earliest timestamp a data point may carry. */
  minTimestamp: -2_208_988_800_000,
  /** 2099-12-31T23:59:59.999Z: the latest. */
  maxTimestamp: 4_102_444_799_999,
  /** Numeric values of Good and Uncertain points lie strictly between -1e100 and 1e100. */
  maxAbsValue: 1e100,
  insertItems: 10_000,
  /** Data points per insert request, across all its items (numeric and string alike). */
  insertPoints: 100_000,
  listItems: 100,
  latestItems: 100,
  deleteItems: 10_000,
  /** `limit` when a list request gives none. */
  defaultLimit: 100,
  /** Raw data points per list request, summed over its items. */
  rawPoints: 100_000,
  /** Aggregate buckets per list request, summed over its items. */
  aggregatePoints: 10_000,
} as const;
