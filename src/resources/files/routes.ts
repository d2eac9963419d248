/**
 * The files operations: paths, capabilities and schemas, as data. The content itself moves through the
 * signed links of content.ts.
 */
import { parseExternalIdList, parseIdList, parseSubtreeRefs, queryRange as range } from '../../http/query-params.js';
import { route, type ApiRoute } from '../../http/route.js';
import type { RefInput } from '../../query/refs.js';
import { getItem, getItemJson, inWrite, retrieveItemsJson, writableIds, type ResourceSpec } from '../crud.js';
import { completeMultipart, downloadLinks, startUpload } from './content.js';
import { fileIcon } from './icon.js';
import {
  AggregateFilesBody,
  CompleteMultipartBody,
  CreateFileQuery,
  DeleteFilesBody,
  DownloadLinkBody,
  DownloadLinkQuery,
  FILE_LIMITS,
  FileCreate,
  FileIdParams,
  FileIdsBody,
  IconQuery,
  InitMultipartQuery,
  ListFilesBody,
  ListFilesQuery,
  PartsQuery,
  SearchFilesBody,
  UpdateFilesBody,
  UploadLinkBody,
  type FileFilter,
  type ListFilesQuery as ListFilesQueryT,
} from './schema.js';
import { aggregateFiles, createOrOverwrite, deleteFiles, fileSpec, listFiles, searchFiles, updateFiles } from './service.js';
import type { Services } from '../../http/services.js';

const spec = fileSpec as ResourceSpec<unknown>;

const READ = { acl: 'filesAcl', action: 'READ' };
const WRITE = { acl: 'filesAcl', action: 'WRITE' };

/** The query-parameter form of the filter, as the filter object. */
function filterFromQuery(q: ListFilesQueryT): FileFilter {
  const max = FILE_LIMITS.filterIds;
  const f: FileFilter = {
    name: q.name,
    mimeType: q.mimeType,
    source: q.source,
    assetIds: parseIdList(q.assetIds, 'assetIds', max),
    assetExternalIds: parseExternalIdList(q.assetExternalIds, 'assetExternalIds', max),
    rootAssetIds: parseIdList(q.rootAssetIds, 'rootAssetIds', max)?.map((id) => ({ id })),
    assetSubtreeIds: parseSubtreeRefs(q.assetSubtreeIds, q.assetSubtreeExternalIds, max),
    dataSetIds: parseIdList(q.dataSetIds, 'dataSetIds', max)?.map((id) => ({ id })),
    createdTime: range(q.minCreatedTime, q.maxCreatedTime),
    lastUpdatedTime: range(q.minLastUpdatedTime, q.maxLastUpdatedTime),
    uploadedTime: range(q.minUploadedTime, q.maxUploadedTime),
    sourceCreatedTime: range(q.minSourceCreatedTime, q.maxSourceCreatedTime),
    sourceModifiedTime: range(q.minSourceModifiedTime, q.maxSourceModifiedTime),
    externalIdPrefix: q.externalIdPrefix,
    uploaded: q.uploaded,
  };
  for (const k of Object.keys(f) as Array<keyof FileFilter>) if (f[k] === undefined) delete f[k];
  return f;
}

/** A file created (or overwritten) with an upload started, in one write. */
function createWithUpload(services: Services, projectId: number, body: FileCreate, overwrite: boolean, parts?: number) {
  return inWrite(services, async (services) => {
    const file = await createOrOverwrite(services, projectId, body, overwrite);
    return { ...file, ...(await startUpload(services, projectId, file.id, parts)) };
  });
}

/** An upload of an existing file the request may write, in one write. */
function uploadFor(services: Services, projectId: number, ref: RefInput, parts?: number) {
  return inWrite(services, async (services) => {
    const [id] = await writableIds(spec, services, projectId, [ref]);
    const file = await getItem(spec, services, projectId, id);
    return { items: [{ ...file, ...(await startUpload(services, projectId, file.id, parts)) }] };
  });
}

export const fileRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/files',
    capability: WRITE,
    body: FileCreate,
    query: CreateFileQuery,
    status: 201,
    handler: ({ services, project, body, query }) => createWithUpload(services, project.id, body, query.overwrite ?? false),
  }),
  route({
    method: 'GET',
    path: '/files',
    capability: READ,
    query: ListFilesQuery,
    handler: ({ services, project, query }) => listFiles(services, project.id, { filter: filterFromQuery(query), limit: query.limit, cursor: query.cursor, partition: query.partition }),
  }),
  route({
    method: 'POST',
    path: '/files/initmultipartupload',
    capability: WRITE,
    body: FileCreate,
    query: InitMultipartQuery,
    status: 201,
    handler: ({ services, project, body, query }) => createWithUpload(services, project.id, body, query.overwrite ?? false, query.parts),
  }),
  route({
    method: 'POST',
    path: '/files/uploadlink',
    capability: WRITE,
    body: UploadLinkBody,
    handler: ({ services, project, body }) => uploadFor(services, project.id, body.items[0]),
  }),
  route({
    method: 'POST',
    path: '/files/multiuploadlink',
    capability: WRITE,
    body: UploadLinkBody,
    query: PartsQuery,
    handler: ({ services, project, body, query }) => uploadFor(services, project.id, body.items[0], query.parts),
  }),
  route({
    method: 'POST',
    path: '/files/completemultipartupload',
    capability: WRITE,
    body: CompleteMultipartBody,
    handler: async ({ services, project, body }) => {
      const { uploadId, ...ref } = body;
      await completeMultipart(services, project.id, ref, uploadId);
      return {};
    },
  }),
  route({
    method: 'GET',
    path: '/files/icon',
    capability: READ,
    query: IconQuery,
    handler: ({ services, project, query }) => fileIcon(services, project.id, query),
  }),
  route({
    method: 'GET',
    path: '/files/:id',
    capability: READ,
    params: FileIdParams,
    handler: ({ services, project, params }) => getItemJson(spec, services, project.id, params.id),
  }),
  route({
    method: 'POST',
    path: '/files/list',
    capability: READ,
    body: ListFilesBody,
    handler: ({ services, project, body }) => listFiles(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/files/byids',
    capability: READ,
    body: FileIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/files/search',
    capability: READ,
    body: SearchFilesBody,
    handler: ({ services, project, body }) => searchFiles(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/files/aggregate',
    capability: READ,
    body: AggregateFilesBody,
    handler: ({ services, project, body }) => aggregateFiles(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/files/update',
    capability: WRITE,
    body: UpdateFilesBody,
    handler: async ({ services, project, body }) => ({ items: await updateFiles(services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/files/delete',
    capability: WRITE,
    body: DeleteFilesBody,
    handler: async ({ services, project, body }) => {
      await deleteFiles(services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/files/downloadlink',
    capability: READ,
    body: DownloadLinkBody,
    query: DownloadLinkQuery,
    handler: ({ services, project, body, query }) => downloadLinks(services, project.id, body.items, query.extendedExpiration ?? false),
  }),
];
