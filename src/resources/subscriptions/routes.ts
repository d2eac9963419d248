/**
 * The data point subscription operations. Reading subscriptions and their data needs
 * `timeSeriesSubscriptionsAcl:READ`, changing them `WRITE`; what a subscription delivers of a series also
 * needs a time series grant that reaches it.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { listSubscriptionData } from './data.js';
import { membersPage } from './members.js';
import { SUBSCRIPTION_LIMITS as L } from './model.js';
import { CreateSubscriptionsBody, ListDataBody, ListMembersQuery, ListSubscriptionsQuery, SubscriptionIdsBody, UpdateSubscriptionsBody } from './schema.js';
import { createSubscriptions, deleteSubscriptions, listSubscriptions, retrieveSubscriptions, subscriptionNamed, updateSubscriptions } from './service.js';

const READ = { acl: 'timeSeriesSubscriptionsAcl', action: 'READ' };
const WRITE = { acl: 'timeSeriesSubscriptionsAcl', action: 'WRITE' };

export const subscriptionRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/timeseries/subscriptions',
    capability: WRITE,
    body: CreateSubscriptionsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createSubscriptions(services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/timeseries/subscriptions',
    capability: READ,
    query: ListSubscriptionsQuery,
    handler: ({ services, project, query }) => listSubscriptions(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/timeseries/subscriptions/byids',
    capability: READ,
    body: SubscriptionIdsBody,
    handler: async ({ services, project, body }) => ({ items: await retrieveSubscriptions(services, project.id, body.items, body.ignoreUnknownIds) }),
  }),
  route({
    method: 'POST',
    path: '/timeseries/subscriptions/update',
    capability: WRITE,
    body: UpdateSubscriptionsBody,
    handler: async ({ services, project, body }) => ({ items: await updateSubscriptions(services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/timeseries/subscriptions/delete',
    capability: WRITE,
    body: SubscriptionIdsBody,
    handler: async ({ services, project, body }) => {
      await deleteSubscriptions(services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/timeseries/subscriptions/members',
    capability: READ,
    query: ListMembersQuery,
    handler: async ({ services, project, query }) => {
      const sub = await subscriptionNamed(services, project.id, query.externalId);
      const binding = { op: 'subscriptions/members', subscription: sub.id };
      const after = query.cursor === undefined ? 0 : (services.cursors.decode(query.cursor, binding) as { after: number }).after;
      const { items, next } = await membersPage(services, project.id, sub, after, query.limit ?? L.defaultMembersLimit);
      return next === undefined ? { items } : { items, nextCursor: services.cursors.encode({ after: next }, binding) };
    },
  }),
  route({
    method: 'POST',
    path: '/timeseries/subscriptions/data/list',
    capability: READ,
    body: ListDataBody,
    handler: ({ services, project, body, signal }) => listSubscriptionData(services, project.id, body, signal),
  }),
];
