/**
 * The functions operations: functions under `/functions`, their calls under `/functions/{id}/calls`, and
 * schedules under `/functions/schedules`. Calling takes `functionsAcl:RUN` or `WRITE`; creating and
 * deleting `WRITE`; reading `READ`.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, getItemJson, listItemsJson, retrieveItemsJson, type ResourceSpec } from '../crud.js';
import {
  CallBody,
  CallIdsBody,
  CallParams,
  CreateFunctionsBody,
  CreateSchedulesBody,
  FunctionIdsBody,
  FunctionParams,
  ListCallsBody,
  ListFunctionsBody,
  ListQuery,
  ListSchedulesBody,
  ScheduleIdsBody,
  ScheduleParams,
} from './schema.js';
import {
  callColumn,
  callFilterNode,
  callFunction,
  callsOf,
  createFunction,
  createSchedule,
  functionFilterNode,
  functionSpec,
  RESOURCE_LIMITS,
  scheduleFilterNode,
  scheduleInput,
  scheduleSpec,
} from './service.js';
import { functionsSettings } from './settings.js';

const spec = functionSpec as ResourceSpec<unknown>;
const ACL = 'functionsAcl';
const READ = { acl: ACL, action: 'READ' };
const WRITE = { acl: ACL, action: 'WRITE' };
const RUN = { acl: ACL, action: 'RUN', impliedBy: ['WRITE'] };

export const functionRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/functions',
    capability: WRITE,
    body: CreateFunctionsBody,
    status: 201,
    handler: async ({ services, principal, project, body }) => ({ items: await createFunction(services, principal, project, body.items[0]) }),
  }),
  route({
    method: 'GET',
    path: '/functions',
    capability: READ,
    query: ListQuery,
    handler: ({ services, project, query }) => listItemsJson(spec, services, project.id, query, undefined),
  }),
  route({
    method: 'POST',
    path: '/functions/list',
    capability: READ,
    body: ListFunctionsBody,
    handler: ({ services, project, body }) => listItemsJson(spec, services, project.id, body, functionFilterNode(body.filter)),
  }),
  route({
    method: 'POST',
    path: '/functions/byids',
    capability: READ,
    body: FunctionIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/functions/delete',
    capability: WRITE,
    body: FunctionIdsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/functions/limits',
    capability: READ,
    handler: ({ services }) => ({ ...RESOURCE_LIMITS, timeoutMinutes: Math.ceil(functionsSettings(services).timeoutSeconds / 60) }),
  }),
  // Functions need no activation here: they are always activated.
  route({ method: 'POST', path: '/functions/status', capability: WRITE, status: 202, handler: () => ({ status: 'activated' }) }),
  route({ method: 'GET', path: '/functions/status', capability: READ, handler: () => ({ status: 'activated' }) }),
  route({
    method: 'GET',
    path: '/functions/:functionId',
    capability: READ,
    params: FunctionParams,
    handler: ({ services, project, params }) => getItemJson(spec, services, project.id, params.functionId),
  }),
  route({
    method: 'POST',
    path: '/functions/:functionId/call',
    capability: RUN,
    params: FunctionParams,
    body: CallBody,
    status: 201,
    handler: ({ services, project, params, body }) => callFunction(services, project, params.functionId, body),
  }),
  route({
    method: 'GET',
    path: '/functions/:functionId/calls',
    capability: READ,
    params: FunctionParams,
    query: ListQuery,
    handler: async ({ services, project, params, query }) => listItemsJson(await callsOf(services, project.id, params.functionId), services, project.id, query, undefined),
  }),
  route({
    method: 'POST',
    path: '/functions/:functionId/calls/list',
    capability: READ,
    params: FunctionParams,
    body: ListCallsBody,
    handler: async ({ services, project, params, body }) =>
      listItemsJson(await callsOf(services, project.id, params.functionId), services, project.id, body, callFilterNode(body.filter)),
  }),
  route({
    method: 'POST',
    path: '/functions/:functionId/calls/byids',
    capability: READ,
    params: FunctionParams,
    body: CallIdsBody,
    handler: async ({ services, project, params, body }) =>
      retrieveItemsJson(await callsOf(services, project.id, params.functionId), services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'GET',
    path: '/functions/:functionId/calls/:callId',
    capability: READ,
    params: CallParams,
    handler: async ({ services, project, params }) => getItemJson(await callsOf(services, project.id, params.functionId), services, project.id, params.callId),
  }),
  route({
    method: 'GET',
    path: '/functions/:functionId/calls/:callId/response',
    capability: READ,
    params: CallParams,
    handler: async ({ services, project, params }) => ({
      callId: params.callId,
      functionId: params.functionId,
      response: await callColumn(services, project.id, params.functionId, params.callId, 'response'),
    }),
  }),
  route({
    method: 'GET',
    path: '/functions/:functionId/calls/:callId/logs',
    capability: READ,
    params: CallParams,
    handler: async ({ services, project, params }) => ({ items: ((await callColumn(services, project.id, params.functionId, params.callId, 'logs')) as unknown[] | null) ?? [] }),
  }),
  route({
    method: 'POST',
    path: '/functions/schedules',
    capability: WRITE,
    body: CreateSchedulesBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createSchedule(services, project, body.items[0]) }),
  }),
  route({
    method: 'GET',
    path: '/functions/schedules',
    capability: READ,
    query: ListQuery,
    handler: ({ services, project, query }) => listItemsJson(scheduleSpec, services, project.id, query, undefined),
  }),
  route({
    method: 'POST',
    path: '/functions/schedules/list',
    capability: READ,
    body: ListSchedulesBody,
    handler: ({ services, project, body }) => listItemsJson(scheduleSpec, services, project.id, body, scheduleFilterNode(body.filter)),
  }),
  route({
    method: 'POST',
    path: '/functions/schedules/byids',
    capability: READ,
    body: ScheduleIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(scheduleSpec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/functions/schedules/delete',
    capability: WRITE,
    body: ScheduleIdsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(scheduleSpec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/functions/schedules/:scheduleId',
    capability: READ,
    params: ScheduleParams,
    handler: ({ services, project, params }) => getItemJson(scheduleSpec, services, project.id, params.scheduleId),
  }),
  route({
    method: 'GET',
    path: '/functions/schedules/:scheduleId/input_data',
    capability: READ,
    params: ScheduleParams,
    handler: ({ services, project, params }) => scheduleInput(services, project.id, params.scheduleId),
  }),
];
