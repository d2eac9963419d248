/**
 * Data products and their versions, declared once (see resources/model.ts). A data product is keyed by its
 * external id alone; its versions live under it, keyed by their semantic version, and go when it goes.
 * The limits are those the official clients (the JavaScript SDK's alpha package, the toolkit) hold
 * requests to.
 */
import { Type } from '@sinclair/typebox';
import { SPACE_PATTERN } from '../models/identifiers.js';
import { defineModel, field } from '../model.js';

export const DATA_PRODUCT_LIMITS = {
  externalId: 100,
  name: 50,
  description: 200,
  tags: 10,
  /** Items per create, update and delete request of data products; by-ids reads take `byIds`. */
  writeItems: 1,
  byIds: 100,
  versionWriteItems: 1,
  versionDeleteItems: 10,
  views: 100,
  versionDescription: 2000,
  usage: 2000,
  limitations: 500,
} as const;

const ACL = 'dataProductsAcl';

export const Space = Type.String({ minLength: 1, maxLength: 43, pattern: SPACE_PATTERN });
export const DataProductExternalId = Type.String({ minLength: 1, maxLength: DATA_PRODUCT_LIMITS.externalId, pattern: '^[a-z]([a-z0-9_-]{0,98}[a-z0-9])?$' });
export const SemanticVersion = Type.String({ minLength: 5, maxLength: 14, pattern: '^(0|[1-9]\\d{0,3})\\.(0|[1-9]\\d{0,3})\\.(0|[1-9]\\d{0,3})$' });
export const VersionStatus = Type.Union([Type.Literal('draft'), Type.Literal('published'), Type.Literal('deprecated')]);

export const dataProductModel = defineModel({
  noun: 'data product',
  acl: ACL,
  table: 'data_products',
  alias: 'dp',
  key: ['externalId'],
  fields: {
    externalId: field.string(DataProductExternalId, { notNull: true, query: { maxValueLength: DATA_PRODUCT_LIMITS.externalId, sortable: true } }),
    name: field.string(Type.String({ minLength: 1, maxLength: DATA_PRODUCT_LIMITS.name }), { notNull: true, required: true, patch: 'required', query: { maxValueLength: 50, sortable: true } }),
    // Where the product's data model and views are; its external id unless given, and fixed once created.
    schemaSpace: field.string(Space, { notNull: true, patch: false, query: { maxValueLength: 43 } }),
    description: field.string(Type.String({ maxLength: DATA_PRODUCT_LIMITS.description })),
    isGoverned: field.boolean(Type.Boolean(), { notNull: true, default: 0, patch: 'required', query: {} }),
    tags: field.jsonList(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: DATA_PRODUCT_LIMITS.tags, uniqueItems: true }), DATA_PRODUCT_LIMITS.tags),
    // Set by the service, never by a request: given as [] (Strata keeps no business domains).
    domains: field.jsonList(Type.Array(Type.String()), 0, { patch: false }),
  },
});

/** A view of a data product version: a view of data modeling, with the instance spaces it reads and writes. */
export const ViewReference = Type.Object(
  {
    space: Space,
    externalId: Type.String({ minLength: 1, maxLength: 255 }),
    version: Type.String({ minLength: 1, maxLength: 43 }),
    instanceSpaces: Type.Optional(
      Type.Object(
        { read: Type.Optional(Type.Array(Space, { maxItems: 100 })), write: Type.Optional(Type.Array(Space, { maxItems: 100 })) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const dataProductVersionModel = defineModel({
  noun: 'data product version',
  acl: ACL,
  table: 'data_product_versions',
  alias: 'dpv',
  key: ['version'],
  parent: { model: dataProductModel, column: 'data_product_id' },
  fields: {
    version: field.string(SemanticVersion, { notNull: true, query: { maxValueLength: 14, sortable: true } }),
    // Views can be added to a version, never taken out of it.
    views: field.jsonList(Type.Array(ViewReference, { maxItems: DATA_PRODUCT_LIMITS.views }), DATA_PRODUCT_LIMITS.views, { ops: ['add'] }),
    status: field.string(VersionStatus, { notNull: true, patch: 'required', query: { maxValueLength: 10, sortable: true } }),
    description: field.string(Type.String({ maxLength: DATA_PRODUCT_LIMITS.versionDescription })),
    terms: field.object({
      usage: Type.String({ maxLength: DATA_PRODUCT_LIMITS.usage }),
      limitations: Type.String({ maxLength: DATA_PRODUCT_LIMITS.limitations }),
    }),
  },
});
