/**
 * The sequences resource, declared once (see resources/model.ts), and the table of their rows.
 *
 * A sequence's columns are a field of the sequence (JSON on its row) rather than items of a model of their
 * own under it: they are always read with their sequence (every answer gives all of them, up to 400, in the
 * order they were added), never listed, filtered or paged apart from it, and a page of 1000 sequences is
 * then answered from the stored JSON of 1000 rows instead of joining and grouping up to 400,000 column rows.
 * An update changes them by `add`, `remove` and `modify` (the `custom` patch that columns.ts applies).
 *
 * Each column has an `id`, its number in the sequence: 1 for the first column ever added, never given again,
 * so the values of a removed column are never read as those of a column added later. A row keeps its values
 * by those numbers (rows.ts); `columnsRemoved`, kept with the sequence and never shown, counts the columns
 * removed, which the reference counts towards the column limits as well.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ExternalId, InternalId, metadataPatchSchema, metadataSchema, nullablePatch, requiredPatch, type MetadataLimits } from '../../http/common-schemas.js';
import type { TableDef } from '../../storage/schema.js';
import { defineModel, field, nameAndDescriptionQuery } from '../model.js';

export const SEQUENCE_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_000, keys: 256, totalBytes: 10_000 };

export const SEQUENCE_LIMITS = {
  items: 1000,
  name: 255,
  description: 1000,
  filterIds: 100,
  /** Columns of one sequence: in all, numeric (DOUBLE and LONG) and STRING; removed columns count towards each. */
  columns: 400,
  numericColumns: 400,
  stringColumns: 200,
  columnName: 255,
  columnDescription: 1000,
  /** Rows and values (nulls included) in one insert request. */
  insertRows: 10_000,
  insertValues: 100_000,
  /** Row numbers per item of a delete request. */
  deleteRows: 10_000,
  /** Rows per page of a row listing: `limit` at most, and fewer when the columns are many (see rows.ts). */
  pageRows: 10_000,
  defaultPageRows: 100,
  pageValues: 100_000,
  /** Characters of a STRING value. */
  stringValue: 256,
  /** DOUBLE values lie within ±1e100. */
  doubleMagnitude: 1e100,
} as const;

export const ValueTypes = ['STRING', 'DOUBLE', 'LONG'] as const;
export type ValueType = (typeof ValueTypes)[number];

const ColumnExternalId = Type.String({ minLength: 1, maxLength: 255 });

/** A column as a create request or `columns.add` gives it; `valueType` is DOUBLE when not given, and read without regard to case. */
export const ColumnCreate = Type.Object(
  {
    externalId: ColumnExternalId,
    name: Type.Optional(Type.String({ maxLength: SEQUENCE_LIMITS.columnName })),
    description: Type.Optional(Type.String({ maxLength: SEQUENCE_LIMITS.columnDescription })),
    valueType: Type.Optional(Type.String({ maxLength: 16 })),
    metadata: Type.Optional(metadataSchema(SEQUENCE_METADATA_LIMITS)),
  },
  { additionalProperties: false },
);
export type ColumnCreate = Static<typeof ColumnCreate>;

/** A column as the sequence keeps it and answers it. */
export interface Column {
  id: number;
  externalId: string;
  name?: string;
  description?: string;
  valueType: ValueType;
  metadata: Record<string, string>;
  createdTime: number;
  lastUpdatedTime: number;
}

/** The `update.columns` of a sequence update. `remove` names columns as `{externalId}`, or as the bare external id the official Python SDK's replacing updates send. */
export const ColumnsPatch = Type.Object(
  {
    add: Type.Optional(Type.Array(ColumnCreate, { maxItems: SEQUENCE_LIMITS.columns })),
    remove: Type.Optional(
      Type.Array(Type.Union([Type.Object({ externalId: ColumnExternalId }, { additionalProperties: false }), ColumnExternalId]), { maxItems: SEQUENCE_LIMITS.columns }),
    ),
    modify: Type.Optional(
      Type.Array(
        Type.Object(
          {
            externalId: ColumnExternalId,
            update: Type.Object(
              {
                externalId: requiredPatch(ColumnExternalId),
                name: nullablePatch(ColumnCreate.properties.name),
                description: nullablePatch(ColumnCreate.properties.description),
                metadata: metadataPatchSchema(SEQUENCE_METADATA_LIMITS),
              },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: SEQUENCE_LIMITS.columns },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ColumnsPatch = Static<typeof ColumnsPatch>;

/** Longest string value in a filter leaf and longest property path element (reference: 256 for sequences). */
const MAX_LEAF = 256;
const SEARCH = { maxValueLength: 128 };

export const sequenceModel = defineModel({
  noun: 'sequence',
  acl: 'sequencesAcl',
  table: 'sequences',
  alias: 'sq',
  dataSetField: 'dataSetId',
  maxPropertyElementLength: MAX_LEAF,
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: MAX_LEAF, sortable: true, aggregatable: true } }),
    name: field.string(Type.String({ maxLength: SEQUENCE_LIMITS.name }), {
      index: 'sequences_name',
      query: { maxValueLength: MAX_LEAF, search: SEARCH, sortable: true, aggregatable: true },
    }),
    description: field.string(Type.String({ maxLength: SEQUENCE_LIMITS.description }), {
      query: { maxValueLength: MAX_LEAF, search: SEARCH, sortable: true, aggregatable: true },
    }),
    assetId: field.integer(InternalId, { index: 'sequences_asset', query: { sortable: true, aggregatable: true } }),
    dataSetId: field.integer(InternalId, { index: 'sequences_data_set', query: { sortable: true, aggregatable: true } }),
    metadata: field.metadata(SEQUENCE_METADATA_LIMITS, { table: 'sequence_metadata', itemColumn: 'sequence_id', maxValueLength: MAX_LEAF }),
    columns: field.json(Type.Array(ColumnCreate, { minItems: 1, maxItems: SEQUENCE_LIMITS.columns }), {
      required: true,
      notNull: true,
      patch: { custom: ColumnsPatch },
    }),
    columnsRemoved: field.integer(Type.Integer(), { hidden: true, notNull: true, default: 0 }),
  },
  extraProperties: {
    query: nameAndDescriptionQuery(SEARCH),
  },
  search: { table: 'sequences_fts', columns: ['name', 'description'] },
  // A sequence's answer holds all its columns; rendering it from its columns on every read would cost more.
  storesJson: true,
});

export const sequenceCatalog = sequenceModel.catalog;

/**
 * One row per row of a sequence: its values as a JSON array, the value of the column numbered `n` at
 * position n − 1 (rows.ts). The key leads with the project and the sequence, so a sequence's rows are one
 * range of it, in row order.
 */
export const sequenceRowsTable: TableDef = {
  name: 'sequence_rows',
  columns: {
    project_id: { type: 'integer', notNull: true },
    sequence_id: { type: 'integer', notNull: true },
    row_number: { type: 'integer', notNull: true },
    row_values: { type: 'text', notNull: true },
  },
  primaryKey: ['project_id', 'sequence_id', 'row_number'],
  withoutRowid: true,
};
