/** The entity matching operations under `/context/entitymatching`. */
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, getItemJson, listItemsJson, updateItems } from '../crud.js';
import { CreateModelBody, JobParams, ListModelsBody, ListModelsQuery, ModelIdsBody, ModelParams, PredictBody, RefitBody, UpdateModelsBody } from './schema.js';
import { createModel, jobToken, modelFilter, modelSpec, predictionResult, refitModel, retrieveModels, startPrediction, validJobToken, withoutNulls } from './service.js';
import type { ResourceSpec } from '../crud.js';

const spec = modelSpec as ResourceSpec<unknown>;
const can = (action: 'READ' | 'WRITE') => ({ acl: 'entityMatchingAcl', action });

export const entityMatchingRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/context/entitymatching',
    capability: can('WRITE'),
    body: CreateModelBody,
    handler: ({ services, project, body }) => createModel(services, project.id, body),
  }),
  route({
    method: 'GET',
    path: '/context/entitymatching',
    capability: can('READ'),
    query: ListModelsQuery,
    handler: ({ services, project, query }) => listItemsJson(spec, services, project.id, query, undefined),
  }),
  route({
    method: 'POST',
    path: '/context/entitymatching/list',
    capability: can('READ'),
    body: ListModelsBody,
    handler: ({ services, project, body }) => {
      const { limit, cursor, filter } = withoutNulls(body);
      return listItemsJson(spec, services, project.id, { limit, cursor, filter }, modelFilter(filter));
    },
  }),
  route({
    method: 'GET',
    path: '/context/entitymatching/:id',
    capability: can('READ'),
    params: ModelParams,
    handler: ({ services, project, params }) => getItemJson(spec, services, project.id, params.id),
  }),
  route({
    method: 'POST',
    path: '/context/entitymatching/byids',
    capability: can('READ'),
    body: ModelIdsBody,
    handler: ({ services, project, body }) => retrieveModels(services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/context/entitymatching/update',
    capability: can('WRITE'),
    body: UpdateModelsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/context/entitymatching/delete',
    capability: can('WRITE'),
    body: ModelIdsBody,
    // Unknown models are passed over, whatever ignoreUnknownIds says: the official clients delete models that
    // may be gone (the Python SDK's fixtures before fitting, the JavaScript SDK's after its test) and expect no error.
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, true);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/context/entitymatching/predict',
    capability: can('WRITE'),
    body: PredictBody,
    handler: async ({ services, project, principal, body, setHeader }) => {
      const started = await startPrediction(services, project.id, body);
      setHeader('X-Job-Token', jobToken(services, project.id, started.jobId as number, principal.subject));
      return started;
    },
  }),
  route({
    method: 'GET',
    path: '/context/entitymatching/jobs/:jobId',
    capability: can('WRITE'),
    alsoNeeds: [{ acl: 'assetsAcl', action: 'READ' }],
    alsoNeedsWaived: ({ headers, params, principal, project, services }) =>
      validJobToken(services, project.id, Number((params as { jobId: string }).jobId), principal.subject, headers['x-job-token']),
    params: JobParams,
    handler: ({ services, project, params }) => predictionResult(services, project.id, params.jobId),
  }),
  route({
    method: 'POST',
    path: '/context/entitymatching/refit',
    capability: can('WRITE'),
    alsoNeeds: [can('READ')],
    body: RefitBody,
    handler: ({ services, project, body }) => refitModel(services, project.id, body),
  }),
];

