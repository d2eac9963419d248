/**
 * Request shape of `/models/instances/query`: named result set expressions (`with`), what to return of each
 * (`select`), a cursor per set, filter parameters. Filters are checked by filter.ts against the schema;
 * which of `nodes`, `edges` or a set operation an expression is, and how sets refer to each other, by
 * result-sets.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PropertyId, SourceReference, ViewReference } from './identifiers.js';
import { DebugParameters, PropertySort, TargetUnits } from './instance-schema.js';
import { DM_LIMITS } from './limits.js';

const strict = { additionalProperties: false } as const;
const SetName = Type.String({ minLength: 1, maxLength: 255 });
const sets = { maxProperties: DM_LIMITS.queryResultSets, propertyNames: SetName } as const;

const Sorts = Type.Array(PropertySort, { maxItems: DM_LIMITS.sortKeys });
const Limit = Type.Integer({ minimum: 1, maximum: DM_LIMITS.querySetLimitMax });
const Direction = Type.Union([Type.Literal('outwards'), Type.Literal('inwards')]);
const ChainTo = Type.Union([Type.Literal('source'), Type.Literal('destination')]);

/** A direct relation property to traverse: `{source, identifier}`, or the older `{view, identifier}`. */
export const Through = Type.Object(
  { source: Type.Optional(SourceReference), view: Type.Optional(ViewReference), identifier: PropertyId },
  strict,
);
export type Through = Static<typeof Through>;

export const NodeExpression = Type.Object(
  {
    from: Type.Optional(SetName),
    filter: Type.Optional(Type.Unknown()),
    through: Type.Optional(Through),
    direction: Type.Optional(Direction),
    chainTo: Type.Optional(ChainTo),
  },
  strict,
);
export type NodeExpression = Static<typeof NodeExpression>;

export const EdgeExpression = Type.Object(
  {
    from: Type.Optional(SetName),
    filter: Type.Optional(Type.Unknown()),
    nodeFilter: Type.Optional(Type.Unknown()),
    terminationFilter: Type.Optional(Type.Unknown()),
    maxDistance: Type.Optional(Type.Integer({ minimum: 1 })),
    direction: Type.Optional(Direction),
    limitEach: Type.Optional(Type.Integer({ minimum: 1, maximum: DM_LIMITS.queryLimitEach })),
    chainTo: Type.Optional(ChainTo),
  },
  strict,
);
export type EdgeExpression = Static<typeof EdgeExpression>;

/**
 * One result set expression: exactly one of `nodes`, `edges`, `union`, `unionAll`, `intersection` (checked
 * by result-sets.ts). A set operation's members are set names or nested set operations, of this same shape.
 */
export const ResultSetExpression = Type.Recursive(
  (Self) => {
    const members = Type.Optional(Type.Array(Type.Union([SetName, Self]), { minItems: 1 }));
    return Type.Object(
      {
        nodes: Type.Optional(NodeExpression),
        edges: Type.Optional(EdgeExpression),
        union: members,
        unionAll: members,
        intersection: members,
        except: Type.Optional(Type.Array(SetName)),
        sort: Type.Optional(Sorts),
        postSort: Type.Optional(Sorts),
        limit: Type.Optional(Limit),
      },
      strict,
    );
  },
  { $id: 'QueryResultSetExpression' },
);
export type ResultSetExpression = Static<typeof ResultSetExpression>;
/** A set operation, nested or not. */
export type SetOperation = ResultSetExpression;

/** `properties`: names of the view's properties, or `"*"` for all of them. */
export const SelectedSource = Type.Object(
  { source: ViewReference, properties: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), targetUnits: Type.Optional(TargetUnits) },
  strict,
);
export type SelectedSource = Static<typeof SelectedSource>;

export const SetSelection = Type.Object(
  {
    sources: Type.Optional(Type.Array(SelectedSource, { maxItems: DM_LIMITS.readSources })),
    sort: Type.Optional(Sorts),
    limit: Type.Optional(Limit),
  },
  strict,
);
export type SetSelection = Static<typeof SetSelection>;

export const QueryInstancesBody = Type.Object(
  {
    with: Type.Record(SetName, ResultSetExpression, { minProperties: 1, ...sets }),
    select: Type.Record(SetName, SetSelection, { minProperties: 1, ...sets }),
    cursors: Type.Optional(Type.Record(SetName, Type.Union([Type.String(), Type.Null()]), sets)),
    parameters: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.Unknown())),
    includeTyping: Type.Optional(Type.Boolean()),
    debug: Type.Optional(DebugParameters),
  },
  strict,
);
export type QueryInstancesBody = Static<typeof QueryInstancesBody>;
