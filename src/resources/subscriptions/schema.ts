/**
 * Request shapes of data point subscriptions, from their declaration (model.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Cursor, IgnoreUnknownIds, orNull } from '../../http/common-schemas.js';
import { InstanceIds, SUBSCRIPTION_LIMITS as L, subscriptionModel, TimeSeriesExternalIds } from './model.js';

const items = <T extends Parameters<typeof Type.Array>[0]>(item: T) => Type.Array(item, { minItems: 1, maxItems: L.items });

export const SubscriptionCreate = Type.Object(
  { ...subscriptionModel.createSchema.properties, timeSeriesIds: Type.Optional(TimeSeriesExternalIds), instanceIds: Type.Optional(InstanceIds) },
  { additionalProperties: false },
);
export type SubscriptionCreate = Static<typeof SubscriptionCreate>;
export const CreateSubscriptionsBody = Type.Object({ items: items(SubscriptionCreate) }, { additionalProperties: false });

export const SubscriptionIdsBody = Type.Object({ items: items(subscriptionModel.refSchema), ignoreUnknownIds: IgnoreUnknownIds }, { additionalProperties: false });

type MemberPatch<T> = { add?: T[]; remove?: T[]; set?: T[] };
export interface SubscriptionPatch extends Record<string, unknown> {
  timeSeriesIds?: MemberPatch<string>;
  instanceIds?: MemberPatch<{ space: string; externalId: string }>;
  filter?: { set: unknown };
}
export const UpdateSubscriptionsBody = subscriptionModel.updateBody<SubscriptionPatch>(L.items);
export type UpdateSubscriptionsBody = Static<typeof UpdateSubscriptionsBody>;

const PageLimit = (max: number) => Type.Integer({ minimum: 1, maximum: max });

export const ListSubscriptionsQuery = Type.Object({ limit: Type.Optional(PageLimit(100)), cursor: Type.Optional(Cursor) }, { additionalProperties: false });

export const ListMembersQuery = Type.Object(
  { externalId: subscriptionModel.schemas.externalId, limit: Type.Optional(PageLimit(L.maxMembersLimit)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

export const ListDataBody = Type.Object(
  {
    externalId: subscriptionModel.schemas.externalId,
    partitions: Type.Array(
      Type.Object({ index: Type.Integer({ minimum: 0, maximum: L.partitions - 1 }), cursor: Type.Optional(orNull(Cursor)) }, { additionalProperties: false }),
      { minItems: 1, maxItems: L.partitions },
    ),
    limit: Type.Optional(PageLimit(L.maxDataLimit)),
    initializeCursors: Type.Optional(Type.String({ maxLength: 40 })),
    pollTimeoutSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: L.maxPollSeconds })),
    includeStatus: Type.Optional(Type.Boolean()),
    ignoreBadDataPoints: Type.Optional(Type.Boolean()),
    treatUncertainAsBad: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ListDataBody = Static<typeof ListDataBody>;
