/**
 * The data products operations, and those of their versions under `/dataproducts/{externalId}/versions`.
 * They are of the alpha channel, as the official clients call them (`cdf-version: <date>-alpha`).
 */
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, getItemJson, listItemsJson, retrieveItemsJson, updateItems, type ResourceSpec } from '../crud.js';
import {
  CreateDataProductsBody,
  CreateVersionsBody,
  DataProductIdsBody,
  DataProductParams,
  DeleteDataProductsBody,
  DeleteVersionsBody,
  ListQuery,
  UpdateDataProductsBody,
  UpdateVersionsBody,
  VersionParams,
} from './schema.js';
import { createDataProducts, createVersions, dataProductSpec, updateVersions, versionsOf } from './service.js';

const spec = dataProductSpec as ResourceSpec<unknown>;
const can = (action: 'CREATE' | 'READ' | 'UPDATE' | 'DELETE') => ({ acl: 'dataProductsAcl', action });
const channel = 'alpha';

export const dataProductRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/dataproducts',
    summary: 'Create data products',
    capability: can('CREATE'),
    channel,
    body: CreateDataProductsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createDataProducts(services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/dataproducts',
    summary: 'List data products',
    capability: can('READ'),
    channel,
    query: ListQuery,
    handler: ({ services, project, query }) => listItemsJson(spec, services, project.id, query, undefined),
  }),
  route({
    method: 'GET',
    path: '/dataproducts/:externalId',
    summary: 'Retrieve a data product by its external id',
    capability: can('READ'),
    channel,
    params: DataProductParams,
    handler: ({ services, project, params }) => getItemJson(spec, services, project.id, { externalId: params.externalId }),
  }),
  route({
    method: 'POST',
    path: '/dataproducts/byids',
    summary: 'Retrieve data products by external id',
    capability: can('READ'),
    channel,
    body: DataProductIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/dataproducts/update',
    summary: 'Update data products',
    capability: can('UPDATE'),
    channel,
    body: UpdateDataProductsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/dataproducts/delete',
    summary: 'Delete data products, with their versions',
    capability: can('DELETE'),
    channel,
    body: DeleteDataProductsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/dataproducts/:externalId/versions',
    summary: 'Create versions of a data product',
    capability: can('CREATE'),
    channel,
    params: DataProductParams,
    body: CreateVersionsBody,
    status: 201,
    handler: async ({ services, project, params, body }) => ({ items: await createVersions(services, project.id, params.externalId, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/dataproducts/:externalId/versions',
    summary: 'List the versions of a data product',
    capability: can('READ'),
    channel,
    params: DataProductParams,
    query: ListQuery,
    handler: async ({ services, project, params, query }) => listItemsJson(await versionsOf(services, project.id, params.externalId), services, project.id, query, undefined),
  }),
  route({
    method: 'GET',
    path: '/dataproducts/:externalId/versions/:version',
    summary: 'Retrieve one version of a data product',
    capability: can('READ'),
    channel,
    params: VersionParams,
    handler: async ({ services, project, params }) =>
      getItemJson(await versionsOf(services, project.id, params.externalId), services, project.id, { version: params.version }),
  }),
  route({
    method: 'POST',
    path: '/dataproducts/:externalId/versions/update',
    summary: 'Update versions of a data product',
    capability: can('UPDATE'),
    channel,
    params: DataProductParams,
    body: UpdateVersionsBody,
    handler: async ({ services, project, params, body }) => ({ items: await updateVersions(services, project.id, params.externalId, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/dataproducts/:externalId/versions/delete',
    summary: 'Delete versions of a data product',
    capability: can('DELETE'),
    channel,
    params: DataProductParams,
    body: DeleteVersionsBody,
    handler: async ({ services, project, params, body }) => {
      await deleteItems(await versionsOf(services, project.id, params.externalId), services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
];
