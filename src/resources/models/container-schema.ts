/**
 * Request and response shapes of the container operations: apply, list, by ids, delete, index and
 * constraint delete, the three retry operations, and inspect.
 */
import { Type, type Static } from '@sinclair/typebox';
import {
  ContainerReference,
  Description,
  DmsExternalId,
  Name,
  PropertyId,
  SpaceId,
  SubObjectId,
  ViewReference,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { LIST_QUERY_FIELDS } from './list-params.js';
import { PropertyTypeCreate } from './property-types.js';

const strict = { additionalProperties: false } as const;

export const UsedFor = Type.Union([Type.Literal('node'), Type.Literal('edge'), Type.Literal('all'), Type.Literal('record')]);

export const State = Type.Union([Type.Literal('current'), Type.Literal('pending'), Type.Literal('failed')]);
export type State = Static<typeof State>;

const PropertyConstraintState = Type.Object(
  { nullability: Type.Optional(State), maxListSize: Type.Optional(State), maxTextSize: Type.Optional(State) },
  strict,
);
export type PropertyConstraintState = Static<typeof PropertyConstraintState>;

/**
 * The read-only fields of a container as read (`constraintState` of a property, `state` of a constraint or an
 * index), which a client that writes back a container it read sends along; the service sets them, so what is
 * sent is ignored.
 */
const readOnlyState = { state: Type.Optional(State) };

export const ContainerPropertyCreate = Type.Object(
  {
    type: PropertyTypeCreate,
    nullable: Type.Optional(Type.Boolean()),
    immutable: Type.Optional(Type.Boolean()),
    autoIncrement: Type.Optional(Type.Boolean()),
    defaultValue: Type.Optional(Type.Unknown()),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    constraintState: Type.Optional(PropertyConstraintState),
  },
  strict,
);
export type ContainerPropertyCreate = Static<typeof ContainerPropertyCreate>;

/** `requires` or `uniqueness`; the kind follows `constraintType`, or the fields when it is left out. */
export const ConstraintCreate = Type.Object(
  {
    constraintType: Type.Optional(Type.Union([Type.Literal('requires'), Type.Literal('uniqueness')])),
    require: Type.Optional(ContainerReference),
    properties: Type.Optional(Type.Array(PropertyId)),
    bySpace: Type.Optional(Type.Boolean()),
    ...readOnlyState,
  },
  strict,
);
export type ConstraintCreate = Static<typeof ConstraintCreate>;

export const IndexCreate = Type.Object(
  {
    indexType: Type.Optional(Type.Union([Type.Literal('btree'), Type.Literal('inverted')])),
    properties: Type.Array(PropertyId),
    cursorable: Type.Optional(Type.Boolean()),
    bySpace: Type.Optional(Type.Boolean()),
    ...readOnlyState,
  },
  strict,
);
export type IndexCreate = Static<typeof IndexCreate>;

export const ContainerCreate = Type.Object(
  {
    space: SpaceId,
    externalId: DmsExternalId,
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    usedFor: Type.Optional(UsedFor),
    properties: Type.Record(Type.String(), ContainerPropertyCreate, { minProperties: 1, propertyNames: PropertyId }),
    constraints: Type.Optional(Type.Record(Type.String(), ConstraintCreate, { propertyNames: SubObjectId })),
    indexes: Type.Optional(Type.Record(Type.String(), IndexCreate, { propertyNames: SubObjectId })),
  },
  strict,
);
export type ContainerCreate = Static<typeof ContainerCreate>;

export const ApplyContainersBody = Type.Object(
  { items: Type.Array(ContainerCreate, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) },
  strict,
);
export type ApplyContainersBody = Static<typeof ApplyContainersBody>;

export const ContainerIdItem = Type.Object({ space: SpaceId, externalId: DmsExternalId }, strict);
/** By ids and delete. */
export const ContainerIdsBody = Type.Object(
  { items: Type.Array(ContainerIdItem, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) },
  strict,
);
export type ContainerIdsBody = Static<typeof ContainerIdsBody>;

/** An index, a constraint or a property of a container. */
export const ContainerSubObjectId = Type.Object(
  { space: SpaceId, containerExternalId: DmsExternalId, identifier: Type.String({ minLength: 1, maxLength: DM_LIMITS.propertyIdLength }) },
  strict,
);
/** Index or constraint delete, and the index, constraint and property retries. */
export const ContainerSubObjectsBody = Type.Object(
  { items: Type.Array(ContainerSubObjectId, { minItems: 1, maxItems: DM_LIMITS.containerSubItems }) },
  strict,
);
export type ContainerSubObjectsBody = Static<typeof ContainerSubObjectsBody>;

export const InspectContainersBody = Type.Object(
  {
    inspectionOperations: Type.Object(
      {
        involvedViews: Type.Optional(Type.Object({ allVersions: Type.Optional(Type.Boolean()) }, strict)),
        totalInvolvedViewCount: Type.Optional(
          Type.Object({ allVersions: Type.Optional(Type.Boolean()), includeUnavailableViews: Type.Optional(Type.Boolean()) }, strict),
        ),
      },
      strict,
    ),
    items: Type.Array(ContainerIdItem, { minItems: 1, maxItems: DM_LIMITS.containerSubItems }),
  },
  strict,
);
export type InspectContainersBody = Static<typeof InspectContainersBody>;

/** `usedFor` arrives as repeated parameters or one `[node,edge]`; `parseUsedFor` reads both. */
export const ListContainersQuery = Type.Object(
  { ...LIST_QUERY_FIELDS, space: Type.Optional(SpaceId), usedFor: Type.Optional(Type.Array(Type.String())) },
  strict,
);
export type ListContainersQuery = Static<typeof ListContainersQuery>;

// ---------------------------------------------------------------------------------------------------------
// Responses

/** The type object as read: every create field, plus `source` when read through a view. */
export const PropertyTypeRead = Type.Object(
  { ...PropertyTypeCreate.properties, list: Type.Optional(Type.Boolean()), source: Type.Optional(ViewReference) },
  strict,
);

export const ContainerPropertyRead = Type.Object(
  {
    type: PropertyTypeRead,
    nullable: Type.Boolean(),
    immutable: Type.Boolean(),
    autoIncrement: Type.Boolean(),
    defaultValue: Type.Optional(Type.Unknown()),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    constraintState: PropertyConstraintState,
  },
  strict,
);

export const ContainerRead = Type.Object(
  {
    space: SpaceId,
    externalId: DmsExternalId,
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    usedFor: UsedFor,
    properties: Type.Record(Type.String(), ContainerPropertyRead),
    constraints: Type.Record(
      Type.String(),
      Type.Object({ ...ConstraintCreate.properties, constraintType: ConstraintCreate.properties.constraintType, state: State }, strict),
    ),
    indexes: Type.Record(Type.String(), Type.Object({ ...IndexCreate.properties, state: State }, strict)),
    createdTime: Type.Integer(),
    lastUpdatedTime: Type.Integer(),
    isGlobal: Type.Boolean(),
  },
  strict,
);
export type ContainerRead = Static<typeof ContainerRead>;

export const ContainerInspectResult = Type.Object(
  {
    space: SpaceId,
    externalId: DmsExternalId,
    inspectionResults: Type.Object(
      { involvedViewCount: Type.Optional(Type.Integer()), involvedViews: Type.Optional(Type.Array(ViewReference)) },
      strict,
    ),
  },
  strict,
);
export type ContainerInspectResult = Static<typeof ContainerInspectResult>;
