/**
 * A resource of items declared once: each field with its API schema, how it is stored, and what the filter
 * language, sorting and aggregation may do with it. Everything else derives from the declaration:
 * - `schemas`: each field's request schema, from which the resource's schema.ts builds its create and
 *   update bodies (so a field's type and limits are written once);
 * - `patches`: how an update changes each field (crud.ts applies them), and `updateBody`, the update
 *   request that follows from them (`set`, `setNull`, `add`/`remove`/`set` for lists and maps, `modify`);
 * - `key` and `parent`: what names an item (the internal id, or declared fields) and what it lives under,
 *   from which by-id references (`refSchema`) and the unique index follow;
 * - `catalog`: the query catalog that filters, sorting, cursors and aggregates read;
 * - `table`: the row mapping of the shared write and read paths;
 * - `tables`: the tables (the item table with its indexes, its metadata and list side tables, full-text
 *   search), which the storage layer creates on either engine.
 */
import { Type, type TObject, type TOptional, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ExternalId, InternalId, metadataPatchSchema, metadataSchema, nullablePatch, requiredPatch, type MetadataLimits } from '../http/common-schemas.js';
import type { ArrayProperty, MetadataStore, PropertyDef, ResourceCatalog, ScalarKind, ScalarProperty } from '../query/catalog.js';
import type { RefInput } from '../query/refs.js';
import { emptyCollectionsAbsent, FILTERABLE_METADATA_LENGTH, type FieldDef, type FieldType, type ItemTable, type KeyField } from '../storage/items.js';
import type { DataStep } from '../storage/migrate.js';
import type { ColumnDef, IndexDef, TableDef } from '../storage/schema.js';

export type ListOp = 'set' | 'add' | 'remove';

/**
 * How an update request may change a field (see crud.ts): `set`/`setNull`, `set` only, a map's or a
 * list's `set` or `add`/`remove` (`ops` narrows them; `byValue` compares object values by content, see
 * http/patch.ts), `modify` of an object's own fields, each by `set`/`setNull`, or a change of the
 * resource's own (`custom`: the request schema of the change, which the resource applies with
 * `ResourceSpec.applyPatch`).
 */
export type PatchKind =
  | 'nullable'
  | 'required'
  | 'metadata'
  | { array: number; ops?: readonly ListOp[]; byValue?: boolean }
  | { modify: Readonly<Record<string, TSchema>> }
  | { custom: TSchema };

/** What the filter language, sorting and aggregation may do with a scalar field (see ScalarProperty). */
export type Query = Omit<ScalarProperty, 'kind' | 'column' | 'nullable'> & {
  /** The property can never be absent, although the column allows null (a value the service always sets). */
  notNull?: boolean;
};

interface Common<S extends TSchema> {
  /** The request schema of the field's value. */
  schema: S;
  /** Column name; the field name in snake_case unless given. */
  column?: string;
  /** How an update may change it; `false`: it cannot be updated. */
  patch?: PatchKind | false;
  /** The column may not be null in the table. */
  notNull?: boolean;
  /** An index on (project, column), by name. */
  index?: string;
  /** The column's default, for rows written before the field existed. */
  default?: number | string;
  /** A create item must give it. */
  required?: boolean;
  /** The JSON text an answer gives for the field when it has no value (`null`, `[]`); without it the field is left out. */
  absent?: string;
  /**
   * Stored with the item for the resource's own rules (set by `createValues`), never part of a request or an
   * answer: the count of columns removed from a sequence, a lower-cased copy that a filter reads.
   */
  hidden?: boolean;
}

export type FieldSpec<S extends TSchema = TSchema> =
  | (Common<S> & { kind: ScalarKind; query?: Query })
  | (Common<S> & { kind: 'json' })
  | (Common<S> & { kind: 'instanceId'; query?: Query })
  | (Common<S> & { kind: 'metadata'; limits: MetadataLimits; store: Omit<MetadataStore, 'maxFilterableLength'>; emptyAbsent?: boolean })
  | (Common<S> & { kind: 'list'; sideTable: ArrayProperty; maxItems: number });

type Options = Omit<Common<TSchema>, 'schema'>;

/** Field constructors: the API schema first, then how the field is stored and queried. */
export const field = {
  string: <S extends TSchema>(schema: S, o: Options & { query?: Query } = {}): FieldSpec<S> => ({ kind: 'string', schema, patch: 'nullable', ...o }),
  integer: <S extends TSchema>(schema: S, o: Options & { query?: Query } = {}): FieldSpec<S> => ({ kind: 'integer', schema, patch: 'nullable', ...o }),
  boolean: <S extends TSchema>(schema: S, o: Options & { query?: Query } = {}): FieldSpec<S> => ({ kind: 'boolean', schema, patch: 'nullable', ...o }),
  /** A value kept as JSON text (an object, a list no filter reaches). */
  json: <S extends TSchema>(schema: S, o: Options = {}): FieldSpec<S> => ({ kind: 'json', schema, patch: 'nullable', ...o }),
  /** `{space, externalId}`, kept in two columns so it can be looked up and filtered. */
  instanceId: <S extends TSchema>(schema: S, o: Options & { query?: Query } = {}): FieldSpec<S> => ({ kind: 'instanceId', schema, patch: false, ...o }),
  /**
   * A string map within `limits`, with a side table of its keys and values for case-insensitive filters.
   * Given as `{}` when empty, unless `emptyAbsent`: then left out, as the reference does for some resources.
   */
  metadata: (limits: MetadataLimits, store: Omit<MetadataStore, 'maxFilterableLength'>, o: Options & { emptyAbsent?: boolean } = {}) =>
    ({ kind: 'metadata', schema: metadataSchema(limits), limits, store, patch: 'metadata', ...o }) satisfies FieldSpec,
  /** A list with a side table holding one row per value, so filters on it use an index. */
  list: <S extends TSchema>(schema: S, sideTable: ArrayProperty, maxItems: number, o: Options = {}): FieldSpec<S> => ({
    kind: 'list',
    schema,
    sideTable,
    maxItems,
    patch: { array: maxItems },
    ...o,
  }),
  /**
   * A list kept as JSON text and given as `[]` when empty; no filter reaches its values. `ops` are the
   * changes an update may make; `byValue` compares objects by content (see applyArrayPatch).
   */
  jsonList: <S extends TSchema>(schema: S, maxItems: number, o: Options & { ops?: readonly ListOp[]; byValue?: boolean } = {}): FieldSpec<S> => {
    const { ops, byValue, ...rest } = o;
    return { kind: 'json', schema, absent: '[]', patch: { array: maxItems, ...(ops ? { ops } : {}), ...(byValue ? { byValue } : {}) }, ...rest };
  },
  /** An object of optional fields kept as JSON text, given as `{}` when empty; an update changes its fields by `modify`. */
  object: <P extends Record<string, TSchema>>(properties: P, o: Options = {}) =>
    ({ kind: 'json', schema: Type.Partial(Type.Object(properties, { additionalProperties: false })), absent: '{}', patch: { modify: properties }, ...o }) satisfies FieldSpec,
};

/** `query`: a property that only `search` leaves reach, searching `name` and `description` at once. */
export function nameAndDescriptionQuery(search: { maxValueLength: number }): ScalarProperty {
  return { kind: 'string', column: 'name', nullable: true, searchOnly: true, search: { ...search, columns: ['name', 'description'] } };
}

/** A model that items of another live under (see ModelSpec.parent). */
export interface ParentModel {
  readonly table: ItemTable;
  readonly catalog: ResourceCatalog;
  /** How a request names a parent (`{externalId}`) in messages. */
  readonly key?: readonly KeyField[];
}

export interface ModelSpec<F extends Record<string, FieldSpec>> {
  /** Name in messages, e.g. "event"; `nouns` when its plural is not the noun and an "s". */
  noun: string;
  nouns?: string;
  /** The ACL whose grants reach the resource's items. */
  acl: string;
  table: string;
  alias: string;
  /** API fields stored on the row, in response order (id, createdTime, lastUpdatedTime are implicit). */
  fields: F;
  /** The field holding an item's data set, for data-set scopes; `id` for data sets themselves. */
  dataSetField?: (keyof F & string) | 'id';
  /** See ResourceCatalog.categoryCondition. */
  categoryCondition?: ResourceCatalog['categoryCondition'];
  /** Columns that are not API fields (kept by the resource's own rules, e.g. an asset's path). */
  extraColumns?: Readonly<Record<string, ColumnDef>>;
  /** Indexes over several columns, or over columns that are not fields. */
  indexes?: readonly IndexDef[];
  /** Full-text search: the FTS table's name (SQLite) and the columns it indexes. */
  search?: { table: string; columns: readonly string[] };
  /** Longest element of a filter's property path. */
  maxPropertyElementLength?: number;
  /** Properties of the filter language that are not stored fields (search-only, derived). */
  extraProperties?: Readonly<Record<string, PropertyDef>>;
  /** Hierarchy-dependent values (see ResourceCatalog.visibleValues). */
  visibleValues?: ResourceCatalog['visibleValues'];
  /** The row keeps its rendered JSON (see ItemTable.storesJson). */
  storesJson?: boolean;
  /**
   * The fields that name an item when the internal id does not (ItemTable.key): `['externalId']` for a
   * resource keyed by external id alone, several fields for a composite key. Unique in the project, or
   * under the parent. Key fields are required on create and cannot be updated.
   */
  key?: ReadonlyArray<keyof F & string>;
  /**
   * The resource whose items this one's live under: each item holds its parent's row id in `column`, is
   * created, listed and named under it, and is deleted with it.
   */
  parent?: { model: ParentModel; column: string };
  /** Fields of an update that are not stored fields, with their patch schemas (an asset's `parentExternalId`). */
  updateExtras?: Readonly<Record<string, TSchema>>;
}

export interface Model<F extends Record<string, FieldSpec>> {
  readonly catalog: ResourceCatalog;
  readonly table: ItemTable;
  readonly tables: readonly TableDef[];
  /** Each field's request schema. */
  readonly schemas: { readonly [K in keyof F]: F[K]['schema'] };
  /** How an update changes each field it may change. */
  readonly patches: Readonly<Record<string, PatchKind>>;
  /** The limits of the metadata field, when there is one. */
  readonly metadataLimits?: MetadataLimits;
  /** The `update` object of an update item: each field by its patch kind; fields that cannot change, to be refused by name. */
  readonly patchSchema: TObject;
  /** A by-id reference: `{id}` or `{externalId}` (`{instanceId}` too where there is one), or the declared key's fields. */
  readonly refSchema: TObject;
  /**
   * A create item: every field, those of the key and those declared `required` required (which its static
   * type, knowing only the fields, leaves optional).
   */
  readonly createSchema: TObject<{ [K in keyof F]: TOptional<F[K]['schema']> }>;
  /**
   * The body of `POST .../update`: `{items: [{<reference>, update}]}`, at most `maxItems`. `P` is what the
   * resource's own rules read of an update, where they read more than crud.ts does.
   */
  updateBody<P extends Record<string, unknown> = Record<string, unknown>>(maxItems: number): TUnsafe<UpdateBody<P>>;
}

export interface UpdateBody<P = Record<string, unknown>> {
  items: Array<RefInput & { update: P }>;
}

/** The request schema of a patch of the given kind on a field of schema `schema`. */
function patchSchemaOf(kind: PatchKind, schema: TSchema, limits: MetadataLimits | undefined): TSchema {
  if (kind === 'nullable') return nullablePatch(schema);
  if (kind === 'required') return requiredPatch(schema);
  if (kind === 'metadata') return metadataPatchSchema(limits!);
  if ('custom' in kind) return Type.Optional(kind.custom);
  if ('modify' in kind) {
    const fields = Object.fromEntries(Object.entries(kind.modify).map(([name, s]) => [name, nullablePatch(s)]));
    return Type.Optional(Type.Object({ modify: Type.Object(fields, { additionalProperties: false }) }, { additionalProperties: false }));
  }
  const ops = kind.ops ?? ['set', 'add', 'remove'];
  return Type.Optional(Type.Object(Object.fromEntries(ops.map((op) => [op, Type.Optional(schema)])), { additionalProperties: false }));
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const STANDARD: Record<string, ScalarProperty> = {
  id: { kind: 'integer', column: 'id', nullable: false },
  createdTime: { kind: 'integer', column: 'created_time', nullable: false, sortable: true },
  lastUpdatedTime: { kind: 'integer', column: 'last_updated_time', nullable: false, sortable: true },
};

function storageType(f: FieldSpec): FieldType {
  if (f.kind === 'metadata' || f.kind === 'list') return 'json';
  return f.kind;
}

function property(kind: ScalarKind, column: string, nullable: boolean, q: Query): ScalarProperty {
  const { notNull, ...rest } = q;
  return { kind, column, nullable: nullable && !notNull, ...rest };
}

export function defineModel<F extends Record<string, FieldSpec>>(spec: ModelSpec<F>): Model<F> {
  const t = spec.table;
  // A resource keyed otherwise does not show its internal id, so no filter or sort reaches it.
  const properties: Record<string, PropertyDef> = spec.key ? {} : { id: STANDARD.id };
  const fields: FieldDef[] = [];
  const columns: Record<string, ColumnDef> = { id: { type: 'id' }, project_id: { type: 'integer', notNull: true, references: 'projects' } };
  const indexes: IndexDef[] = [];
  const side: TableDef[] = [];
  const schemas: Record<string, TSchema> = {};
  const patches: Record<string, PatchKind> = {};
  const arrays: Array<{ field: string; index: ArrayProperty }> = [];
  let metadata: { field: string; store: MetadataStore } | undefined;
  let metadataLimits: MetadataLimits | undefined;

  const keyNames = new Set<string>(spec.key ?? []);
  const patchFields: Record<string, TSchema> = {};
  const createFields: Record<string, TSchema> = {};
  for (const [name, f] of Object.entries(spec.fields)) {
    const column = f.column ?? snake(name);
    const absent = f.kind === 'metadata' ? (f.emptyAbsent ? undefined : '{}') : f.absent;
    fields.push({ name, column, type: storageType(f), ...(absent ? { absent } : {}), ...(f.hidden ? { hidden: true } : {}) });
    if (f.index) indexes.push({ name: f.index, columns: ['project_id', column] });
    if (f.hidden) {
      columns[column] = { type: f.kind === 'integer' || f.kind === 'boolean' ? 'integer' : 'text', notNull: f.notNull, default: f.default };
      continue;
    }
    schemas[name] = f.schema;
    createFields[name] = f.required || keyNames.has(name) ? f.schema : Type.Optional(f.schema);
    if (f.patch && !keyNames.has(name)) {
      patches[name] = f.patch;
      patchFields[name] = patchSchemaOf(f.patch, f.schema, f.kind === 'metadata' ? f.limits : undefined);
    } else {
      // Named, so that an update of it is refused with its reason rather than as an unknown property.
      patchFields[name] = Type.Optional(Type.Unknown());
    }
    switch (f.kind) {
      case 'instanceId':
        columns.instance_space = { type: 'text' };
        columns.instance_external_id = { type: 'text' };
        if (f.query) {
          properties[`${name}.space`] = property('string', 'instance_space', true, f.query);
          properties[`${name}.externalId`] = property('string', 'instance_external_id', true, f.query);
        }
        break;
      case 'metadata': {
        columns[column] = { type: 'text' };
        const store = { ...f.store, maxFilterableLength: FILTERABLE_METADATA_LENGTH };
        metadata = { field: name, store };
        metadataLimits = f.limits;
        side.push(metadataTable(store));
        break;
      }
      case 'list':
        columns[column] = { type: 'text' };
        arrays.push({ field: name, index: f.sideTable });
        properties[name] = f.sideTable;
        side.push(listTable(f.sideTable));
        break;
      case 'json':
        columns[column] = { type: 'text', notNull: f.notNull, default: f.default };
        break;
      default:
        columns[column] = { type: f.kind === 'string' ? 'text' : 'integer', notNull: f.notNull, default: f.default };
        if (f.query) properties[name] = property(f.kind, column, !f.notNull, f.query);
    }
  }
  if (spec.parent) {
    fields.push({ name: PARENT_FIELD, column: spec.parent.column, type: 'integer', hidden: true });
    columns[spec.parent.column] = { type: 'integer', notNull: true };
  }
  Object.assign(columns, spec.extraColumns ?? {});
  columns.created_time = { type: 'integer', notNull: true };
  columns.last_updated_time = { type: 'integer', notNull: true };
  if (spec.storesJson) columns.item_json = { type: 'text' };
  properties.createdTime = STANDARD.createdTime;
  properties.lastUpdatedTime = STANDARD.lastUpdatedTime;
  Object.assign(properties, spec.extraProperties ?? {});

  const dataSetColumn =
    spec.dataSetField === undefined ? undefined : spec.dataSetField === 'id' ? 'id' : (spec.fields[spec.dataSetField].column ?? snake(spec.dataSetField));
  const allIndexes = [...indexes, ...(spec.indexes ?? [])];
  const key: KeyField[] | undefined = spec.key?.map((name) => fields.find((f) => f.name === name)!);
  const indexedColumns = new Set(['created_time', 'last_updated_time', ...allIndexes.filter((i) => i.columns[0] === 'project_id' && i.columns[1]).map((i) => i.columns[1])]);
  if (spec.fields.externalId) indexedColumns.add('external_id');
  const catalog: ResourceCatalog = {
    noun: spec.noun,
    ...(spec.nouns ? { nouns: spec.nouns } : {}),
    acl: spec.acl,
    table: t,
    alias: spec.alias,
    properties,
    ...(spec.maxPropertyElementLength ? { maxPropertyElementLength: spec.maxPropertyElementLength } : {}),
    ...(metadata ? { metadata: metadata.store } : {}),
    ...(spec.search ? { fts: { table: spec.search.table, columns: spec.search.columns } } : {}),
    ...(dataSetColumn ? { dataSetColumn } : {}),
    indexedColumns,
    ...(spec.visibleValues ? { visibleValues: spec.visibleValues } : {}),
    ...(spec.categoryCondition ? { categoryCondition: spec.categoryCondition } : {}),
    ...(spec.parent ? { parentScope: { column: spec.parent.column, catalog: spec.parent.model.catalog } } : {}),
  };
  const table: ItemTable = {
    table: t,
    alias: spec.alias,
    fields,
    ...(metadata ? { metadata } : {}),
    ...(arrays.length ? { arrays } : {}),
    ...(spec.storesJson ? { storesJson: true } : {}),
    ...(key ? { key } : {}),
    ...(spec.parent ? { parent: { table: spec.parent.model.table, column: spec.parent.column } } : {}),
  };
  if (spec.parent) (spec.parent.model.table.children ??= []).push(table);
  const keyIndex = key
    ? [{ name: `${t}_key`, columns: ['project_id', ...(spec.parent ? [spec.parent.column] : []), ...key.map((f) => f.column)], unique: true }]
    : spec.fields.externalId
      ? [{ name: `${t}_external_id`, columns: ['project_id', 'external_id'], unique: true }]
      : [];
  const main: TableDef = {
    name: t,
    columns,
    indexes: [
      ...keyIndex,
      ...(Object.values(spec.fields).some((f) => f.kind === 'instanceId')
        ? [{ name: `${t}_instance_id`, columns: ['project_id', 'instance_space', 'instance_external_id'], unique: true }]
        : []),
      { name: `${t}_created_time`, columns: ['project_id', 'created_time'] },
      { name: `${t}_last_updated_time`, columns: ['project_id', 'last_updated_time'] },
      ...indexes,
      ...(spec.indexes ?? []),
    ],
    ...(spec.search ? { search: spec.search } : {}),
  };
  const patchSchema = Type.Object({ ...patchFields, ...spec.updateExtras }, { additionalProperties: false });
  const refSchema = key ? keyRefSchema(key, schemas) : idRefSchema(Object.values(spec.fields).find((f) => f.kind === 'instanceId')?.schema);
  return {
    catalog,
    table,
    tables: [main, ...side],
    schemas: schemas as Model<F>['schemas'],
    patches,
    ...(metadataLimits ? { metadataLimits } : {}),
    patchSchema,
    refSchema,
    createSchema: Type.Object(createFields, { additionalProperties: false }) as Model<F>['createSchema'],
    updateBody: (maxItems) =>
      Type.Unsafe(
        Type.Object(
          { items: Type.Array(Type.Object({ ...refSchema.properties, update: patchSchema }, { additionalProperties: false }), { minItems: 1, maxItems }) },
          { additionalProperties: false },
        ),
      ),
  };
}

/** The hidden field holding the parent's row id (ModelSpec.parent). */
export const PARENT_FIELD = '$parent';

/** `{id}` or `{externalId}`, and `{instanceId}` where the resource has one; exactly one is checked when resolved. */
function idRefSchema(instanceId: TSchema | undefined): TObject {
  return Type.Object(
    { id: Type.Optional(InternalId), externalId: Type.Optional(ExternalId), ...(instanceId ? { instanceId: Type.Optional(instanceId) } : {}) },
    { additionalProperties: false },
  );
}

function keyRefSchema(key: readonly KeyField[], schemas: Record<string, TSchema>): TObject {
  return Type.Object(Object.fromEntries(key.map((f) => [f.name, schemas[f.name]])), { additionalProperties: false });
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

function listTable(a: ArrayProperty): TableDef {
  return {
    name: a.table,
    columns: {
      [a.itemColumn]: { type: 'integer', notNull: true },
      project_id: { type: 'integer', notNull: true },
      [a.valueColumn]: { type: a.kind === 'stringArray' ? 'text' : 'integer', notNull: true },
    },
    primaryKey: [a.itemColumn, a.valueColumn],
    withoutRowid: true,
    indexes: [{ name: `${a.table}_value`, columns: ['project_id', a.valueColumn] }],
  };
}

/** The step of the item tables written before empty lists and maps came to be stored as absent (schema version 9). */
export function emptyCollectionsStep(model: Pick<Model<never>, 'table'>): DataStep {
  return { version: 9, run: (db) => emptyCollectionsAbsent(db, model.table) };
}
