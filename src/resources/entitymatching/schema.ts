/** Request shapes of entity matching, from the model's declaration. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Cursor, ExternalId, InternalId, Limit, orNull } from '../../http/common-schemas.js';
import { Classifier, ENTITY_MATCHING_LIMITS as L, entityMatchingModel, FeatureType, MatchField } from './model.js';

/**
 * An optional field of a fit, refit or prediction, which the official Python SDK sends as null when not
 * given: null means left out (`withoutNulls` in the service drops them).
 */
const optional = <T extends TSchema>(schema: T) => Type.Optional(orNull(schema));
/** Feature types and classifiers as the Python SDK's users write them (`LogisticRegression`): any case. */
const AnyCase = Type.String({ minLength: 1, maxLength: 64 });

/** A source or target: any object; only its string values are matched. */
export const Entity = Type.Record(Type.String(), Type.Unknown());
const Entities = (minItems: number) => Type.Array(Entity, { minItems, maxItems: L.entities });
export const Sources = Entities(0);
const Targets = Entities(1);

const source: Record<string, TSchema> = { sourceId: InternalId, sourceExternalId: ExternalId };
const target: Record<string, TSchema> = { targetId: InternalId, targetExternalId: ExternalId };
/** A confirmed match: its source and its target, each by id or external id. */
export const TrueMatch = Type.Union(
  Object.keys(source).flatMap((s) => Object.keys(target).map((t) => Type.Object({ [s]: source[s], [t]: target[t] }, { additionalProperties: false }))),
);
export type TrueMatch = { sourceId?: number; sourceExternalId?: string; targetId?: number; targetExternalId?: string };
const TrueMatches = Type.Array(TrueMatch, { minItems: 1, maxItems: L.entities });

export const CreateModelBody = Type.Object(
  {
    sources: Sources,
    targets: Targets,
    trueMatches: optional(TrueMatches),
    externalId: optional(ExternalId),
    name: optional(entityMatchingModel.schemas.name),
    description: optional(entityMatchingModel.schemas.description),
    featureType: optional(AnyCase),
    matchFields: optional(Type.Array(MatchField, { minItems: 1, maxItems: 100 })),
    classifier: optional(AnyCase),
    ignoreMissingFields: optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateModelBody = Static<typeof CreateModelBody>;

const ModelRef = { id: optional(InternalId), externalId: optional(ExternalId) };

export const PredictBody = Type.Object(
  {
    ...ModelRef,
    sources: optional(Sources),
    targets: optional(Targets),
    numMatches: optional(Type.Integer({ minimum: 0, maximum: L.numMatches })),
    scoreThreshold: optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
export type PredictBody = Static<typeof PredictBody>;

export const RefitBody = Type.Object(
  { ...ModelRef, trueMatches: TrueMatches, newExternalId: optional(ExternalId), sources: optional(Sources), targets: optional(Targets) },
  { additionalProperties: false },
);
export type RefitBody = Static<typeof RefitBody>;

const refs = Type.Array(entityMatchingModel.refSchema, { minItems: 1, maxItems: L.items });
export const ModelIdsBody = Type.Object({ items: refs, ignoreUnknownIds: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export const UpdateModelsBody = entityMatchingModel.updateBody(L.items);

export const ModelFilter = Type.Object(
  {
    featureType: Type.Optional(FeatureType),
    classifier: Type.Optional(Classifier),
    originalId: optional(InternalId),
    name: optional(entityMatchingModel.schemas.name),
    description: optional(entityMatchingModel.schemas.description),
  },
  { additionalProperties: false },
);
export type ModelFilter = Static<typeof ModelFilter>;
export const ListModelsBody = Type.Object(
  { filter: optional(ModelFilter), limit: optional(Limit), cursor: optional(Cursor) },
  { additionalProperties: false },
);
export const ListModelsQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
export const ModelParams = Type.Object({ project: Type.String(), id: InternalId });
export const JobParams = Type.Object({ project: Type.String(), jobId: InternalId });
