/**
 * The assets operations: paths, capabilities and schemas, as data.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { parseExternalIdList, parseIdList, parseSubtreeRefs, queryRange as range } from '../../http/query-params.js';
import {
  AggregateAssetsBody,
  ASSET_LIMITS,
  AssetIdParams,
  AssetIdsBody,
  CreateAssetsBody,
  DeleteAssetsBody,
  ListAssetsBody,
  ListAssetsQuery,
  SearchAssetsBody,
  UpdateAssetsBody,
  type AssetFilter,
  type ListAssetsQuery as ListAssetsQueryT,
} from './schema.js';
import {
  aggregateAssets,
  createAssets,
  deleteAssets,
  getAsset,
  listAssets,
  retrieveAssets,
  searchAssets,
  updateAssets,
} from './service.js';

const READ = { acl: 'assetsAcl', action: 'READ' };
const WRITE = { acl: 'assetsAcl', action: 'WRITE' };

/** The query-parameter form of the basic filter, as the filter object. */
function filterFromQuery(q: ListAssetsQueryT): AssetFilter {
  const max = ASSET_LIMITS.filterIds;
  const f: AssetFilter = {
    name: q.name,
    parentIds: parseIdList(q.parentIds, 'parentIds', max),
    parentExternalIds: parseExternalIdList(q.parentExternalIds, 'parentExternalIds', max),
    rootIds: parseIdList(q.rootIds, 'rootIds', max)?.map((id) => ({ id })),
    assetSubtreeIds: parseSubtreeRefs(q.assetSubtreeIds, q.assetSubtreeExternalIds, max),
    source: q.source,
    root: q.root,
    createdTime: range(q.minCreatedTime, q.maxCreatedTime),
    lastUpdatedTime: range(q.minLastUpdatedTime, q.maxLastUpdatedTime),
    externalIdPrefix: q.externalIdPrefix,
  };
  for (const k of Object.keys(f) as Array<keyof AssetFilter>) if (f[k] === undefined) delete f[k];
  return f;
}

export const assetRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/assets',
    capability: WRITE,
    body: CreateAssetsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createAssets(services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/assets',
    capability: READ,
    query: ListAssetsQuery,
    handler: ({ services, project, query }) =>
      listAssets(
        services,
        project.id,
        { filter: filterFromQuery(query), limit: query.limit, cursor: query.cursor, partition: query.partition },
        query.includeMetadata ?? true,
      ),
  }),
  route({
    method: 'GET',
    path: '/assets/:id',
    capability: READ,
    params: AssetIdParams,
    handler: ({ services, project, params }) => getAsset(services, project.id, params.id),
  }),
  route({
    method: 'POST',
    path: '/assets/list',
    capability: READ,
    body: ListAssetsBody,
    handler: ({ services, project, body }) => listAssets(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/assets/byids',
    capability: READ,
    body: AssetIdsBody,
    handler: async ({ services, project, body }) => ({ items: await retrieveAssets(services, project.id, body) }),
  }),
  route({
    method: 'POST',
    path: '/assets/update',
    capability: WRITE,
    body: UpdateAssetsBody,
    handler: async ({ services, project, body }) => ({ items: await updateAssets(services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/assets/delete',
    capability: WRITE,
    body: DeleteAssetsBody,
    handler: async ({ services, project, body }) => {
      await deleteAssets(services, project.id, body);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/assets/search',
    capability: READ,
    body: SearchAssetsBody,
    handler: ({ services, project, body }) => searchAssets(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/assets/aggregate',
    capability: READ,
    body: AggregateAssetsBody,
    handler: ({ services, project, body }) => aggregateAssets(services, project.id, body),
  }),
];
