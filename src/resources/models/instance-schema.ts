/**
 * Request and response shapes of the instance operations: apply, delete, by ids, list, search, aggregate,
 * inspect. Filters are checked by filter.ts and property values by values.ts, against the schema.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ListCursor } from '../../http/common-schemas.js';
import {
  ContainerReference,
  DirectRelationReference,
  InstanceExternalId,
  InstanceId,
  InstanceType,
  PropertyId,
  SourceReference,
  ViewReference,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';

const strict = { additionalProperties: false } as const;

// ---------------------------------------------------------------------------------------------------------
// Apply and delete

/** Values written to one view or container. The Python SDK may send an empty `properties` object. */
export const SourceData = Type.Object(
  { source: SourceReference, properties: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { propertyNames: PropertyId })) },
  strict,
);
export type SourceData = Static<typeof SourceData>;

/**
 * A node or an edge to create or update; an edge also needs `type`, `startNode` and `endNode` (instance-writes.ts).
 * A node's `"type": null` is taken as no type given: the Python SDK's typed nodes send it.
 */
export const InstanceWriteItem = Type.Object(
  {
    ...InstanceId.properties,
    existingVersion: Type.Optional(Type.Integer({ minimum: 0 })),
    type: Type.Optional(Type.Union([DirectRelationReference, Type.Null()])),
    startNode: Type.Optional(DirectRelationReference),
    endNode: Type.Optional(DirectRelationReference),
    sources: Type.Optional(Type.Array(SourceData, { minItems: 1, maxItems: DM_LIMITS.writeSources })),
  },
  strict,
);
export type InstanceWriteItem = Static<typeof InstanceWriteItem>;

export const InstanceDeleteItem = Type.Object(
  { ...InstanceId.properties, existingVersion: Type.Optional(Type.Integer({ minimum: 0 })) },
  strict,
);
export type InstanceDeleteItem = Static<typeof InstanceDeleteItem>;

export const ApplyInstancesBody = Type.Object(
  {
    items: Type.Array(InstanceWriteItem, { maxItems: DM_LIMITS.instanceItems }),
    delete: Type.Optional(Type.Array(InstanceDeleteItem, { maxItems: DM_LIMITS.instanceItems })),
    autoCreateDirectRelations: Type.Optional(Type.Boolean()),
    autoCreateStartNodes: Type.Optional(Type.Boolean()),
    autoCreateEndNodes: Type.Optional(Type.Boolean()),
    skipOnVersionConflict: Type.Optional(Type.Boolean()),
    replace: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type ApplyInstancesBody = Static<typeof ApplyInstancesBody>;

export const DeleteInstancesBody = Type.Object(
  { items: Type.Array(InstanceDeleteItem, { minItems: 1, maxItems: DM_LIMITS.instanceItems }) },
  strict,
);
export type DeleteInstancesBody = Static<typeof DeleteInstancesBody>;

// ---------------------------------------------------------------------------------------------------------
// Reads

/** A unit to convert a numeric property to: a unit by external id, or the unit a unit system gives its quantity. */
export const TargetUnit = Type.Object(
  {
    property: Type.String({ minLength: 1 }),
    unit: Type.Object({ externalId: Type.Optional(InstanceExternalId), unitSystemName: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, strict),
  },
  strict,
);
export type TargetUnit = Static<typeof TargetUnit>;
export const TargetUnits = Type.Array(TargetUnit, { minItems: 1, maxItems: DM_LIMITS.targetUnits });

export const SourceSelector = Type.Object({ source: ViewReference, targetUnits: Type.Optional(TargetUnits) }, strict);
export type SourceSelector = Static<typeof SourceSelector>;
export const SourceSelectors = Type.Array(SourceSelector, { maxItems: DM_LIMITS.readSources });

/** A property reference: `["node", "externalId"]`, `[space, "view/version", property]`, `[space, container, property]`, `[property]`. */
export const PropertyReference = Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 3 });

export const Direction = Type.Union([Type.Literal('ascending'), Type.Literal('descending')]);
export const PropertySort = Type.Object(
  { property: PropertyReference, direction: Type.Optional(Direction), nullsFirst: Type.Optional(Type.Boolean()) },
  strict,
);
export type PropertySort = Static<typeof PropertySort>;

/**
 * The reference leaves the debug object open to further options: those not declared here are accepted and
 * have no effect. The Python SDK sends `includeLlmPrompt` on every list, query and sync.
 */
export const DebugParameters = Type.Object(
  {
    emitResults: Type.Optional(Type.Boolean()),
    timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000 })),
    profile: Type.Optional(Type.Boolean()),
    includeTranslatedQuery: Type.Optional(Type.Boolean()),
    includePlan: Type.Optional(Type.Boolean()),
    includeLlmPrompt: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type DebugParameters = Static<typeof DebugParameters>;

export const InstanceIdsBody = Type.Object(
  {
    items: Type.Array(InstanceId, { minItems: 1, maxItems: DM_LIMITS.instanceItems }),
    sources: Type.Optional(SourceSelectors),
    includeTyping: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type InstanceIdsBody = Static<typeof InstanceIdsBody>;

export const ListInstancesBody = Type.Object(
  {
    includeTyping: Type.Optional(Type.Boolean()),
    sources: Type.Optional(SourceSelectors),
    instanceType: Type.Optional(InstanceType),
    debug: Type.Optional(DebugParameters),
    cursor: Type.Optional(ListCursor),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.instanceListMax, default: DM_LIMITS.instanceListMax })),
    sort: Type.Optional(Type.Array(PropertySort, { maxItems: DM_LIMITS.sortKeys })),
    filter: Type.Optional(Type.Unknown()),
  },
  strict,
);
export type ListInstancesBody = Static<typeof ListInstancesBody>;

export const SearchOperator = Type.Union([Type.Literal('AND'), Type.Literal('OR')]);

export const SearchInstancesBody = Type.Object(
  {
    view: ViewReference,
    query: Type.Optional(Type.String()),
    instanceType: Type.Optional(InstanceType),
    properties: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    targetUnits: Type.Optional(TargetUnits),
    filter: Type.Optional(Type.Unknown()),
    includeTyping: Type.Optional(Type.Boolean()),
    sort: Type.Optional(Type.Array(Type.Object({ property: PropertyReference, direction: Type.Optional(Direction) }, strict), { maxItems: DM_LIMITS.sortKeys })),
    operator: Type.Optional(SearchOperator),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.instanceListMax, default: DM_LIMITS.instanceListMax })),
  },
  strict,
);
export type SearchInstancesBody = Static<typeof SearchInstancesBody>;

/** One aggregate: exactly one of its keys (checked by instance-reads.ts). */
export const Aggregate = Type.Object(
  {
    avg: Type.Optional(Type.Object({ property: Type.String({ minLength: 1 }) }, strict)),
    min: Type.Optional(Type.Object({ property: Type.String({ minLength: 1 }) }, strict)),
    max: Type.Optional(Type.Object({ property: Type.String({ minLength: 1 }) }, strict)),
    sum: Type.Optional(Type.Object({ property: Type.String({ minLength: 1 }) }, strict)),
    count: Type.Optional(Type.Object({ property: Type.Optional(Type.String({ minLength: 1 })) }, strict)),
    histogram: Type.Optional(Type.Object({ property: Type.String({ minLength: 1 }), interval: Type.Number({ exclusiveMinimum: 0 }) }, strict)),
  },
  strict,
);
export type Aggregate = Static<typeof Aggregate>;

export const AggregateInstancesBody = Type.Object(
  {
    view: ViewReference,
    instanceType: Type.Optional(InstanceType),
    query: Type.Optional(Type.String()),
    properties: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: DM_LIMITS.aggregateProperties })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.instanceListMax, default: DM_LIMITS.aggregateGroupsDefault })),
    aggregates: Type.Optional(Type.Array(Aggregate, { maxItems: DM_LIMITS.aggregates })),
    groupBy: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: DM_LIMITS.groupBy })),
    filter: Type.Optional(Type.Unknown()),
    operator: Type.Optional(SearchOperator),
    targetUnits: Type.Optional(TargetUnits),
    includeTyping: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type AggregateInstancesBody = Static<typeof AggregateInstancesBody>;

export const InspectInstancesBody = Type.Object(
  {
    inspectionOperations: Type.Object(
      {
        involvedViews: Type.Optional(Type.Object({ allVersions: Type.Optional(Type.Boolean()) }, strict)),
        involvedContainers: Type.Optional(Type.Object({ allVersions: Type.Optional(Type.Boolean()) }, strict)),
      },
      strict,
    ),
    items: Type.Array(InstanceId, { minItems: 1, maxItems: DM_LIMITS.instanceItems }),
  },
  strict,
);
export type InspectInstancesBody = Static<typeof InspectInstancesBody>;

// ---------------------------------------------------------------------------------------------------------
// Responses

const Times = { createdTime: Type.Integer(), lastUpdatedTime: Type.Integer() };

export const SlimInstance = Type.Object(
  { ...InstanceId.properties, version: Type.Integer(), wasModified: Type.Boolean(), ...Times },
  strict,
);
export type SlimInstance = Static<typeof SlimInstance>;

export const ApplyInstancesResponse = Type.Object(
  { items: Type.Array(SlimInstance), deleted: Type.Array(InstanceId) },
  strict,
);
export type ApplyInstancesResponse = Static<typeof ApplyInstancesResponse>;

/** `{<view space>: {"<view externalId>/<version>": {<property>: value}}}`. */
export const InstanceProperties = Type.Record(Type.String(), Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown())));

export const InstanceRead = Type.Object(
  {
    ...InstanceId.properties,
    version: Type.Integer(),
    type: Type.Optional(DirectRelationReference),
    startNode: Type.Optional(DirectRelationReference),
    endNode: Type.Optional(DirectRelationReference),
    ...Times,
    deletedTime: Type.Optional(Type.Integer()),
    properties: Type.Optional(InstanceProperties),
  },
  strict,
);
export type InstanceRead = Static<typeof InstanceRead>;

/** `{<view space>: {"<view externalId>/<version>": {<property>: {type, nullable, ...}}}}`. */
export const Typing = Type.Record(Type.String(), Type.Record(Type.String(), Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))));

export const InstancesResponse = Type.Object(
  { items: Type.Array(InstanceRead), typing: Type.Optional(Typing), nextCursor: Type.Optional(Type.String()), debug: Type.Optional(Type.Unknown()) },
  strict,
);
export type InstancesResponse = Static<typeof InstancesResponse>;

const GroupValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), DirectRelationReference]);
export const AggregateResult = Type.Union([
  Type.Object(
    {
      aggregate: Type.Union(['avg', 'min', 'max', 'count', 'sum'].map((a) => Type.Literal(a))),
      property: Type.Optional(Type.String()),
      value: Type.Optional(Type.Number()),
    },
    strict,
  ),
  Type.Object(
    {
      aggregate: Type.Literal('histogram'),
      interval: Type.Number(),
      property: Type.String(),
      buckets: Type.Array(Type.Object({ start: Type.Number(), count: Type.Integer() }, strict)),
    },
    strict,
  ),
]);

export const AggregateInstancesResponse = Type.Object(
  {
    items: Type.Array(
      Type.Object({ instanceType: InstanceType, group: Type.Optional(Type.Record(Type.String(), GroupValue)), aggregates: Type.Array(AggregateResult) }, strict),
    ),
    typing: Type.Optional(Typing),
  },
  strict,
);
export type AggregateInstancesResponse = Static<typeof AggregateInstancesResponse>;

export const InstanceInspectResult = Type.Object(
  {
    ...InstanceId.properties,
    inspectionResults: Type.Object(
      { involvedViews: Type.Optional(Type.Array(ViewReference)), involvedContainers: Type.Optional(Type.Array(ContainerReference)) },
      strict,
    ),
  },
  strict,
);
export type InstanceInspectResult = Static<typeof InstanceInspectResult>;
