/**
 * A resource's queryable shape, declared once as data: which properties exist, how they are stored, and
 * what the filter language, sorting and aggregation may do with them. Every shared mechanism in `query/`
 * reads this, so a resource gets filters, sorting, cursors and aggregates by declaring its catalog.
 */
import type { Sql } from '../storage/sql.js';

export type ScalarKind = 'integer' | 'string' | 'boolean';

export interface ScalarProperty {
  kind: ScalarKind;
  /** Column on the resource's main table. */
  column: string;
  nullable: boolean;
  /** Longest string accepted as a filter value for this property (spec: per-property leaf limits). */
  maxValueLength?: number;
  /**
   * This property can be the target of a `search` leaf: the full-text index columns it searches (its own
   * column unless stated). A property with `searchOnly` exists only for search (for example `query`).
   */
  search?: { maxValueLength: number; columns?: readonly string[] };
  searchOnly?: boolean;
  sortable?: boolean;
  /** This property can be aggregated (uniqueValues, cardinalityValues, count with property). */
  aggregatable?: boolean;
  /**
   * The property is not stored but follows from `column` through this table (column value -> property
   * value), as a time series' unit quantity follows from its unit. A leaf on it selects the column values
   * whose property value satisfies it; a column value the table lacks gives no property value.
   */
  derived?: ReadonlyMap<string, string>;
}

export interface ArrayProperty {
  kind: 'integerArray' | 'stringArray';
  /** Side table with one row per (item, value). */
  table: string;
  itemColumn: string;
  valueColumn: string;
  aggregatable?: boolean;
  /** The values are external ids, which a filter may also give as `{"externalId": ...}` (labels). */
  externalIdRefs?: boolean;
}

export type PropertyDef = ScalarProperty | ArrayProperty;

export interface MetadataStore {
  /** Side table with one row per (item, key): `key`, `key_lc`, `value`, `value_lc`. */
  table: string;
  itemColumn: string;
  /** Values longer than this are kept on the item but are not filterable (spec: keys and values up to 256). */
  maxFilterableLength: number;
  /** Longest string accepted as a filter value on a metadata property. */
  maxValueLength: number;
}

export interface ResourceCatalog {
  /** Name used in messages, e.g. "event". */
  noun: string;
  /** Its plural, when not the noun and an "s" ("time series"). */
  nouns?: string;
  table: string;
  alias: string;
  /** Properties by name; a two-element path such as `["instanceId", "space"]` is named `instanceId.space`. */
  properties: Readonly<Record<string, PropertyDef>>;
  /** Longest element of a property path (spec: 128 for events). */
  maxPropertyElementLength?: number;
  metadata?: MetadataStore;
  /** FTS5 table indexing the `search`-able properties (by column name), with rowid = item id. */
  fts?: { table: string; columns?: readonly string[] };
  /**
   * The column holding an item's data set (`id` for data sets themselves). Data-set scoped access reaches
   * only items with a value here; a resource without one is reachable by scoped principals only by item id.
   */
  dataSetColumn?: string;
  /**
   * Items that live under an item of another resource (ModelSpec.parent) are in a scope when their parent
   * is: `column` holds the parent's row id, `catalog` is the parent's.
   */
  parentScope?: { column: string; catalog: ResourceCatalog };
  /** Columns with an index on (project_id, column): whether any item lacks the key is then one index probe. */
  indexedColumns?: ReadonlySet<string>;
  /** The ACL whose grants reach this resource's items (`eventsAcl`); see auth/access.ts. */
  acl: string;
  /**
   * For items that can be put in security categories: the condition that the row under `alias` is in none
   * but `memberOf`, the categories the principal is a member of (auth/access.ts hides the others' items).
   */
  categoryCondition?(alias: string, memberOf: readonly number[]): Sql;
  /**
   * Properties whose value depends on which items of this resource the request can see (an asset's parent
   * and root, when some of its ancestors are hidden from it). For a principal that does not see every item:
   * each one's expression over the row under the catalog's alias in `projectId`, given `visible(alias)`, the
   * condition that a row of this table under `alias` is visible. Filters and aggregates read these instead
   * of the column.
   */
  visibleValues?(visible: (alias: string) => Sql, projectId: number): Readonly<Record<string, Sql>>;
}

export const MAX_PROPERTY_ELEMENT_LENGTH = 128;

export function maxPropertyElementLength(catalog: ResourceCatalog): number {
  return catalog.maxPropertyElementLength ?? MAX_PROPERTY_ELEMENT_LENGTH;
}

/** The declared property a path names, if any (metadata paths are not declared properties). */
export function findProperty(catalog: ResourceCatalog, path: readonly string[]): PropertyDef | undefined {
  if (path.length < 1 || path.length > 2) return undefined;
  const name = path.join('.');
  return Object.hasOwn(catalog.properties, name) ? catalog.properties[name] : undefined;
}

export function propertyPath(name: string): string[] {
  return name.split('.');
}

export function isScalar(def: PropertyDef): def is ScalarProperty {
  return def.kind !== 'integerArray' && def.kind !== 'stringArray';
}

/** Where a property path points: a declared property, one metadata key, or all metadata values. */
export type Target =
  | { type: 'property'; name: string; def: PropertyDef }
  | { type: 'metadataKey'; key: string; store: MetadataStore }
  | { type: 'metadataAny'; store: MetadataStore };

export function col(catalog: ResourceCatalog, column: string): string {
  return `${catalog.alias}.${column}`;
}

/** The plural of a catalog's noun, for messages. */
export function pluralNoun(catalog: ResourceCatalog): string {
  return catalog.nouns ?? `${catalog.noun}s`;
}
