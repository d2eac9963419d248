/**
 * Request shape of `POST /models/instances/sync`: result set expressions over nodes or edges, each with its
 * sync mode, what to select from each, and the cursors of an earlier answer.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DebugParameters, PropertySort } from './instance-schema.js';
import { DM_LIMITS } from './limits.js';
import { EdgeExpression, NodeExpression, SelectedSource } from './query-schema.js';

const strict = { additionalProperties: false } as const;

const SyncOptions = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.syncSetMax })),
  skipAlreadyDeleted: Type.Optional(Type.Boolean()),
  mode: Type.Optional(Type.Union([Type.Literal('onePhase'), Type.Literal('twoPhase'), Type.Literal('noBackfill')])),
  backfillSort: Type.Optional(Type.Array(PropertySort, { maxItems: DM_LIMITS.sortKeys })),
};

export const SyncNodeExpression = Type.Object({ ...SyncOptions, nodes: NodeExpression }, strict);
export const SyncEdgeExpression = Type.Object({ ...SyncOptions, edges: EdgeExpression }, strict);
export type SyncExpression = Static<typeof SyncNodeExpression> | Static<typeof SyncEdgeExpression>;

export const SyncSelect = Type.Object({ sources: Type.Optional(Type.Array(SelectedSource, { maxItems: DM_LIMITS.readSources })) }, strict);
export type SyncSelect = Static<typeof SyncSelect>;

const setNames = { minProperties: 1, maxProperties: DM_LIMITS.queryResultSets, propertyNames: { pattern: '^[a-zA-Z0-9_-]{1,255}$' } } as const;

export const SyncInstancesBody = Type.Object(
  {
    with: Type.Record(Type.String(), Type.Union([SyncNodeExpression, SyncEdgeExpression]), setNames),
    select: Type.Record(Type.String(), SyncSelect, setNames),
    /** A null cursor (the Python client sends one for every set it has none for) starts that set afresh. */
    cursors: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), { maxProperties: DM_LIMITS.queryResultSets })),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    includeTyping: Type.Optional(Type.Boolean()),
    allowExpiredCursorsAndAcceptMissedDeletes: Type.Optional(Type.Boolean()),
    debug: Type.Optional(DebugParameters),
  },
  strict,
);
export type SyncInstancesBody = Static<typeof SyncInstancesBody>;
