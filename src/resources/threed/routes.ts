/**
 * The 3D operations: models, their revisions, a processed revision's nodes, asset mappings, logs, outputs
 * and thumbnail, and the 3D files served under `/3d/files`.
 */
import { bearerToken } from '../../auth/verify.js';
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, getItemJson, retrieveItemsJson, updateItems, type ResourceSpec } from '../crud.js';
import {
  AssetParams,
  CreateMappingsBody,
  CreateModelsBody,
  CreateRevisionsBody,
  DeleteByIdBody,
  DeleteMappingsBody,
  FileParams,
  FilterMappingsBody,
  FilterNodesBody,
  ListMappingsQuery,
  ListModelsQuery,
  ListNodesQuery,
  ListRevisionsQuery,
  LogsQuery,
  ModelParams,
  NodeIdsBody,
  NodeParams,
  NodesInBoxBody,
  OutputsQuery,
  PageOnlyQuery,
  RevisionParams,
  SubPathParams,
  ThumbnailBody,
  UpdateModelsBody,
  UpdateRevisionsBody,
} from './schema.js';
import {
  createMappings,
  createModels,
  createRevisions,
  deleteMappings,
  filterMappings,
  filterNodes,
  listAncestors,
  listMappings,
  listModels,
  listNodes,
  listRevisions,
  modelSpec,
  nodesOf,
  nodesInBox,
  nodesOfAsset,
  revisionLogs,
  revisionOf,
  revisionOutputs,
  revisionsOf,
  setThumbnail,
  threedFile,
} from './service.js';
import {
  CadLinksBody,
  Image360LinksBody,
  Image360UnlinksBody,
  linkCadNodes,
  linkImages,
  linkVolumes,
  PointCloudLinksBody,
  PointCloudUnlinksBody,
  unlinkCadNodes,
  unlinkImages,
  unlinkVolumes,
} from './contextualization.js';
import { createJobs, CreateJobsBody, deleteJobs, DeleteJobsBody, listJobs, ListJobsBody, listRejections, ListRejectionsBody, listResults, ListResultsBody, RejectionsBody, updateRejections } from './jobs.js';

const instances = (action: 'READ' | 'WRITE') => ({ acl: 'dataModelInstancesAcl', action });
// The reference names the core data model's spaces (`cdf_cdm`, `cdf_cdm_3d`) as what its schema must reach.
const schemaRead = [{ acl: 'dataModelsAcl', action: 'READ' }];
const models = modelSpec as ResourceSpec<unknown>;
const can = (action: 'CREATE' | 'READ' | 'UPDATE' | 'DELETE') => ({ acl: 'threedAcl', action });

export const threedRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/3d/models',
    capability: can('CREATE'),
    body: CreateModelsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createModels(services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/3d/models',
    capability: can('READ'),
    query: ListModelsQuery,
    handler: ({ services, project, query }) => listModels(services, project.id, query),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId',
    capability: can('READ'),
    params: ModelParams,
    handler: ({ services, project, params }) => getItemJson(models, services, project.id, params.modelId),
  }),
  route({
    method: 'POST',
    path: '/3d/models/update',
    capability: can('UPDATE'),
    body: UpdateModelsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(models, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/3d/models/delete',
    capability: can('DELETE'),
    body: DeleteByIdBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(models, services, project.id, body.items);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions',
    capability: can('CREATE'),
    params: ModelParams,
    body: CreateRevisionsBody,
    status: 201,
    handler: async ({ services, project, params, body }) => ({ items: await createRevisions(services, project.id, params.modelId, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions',
    capability: can('READ'),
    params: ModelParams,
    query: ListRevisionsQuery,
    handler: async ({ services, project, params, query }) =>
      listRevisions(services, project.id, (await revisionsOf(services, project.id, params.modelId)) as ResourceSpec<unknown>, query),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions/:revisionId',
    capability: can('READ'),
    params: RevisionParams,
    handler: async ({ services, project, params }) =>
      getItemJson((await revisionsOf(services, project.id, params.modelId)) as ResourceSpec<unknown>, services, project.id, { id: params.revisionId }),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/update',
    capability: can('UPDATE'),
    params: ModelParams,
    body: UpdateRevisionsBody,
    handler: async ({ services, project, params, body }) => ({
      items: await updateItems((await revisionsOf(services, project.id, params.modelId)) as ResourceSpec<unknown>, services, project.id, body.items),
    }),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/delete',
    capability: can('DELETE'),
    params: ModelParams,
    body: DeleteByIdBody,
    handler: async ({ services, project, params, body }) => {
      await deleteItems((await revisionsOf(services, project.id, params.modelId)) as ResourceSpec<unknown>, services, project.id, body.items);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions/:revisionId/logs',
    capability: can('READ'),
    params: RevisionParams,
    query: LogsQuery,
    handler: async ({ services, project, params, query }) =>
      revisionLogs(services, project.id, await revisionOf(services, project.id, params.modelId, params.revisionId), query.severity),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions/:revisionId/outputs',
    capability: can('READ'),
    params: RevisionParams,
    query: OutputsQuery,
    handler: async ({ services, project, params, query }) =>
      revisionOutputs(services, project.id, await revisionOf(services, project.id, params.modelId, params.revisionId), query.format),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/:revisionId/thumbnail',
    capability: can('UPDATE'),
    params: RevisionParams,
    body: ThumbnailBody,
    handler: ({ services, project, params, body }) => setThumbnail(services, project.id, project.name, params.modelId, params.revisionId, body.fileId),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions/:revisionId/nodes',
    capability: can('READ'),
    params: RevisionParams,
    query: ListNodesQuery,
    handler: async ({ services, project, params, query }) => listNodes(services, project.id, await nodesOf(services, project.id, params.modelId, params.revisionId), query),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/:revisionId/nodes/list',
    capability: can('READ'),
    params: RevisionParams,
    body: FilterNodesBody,
    handler: async ({ services, project, params, body }) => filterNodes(services, project.id, await nodesOf(services, project.id, params.modelId, params.revisionId), body),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/:revisionId/nodes/byids',
    capability: can('READ'),
    params: RevisionParams,
    body: NodeIdsBody,
    handler: async ({ services, project, params, body }) => retrieveItemsJson(await nodesOf(services, project.id, params.modelId, params.revisionId), services, project.id, body.items),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions/:revisionId/nodes/:nodeId/ancestors',
    capability: can('READ'),
    params: NodeParams,
    query: PageOnlyQuery,
    handler: async ({ services, project, params, query }) =>
      listAncestors(services, project.id, await nodesOf(services, project.id, params.modelId, params.revisionId), params.nodeId, query),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/:revisionId/mappings',
    capability: can('UPDATE'),
    params: RevisionParams,
    body: CreateMappingsBody,
    status: 201,
    handler: async ({ services, project, params, body }) => ({ items: await createMappings(services, project.id, params.modelId, params.revisionId, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/3d/models/:modelId/revisions/:revisionId/mappings',
    capability: can('READ'),
    params: RevisionParams,
    query: ListMappingsQuery,
    handler: ({ services, project, params, query }) => listMappings(services, project.id, params.modelId, params.revisionId, query),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/:revisionId/mappings/list',
    capability: can('READ'),
    params: RevisionParams,
    body: FilterMappingsBody,
    handler: ({ services, project, params, body }) => filterMappings(services, project.id, params.modelId, params.revisionId, body),
  }),
  route({
    method: 'POST',
    path: '/3d/models/:modelId/revisions/:revisionId/mappings/delete',
    capability: can('DELETE'),
    params: RevisionParams,
    body: DeleteMappingsBody,
    handler: async ({ services, project, params, body }) => {
      await deleteMappings(services, project.id, params.modelId, params.revisionId, body.items as Array<{ nodeId: number; assetId: number }>);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/3d/mappings/:assetId/modelnodes',
    capability: can('READ'),
    params: AssetParams,
    query: PageOnlyQuery,
    handler: ({ services, project, params, query }) => nodesOfAsset(services, project.id, params.assetId, query),
  }),
  route({
    method: 'GET',
    path: '/3d/files/:threedFileId',
    capability: can('READ'),
    params: FileParams,
    handler: ({ services, project, params }) => threedFile(services, project.id, params.threedFileId),
  }),
  route({
    method: 'GET',
    path: '/3d/files/:threedFileId/:subPath',
    capability: can('READ'),
    params: SubPathParams,
    handler: ({ services, project, params }) => threedFile(services, project.id, params.threedFileId, params.subPath),
  }),
  route({
    method: 'POST',
    path: '/3d/nodes/list',
    capability: can('READ'),
    alsoNeeds: [instances('READ')],
    body: NodesInBoxBody,
    handler: ({ services, project, headers, body }) => nodesInBox(services, project, bearerToken(headers.authorization), body),
  }),
  route({
    method: 'POST',
    path: '/3d/jobs',
    capability: instances('WRITE'),
    alsoNeeds: schemaRead,
    body: CreateJobsBody,
    status: 201,
    handler: ({ services, project, body }) => createJobs(services, project.name, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/3d/jobs/list',
    capability: instances('READ'),
    alsoNeeds: schemaRead,
    body: ListJobsBody,
    handler: ({ services, project, body }) => listJobs(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/3d/jobs/delete',
    capability: instances('WRITE'),
    alsoNeeds: schemaRead,
    body: DeleteJobsBody,
    handler: ({ services, project, body }) => deleteJobs(services, project.id, body.items),
  }),
  route({
    method: 'POST',
    path: '/3d/job/results/list',
    capability: instances('READ'),
    body: ListResultsBody,
    handler: ({ services, project, body }) => listResults(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/3d/job/result/rejections',
    capability: instances('WRITE'),
    body: RejectionsBody,
    handler: ({ services, project, body }) => updateRejections(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/3d/job/result/rejections/list',
    capability: instances('READ'),
    body: ListRejectionsBody,
    handler: ({ services, project, body }) => listRejections(services, project.id, body),
  }),
  ...(
    [
      // Linking CAD nodes reads the nodes of a 3D revision: it needs to see it (threedAcl:READ, within its scope).
      ['/3d/contextualization/cad', CadLinksBody, linkCadNodes, 'Links CAD nodes of a revision to CogniteAsset instances', true],
      ['/3d/contextualization/cad/delete', CadLinksBody, unlinkCadNodes, 'Removes links between CAD nodes of a revision and CogniteAsset instances', false],
      ['/3d/contextualization/image360', Image360LinksBody, linkImages, 'Links 360 images of a revision to CogniteAsset instances with annotation polygons', false],
      ['/3d/contextualization/image360/delete', Image360UnlinksBody, unlinkImages, 'Removes the annotations between 360 images of a revision and CogniteAsset instances', false],
      ['/3d/contextualization/pointcloud', PointCloudLinksBody, linkVolumes, 'Links point cloud volumes of a revision to CogniteAsset instances', false],
      ['/3d/contextualization/pointcloud/delete', PointCloudUnlinksBody, unlinkVolumes, 'Removes links between point cloud volumes of a revision and CogniteAsset instances', false],
    ] as const
  ).map(([path, body, handle, summary, readsNodes]) =>
    route({
      method: 'POST',
      path,
      summary,
      capability: instances('WRITE'),
      alsoNeeds: readsNodes ? [instances('READ'), can('READ')] : [instances('READ')],
      body,
      handler: ({ services, project, headers, body }) => (handle as (...args: unknown[]) => Promise<object>)(services, project, bearerToken(headers.authorization), body),
    }),
  ),
];
