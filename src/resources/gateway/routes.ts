/**
 * The Postgres gateway's operations: users under `/postgresgateway`, and each user's tables under
 * `/postgresgateway/tables/{username}`.
 */
import { route, type ApiRoute } from '../../http/route.js';
import type { RefInput } from '../../query/refs.js';
import { listItemsJson, retrieveItems, retrieveItemsJson, type ResourceSpec } from '../crud.js';
import {
  CreateTablesBody,
  CreateUsersBody,
  DeleteTablesBody,
  DeleteUsersBody,
  FilterUsersBody,
  ListTablesQuery,
  ListUsersQuery,
  TableIdsBody,
  UpdateUsersBody,
  UserIdsBody,
  UserParams,
} from './schema.js';
import { createTables, createUser, customTablesOnly, deleteTables, deleteUsers, tablesOf, updateUser, userSpec } from './service.js';

const users = userSpec as ResourceSpec<unknown>;
const can = (action: 'READ' | 'WRITE') => ({ acl: 'postgresGatewayAcl', action });

export const gatewayRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/postgresgateway',
    capability: can('WRITE'),
    body: CreateUsersBody,
    handler: async ({ services, project, body }) => ({ items: [await createUser(services, project, body.items[0].credentials.nonce)] }),
  }),
  route({
    method: 'GET',
    path: '/postgresgateway',
    capability: can('READ'),
    query: ListUsersQuery,
    handler: ({ services, project, query }) => listItemsJson(users, services, project.id, query, undefined),
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/list',
    capability: can('READ'),
    body: FilterUsersBody,
    handler: ({ services, project, body }) => listItemsJson(users, services, project.id, body, undefined),
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/byids',
    capability: can('READ'),
    body: UserIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(users, services, project.id, body.items as RefInput[], body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/update',
    capability: can('WRITE'),
    body: UpdateUsersBody,
    handler: async ({ services, project, body }) => {
      const [item] = body.items;
      const nonce = item.update.credentials?.set.nonce;
      if (nonce === undefined) return { items: await retrieveItems(users, services, project.id, [{ username: item.username } as RefInput]) };
      return { items: await updateUser(services, project, item.username, nonce) };
    },
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/delete',
    capability: can('WRITE'),
    body: DeleteUsersBody,
    handler: async ({ services, project, body }) => {
      await deleteUsers(services, project, body.items, body.ignoreUnknownIds ?? body.ignore_unknown_ids);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/tables/:username',
    capability: can('WRITE'),
    params: UserParams,
    body: CreateTablesBody,
    handler: async ({ services, project, params, body }) => ({ items: await createTables(services, project, params.username, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/postgresgateway/tables/:username',
    capability: can('READ'),
    params: UserParams,
    query: ListTablesQuery,
    handler: async ({ services, project, params, query }) => {
      const { includeBuiltIns, ...page } = query;
      const all = includeBuiltIns === true || includeBuiltIns === 'yes';
      return listItemsJson((await tablesOf(services, project.id, params.username)) as ResourceSpec<unknown>, services, project.id, page, customTablesOnly(all));
    },
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/tables/:username/byids',
    capability: can('READ'),
    params: UserParams,
    body: TableIdsBody,
    handler: async ({ services, project, params, body }) =>
      retrieveItemsJson((await tablesOf(services, project.id, params.username)) as ResourceSpec<unknown>, services, project.id, body.items as RefInput[], body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/postgresgateway/tables/:username/delete',
    capability: can('WRITE'),
    params: UserParams,
    body: DeleteTablesBody,
    handler: async ({ services, project, params, body }) => {
      await deleteTables(services, project, params.username, body.items, body.ignoreUnknownIds ?? body.ignore_unknown_ids);
      return {};
    },
  }),
];
