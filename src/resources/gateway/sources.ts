/**
 * What a gateway table reads: the built-in tables every user has (assets, events, time series, sequences,
 * each in the data sets and items the user's session may read) and tables of data modeling views (the
 * view's instances in the spaces the session may read, one column per property the view maps).
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Model } from '../model.js';
import { assetModel } from '../assets/model.js';
import { eventModel } from '../events/model.js';
import { sequenceModel } from '../sequences/model.js';
import { timeSeriesModel } from '../timeseries/model.js';
import type { ProjectSchema } from '../models/schema-store.js';
import { viewKey, type ViewId } from '../models/identifiers.js';
import { isList, type PropertyType } from '../models/property-types.js';
import { INSTANCES_ACL } from '../models/space-access.js';
import type { ColumnType } from './model.js';
import { ident, type ViewColumn, type ViewSource } from './roles.js';

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

interface BuiltIn {
  name: string;
  acl: string;
  model: Pick<Model<never>, 'table' | 'catalog'>;
}

/** The built-in tables, by name. */
export const BUILT_INS: readonly BuiltIn[] = [
  { name: 'assets', acl: 'assetsAcl', model: assetModel },
  { name: 'events', acl: 'eventsAcl', model: eventModel },
  { name: 'timeseries', acl: 'timeSeriesAcl', model: timeSeriesModel },
  { name: 'sequences', acl: 'sequencesAcl', model: sequenceModel },
];

/** The ACLs whose scopes the gateway's views read. */
export const SCOPED_ACLS = [...BUILT_INS.map((b) => b.acl), INSTANCES_ACL];

/** A built-in table's columns: the id, each field of the resource under its snake_case name, and its times. */
export function builtInSource(b: BuiltIn): ViewSource {
  const t = b.model.table;
  const a = 'x';
  const columns: ViewColumn[] = [{ name: 'id', type: 'BIGINT', expr: `${a}.id` }];
  for (const f of t.fields) {
    if (f.hidden || f.type === 'instanceId') continue;
    const col = `${a}.${ident(f.column)}`;
    if (f.type === 'integer') columns.push({ name: snake(f.name), type: 'BIGINT', expr: col });
    else if (f.type === 'string') columns.push({ name: snake(f.name), type: 'TEXT', expr: col });
    else if (f.type === 'boolean') columns.push({ name: snake(f.name), type: 'BOOL', expr: `(${col} <> 0)` });
    else columns.push({ name: snake(f.name), type: 'JSON', expr: `${col}::json` });
  }
  columns.push({ name: 'created_time', type: 'BIGINT', expr: `${a}.created_time` }, { name: 'last_updated_time', type: 'BIGINT', expr: `${a}.last_updated_time` });
  const dataSet = b.model.catalog.dataSetColumn;
  // Items in a security category are shown to no gateway user: the gateway does not carry categories.
  const categories = t.arrays?.find((x) => x.field === 'securityCategories')?.index;
  return {
    columns,
    from: `${ident(t.table)} ${a}`,
    ...(categories ? { where: `NOT EXISTS (SELECT 1 FROM ${ident(categories.table)} c WHERE c.${ident(categories.itemColumn)} = ${a}.id)` } : {}),
    projectColumn: `${a}.project_id`,
    acl: b.acl,
    scopeMatch: [`s.item_id = ${a}.id`, ...(dataSet ? [`s.data_set_id = ${a}.${ident(dataSet)}`] : [])].join(' OR '),
  };
}

/** PostgreSQL keeps this much of a name (NAMEDATALEN - 1); a longer one would be cut short. */
const MAX_IDENTIFIER_BYTES = 63;

/** The column type and expression of a container property kept in `col` (see models/container-tables.ts). */
function propertyColumn(t: PropertyType, col: string): { type: ColumnType; expr: string } {
  if (t.type !== 'enum' && isList(t)) return { type: 'JSON', expr: `${col}::json` };
  switch (t.type) {
    case 'int32':
    case 'int64':
      return { type: 'BIGINT', expr: col };
    case 'timestamp':
      return { type: 'TIMESTAMPTZ', expr: `to_timestamp(${col} / 1000.0)` };
    case 'float32':
    case 'float64':
      return { type: 'DOUBLE PRECISION', expr: col };
    case 'boolean':
      return { type: 'BOOL', expr: `(${col} <> 0)` };
    case 'json':
      return { type: 'JSON', expr: `${col}::json` };
    case 'direct':
      // Kept as `space` U+0001 `externalId` (models/store-schema.ts).
      return { type: 'JSON', expr: `json_build_object('space', split_part(${col}, chr(1), 1), 'externalId', split_part(${col}, chr(1), 2))` };
    default:
      return { type: 'TEXT', expr: col };
  }
}

/**
 * The table of a data modeling view: its instances (nodes, edges, or both, as the view is used for) that
 * have data in every container it maps, with their space, external id and times and one column per mapped
 * property. A view the schema (as the session sees it) does not have is a 400 naming `path`.
 */
export function viewSource(schema: ProjectSchema, view: ViewId, path: ReadonlyArray<string | number>): ViewSource {
  const resolved = schema.resolver.view(view);
  if (!resolved) throw badRequest(`${formatPath(path)}: the view ${viewKey(view)} does not exist`);
  const i = 'i';
  const columns: ViewColumn[] = [
    { name: 'space', type: 'TEXT', expr: `${i}.space` },
    { name: 'externalId', type: 'TEXT', expr: `${i}.external_id` },
    { name: 'createdTime', type: 'BIGINT', expr: `${i}.created_time` },
    { name: 'lastUpdatedTime', type: 'BIGINT', expr: `${i}.last_updated_time` },
  ];
  const joins: string[] = [];
  const aliases = new Map<string, string>();
  for (const container of resolved.mappedContainers) {
    const stored = schema.stored(container)!;
    const alias = `c${aliases.size}`;
    aliases.set(`${container.space}:${container.externalId}`, alias);
    joins.push(`JOIN ${ident(stored.layout.table)} ${alias} ON ${alias}.project_id = ${i}.project_id AND ${alias}.space = ${i}.space AND ${alias}.instance_id = ${i}.id`);
  }
  // No property is named like those (models/identifiers.ts reserves the names).
  for (const [name, p] of resolved.properties) {
    if (p.kind !== 'mapped') continue;
    if (Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES) {
      throw badRequest(`${formatPath(path)}: the property ${JSON.stringify(name)} of the view ${viewKey(view)} is longer than the ${MAX_IDENTIFIER_BYTES} bytes of a PostgreSQL column name`);
    }
    const stored = schema.stored(p.container)!;
    const alias = aliases.get(`${p.container.space}:${p.container.externalId}`)!;
    const col = `${alias}.${ident(stored.layout.columns[p.containerPropertyIdentifier])}`;
    columns.push({ name, ...propertyColumn(p.definition.type, col) });
  }
  const kinds = resolved.usedFor === 'node' ? '0' : resolved.usedFor === 'edge' ? '1' : '0, 1';
  return {
    columns,
    from: [`dm_instances ${i}`, ...joins].join(' '),
    where: `${i}.deleted_time IS NULL AND ${i}.kind IN (${kinds})`,
    projectColumn: `${i}.project_id`,
    acl: INSTANCES_ACL,
    scopeMatch: `s.space = ${i}.space`,
  };
}
