/**
 * The numeric limits of the data modeling service, in one table: request sizes, identifier lengths, schema
 * sizes and property value sizes. Schemas, validators and docs read them from here.
 */
export const DM_LIMITS = {
  /** Spaces, containers, views and data models per apply, by-ids or delete request. */
  schemaItems: 100,
  /** Instances per apply (items and deletes together), by-ids, delete and inspect request. */
  instanceItems: 1000,
  /** Containers per inspect request; indexes, constraints or properties per delete or retry request. */
  containerSubItems: 10,
  /** `limit` of the GET lists: default and maximum. */
  listDefault: 10,
  listMax: 1000,
  /** `limit` of instance list and search: default and maximum; aggregate groups: default. */
  instanceListMax: 1000,
  aggregateGroupsDefault: 100,

  spaceLength: 43,
  externalIdLength: 255,
  versionLength: 43,
  propertyIdLength: 255,
  /** Index and constraint identifiers. */
  subObjectIdLength: 43,
  instanceExternalIdLength: 256,
  enumValueIdLength: 128,
  nameLength: 255,
  descriptionLength: 1024,

  containerProperties: 100,
  /** A record container's properties (`usedFor: "record"`). */
  recordContainerProperties: 1000,
  enumValues: 32,
  uniquenessConstraints: 10,
  requiresConstraints: 25,
  indexes: 10,
  viewProperties: 300,
  implements: 10,
  dataModelViews: 100,

  /** Largest `maxListSize`; the smaller ones apply to integer lists in a btree index. */
  maxListSize: 2000,
  btreeInt32ListSize: 600,
  btreeInt64ListSize: 300,
  /** List lengths without `maxListSize`. */
  defaultListSize: 1000,
  defaultDirectListSize: 100,
  /** Text values (and the whole of a text list), in UTF-8 bytes. */
  textBytes: 128_000,
  /** A json value (or a whole json list) as UTF-8 JSON text; its keys, key count and each value. */
  jsonBytes: 40_960,
  jsonKeyLength: 128,
  jsonKeys: 256,
  jsonValueBytes: 10_240,
  /** External ids held by timeseries, file and sequence reference properties. */
  referenceLength: 255,

  /** Sources written per instance; views read per request. */
  writeSources: 100,
  readSources: 10,
  sortKeys: 5,
  targetUnits: 10,
  aggregates: 5,
  groupBy: 5,
  aggregateProperties: 200,
  /** Words of a search or aggregate `query` (Strata's own: each is matched against every candidate). */
  searchQueryWords: 100,
  /** Buckets of one histogram aggregate, over all the groups of the answer. */
  histogramBuckets: 10_000,

  filterDepth: 20,
  filterClauses: 500,
  /** Values of `in`, `containsAny`, `containsAll`, and references of `instanceReferences`. */
  filterValues: 1000,
  /**
   * All the filters of one request, with the filters of the views their `hasData` names (filter.ts
   * FilterBudget): values (as above, and the elements of list operands) and filters in all, and how deep they
   * nest with the views' filters inside. Strata's own: they keep every statement within what the engines take.
   */
  requestFilterValues: 4000,
  requestFilterClauses: 1000,
  expandedFilterDepth: 40,
  hasDataSources: 10,

  /** Result set expressions of a query (`with`, `select`, `cursors`); each set's `limit`: default and maximum. */
  queryResultSets: 50,
  querySetLimitDefault: 100,
  querySetLimitMax: 10_000,
  /** Instances the pages of a query's result sets hold in all (selected or not): the memory of one request. */
  queryInstances: 100_000,
  /** Edges kept per start node with `limitEach`. */
  queryLimitEach: 2000,
  /** Edges one traversal may reach before the query is refused as too wide. */
  queryTraversalEdges: 100_000,
  /** `limit` of a sync result set: default and maximum. */
  syncSetDefault: 100,
  syncSetMax: 2000,
  /** Instances a sync set may hold when another set chains from it (it is read whole, not by page). */
  syncChainSource: 100_000,
  /** Age at which a sync cursor expires unless the request accepts missed deletes (3 days). */
  syncCursorMaxAgeMs: 3 * 24 * 3600 * 1000,
} as const;

/**
 * What a project may hold by default, reported by the statistics operation and enforced by the writes that
 * add to a count (the concurrency figures are reported only). `STRATA_MODELS_LIMITS` overrides any of them.
 */
export const DM_PROJECT_LIMITS = {
  spaces: 100,
  containers: 1000,
  containerProperties: 25_000,
  /** View versions. */
  views: 2000,
  /** Data model versions. */
  dataModels: 500,
  instances: 5_000_000,
  softDeletedInstances: 10_000_000,
  concurrentRead: 8,
  concurrentWrite: 4,
  concurrentDelete: 2,
} as const;

export type ProjectLimits = { readonly [K in keyof typeof DM_PROJECT_LIMITS]: number };

export const PROJECT_LIMIT_NAMES = Object.keys(DM_PROJECT_LIMITS) as ReadonlyArray<keyof ProjectLimits>;

/** The limits of a project: the defaults with the configured overrides. */
export function projectLimits(overrides: Readonly<Record<string, number>> | undefined): ProjectLimits {
  return overrides ? { ...DM_PROJECT_LIMITS, ...overrides } : DM_PROJECT_LIMITS;
}
