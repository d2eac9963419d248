/**
 * Identifiers of the data modeling service: their patterns and lengths (as schemas), the reserved words, the
 * reference shapes (`{type: "view", space, externalId, version}`, ...) and the keys that name a schema object
 * or an instance in maps and messages.
 */
import { Type, type Static } from '@sinclair/typebox';
import { badRequest, duplicatedItems, formatPath, type ApiError } from '../../http/errors.js';
import { DM_LIMITS } from './limits.js';

export type Path = ReadonlyArray<string | number>;

export const SPACE_PATTERN = '^[a-zA-Z][a-zA-Z0-9_-]{0,41}[a-zA-Z0-9]?$';
export const DMS_EXTERNAL_ID_PATTERN = '^[a-zA-Z]([a-zA-Z0-9_]{0,253}[a-zA-Z0-9])?$';
export const VERSION_PATTERN = '^[a-zA-Z0-9]([.a-zA-Z0-9_-]{0,41}[a-zA-Z0-9])?$';
/**
 * Container and view property identifiers. The reference gives a stricter pattern (no `-`, no leading digit)
 * where a property is referred to (`containerPropertyIdentifier`, `through.identifier`); every property that
 * can be created must be referable, so this one pattern applies everywhere a property is named.
 */
export const PROPERTY_ID_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_-]{0,253}[a-zA-Z0-9]?$';
export const ENUM_VALUE_PATTERN = '^[_A-Za-z][_0-9A-Za-z]{0,127}$';
/** Instance external ids: 1 to 256 characters, no NUL. */
export const INSTANCE_EXTERNAL_ID_PATTERN = '^[^\\u0000]+$';

/**
 * Space identifiers that cannot be created: the reference's list and the longer list of the service's
 * documentation, together. Spaces starting with `cdf_` hold the global system schema.
 */
export const RESERVED_SPACES: ReadonlySet<string> = new Set([
  'space', 'cdf', 'dms', 'pg3', 'shared', 'system', 'node', 'edge', 'mapping', 'constraint', 'edge_source', 'history',
  'identifier_by_space', 'index', 'node_source', 'project', 'property_group_constraint', 'property_group_index',
  'property_group', 'property', 'version_info',
]);
export const SYSTEM_SPACE_PREFIX = 'cdf_';

/** External ids no container or view may take. */
export const RESERVED_EXTERNAL_IDS: ReadonlySet<string> = new Set([
  'Query', 'Mutation', 'Subscription', 'String', 'Int32', 'Int64', 'Int', 'Float32', 'Float64', 'Float', 'Timestamp',
  'JSONObject', 'Date', 'Numeric', 'Boolean', 'PageInfo', 'File', 'Sequence', 'TimeSeries',
]);

/**
 * Property identifiers no container or view may declare: the reference's list plus the edge end names. The
 * documentation also lists `version`, but the core data model's own `CogniteSourceSystem` container declares a
 * `version` property, and schemas copied from it must stay valid.
 */
export const RESERVED_PROPERTY_IDS: ReadonlySet<string> = new Set([
  'space', 'externalId', 'createdTime', 'lastUpdatedTime', 'deletedTime', 'edge_id', 'node_id', 'project_id',
  'property_group', 'seq', 'tg_table_name', 'extensions', 'startNode', 'endNode',
]);

export const RESERVED_ENUM_VALUES: ReadonlySet<string> = new Set(['true', 'false', 'null']);

// ---------------------------------------------------------------------------------------------------------
// Schemas

export const SpaceId = Type.String({ minLength: 1, maxLength: DM_LIMITS.spaceLength, pattern: SPACE_PATTERN });
export const DmsExternalId = Type.String({ minLength: 1, maxLength: DM_LIMITS.externalIdLength, pattern: DMS_EXTERNAL_ID_PATTERN });
export const DmsVersion = Type.String({ minLength: 1, maxLength: DM_LIMITS.versionLength, pattern: VERSION_PATTERN });
export const PropertyId = Type.String({ minLength: 1, maxLength: DM_LIMITS.propertyIdLength, pattern: PROPERTY_ID_PATTERN });
export const SubObjectId = Type.String({ minLength: 1, maxLength: DM_LIMITS.subObjectIdLength });
export const InstanceExternalId = Type.String({
  minLength: 1,
  maxLength: DM_LIMITS.instanceExternalIdLength,
  pattern: INSTANCE_EXTERNAL_ID_PATTERN,
});
export const Name = Type.String({ maxLength: DM_LIMITS.nameLength });
export const Description = Type.String({ maxLength: DM_LIMITS.descriptionLength });

const strict = { additionalProperties: false } as const;

export const ContainerReference = Type.Object(
  { type: Type.Literal('container'), space: SpaceId, externalId: DmsExternalId },
  strict,
);
export const ViewReference = Type.Object(
  { type: Type.Literal('view'), space: SpaceId, externalId: DmsExternalId, version: DmsVersion },
  strict,
);
export const SourceReference = Type.Union([ViewReference, ContainerReference]);
/** A node named by space and external id: a direct relation value, an edge end, an edge or node type. */
export const DirectRelationReference = Type.Object({ space: SpaceId, externalId: InstanceExternalId }, strict);
export const InstanceType = Type.Union([Type.Literal('node'), Type.Literal('edge')]);
export const InstanceId = Type.Object({ instanceType: InstanceType, space: SpaceId, externalId: InstanceExternalId }, strict);

export type ContainerReference = Static<typeof ContainerReference>;
export type ViewReference = Static<typeof ViewReference>;
export type SourceReference = Static<typeof SourceReference>;
export type DirectRelationReference = Static<typeof DirectRelationReference>;
export type InstanceType = Static<typeof InstanceType>;
export type InstanceId = Static<typeof InstanceId>;

/** A container or view as the service keeps it in memory: the reference without its `type` tag. */
export interface ContainerId {
  space: string;
  externalId: string;
}
export interface ViewId {
  space: string;
  externalId: string;
  version: string;
}

export const containerRef = (id: ContainerId): ContainerReference => ({ type: 'container', space: id.space, externalId: id.externalId });
export const viewRef = (id: ViewId): ViewReference => ({ type: 'view', space: id.space, externalId: id.externalId, version: id.version });

// ---------------------------------------------------------------------------------------------------------
// Keys: one string per object, for maps and for messages

/** `space:externalId`. */
export const containerKey = (id: ContainerId): string => `${id.space}:${id.externalId}`;
/** `space:externalId/version`, as the service names views in messages. */
export const viewKey = (id: ViewId): string => `${id.space}:${id.externalId}/${id.version}`;
export const instanceKey = (id: { instanceType: InstanceType; space: string; externalId: string }): string =>
  `${id.instanceType}:${id.space}:${id.externalId}`;
export const nodeKey = (id: DirectRelationReference): string => `${id.space}:${id.externalId}`;

export const sameContainer = (a: ContainerId, b: ContainerId): boolean => a.space === b.space && a.externalId === b.externalId;
export const sameView = (a: ViewId, b: ViewId): boolean => sameContainer(a, b) && a.version === b.version;

// ---------------------------------------------------------------------------------------------------------
// Rules the schemas cannot state with a good message

export function fail(path: Path, message: string): never {
  throw badRequest(`${formatPath(path)}: ${message}`);
}

/** The 400 for views a request names that do not exist, listing them under `missing`; `where` prefixes the message. */
export function missingViews(ids: readonly ViewId[], where?: Path): ApiError {
  const text = `one or more views do not exist: ${ids.map(viewKey).join(', ')}`;
  return badRequest(where ? `${formatPath(where)}: ${text}` : text[0].toUpperCase() + text.slice(1), { missing: ids.map(viewRef) });
}

/** The 400 for containers a request names that do not exist, listing them under `missing`. */
export function missingContainers(ids: readonly ContainerId[], where?: Path): ApiError {
  const text = `one or more containers do not exist: ${ids.map(containerKey).join(', ')}`;
  return badRequest(where ? `${formatPath(where)}: ${text}` : text[0].toUpperCase() + text.slice(1), { missing: ids.map(containerRef) });
}

export function checkSpaceName(space: string, path: Path): void {
  if (RESERVED_SPACES.has(space)) fail(path, `the space ${JSON.stringify(space)} is reserved`);
  requireUserSpaces([{ space, path, what: `the space ${JSON.stringify(space)}` }]);
}

export const isSystemSpace = (space: string): boolean => space.startsWith(SYSTEM_SPACE_PREFIX);

/**
 * The system space of the unit nodes time series point at: one node per unit of the units catalog, which the
 * service keeps in every project (system-nodes.ts) and users read but do not write.
 */
export const UNITS_SPACE = 'cdf_cdm_units';

/**
 * A 400 naming the first target in a system space: spaces starting with `cdf_` hold the global system schema
 * (the core data model), which every project has and no request changes. `what` names the item in the message.
 */
export function requireUserSpaces(targets: ReadonlyArray<{ space: string; path: Path; what: string }>): void {
  const t = targets.find((x) => isSystemSpace(x.space));
  if (t) fail(t.path, `${t.what} is in the system space ${JSON.stringify(t.space)}; spaces starting with "${SYSTEM_SPACE_PREFIX}" hold the global system schema and cannot be written`);
}

/** Containers and views: the reserved external ids. */
export function checkSchemaExternalId(externalId: string, path: Path): void {
  if (RESERVED_EXTERNAL_IDS.has(externalId)) fail(path, `the external id ${JSON.stringify(externalId)} is reserved`);
}

export function checkPropertyId(id: string, path: Path): void {
  if (RESERVED_PROPERTY_IDS.has(id)) fail(path, `the property identifier ${JSON.stringify(id)} is reserved`);
}

/**
 * A 400 naming every item of the request that repeats an earlier one, in the `duplicated` list; items are
 * identified by `key`, and reported as `ref` gives them.
 */
export function checkNoDuplicates<T>(items: readonly T[], key: (item: T) => string, ref: (item: T) => Record<string, unknown>): void {
  const seen = new Set<string>();
  const duplicated: Array<Record<string, unknown>> = [];
  const reported = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k) && !reported.has(k)) {
      duplicated.push(ref(item));
      reported.add(k);
    }
    seen.add(k);
  }
  if (duplicated.length > 0) throw duplicatedItems(duplicated, 400);
}
