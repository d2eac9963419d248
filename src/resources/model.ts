/**
 * A resource of items declared once: each field with its API schema, how it is stored, and what filters,
 * sorting and aggregation may do with it. Everything else derives from the declaration:
 * - the request schemas of its fields (`createFields`, `patchFields`) for the resource's schema.ts,
 * - the query catalog (`catalog`) that filters, sorting, cursors and aggregates read,
 * - the row mapping (`table`) that the shared write and read paths use,
 * - the tables (`tables`: the item table, its metadata and array side tables, full-text search), which
 *   the storage layer creates on either engine.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { metadataPatchSchema, metadataSchema, nullablePatch, requiredPatch, type MetadataLimits } from '../http/common-schemas.js';
import type { ArrayProperty, MetadataStore, PropertyDef, ResourceCatalog, ScalarKind } from '../query/catalog.js';
import { FILTERABLE_METADATA_LENGTH, type FieldDef, type FieldType, type ItemTable } from '../storage/items.js';
import type { ColumnDef, IndexDef, TableDef } from '../storage/schema.js';

/** How an update request may change a field (see crud.ts). */
export type PatchKind = 'nullable' | 'required' | 'metadata' | { array: number };

interface Queryable {
  /** Filterable by the advanced filter; the longest string value a leaf may give (spec: per-property limits). */
  filter?: { maxValueLength?: number } | true;
  /** The target of a `search` leaf, with the longest search text. */
  search?: { maxValueLength: number };
  sortable?: boolean;
  aggregatable?: boolean;
  /** An index on (project, column), with its name (default `<table>_<column>`). */
  index?: true | string;
}

interface FieldBase extends Queryable {
  /** Column name; the field name in snake_case unless given. */
  column?: string;
  /** The request schema of the field's value. */
  schema: TSchema;
  /** Set on every item (a create must give it or the service defaults it). */
  required?: boolean;
  /** How an update may change it; `false`: it cannot be updated. Default `nullable` (`required` when required). */
  patch?: PatchKind | false;
}

export type FieldSpec =
  | (FieldBase & { kind: 'string' | 'integer' | 'boolean' | 'json' })
  | (FieldBase & { kind: 'instanceId' })
  | (FieldBase & { kind: 'metadata'; limits: MetadataLimits; maxFilterValueLength: number; sideTable: string; itemColumn: string })
  | (FieldBase & { kind: 'idList' | 'textList'; sideTable: string; itemColumn: string; valueColumn: string; maxItems: number; catalogName?: string });

/** Field constructors: the API schema first, then how the field is stored and queried. */
export const field = {
  string: (schema: TSchema, o: Omit<FieldBase, 'schema'> = {}): FieldSpec => ({ kind: 'string', schema, ...o }),
  integer: (schema: TSchema, o: Omit<FieldBase, 'schema'> = {}): FieldSpec => ({ kind: 'integer', schema, ...o }),
  boolean: (o: Omit<FieldBase, 'schema'> & { schema?: TSchema } = {}): FieldSpec => ({ kind: 'boolean', schema: Type.Boolean(), ...o }),
  json: (schema: TSchema, o: Omit<FieldBase, 'schema'> = {}): FieldSpec => ({ kind: 'json', schema, ...o }),
  instanceId: (schema: TSchema, o: Omit<FieldBase, 'schema'> = {}): FieldSpec => ({ kind: 'instanceId', schema, patch: false, ...o }),
  metadata: (limits: MetadataLimits, o: { sideTable: string; itemColumn: string; maxFilterValueLength: number }): FieldSpec => ({
    kind: 'metadata',
    schema: metadataSchema(limits),
    limits,
    patch: 'metadata',
    ...o,
  }),
  /** A list of ids kept one value per row in a side table, so filters on it use an index. */
  idList: (schema: TSchema, o: Omit<FieldBase, 'schema'> & { sideTable: string; itemColumn: string; valueColumn: string; maxItems: number; catalogName?: string }): FieldSpec => ({
    kind: 'idList',
    schema,
    patch: { array: o.maxItems },
    ...o,
  }),
  /** A list of strings kept one value per row in a side table (labels). */
  textList: (schema: TSchema, o: Omit<FieldBase, 'schema'> & { sideTable: string; itemColumn: string; valueColumn: string; maxItems: number }): FieldSpec => ({
    kind: 'textList',
    schema,
    patch: { array: o.maxItems },
    ...o,
  }),
};

export interface ModelSpec {
  /** Name in messages, e.g. "event"; `nouns` when its plural is not the noun and an "s". */
  noun: string;
  nouns?: string;
  /** The ACL that guards the resource's items (its scopes decide what a principal sees). */
  acl: string;
  table: string;
  alias: string;
  /** API fields stored on the row, in response order (id, createdTime, lastUpdatedTime are implicit). */
  fields: Readonly<Record<string, FieldSpec>>;
  /** The field holding an item's data set, for data-set scopes (`id` for data sets themselves). */
  dataSetField?: string;
  /** Columns that are not API fields (kept by the resource's own rules, e.g. an asset's path). */
  extraColumns?: Readonly<Record<string, ColumnDef>>;
  /** Indexes over several columns, or over columns that are not fields. */
  indexes?: readonly IndexDef[];
  /** Full-text search: the FTS table's name (SQLite) and the columns it indexes. */
  search?: { table: string; columns: readonly string[] };
  /** Longest element of a filter's property path. */
  maxPropertyElementLength?: number;
  /** Properties the filter language knows that are not stored fields (searchOnly). */
  extraProperties?: Readonly<Record<string, PropertyDef>>;
  /** The row keeps its rendered JSON (see ItemTable.storesJson). */
  storesJson?: boolean;
}

export interface Model {
  readonly spec: ModelSpec;
  readonly catalog: ResourceCatalog;
  readonly table: ItemTable;
  readonly tables: readonly TableDef[];
  /** The request schema of each field, for the create item (all optional; required ones are checked by the service). */
  readonly createFields: Readonly<Record<string, TSchema>>;
  /** The update schema of each field an update may change. */
  readonly patchFields: Readonly<Record<string, TSchema>>;
  /** How an update changes each field. */
  readonly patches: Readonly<Record<string, PatchKind>>;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function storageType(kind: FieldSpec['kind']): FieldType {
  if (kind === 'metadata' || kind === 'idList' || kind === 'textList') return 'json';
  return kind;
}

function scalarKind(kind: FieldSpec['kind']): ScalarKind | undefined {
  if (kind === 'string' || kind === 'integer' || kind === 'boolean') return kind;
  return undefined;
}

function patchSchema(f: FieldSpec, kind: PatchKind): TSchema {
  if (kind === 'metadata') return metadataPatchSchema((f as { limits: MetadataLimits }).limits);
  if (typeof kind === 'object') {
    // A list is set whole, or values are added and removed, each a list of the field's own shape.
    return Type.Optional(Type.Object({ set: Type.Optional(f.schema), add: Type.Optional(f.schema), remove: Type.Optional(f.schema) }, { additionalProperties: false }));
  }
  return kind === 'required' ? requiredPatch(f.schema) : nullablePatch(f.schema);
}

const STANDARD: Record<string, PropertyDef> = {
  id: { kind: 'integer', column: 'id', nullable: false },
  createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
  lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
};

export function defineModel(spec: ModelSpec): Model {
  const t = spec.table;
  const properties: Record<string, PropertyDef> = { id: STANDARD.id };
  const fields: FieldDef[] = [];
  const columns: Record<string, ColumnDef> = { id: { type: 'id' }, project_id: { type: 'integer', notNull: true, references: 'projects' } };
  const indexes: IndexDef[] = [];
  const side: TableDef[] = [];
  const createFields: Record<string, TSchema> = {};
  const patchFields: Record<string, TSchema> = {};
  const patches: Record<string, PatchKind> = {};
  let metadata: MetadataStore | undefined;
  let metadataField: string | undefined;
  const arrays: Array<{ field: string; index: ArrayProperty }> = [];

  for (const [name, f] of Object.entries(spec.fields)) {
    const column = f.column ?? snake(name);
    fields.push({ name, column, type: storageType(f.kind) });
    createFields[name] = f.schema;
    const patch = f.patch ?? (f.required ? 'required' : 'nullable');
    if (patch !== false) {
      patches[name] = patch;
      patchFields[name] = patchSchema(f, patch);
    }
    if (f.kind === 'instanceId') {
      columns.instance_space = { type: 'text' };
      columns.instance_external_id = { type: 'text' };
      continue;
    }
    columns[column] = { type: f.kind === 'integer' ? 'integer' : f.kind === 'boolean' ? 'integer' : 'text', notNull: f.required && f.kind !== 'json' ? true : undefined };
    if (f.index) indexes.push({ name: typeof f.index === 'string' ? f.index : `${t}_${column}`, columns: ['project_id', column] });
    const scalar = scalarKind(f.kind);
    if (scalar && (f.filter || f.search || f.sortable || f.aggregatable)) {
      properties[name] = {
        kind: scalar,
        column,
        nullable: !f.required,
        ...(typeof f.filter === 'object' && f.filter.maxValueLength !== undefined ? { maxValueLength: f.filter.maxValueLength } : {}),
        ...(f.search ? { search: f.search } : {}),
        ...(f.sortable ? { sortable: true } : {}),
        ...(f.aggregatable ? { aggregatable: true } : {}),
      };
    }
    if (f.kind === 'metadata') {
      metadata = { table: f.sideTable, itemColumn: f.itemColumn, maxFilterableLength: FILTERABLE_METADATA_LENGTH, maxValueLength: f.maxFilterValueLength };
      metadataField = name;
      side.push(metadataTable(metadata));
    }
    if (f.kind === 'idList' || f.kind === 'textList') {
      const index: ArrayProperty = { kind: 'integerArray', table: f.sideTable, itemColumn: f.itemColumn, valueColumn: f.valueColumn, ...(f.aggregatable ? { aggregatable: true } : {}) };
      arrays.push({ field: name, index });
      // Only id lists are properties of the filter language; text lists are reached by the basic filter.
      if (f.kind === 'idList') properties[f.catalogName ?? name] = index;
      side.push(arrayTable(index, f.kind === 'idList' ? 'integer' : 'text'));
    }
  }
  Object.assign(columns, spec.extraColumns ?? {});
  columns.created_time = { type: 'integer', notNull: true };
  columns.last_updated_time = { type: 'integer', notNull: true };
  if (spec.storesJson) columns.item_json = { type: 'text' };
  properties.createdTime = STANDARD.createdTime;
  properties.lastUpdatedTime = STANDARD.lastUpdatedTime;
  Object.assign(properties, spec.extraProperties ?? {});
  if (spec.fields.instanceId) {
    properties['instanceId.space'] = { kind: 'string', column: 'instance_space', nullable: true, sortable: true, ...instanceLimit(spec.fields.instanceId) };
    properties['instanceId.externalId'] = { kind: 'string', column: 'instance_external_id', nullable: true, sortable: true, ...instanceLimit(spec.fields.instanceId) };
  }

  const dataSetColumn = spec.dataSetField === undefined ? undefined : spec.dataSetField === 'id' ? 'id' : (spec.fields[spec.dataSetField].column ?? snake(spec.dataSetField));
  const catalog: ResourceCatalog = {
    noun: spec.noun,
    ...(spec.nouns ? { nouns: spec.nouns } : {}),
    acl: spec.acl,
    table: t,
    alias: spec.alias,
    properties,
    ...(spec.maxPropertyElementLength ? { maxPropertyElementLength: spec.maxPropertyElementLength } : {}),
    ...(metadata ? { metadata } : {}),
    ...(spec.search ? { fts: { table: spec.search.table, columns: spec.search.columns } } : {}),
    ...(dataSetColumn ? { dataSetColumn } : {}),
  };
  const table: ItemTable = {
    table: t,
    alias: spec.alias,
    fields,
    ...(metadata && metadataField ? { metadata: { field: metadataField, store: metadata } } : {}),
    ...(arrays.length ? { arrays } : {}),
    ...(spec.storesJson ? { storesJson: true } : {}),
  };
  const main: TableDef = {
    name: t,
    columns,
    indexes: [
      ...(spec.fields.externalId ? [{ name: `${t}_external_id`, columns: ['project_id', 'external_id'], unique: true }] : []),
      ...(spec.fields.instanceId ? [{ name: `${t}_instance_id`, columns: ['project_id', 'instance_space', 'instance_external_id'], unique: true }] : []),
      { name: `${t}_created_time`, columns: ['project_id', 'created_time'] },
      { name: `${t}_last_updated_time`, columns: ['project_id', 'last_updated_time'] },
      ...indexes,
      ...(spec.indexes ?? []),
    ],
    ...(spec.search ? { search: spec.search } : {}),
  };
  return { spec, catalog, table, tables: [main, ...side], createFields, patchFields, patches };
}

function instanceLimit(f: FieldSpec): { maxValueLength?: number } {
  return typeof f.filter === 'object' && f.filter.maxValueLength !== undefined ? { maxValueLength: f.filter.maxValueLength } : {};
}

function metadataTable(m: MetadataStore): TableDef {
  return {
    name: m.table,
    columns: {
      [m.itemColumn]: { type: 'integer', notNull: true },
      project_id: { type: 'integer', notNull: true },
      key: { type: 'text', notNull: true },
      key_lc: { type: 'text', notNull: true },
      value: { type: 'text' },
      value_lc: { type: 'text' },
    },
    primaryKey: [m.itemColumn, 'key'],
    withoutRowid: true,
    indexes: [{ name: `${m.table}_value`, columns: ['project_id', 'key_lc', 'value_lc'] }],
  };
}

function arrayTable(a: ArrayProperty, valueType: 'integer' | 'text'): TableDef {
  return {
    name: a.table,
    columns: {
      [a.itemColumn]: { type: 'integer', notNull: true },
      project_id: { type: 'integer', notNull: true },
      [a.valueColumn]: { type: valueType, notNull: true },
    },
    primaryKey: [a.itemColumn, a.valueColumn],
    withoutRowid: true,
    indexes: [{ name: `${a.table}_value`, columns: ['project_id', a.valueColumn] }],
  };
}
