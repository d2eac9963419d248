/**
 * The data sets resource, declared once (see resources/model.ts). Data sets group items of other resources
 * (`dataSetId`); they cannot be deleted.
 */
import { Type } from '@sinclair/typebox';
import { ExternalId, type MetadataLimits } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';

export const DATA_SET_METADATA_LIMITS: MetadataLimits = { keyLength: 128, valueLength: 10_240, keys: 256, totalBytes: 10_240 };
export const DATA_SET_LIMITS = { createItems: 10, name: 50, description: 500 } as const;

export const dataSetModel = defineModel({
  noun: 'data set',
  acl: 'datasetsAcl',
  table: 'data_sets',
  alias: 'd',
  dataSetField: 'id',
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: 255, sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: DATA_SET_LIMITS.name }), { query: { maxValueLength: 50, sortable: true } }),
    description: field.string(Type.String({ minLength: 1, maxLength: DATA_SET_LIMITS.description }), { query: { maxValueLength: 500 } }),
    metadata: field.metadata(DATA_SET_METADATA_LIMITS, { table: 'data_set_metadata', itemColumn: 'data_set_id', maxValueLength: 128 }),
    writeProtected: field.boolean(Type.Boolean(), { notNull: true, default: 0, patch: 'required', query: {} }),
  },
});

export const dataSetCatalog = dataSetModel.catalog;
export const dataSetTable = dataSetModel.table;
