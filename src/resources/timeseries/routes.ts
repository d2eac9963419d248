/**
 * The time series (metadata) operations. Creating a series without `externalId` is the one operation that
 * is not idempotent: every successful request creates new series.
 */
import { parseIdList } from '../../http/query-params.js';
import { route, type ApiRoute } from '../../http/route.js';
import { deleteItems, retrieveItemsJson, updateItems } from '../crud.js';
import {
  AggregateTimeSeriesBody,
  CreateTimeSeriesBody,
  ListTimeSeriesBody,
  ListTimeSeriesQuery,
  SearchTimeSeriesBody,
  TIME_SERIES_LIMITS,
  TimeSeriesDeleteBody,
  TimeSeriesLookupBody,
  UpdateTimeSeriesBody,
} from './schema.js';
import { aggregateTimeSeries, anyTimeSeriesSpec as spec, createTimeSeries, listTimeSeries, searchTimeSeries } from './service.js';

const READ = { acl: 'timeSeriesAcl', action: 'READ' };
const WRITE = { acl: 'timeSeriesAcl', action: 'WRITE' };

export const timeSeriesRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/timeseries',
    capability: WRITE,
    body: CreateTimeSeriesBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createTimeSeries(services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/timeseries',
    capability: READ,
    query: ListTimeSeriesQuery,
    handler: ({ services, project, query }) => {
      const assetIds = parseIdList(query.assetIds, 'assetIds', TIME_SERIES_LIMITS.filterIds);
      const rootAssetIds = parseIdList(query.rootAssetIds, 'rootAssetIds', TIME_SERIES_LIMITS.filterIds);
      const filter = {
        ...(assetIds ? { assetIds } : {}),
        ...(rootAssetIds ? { rootAssetIds } : {}),
        ...(query.externalIdPrefix !== undefined ? { externalIdPrefix: query.externalIdPrefix } : {}),
      };
      return listTimeSeries(
        services,
        project.id,
        { filter, limit: query.limit, cursor: query.cursor, partition: query.partition },
        query.includeMetadata ?? true,
      );
    },
  }),
  route({
    method: 'POST',
    path: '/timeseries/list',
    capability: READ,
    body: ListTimeSeriesBody,
    handler: ({ services, project, body }) => listTimeSeries(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/timeseries/byids',
    capability: READ,
    body: TimeSeriesLookupBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/timeseries/update',
    capability: WRITE,
    body: UpdateTimeSeriesBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/timeseries/delete',
    capability: WRITE,
    body: TimeSeriesDeleteBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/timeseries/search',
    capability: READ,
    body: SearchTimeSeriesBody,
    handler: ({ services, project, body }) => searchTimeSeries(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/timeseries/aggregate',
    capability: READ,
    body: AggregateTimeSeriesBody,
    handler: ({ services, project, body }) => aggregateTimeSeries(services, project.id, body),
  }),
];
