/** The SAP writeback operations: instances, endpoints (with verify), mappings, and writeback requests. */
import { route, type ApiRoute } from '../../http/route.js';
import { createItems, deleteItems, listItemsJson, retrieveItemsJson, type ResourceSpec } from '../crud.js';
import {
  ByIdsBody,
  CreateEndpointsBody,
  CreateInstancesBody,
  CreateMappingsBody,
  CreateRequestsBody,
  DeleteBody,
  DeleteInstancesBody,
  ListQuery,
  RequestIdsBody,
  VerifyBody,
} from './schema.js';
import { createEndpoints, createInstances, createRequest, deleteInstances, listRequests, retrieveRequests, specs, verifyEndpoint } from './service.js';

const can = (action: 'READ' | 'WRITE') => ({ acl: 'sapWritebackAcl', action });
const requests = (action: 'LIST' | 'WRITE') => ({ acl: 'sapWritebackRequestsAcl', action });

/** List, by ids and delete of one kind of configuration item; `delete` given where it has rules of its own. */
function configurationRoutes(path: string, spec: ResourceSpec<unknown>, withoutDelete = false): ApiRoute[] {
  return [
    route({
      method: 'GET',
      path,
      capability: can('READ'),
      query: ListQuery,
      handler: ({ services, project, query }) => listItemsJson(spec, services, project.id, query, undefined),
    }),
    route({
      method: 'POST',
      path: `${path}/byids`,
      capability: can('READ'),
      body: ByIdsBody,
      handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
    }),
    ...(withoutDelete
      ? []
      : [
          route({
            method: 'POST',
            path: `${path}/delete`,
            capability: can('WRITE'),
            body: DeleteBody,
            handler: async ({ services, project, body }) => {
              await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
              return {};
            },
          }),
        ]),
  ];
}

export const writebackRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/writeback/sap/instances',
    capability: can('WRITE'),
    body: CreateInstancesBody,
    handler: async ({ services, project, body }) => ({ items: await createInstances(services, project.id, body.items) }),
  }),
  ...configurationRoutes('/writeback/sap/instances', specs.instances, true),
  route({
    method: 'POST',
    path: '/writeback/sap/instances/delete',
    capability: can('WRITE'),
    body: DeleteInstancesBody,
    handler: async ({ services, project, body }) => {
      await deleteInstances(services, project.id, body.items, body.ignoreUnknownIds, body.force);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/writeback/sap/endpoints',
    capability: can('WRITE'),
    body: CreateEndpointsBody,
    handler: async ({ services, project, body }) => ({ items: await createEndpoints(services, project.id, body.items) }),
  }),
  ...configurationRoutes('/writeback/sap/endpoints', specs.endpoints),
  route({
    method: 'POST',
    path: '/writeback/sap/endpoints/verify',
    capability: can('WRITE'),
    body: VerifyBody,
    handler: ({ services, project, body }) => verifyEndpoint(services, project.id, body.externalId),
  }),
  route({
    method: 'POST',
    path: '/writeback/sap/mappings',
    capability: can('WRITE'),
    body: CreateMappingsBody,
    handler: async ({ services, project, body }) => ({ items: await createItems(specs.mappings, services, project.id, body.items) }),
  }),
  ...configurationRoutes('/writeback/sap/mappings', specs.mappings),
  route({
    method: 'GET',
    path: '/writeback/sap/requests',
    capability: requests('LIST'),
    query: ListQuery,
    status: 202,
    handler: ({ services, project, query }) => listRequests(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/writeback/sap/requests',
    capability: requests('WRITE'),
    body: CreateRequestsBody,
    handler: async ({ services, project, body }) => ({ items: [await createRequest(services, project.id, body.items[0])] }),
  }),
  route({
    method: 'POST',
    path: '/writeback/sap/requests/byids',
    capability: requests('WRITE'),
    body: RequestIdsBody,
    handler: ({ services, project, body }) => retrieveRequests(services, project.id, body.items, body.ignoreUnknownIds),
  }),
];
