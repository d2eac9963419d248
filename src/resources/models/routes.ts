/**
 * The data modeling operations: paths, capabilities and schemas, as data. Definitions (spaces, containers,
 * views, data models, statistics) are guarded by `dataModelsAcl`, instances by `dataModelInstancesAcl`;
 * both are scoped by space.
 */
import { syncInstances } from './instance-sync.js';
import { SyncInstancesBody } from './sync-schema.js';
import { Type } from '@sinclair/typebox';
import { accessFor } from '../../auth/access.js';
import { grantsFor } from '../../auth/principal.js';
import { route, type ApiRoute } from '../../http/route.js';
import {
  ApplyContainersBody,
  ContainerIdsBody,
  ContainerSubObjectsBody,
  InspectContainersBody,
  ListContainersQuery,
} from './container-schema.js';
import { ApplyDataModelsBody, DataModelByIdsQuery, DataModelIdsBody, ListDataModelsQuery } from './data-model-schema.js';
import {
  AggregateInstancesBody,
  ApplyInstancesBody,
  DeleteInstancesBody,
  InspectInstancesBody,
  InstanceIdsBody,
  ListInstancesBody,
  SearchInstancesBody,
} from './instance-schema.js';
import { queryInstances } from './instance-query.js';
import { aggregateInstances, searchInstances } from './instance-search.js';
import { QueryInstancesBody } from './query-schema.js';
import { projectStatistics, spaceStatistics } from './statistics.js';
import { inspectInstances, instancesByIds, listInstances } from './instance-reads-store.js';
import { applyInstances, deleteInstances } from './instance-writes-store.js';
import { withGlobalLayer } from './global-layer.js';
import { parseUsedFor } from './list-params.js';
import {
  applyContainers,
  applyDataModels,
  applySpaces,
  applyViews,
  containersByIds,
  dataModelsByIds,
  deleteContainerParts,
  deleteContainers,
  deleteDataModels,
  deleteSpaces,
  deleteViews,
  inspectContainers,
  listContainers,
  listDataModels,
  listSpaces,
  listViews,
  retryContainerParts,
  spacesByIds,
  viewsByIds,
} from './schema-service.js';
import { INSTANCES_ACL } from './space-access.js';
import { ApplySpacesBody, ListSpacesQuery, SpaceIdsBody } from './space-schema.js';
import { ApplyViewsBody, ListViewsQuery, VersionedIdsBody, ViewByIdsQuery, ViewIdsBody } from './view-schema.js';

export const MODELS_READ = { acl: 'dataModelsAcl', action: 'READ' };
export const MODELS_WRITE = { acl: 'dataModelsAcl', action: 'WRITE' };

const NoQuery = Type.Object({}, { additionalProperties: false });

const schemaRoutes: ApiRoute[] = [
  // Spaces
  route({
    method: 'POST',
    path: '/models/spaces',
    capability: MODELS_WRITE,
    body: ApplySpacesBody,
    handler: ({ services, project, body }) => applySpaces(services, project.id, body.items),
  }),
  route({
    method: 'GET',
    path: '/models/spaces',
    capability: MODELS_READ,
    query: ListSpacesQuery,
    handler: ({ services, project, query }) => listSpaces(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/models/spaces/byids',
    capability: MODELS_READ,
    body: SpaceIdsBody,
    handler: ({ services, project, body }) => spacesByIds(services, project.id, body.items.map((s) => s.space)),
  }),
  route({
    method: 'POST',
    path: '/models/spaces/delete',
    capability: MODELS_WRITE,
    body: SpaceIdsBody,
    handler: ({ services, project, body }) => deleteSpaces(services, project.id, body.items.map((s) => s.space)),
  }),

  // Containers
  route({
    method: 'POST',
    path: '/models/containers',
    capability: MODELS_WRITE,
    body: ApplyContainersBody,
    handler: ({ services, project, body }) => applyContainers(services, project.id, body.items),
  }),
  route({
    method: 'GET',
    path: '/models/containers',
    capability: MODELS_READ,
    query: ListContainersQuery,
    handler: ({ services, project, query }) => {
      const usedFor = parseUsedFor(query.usedFor);
      return listContainers(services, project.id, query, usedFor);
    },
  }),
  route({
    method: 'POST',
    path: '/models/containers/byids',
    capability: MODELS_READ,
    body: ContainerIdsBody,
    handler: ({ services, project, body }) => containersByIds(services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/models/containers/delete',
    capability: MODELS_WRITE,
    body: ContainerIdsBody,
    handler: ({ services, project, body }) => deleteContainers(services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/models/containers/inspect',
    capability: MODELS_READ,
    body: InspectContainersBody,
    handler: ({ services, project, body }) => inspectContainers(services, project.id, body),
  }),
  ...(['indexes', 'constraints'] as const).map((kind) =>
    route({
      method: 'POST',
      path: `/models/containers/${kind}/delete`,
      capability: MODELS_WRITE,
      body: ContainerSubObjectsBody,
      handler: ({ services, project, body }) => deleteContainerParts(services, project.id, body.items, kind),
    }),
  ),
  ...(['indexes', 'constraints', 'properties'] as const).map((kind) =>
    route({
      method: 'POST',
      path: `/models/containers/${kind}/retry`,
      capability: MODELS_WRITE,
      body: ContainerSubObjectsBody,
      handler: ({ services, project, body }) => retryContainerParts(services, project.id, body.items, kind),
    }),
  ),

  // Views
  route({
    method: 'POST',
    path: '/models/views',
    capability: MODELS_WRITE,
    body: ApplyViewsBody,
    handler: ({ services, project, body }) => applyViews(services, project.id, body.items),
  }),
  route({
    method: 'GET',
    path: '/models/views',
    capability: MODELS_READ,
    query: ListViewsQuery,
    handler: ({ services, project, query }) => listViews(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/models/views/byids',
    capability: MODELS_READ,
    body: ViewIdsBody,
    query: ViewByIdsQuery,
    handler: ({ services, project, body, query }) =>
      viewsByIds(services, project.id, body.items, body.includeInheritedProperties ?? query.includeInheritedProperties ?? true),
  }),
  route({
    method: 'POST',
    path: '/models/views/delete',
    capability: MODELS_WRITE,
    body: VersionedIdsBody,
    handler: ({ services, project, body }) => deleteViews(services, project.id, body.items),
  }),

  // Data models
  route({
    method: 'POST',
    path: '/models/datamodels',
    capability: MODELS_WRITE,
    body: ApplyDataModelsBody,
    handler: ({ services, project, body }) => applyDataModels(services, project.id, body.items),
  }),
  route({
    method: 'GET',
    path: '/models/datamodels',
    capability: MODELS_READ,
    query: ListDataModelsQuery,
    handler: ({ services, project, query }) => listDataModels(services, project.id, query),
  }),
  route({
    method: 'POST',
    path: '/models/datamodels/byids',
    capability: MODELS_READ,
    body: DataModelIdsBody,
    query: DataModelByIdsQuery,
    handler: ({ services, project, body, query }) => dataModelsByIds(services, project.id, body.items, query.inlineViews ?? false),
  }),
  route({
    method: 'POST',
    path: '/models/datamodels/delete',
    capability: MODELS_WRITE,
    body: VersionedIdsBody,
    query: NoQuery,
    handler: ({ services, project, body }) => deleteDataModels(services, project.id, body.items),
  }),
];

export const INSTANCES_READ = { acl: INSTANCES_ACL, action: 'READ' };
export const INSTANCES_WRITE = { acl: INSTANCES_ACL, action: 'WRITE' };
/** Changing properties of existing instances: `WRITE_PROPERTIES`, or `WRITE`, which includes it. */
export const INSTANCES_WRITE_PROPERTIES = { acl: INSTANCES_ACL, action: 'WRITE_PROPERTIES', impliedBy: ['WRITE'] };

const instanceRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/models/instances',
    capability: INSTANCES_WRITE_PROPERTIES,
    body: ApplyInstancesBody,
    // Creating and deleting instances needs WRITE itself, where the instances are.
    handler: ({ services, project, principal, body }) =>
      applyInstances(services, project.id, body, accessFor(INSTANCES_WRITE, grantsFor(principal, INSTANCES_WRITE, project.name))),
  }),
  route({
    method: 'POST',
    path: '/models/instances/delete',
    capability: INSTANCES_WRITE,
    body: DeleteInstancesBody,
    handler: ({ services, project, body }) => deleteInstances(services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/models/instances/byids',
    capability: INSTANCES_READ,
    body: InstanceIdsBody,
    handler: ({ services, project, body }) => instancesByIds(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/models/instances/list',
    capability: INSTANCES_READ,
    body: ListInstancesBody,
    handler: ({ services, project, body }) => listInstances(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/models/instances/sync',
    capability: INSTANCES_READ,
    body: SyncInstancesBody,
    handler: ({ services, project, body }) => syncInstances(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/models/instances/query',
    capability: INSTANCES_READ,
    body: QueryInstancesBody,
    handler: ({ services, project, body }) => queryInstances(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/models/instances/inspect',
    capability: INSTANCES_READ,
    body: InspectInstancesBody,
    handler: ({ services, project, body }) => inspectInstances(services, project.id, body),
  }),
];

const otherRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/models/instances/search',
    capability: INSTANCES_READ,
    body: SearchInstancesBody,
    handler: ({ services, project, body }) => searchInstances(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/models/instances/aggregate',
    capability: INSTANCES_READ,
    body: AggregateInstancesBody,
    handler: ({ services, project, body }) => aggregateInstances(services, project.id, body),
  }),
  route({
    method: 'GET',
    path: '/models/statistics',
    capability: MODELS_READ,
    query: NoQuery,
    handler: ({ services, project }) => projectStatistics(services, project.id),
  }),
  route({
    method: 'GET',
    path: '/models/statistics/spaces',
    capability: MODELS_READ,
    query: NoQuery,
    handler: ({ services, project }) => spaceStatistics(services, project.id),
  }),
  route({
    method: 'POST',
    path: '/models/statistics/spaces/byids',
    capability: MODELS_READ,
    body: SpaceIdsBody,
    handler: ({ services, project, body }) => spaceStatistics(services, project.id, body.items.map((s) => s.space)),
  }),
];

/** Every data modeling operation sees the core data model, which the global layer holds. */
export const modelRoutes: ApiRoute[] = [...schemaRoutes, ...instanceRoutes, ...otherRoutes].map(withGlobalLayer);
