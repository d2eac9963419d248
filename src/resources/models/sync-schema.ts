/**
 * Request shape of `POST /models/instances/sync`: result set expressions over nodes or edges, each with its
 * sync mode, what to select from each, and the cursors of an earlier answer.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ViewReference } from './identifiers.js';
import { DebugParameters, PropertySort } from './instance-schema.js';
import { DM_LIMITS } from './limits.js';

const strict = { additionalProperties: false } as const;

const Traversal = {
  from: Type.Optional(Type.String({ minLength: 1 })),
  chainTo: Type.Optional(Type.Union([Type.Literal('source'), Type.Literal('destination')])),
  direction: Type.Optional(Type.Union([Type.Literal('outwards'), Type.Literal('inwards')])),
  filter: Type.Optional(Type.Unknown()),
};

const SyncOptions = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.syncSetMax })),
  skipAlreadyDeleted: Type.Optional(Type.Boolean()),
  mode: Type.Optional(Type.Union([Type.Literal('onePhase'), Type.Literal('twoPhase'), Type.Literal('noBackfill')])),
  backfillSort: Type.Optional(Type.Array(PropertySort, { maxItems: DM_LIMITS.sortKeys })),
};

export const SyncNodeExpression = Type.Object(
  { ...SyncOptions, nodes: Type.Object({ ...Traversal, through: Type.Optional(Type.Unknown()) }, strict) },
  strict,
);
export const SyncEdgeExpression = Type.Object(
  {
    ...SyncOptions,
    edges: Type.Object(
      {
        ...Traversal,
        maxDistance: Type.Optional(Type.Integer({ minimum: 1 })),
        nodeFilter: Type.Optional(Type.Unknown()),
        terminationFilter: Type.Optional(Type.Unknown()),
      },
      strict,
    ),
  },
  strict,
);
export type SyncExpression = Static<typeof SyncNodeExpression> | Static<typeof SyncEdgeExpression>;

export const SyncSelect = Type.Object(
  {
    sources: Type.Optional(
      Type.Array(Type.Object({ source: ViewReference, properties: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }) }, strict), {
        maxItems: DM_LIMITS.readSources,
      }),
    ),
  },
  strict,
);
export type SyncSelect = Static<typeof SyncSelect>;

const setNames = { minProperties: 1, maxProperties: DM_LIMITS.resultSets, propertyNames: { pattern: '^[a-zA-Z0-9_-]{1,255}$' } } as const;

export const SyncInstancesBody = Type.Object(
  {
    with: Type.Record(Type.String(), Type.Union([SyncNodeExpression, SyncEdgeExpression]), setNames),
    select: Type.Record(Type.String(), SyncSelect, setNames),
    cursors: Type.Optional(Type.Record(Type.String(), Type.String(), { maxProperties: DM_LIMITS.resultSets })),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    includeTyping: Type.Optional(Type.Boolean()),
    allowExpiredCursorsAndAcceptMissedDeletes: Type.Optional(Type.Boolean()),
    debug: Type.Optional(DebugParameters),
  },
  strict,
);
export type SyncInstancesBody = Static<typeof SyncInstancesBody>;
