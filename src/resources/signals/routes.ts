/**
 * The signals operations under `/processes/signals`. They are of the beta channel from version 20260505 and of
 * the alpha channel before it (the dated row `signalsChannel`).
 */
import { badRequest } from '../../http/errors.js';
import type { TSchema } from '@sinclair/typebox';
import { route, operationName, type ApiRoute } from '../../http/route.js';
import { VERSION_HEADER } from '../../http/versioning.js';
import { createItems, listItemsJson } from '../crud.js';
import {
  CreateSinksBody,
  CreateSubscriptionsBody,
  DeleteSinksBody,
  DeleteSubscriptionsBody,
  ListSignalsBody,
  ListSubscriptionsBody,
  SinkIdsBody,
  SinkListQuery,
  UpdateSinksBody,
  UpdateSubscriptionsBody,
} from './schema.js';
import { createSubscriptions, deleteSinks, deleteSubscriptions, listSignals, listSubscriptions, retrieveSinks, sinkSpec, updateSinks, updateSubscriptions } from './service.js';

const can = (action: 'READ' | 'WRITE') => ({ acl: 'subscribeSignalsAcl', action });

/**
 * The route, served on the beta channel (which the alpha channel reaches); at versions before the signals API
 * became beta, only on the alpha channel.
 */
function signals<BS extends TSchema, QS extends TSchema, PS extends TSchema>(def: Omit<ApiRoute<BS, QS, PS>, 'channel'>): ApiRoute {
  const op = operationName(def);
  return route<BS, QS, PS>({
    ...def,
    channel: 'beta',
    handler: (ctx) => {
      if (ctx.version.at('signalsChannel') === 'alpha' && ctx.version.channel !== 'alpha') {
        throw badRequest(
          `${op} is an alpha operation at version ${ctx.version.release} (the signals API is beta from 20260505); call it with the header ` +
            `"${VERSION_HEADER}: ${ctx.version.release}-alpha", or with a version from 20260505 followed by -beta`,
        );
      }
      return def.handler(ctx);
    },
  });
}

export const signalRoutes: ApiRoute[] = [
  signals({
    method: 'POST',
    path: '/processes/signals/sinks',
    capability: can('WRITE'),
    body: CreateSinksBody,
    handler: async ({ services, project, body }) => ({ items: await createItems(sinkSpec, services, project.id, body.items) }),
  }),
  signals({
    method: 'GET',
    path: '/processes/signals/sinks',
    capability: can('READ'),
    query: SinkListQuery,
    handler: ({ services, project, query }) => listItemsJson(sinkSpec, services, project.id, query, undefined),
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/sinks/byids',
    capability: can('READ'),
    body: SinkIdsBody,
    handler: async ({ services, project, body, principal }) => ({ items: await retrieveSinks(services, project.id, body.items, principal, body.ignoreUnknownIds) }),
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/sinks/update',
    capability: can('WRITE'),
    body: UpdateSinksBody,
    handler: async ({ services, project, body, principal }) => ({ items: await updateSinks(services, project.id, body, principal) }),
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/sinks/delete',
    capability: can('WRITE'),
    body: DeleteSinksBody,
    handler: async ({ services, project, body }) => {
      await deleteSinks(services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/subscriptions',
    capability: can('WRITE'),
    body: CreateSubscriptionsBody,
    handler: async ({ services, project, body, principal }) => ({
      items: await createSubscriptions(services, project.id, body.items, principal),
    }),
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/subscriptions/list',
    capability: can('READ'),
    body: ListSubscriptionsBody,
    handler: ({ services, project, body, principal }) => listSubscriptions(services, project.id, body, principal),
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/subscriptions/update',
    capability: can('WRITE'),
    body: UpdateSubscriptionsBody,
    handler: async ({ services, project, body }) => ({ items: await updateSubscriptions(services, project.id, body) }),
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/subscriptions/delete',
    capability: can('WRITE'),
    body: DeleteSubscriptionsBody,
    handler: async ({ services, project, body }) => {
      await deleteSubscriptions(services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  signals({
    method: 'POST',
    path: '/processes/signals/list',
    capability: can('READ'),
    body: ListSignalsBody,
    handler: ({ services, project, body, principal }) => listSignals(services, project.id, body, principal),
  }),
];
