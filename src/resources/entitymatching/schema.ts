/** Request shapes of entity matching, from the model's declaration. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Cursor, ExternalId, InternalId, Limit } from '../../http/common-schemas.js';
import { Classifier, ENTITY_MATCHING_LIMITS as L, entityMatchingModel, FeatureType, MatchField } from './model.js';

/** A source or target: any object; only its string values are matched. */
export const Entity = Type.Record(Type.String(), Type.Unknown());
const Entities = (minItems: number) => Type.Array(Entity, { minItems, maxItems: L.entities });
export const Sources = Entities(0);
export const Targets = Entities(1);

const source: Record<string, TSchema> = { sourceId: InternalId, sourceExternalId: ExternalId };
const target: Record<string, TSchema> = { targetId: InternalId, targetExternalId: ExternalId };
/** A confirmed match: its source and its target, each by id or external id. */
export const TrueMatch = Type.Union(
  Object.keys(source).flatMap((s) => Object.keys(target).map((t) => Type.Object({ [s]: source[s], [t]: target[t] }, { additionalProperties: false }))),
);
export type TrueMatch = { sourceId?: number; sourceExternalId?: string; targetId?: number; targetExternalId?: string };
export const TrueMatches = Type.Array(TrueMatch, { minItems: 1, maxItems: L.entities });

export const CreateModelBody = Type.Object(
  {
    sources: Sources,
    targets: Targets,
    trueMatches: Type.Optional(TrueMatches),
    externalId: Type.Optional(ExternalId),
    name: Type.Optional(entityMatchingModel.schemas.name),
    description: Type.Optional(entityMatchingModel.schemas.description),
    featureType: Type.Optional(FeatureType),
    matchFields: Type.Optional(Type.Array(MatchField, { minItems: 1, maxItems: 100 })),
    classifier: Type.Optional(Classifier),
    ignoreMissingFields: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateModelBody = Static<typeof CreateModelBody>;

const ModelRef = { id: Type.Optional(InternalId), externalId: Type.Optional(ExternalId) };

export const PredictBody = Type.Object(
  {
    ...ModelRef,
    sources: Type.Optional(Sources),
    targets: Type.Optional(Targets),
    numMatches: Type.Optional(Type.Integer({ minimum: 0, maximum: L.numMatches })),
    scoreThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
export type PredictBody = Static<typeof PredictBody>;

export const RefitBody = Type.Object(
  { ...ModelRef, trueMatches: TrueMatches, newExternalId: Type.Optional(ExternalId), sources: Type.Optional(Sources), targets: Type.Optional(Targets) },
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
    originalId: Type.Optional(InternalId),
    name: Type.Optional(entityMatchingModel.schemas.name),
    description: Type.Optional(entityMatchingModel.schemas.description),
  },
  { additionalProperties: false },
);
export type ModelFilter = Static<typeof ModelFilter>;
export const ListModelsBody = Type.Object(
  { filter: Type.Optional(ModelFilter), limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export const ListModelsQuery = Type.Object({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) }, { additionalProperties: false });
export const ModelParams = Type.Object({ project: Type.String(), id: InternalId });
export const JobParams = Type.Object({ project: Type.String(), jobId: InternalId });
