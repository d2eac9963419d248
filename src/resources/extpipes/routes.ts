/**
 * The extraction pipelines operations: pipelines under `/extpipes`, the revisions of a pipeline's
 * configuration under `/extpipes/config` and its runs under `/extpipes/runs`, both naming the pipeline by
 * its external id.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, getItemJson, listItemsJson, retrieveItemsJson } from '../crud.js';
import {
  CreateConfigBody,
  CreatePipelinesBody,
  CreateRunsBody,
  GetConfigQuery,
  ListPipelinesBody,
  ListQuery,
  ListRunsBody,
  ListRunsQuery,
  PipelineIdParams,
  PipelineIdsBody,
  RevertConfigBody,
  RevisionsQuery,
  UpdatePipelinesBody,
} from './schema.js';
import {
  createConfig,
  createPipelines,
  createRuns,
  getConfig,
  listRevisions,
  listRuns,
  pipelineFilterNode,
  pipelineSpec,
  revertConfig,
  updatePipelines,
} from './service.js';
import type { ResourceSpec } from '../crud.js';

const spec = pipelineSpec as ResourceSpec<unknown>;
const pipelines = (action: 'READ' | 'WRITE') => ({ acl: 'extractionpipelinesAcl', action });
const configs = (action: 'READ' | 'WRITE') => ({ acl: 'extractionconfigsAcl', action });
const runs = (action: 'READ' | 'WRITE') => ({ acl: 'extractionrunsAcl', action });

export const extpipeRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/extpipes',
    capability: pipelines('WRITE'),
    body: CreatePipelinesBody,
    // 200, where most resources answer a create with 201: the reference lists only 200 here.
    handler: async ({ services, principal, project, body }) => ({ items: await createPipelines(services, principal, project, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/extpipes',
    capability: pipelines('READ'),
    query: ListQuery,
    handler: ({ services, project, query }) => listItemsJson(spec, services, project.id, query, undefined),
  }),
  route({
    method: 'POST',
    path: '/extpipes/list',
    capability: pipelines('READ'),
    body: ListPipelinesBody,
    handler: async ({ services, project, body }) => listItemsJson(spec, services, project.id, body, await pipelineFilterNode(body.filter, services, project.id)),
  }),
  route({
    method: 'GET',
    path: '/extpipes/:id',
    capability: pipelines('READ'),
    params: PipelineIdParams,
    handler: ({ services, project, params }) => getItemJson(spec, services, project.id, params.id),
  }),
  route({
    method: 'POST',
    path: '/extpipes/byids',
    capability: pipelines('READ'),
    body: PipelineIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/extpipes/update',
    capability: pipelines('WRITE'),
    body: UpdatePipelinesBody,
    handler: async ({ services, principal, project, body }) => ({ items: await updatePipelines(services, principal, project, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/extpipes/delete',
    capability: pipelines('WRITE'),
    body: PipelineIdsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/extpipes/config',
    capability: configs('WRITE'),
    body: CreateConfigBody,
    handler: ({ services, project, body }) => createConfig(services, project.id, body),
  }),
  route({
    method: 'GET',
    path: '/extpipes/config',
    capability: configs('READ'),
    query: GetConfigQuery,
    handler: ({ services, project, query }) => getConfig(services, project.id, query),
  }),
  route({
    method: 'GET',
    path: '/extpipes/config/revisions',
    capability: configs('READ'),
    query: RevisionsQuery,
    handler: ({ services, project, query }) => listRevisions(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/extpipes/config/revert',
    capability: configs('WRITE'),
    body: RevertConfigBody,
    handler: ({ services, project, body }) => revertConfig(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/extpipes/runs',
    capability: runs('WRITE'),
    body: CreateRunsBody,
    handler: async ({ services, project, body }) => ({ items: await createRuns(services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/extpipes/runs',
    capability: runs('READ'),
    query: ListRunsQuery,
    handler: ({ services, project, query }) =>
      listRuns(services, project.id, { filter: { externalId: query.externalId }, limit: query.limit, cursor: query.cursor }, ['externalId']),
  }),
  route({
    method: 'POST',
    path: '/extpipes/runs/list',
    capability: runs('READ'),
    body: ListRunsBody,
    handler: ({ services, project, body }) => listRuns(services, project.id, body, ['filter', 'externalId']),
  }),
];
