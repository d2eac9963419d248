/**
 * Request and response shapes of the view operations: apply, list, by ids, delete.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ContainerPropertyRead } from './container-schema.js';
import {
  ContainerReference,
  Description,
  DirectRelationReference,
  DmsExternalId,
  DmsVersion,
  Name,
  PropertyId,
  SourceReference,
  SpaceId,
  ViewReference,
} from './identifiers.js';
import { DM_LIMITS } from './limits.js';
import { LIST_QUERY_FIELDS } from './list-params.js';

const strict = { additionalProperties: false } as const;

export const EDGE_CONNECTIONS = ['single_edge_connection', 'multi_edge_connection'] as const;
export const REVERSE_CONNECTIONS = ['single_reverse_direct_relation', 'multi_reverse_direct_relation'] as const;

/**
 * A view property: a mapped container property (`container`, `containerPropertyIdentifier`), an edge
 * connection (`type`, `source`, `direction`, ...) or a reverse direct relation (`through`, ...). One object
 * with every field, sorted into its kind by `normalizeView`, so a wrong field gets a message naming it.
 */
export const ViewPropertyCreate = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    container: Type.Optional(ContainerReference),
    containerPropertyIdentifier: Type.Optional(PropertyId),
    source: Type.Optional(ViewReference),
    connectionType: Type.Optional(Type.Union([...EDGE_CONNECTIONS, ...REVERSE_CONNECTIONS].map((c) => Type.Literal(c)))),
    type: Type.Optional(DirectRelationReference),
    edgeSource: Type.Optional(ViewReference),
    direction: Type.Optional(Type.Union([Type.Literal('outwards'), Type.Literal('inwards')])),
    through: Type.Optional(Type.Object({ source: SourceReference, identifier: PropertyId }, strict)),
  },
  strict,
);
export type ViewPropertyCreate = Static<typeof ViewPropertyCreate>;

/** The identity, name and description of a view or a data model. */
export const VERSIONED_FIELDS = {
  space: SpaceId,
  externalId: DmsExternalId,
  version: DmsVersion,
  name: Type.Optional(Name),
  description: Type.Optional(Description),
};

export const ViewCreate = Type.Object(
  {
    ...VERSIONED_FIELDS,
    /** The filter language; parsed against the schema when the view is resolved (filter.ts). */
    filter: Type.Optional(Type.Unknown()),
    implements: Type.Optional(Type.Array(ViewReference)),
    properties: Type.Optional(Type.Record(Type.String(), ViewPropertyCreate, { propertyNames: PropertyId })),
  },
  strict,
);
export type ViewCreate = Static<typeof ViewCreate>;

export const ApplyViewsBody = Type.Object({ items: Type.Array(ViewCreate, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) }, strict);
export type ApplyViewsBody = Static<typeof ApplyViewsBody>;

const VersionedId = Type.Object({ space: SpaceId, externalId: DmsExternalId, version: DmsVersion }, strict);
/** A view or data model by id; without `version`, every version. */
export const MaybeVersionedId = Type.Object({ space: SpaceId, externalId: DmsExternalId, version: Type.Optional(DmsVersion) }, strict);

/** By ids. The JavaScript SDK sends `includeInheritedProperties` in the body; the reference has it in the query. */
export const ViewIdsBody = Type.Object(
  {
    items: Type.Array(MaybeVersionedId, { minItems: 1, maxItems: DM_LIMITS.schemaItems }),
    includeInheritedProperties: Type.Optional(Type.Boolean()),
  },
  strict,
);
export type ViewIdsBody = Static<typeof ViewIdsBody>;

export const ViewByIdsQuery = Type.Object({ includeInheritedProperties: Type.Optional(Type.Boolean()) }, strict);
export type ViewByIdsQuery = Static<typeof ViewByIdsQuery>;

/** Delete of views and of data models: every item names one version. */
export const VersionedIdsBody = Type.Object({ items: Type.Array(VersionedId, { minItems: 1, maxItems: DM_LIMITS.schemaItems }) }, strict);
export type VersionedIdsBody = Static<typeof VersionedIdsBody>;

/** The Python SDK also sends `usedFor` (read with `parseUsedFor`). */
export const ListViewsQuery = Type.Object(
  {
    ...LIST_QUERY_FIELDS,
    space: Type.Optional(SpaceId),
    includeInheritedProperties: Type.Optional(Type.Boolean()),
    allVersions: Type.Optional(Type.Boolean()),
    usedFor: Type.Optional(Type.Array(Type.String())),
  },
  strict,
);
export type ListViewsQuery = Static<typeof ListViewsQuery>;

// ---------------------------------------------------------------------------------------------------------
// Responses

export const MappedPropertyRead = Type.Object(
  {
    ...ContainerPropertyRead.properties,
    container: ContainerReference,
    containerPropertyIdentifier: PropertyId,
  },
  strict,
);

export const EdgeConnectionRead = Type.Object(
  {
    connectionType: Type.Union(EDGE_CONNECTIONS.map((c) => Type.Literal(c))),
    type: DirectRelationReference,
    source: ViewReference,
    edgeSource: Type.Optional(ViewReference),
    direction: Type.Union([Type.Literal('outwards'), Type.Literal('inwards')]),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
  },
  strict,
);

export const ReverseRelationRead = Type.Object(
  {
    connectionType: Type.Union(REVERSE_CONNECTIONS.map((c) => Type.Literal(c))),
    source: ViewReference,
    through: Type.Object({ source: SourceReference, identifier: PropertyId }, strict),
    targetsList: Type.Boolean(),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
  },
  strict,
);

export const ViewRead = Type.Object(
  {
    ...VERSIONED_FIELDS,
    filter: Type.Optional(Type.Unknown()),
    implements: Type.Array(ViewReference),
    properties: Type.Record(Type.String(), Type.Union([MappedPropertyRead, EdgeConnectionRead, ReverseRelationRead])),
    createdTime: Type.Integer(),
    lastUpdatedTime: Type.Integer(),
    writable: Type.Boolean(),
    queryable: Type.Boolean(),
    usedFor: Type.Union([Type.Literal('node'), Type.Literal('edge'), Type.Literal('all')]),
    isGlobal: Type.Boolean(),
    mappedContainers: Type.Array(ContainerReference),
  },
  strict,
);
export type ViewRead = Static<typeof ViewRead>;
