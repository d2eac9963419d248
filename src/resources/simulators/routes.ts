/**
 * The simulators operations: those of the reference under `/simulators`, and those the connectors call
 * (declaring simulators, their integrations' heartbeats, taking and reporting runs, writing logs), as the
 * official clients and their tests call them.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { createItems, deleteItems, listItems, retrieveItems, retrieveItemsJson, updateItems, type ResourceSpec } from '../crud.js';
import { SIMULATOR_LIMITS } from './model.js';
import {
  AggregateModelsBody,
  AggregateRoutinesBody,
  ByIdsBody,
  ClaimRunsBody,
  CreateIntegrationsBody,
  CreateModelRevisionsBody,
  CreateModelsBody,
  CreateRoutineRevisionsBody,
  CreateRoutinesBody,
  CreateSimulatorsBody,
  IdsBody,
  ListIntegrationsBody,
  ListModelRevisionDataBody,
  ListModelRevisionsBody,
  ListModelsBody,
  ListRoutineRevisionsBody,
  ListRoutinesBody,
  ListRunsBody,
  ListSimulatorsBody,
  RefsBody,
  RunBody,
  RunCallbackBody,
  RunDataBody,
  UpdateIntegrationsBody,
  UpdateLogsBody,
  UpdateModelRevisionDataBody,
  UpdateModelRevisionsBody,
  UpdateModelsBody,
  UpdateSimulatorsBody,
} from './schema.js';
import {
  claimRuns,
  countModels,
  countRoutines,
  createIntegrations,
  createModelRevisions,
  createModels,
  createRoutineRevisions,
  createRoutines,
  createRun,
  forSimulators,
  integrationSpec,
  listIntegrations,
  listModelRevisionData,
  listModelRevisions,
  listModels,
  listRoutineRevisions,
  listRoutines,
  listRuns,
  logSpec,
  modelRevisionSpec,
  modelSpec,
  reportRuns,
  routineRevisionJson,
  routineRevisionSpec,
  routineSpec,
  runData,
  runSpec,
  simulatorSpec,
  updateIntegrations,
  updateModelRevisionData,
} from './service.js';

type Action = 'READ' | 'WRITE' | 'DELETE' | 'RUN' | 'MANAGE';
const can = (action: Action) => ({ acl: 'simulatorsAcl', action });
const bodyLimit = SIMULATOR_LIMITS.requestBytes;

/** `POST <path>` with `simulatorsAcl:DELETE`: deletes the items named with what hangs off them (service.ts). */
const deleteRoute = (path: string, spec: ResourceSpec<unknown>, summary?: string) =>
  route({
    method: 'POST',
    path,
    ...(summary ? { summary } : {}),
    capability: can('DELETE'),
    body: RefsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items);
      return {};
    },
  });

export const simulatorRoutes: ApiRoute[] = [
  // Simulators.
  route({
    method: 'POST',
    path: '/simulators',
    summary: 'Create simulators (called by connectors)',
    capability: can('MANAGE'),
    body: CreateSimulatorsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createItems(simulatorSpec, forSimulators(services), project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/list',
    capability: can('READ'),
    body: ListSimulatorsBody,
    handler: async ({ services, project, body }) => ({ items: (await listItems(simulatorSpec, forSimulators(services), project.id, { limit: body.limit ?? 1000 }, undefined)).items }),
  }),
  route({
    method: 'POST',
    path: '/simulators/update',
    summary: 'Update simulators (called by connectors)',
    capability: can('MANAGE'),
    body: UpdateSimulatorsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(simulatorSpec, forSimulators(services), project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/delete',
    summary: 'Delete simulators, with their integrations, models, routines and runs',
    capability: can('MANAGE'),
    body: RefsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(simulatorSpec, forSimulators(services), project.id, body.items);
      return {};
    },
  }),

  // Integrations.
  route({
    method: 'POST',
    path: '/simulators/integrations',
    summary: 'Create simulator integrations (called by connectors)',
    capability: can('MANAGE'),
    body: CreateIntegrationsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createIntegrations(services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/integrations/update',
    summary: "Update simulator integrations: a connector's heartbeat, versions, license and status",
    capability: can('MANAGE'),
    body: UpdateIntegrationsBody,
    handler: ({ services, project, body }) => updateIntegrations(services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/simulators/integrations/list',
    capability: can('READ'),
    body: ListIntegrationsBody,
    handler: ({ services, project, body }) => listIntegrations(services, project.id, body),
  }),
  deleteRoute('/simulators/integrations/delete', integrationSpec),

  // Models.
  route({
    method: 'POST',
    path: '/simulators/models',
    capability: can('WRITE'),
    body: CreateModelsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createModels(services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/list',
    capability: can('READ'),
    body: ListModelsBody,
    handler: ({ services, project, body }) => listModels(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/aggregate',
    capability: can('READ'),
    body: AggregateModelsBody,
    handler: ({ services, project, body }) => countModels(services, project.id, body.filter),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/byids',
    capability: can('READ'),
    body: RefsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(modelSpec, services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/update',
    capability: can('WRITE'),
    body: UpdateModelsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(modelSpec, services, project.id, body.items) }),
  }),
  deleteRoute('/simulators/models/delete', modelSpec),

  // Model revisions.
  route({
    method: 'POST',
    path: '/simulators/models/revisions',
    capability: can('WRITE'),
    body: CreateModelRevisionsBody,
    bodyLimit,
    status: 201,
    handler: async ({ services, principal, project, body }) => ({ items: await createModelRevisions(services, principal, project, body.items, body.deleteOldest) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/revisions/list',
    capability: can('READ'),
    body: ListModelRevisionsBody,
    handler: ({ services, project, body }) => listModelRevisions(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/revisions/byids',
    capability: can('READ'),
    body: ByIdsBody(SIMULATOR_LIMITS.byIds),
    handler: ({ services, project, body }) => retrieveItemsJson(modelRevisionSpec, services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/revisions/update',
    summary: "Update simulator model revisions: the status a connector found the revision's file in",
    capability: can('WRITE'),
    body: UpdateModelRevisionsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(modelRevisionSpec, services, project.id, body.items) }),
  }),
  deleteRoute('/simulators/models/revisions/delete', modelRevisionSpec, 'Delete simulator model revisions, with their data and the runs made on them'),

  // Model revision data.
  route({
    method: 'POST',
    path: '/simulators/models/revisions/data/list',
    summary: 'Retrieve the data connectors read from model revisions: flowsheets and other information',
    capability: can('READ'),
    body: ListModelRevisionDataBody,
    handler: ({ services, project, body }) => listModelRevisionData(services, project.id, body.items.map((i) => i.modelRevisionExternalId)),
  }),
  route({
    method: 'POST',
    path: '/simulators/models/revisions/data/update',
    summary: "Write the data a connector read from model revisions' files (called by connectors)",
    capability: can('MANAGE'),
    body: UpdateModelRevisionDataBody,
    bodyLimit: SIMULATOR_LIMITS.revisionDataBytes,
    handler: ({ services, project, body }) => updateModelRevisionData(services, project.id, body.items),
  }),

  // Routines.
  route({
    method: 'POST',
    path: '/simulators/routines',
    capability: can('WRITE'),
    body: CreateRoutinesBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createRoutines(services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/routines/list',
    capability: can('READ'),
    body: ListRoutinesBody,
    handler: ({ services, project, body }) => listRoutines(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/simulators/routines/aggregate',
    capability: can('READ'),
    body: AggregateRoutinesBody,
    handler: ({ services, project, body }) => countRoutines(services, project.id, body.filter),
  }),
  deleteRoute('/simulators/routines/delete', routineSpec),

  // Routine revisions.
  route({
    method: 'POST',
    path: '/simulators/routines/revisions',
    capability: can('WRITE'),
    body: CreateRoutineRevisionsBody,
    bodyLimit,
    status: 201,
    handler: async ({ services, principal, project, body }) => ({ items: await createRoutineRevisions(services, principal, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/routines/revisions/list',
    capability: can('READ'),
    body: ListRoutineRevisionsBody,
    handler: ({ services, project, body }) => listRoutineRevisions(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/simulators/routines/revisions/byids',
    capability: can('READ'),
    body: ByIdsBody(SIMULATOR_LIMITS.routineRevisionByIds),
    handler: async ({ services, project, body }) => ({
      items: (await retrieveItems(routineRevisionSpec, services, project.id, body.items)).map((item) => routineRevisionJson(item)),
    }),
  }),

  // Runs.
  route({
    method: 'POST',
    path: '/simulators/run',
    capability: can('RUN'),
    body: RunBody,
    bodyLimit,
    status: 201,
    handler: async ({ services, principal, project, body }) => ({ items: await createRun(services, principal, project.id, body.items[0]) }),
  }),
  route({
    method: 'POST',
    path: '/simulators/runs/list',
    capability: can('READ'),
    body: ListRunsBody,
    handler: ({ services, project, body }) => listRuns(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/simulators/runs/byids',
    capability: can('READ'),
    body: IdsBody(1000),
    handler: ({ services, project, body }) => retrieveItemsJson(runSpec, services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/simulators/runs/data/list',
    capability: can('READ'),
    body: RunDataBody,
    handler: ({ services, project, body }) => runData(services, project.id, body.items.map((i) => i.runId)),
  }),
  route({
    method: 'POST',
    path: '/simulators/runs/claim',
    summary: "Take queued simulation runs of the integration's simulator for it (called by connectors)",
    capability: can('MANAGE'),
    body: ClaimRunsBody,
    handler: ({ services, project, body }) => claimRuns(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/simulators/run/callback',
    summary: "Report a simulation run's status, inputs and outputs (called by connectors)",
    capability: can('MANAGE'),
    body: RunCallbackBody,
    handler: ({ services, project, body }) => reportRuns(services, project.id, body.items),
  }),

  // Logs.
  route({
    method: 'POST',
    path: '/simulators/logs/byids',
    capability: can('READ'),
    body: IdsBody(SIMULATOR_LIMITS.byIds),
    handler: ({ services, project, body }) => retrieveItemsJson(logSpec, services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/simulators/logs/update',
    summary: 'Add entries to simulator logs (called by connectors)',
    capability: can('MANAGE'),
    body: UpdateLogsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(logSpec, services, project.id, body.items) }),
  }),
];
