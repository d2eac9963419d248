/**
 * A resource's queryable shape, declared once as data: which properties exist, how they are stored, and
 * what the filter language, sorting and aggregation may do with them. Every shared mechanism in `query/`
 * reads this, so a resource gets filters, sorting, cursors and aggregates by declaring its catalog.
 */

export type ScalarKind = 'integer' | 'string';

export interface ScalarProperty {
  kind: ScalarKind;
  /** Column on the resource's main table. */
  column: string;
  nullable: boolean;
  /** Longest string accepted as a filter value for this property (spec: per-property leaf limits). */
  maxValueLength?: number;
  /** This property can be the target of a `search` leaf (full-text index). */
  search?: { maxValueLength: number };
  sortable?: boolean;
  /** This property can be aggregated (uniqueValues, cardinalityValues, count with property). */
  aggregatable?: boolean;
}

export interface ArrayProperty {
  kind: 'integerArray';
  /** Side table with one row per (item, value). */
  table: string;
  itemColumn: string;
  valueColumn: string;
  aggregatable?: boolean;
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
  table: string;
  alias: string;
  properties: Readonly<Record<string, PropertyDef>>;
  metadata?: MetadataStore;
  /** FTS5 table indexing the `search`-able properties (by column name), with rowid = item id. */
  fts?: { table: string; columns?: readonly string[] };
}

export const MAX_PROPERTY_ELEMENT_LENGTH = 128;

export function isScalar(def: PropertyDef): def is ScalarProperty {
  return def.kind !== 'integerArray';
}

/** Where a property path points: a declared property, one metadata key, or all metadata values. */
export type Target =
  | { type: 'property'; name: string; def: PropertyDef }
  | { type: 'metadataKey'; key: string; store: MetadataStore }
  | { type: 'metadataAny'; store: MetadataStore };

export function col(catalog: ResourceCatalog, column: string): string {
  return `${catalog.alias}.${column}`;
}
