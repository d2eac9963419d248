/**
 * Entity matching models, declared once (see resources/model.ts). A model is named by its id or its
 * external id; the service keeps its status and what its fit learned, and its training data (sources,
 * targets, confirmed matches) as a blob, since predictions and refits without entities of their own use it.
 */
import { Type } from '@sinclair/typebox';
import { ExternalId } from '../../http/common-schemas.js';
import { defineModel, field } from '../model.js';
import { CLASSIFIERS, FEATURE_TYPES } from './matcher.js';

export const ENTITY_MATCHING_LIMITS = {
  /** Models per by-ids, update and delete request. */
  items: 1000,
  name: 256,
  description: 500,
  /** Entities per side of a fit or prediction, and confirmed matches per fit or refit. */
  entities: 2_000_000,
  numMatches: 100,
} as const;

export const FeatureType = Type.Union(FEATURE_TYPES.map((f) => Type.Literal(f)));
export const Classifier = Type.Union(CLASSIFIERS.map((c) => Type.Literal(c)));
export const MatchField = Type.Object({ source: Type.String({ minLength: 1, maxLength: 255 }), target: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const ModelStatus = Type.Union(['Queued', 'Running', 'Completed', 'Failed'].map((s) => Type.Literal(s)));

export const entityMatchingModel = defineModel({
  noun: 'entity matching model',
  acl: 'entityMatchingAcl',
  table: 'entity_matching_models',
  alias: 'em',
  fields: {
    externalId: field.string(ExternalId, { query: { maxValueLength: 255 }, patch: false, absent: 'null' }),
    name: field.string(Type.String({ maxLength: ENTITY_MATCHING_LIMITS.name }), { query: { maxValueLength: ENTITY_MATCHING_LIMITS.name }, absent: 'null' }),
    description: field.string(Type.String({ maxLength: ENTITY_MATCHING_LIMITS.description }), { query: { maxValueLength: ENTITY_MATCHING_LIMITS.description }, absent: 'null' }),
    featureType: field.string(FeatureType, { notNull: true, patch: false, query: { maxValueLength: 32 } }),
    matchFields: field.json(Type.Array(MatchField, { minItems: 1, maxItems: 100 }), { notNull: true, patch: false }),
    ignoreMissingFields: field.boolean(Type.Boolean(), { notNull: true, default: 0, patch: false }),
    classifier: field.string(Classifier, { notNull: true, patch: false, query: { maxValueLength: 32 } }),
    originalId: field.integer(Type.Integer({ minimum: 1 }), { patch: false, query: {} }),
    status: field.string(ModelStatus, { notNull: true, patch: false, query: { maxValueLength: 16 } }),
    startTime: field.integer(Type.Integer({ minimum: 0 }), { notNull: true, patch: false }),
    statusTime: field.integer(Type.Integer({ minimum: 0 }), { notNull: true, patch: false }),
    errorMessage: field.string(Type.String(), { patch: false, absent: 'null' }),
    // The blob of the training data, and what the fit learned (null unsupervised).
    dataKey: field.string(Type.String(), { notNull: true, hidden: true, patch: false }),
    fitted: field.json(Type.Unknown(), { hidden: true, patch: false }),
  },
});
