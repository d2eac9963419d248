/** Request shapes of the signals API. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Cursor, ExternalId, IgnoreUnknownIds, Limit } from '../../http/common-schemas.js';
import { EmailAddress, SEVERITIES, SIGNAL_LIMITS as L, SinkRef, TOPICS } from './model.js';

const closed = <P extends Record<string, TSchema>>(p: P) => Type.Object(p, { additionalProperties: false });
const items = <T extends TSchema>(item: T, maxItems: number) => Type.Array(item, { minItems: 1, maxItems });

const CurrentUser = closed({ type: Type.Literal('current_user') });
/** A sink as a request names it: by type and external id, or the caller's own user sink. */
export const AnySinkRef = Type.Union([SinkRef, CurrentUser]);
export type AnySinkRef = Static<typeof AnySinkRef>;

const SinkCreate = Type.Union([
  closed({ type: Type.Literal('email'), externalId: ExternalId, emailAddress: EmailAddress }),
  closed({ type: Type.Literal('user'), externalId: ExternalId }),
]);
export const CreateSinksBody = closed({ items: items(SinkCreate, L.sinkItems) });
export const SinkIdsBody = closed({ items: items(AnySinkRef, L.sinkItems), ignoreUnknownIds: IgnoreUnknownIds });
export const DeleteSinksBody = closed({ items: items(SinkRef, L.sinkItems), ignoreUnknownIds: IgnoreUnknownIds });
export const UpdateSinksBody = closed({
  items: items(
    Type.Union([
      closed({ type: Type.Literal('email'), externalId: ExternalId, update: closed({ emailAddress: Type.Optional(closed({ set: EmailAddress })) }) }),
      closed({ type: Type.Literal('user'), externalId: ExternalId, update: closed({}) }),
      closed({ type: Type.Literal('current_user'), update: closed({}) }),
    ]),
    L.sinkItems,
  ),
});
export type UpdateSinksBody = Static<typeof UpdateSinksBody>;
export const SinkListQuery = closed({ limit: Type.Optional(Limit), cursor: Type.Optional(Cursor) });

const Severity = Type.Union(SEVERITIES.map((s) => Type.Literal(s)));
const common = {
  resource: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  category: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 255 })),
  severity: Type.Optional(Severity),
};
const Id255 = Type.String({ minLength: 1, maxLength: 255 });
const extra: Record<(typeof TOPICS)[number], Record<string, TSchema>> = {
  cognite_workflows: {},
  cognite_integrations: { extractorExternalId: Type.Optional(Id255), extractorVersion: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })) },
  cognite_hosted_extractors: { sourceType: Type.Optional(Type.String()), sourceExternalId: Type.Optional(Id255), destinationExternalId: Type.Optional(Id255) },
};
/** What a subscription receives: signals of its topic, narrowed by resource, categories, a lowest severity and the topic's own fields. */
export const SubscriptionFilter = Type.Union(TOPICS.map((topic) => closed({ topic: Type.Literal(topic), ...common, ...extra[topic] })));
export type SubscriptionFilter = Static<typeof SubscriptionFilter>;

export const SubscriptionCreate = closed({ externalId: ExternalId, sink: AnySinkRef, filter: SubscriptionFilter });
export type SubscriptionCreate = Static<typeof SubscriptionCreate>;
export const CreateSubscriptionsBody = closed({ items: items(SubscriptionCreate, L.subscriptionItems) });
export const UpdateSubscriptionsBody = closed({
  items: items(closed({ externalId: ExternalId, update: closed({ filter: Type.Optional(closed({ set: SubscriptionFilter })) }) }), L.subscriptionItems),
});
export type UpdateSubscriptionsBody = Static<typeof UpdateSubscriptionsBody>;
export const DeleteSubscriptionsBody = closed({ items: items(closed({ externalId: ExternalId }), L.sinkItems), ignoreUnknownIds: IgnoreUnknownIds });

const OrNull = <T extends TSchema>(s: T) => Type.Union([s, closed({ isNull: Type.Boolean() })]);
const SubscriptionListFilter = closed({
  topic: Type.Union(TOPICS.map((t) => Type.Literal(t))),
  resource: Type.Optional(OrNull(Type.String({ minLength: 1, maxLength: 512 }))),
  category: Type.Optional(OrNull(Type.String({ minLength: 1, maxLength: 255 }))),
  severity: Type.Optional(OrNull(Severity)),
  sink: Type.Optional(AnySinkRef),
  metadata: Type.Optional(Type.Record(Type.String(), OrNull(Type.String({ minLength: 1, maxLength: 255 })))),
});
export type SubscriptionListFilter = Static<typeof SubscriptionListFilter>;
const PageLimit = Type.Integer({ minimum: 1, maximum: L.page });
export const ListSubscriptionsBody = closed({ filter: Type.Optional(SubscriptionListFilter), limit: Type.Optional(PageLimit), cursor: Type.Optional(Cursor) });
export type ListSubscriptionsBody = Static<typeof ListSubscriptionsBody>;

export const ListSignalsBody = closed({ sink: AnySinkRef, topic: Type.Optional(Type.Union(TOPICS.map((t) => Type.Literal(t)))), limit: Type.Optional(PageLimit), cursor: Type.Optional(Cursor) });
export type ListSignalsBody = Static<typeof ListSignalsBody>;
