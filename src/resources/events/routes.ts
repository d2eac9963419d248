/**
 * The events operations: paths, capabilities and schemas, as data.
 */
import { parseExternalIdList, parseIdList, parseStringList, parseSubtreeRefs, queryRange as range } from '../../http/query-params.js';
import { route, type ApiRoute } from '../../http/route.js';
import {
  AggregateEventsBody,
  CreateEventsBody,
  EVENT_LIMITS,
  EventIdParams,
  EventIdsBody,
  ListEventsBody,
  ListEventsQuery,
  SearchEventsBody,
  UpdateEventsBody,
  type EventFilter,
  type ListEventsQuery as ListEventsQueryT,
} from './schema.js';
import { createItems, deleteItems, getItemJson, retrieveItemsJson, updateItems, type ResourceSpec } from '../crud.js';
import { aggregateEvents, eventSpec, listEvents, searchEvents } from './service.js';

const spec = eventSpec as ResourceSpec<unknown>;

const READ = { acl: 'eventsAcl', action: 'READ' };
const WRITE = { acl: 'eventsAcl', action: 'WRITE' };

/** The query-parameter form of the basic filter, as the filter object. */
function filterFromQuery(q: ListEventsQueryT): EventFilter {
  const f: EventFilter = {
    startTime: range(q.minStartTime, q.maxStartTime),
    endTime: range(q.minEndTime, q.maxEndTime),
    activeAtTime: range(q.minActiveAtTime, q.maxActiveAtTime),
    createdTime: range(q.minCreatedTime, q.maxCreatedTime),
    lastUpdatedTime: range(q.minLastUpdatedTime, q.maxLastUpdatedTime),
    assetIds: parseIdList(q.assetIds, 'assetIds', EVENT_LIMITS.filterAssetIds),
    assetExternalIds: parseExternalIdList(q.assetExternalIds, 'assetExternalIds', EVENT_LIMITS.filterAssetIds),
    assetSubtreeIds: parseSubtreeRefs(q.assetSubtreeIds, q.assetSubtreeExternalIds, EVENT_LIMITS.filterAssetSubtrees),
    source: q.source,
    type: q.type,
    subtype: q.subtype,
    externalIdPrefix: q.externalIdPrefix,
  };
  for (const k of Object.keys(f) as Array<keyof EventFilter>) if (f[k] === undefined) delete f[k];
  return f;
}

export const eventRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/events',
    capability: WRITE,
    body: CreateEventsBody,
    status: 201,
    handler: async ({ services, project, body }) => ({ items: await createItems(eventSpec, services, project.id, body.items) }),
  }),
  route({
    method: 'GET',
    path: '/events',
    capability: READ,
    query: ListEventsQuery,
    handler: ({ services, project, query }) =>
      listEvents(
        services,
        project.id,
        { filter: filterFromQuery(query), limit: query.limit, cursor: query.cursor, partition: query.partition, sort: parseStringList(query.sort, 'sort') },
        query.includeMetadata ?? true,
      ),
  }),
  route({
    method: 'GET',
    path: '/events/:id',
    capability: READ,
    params: EventIdParams,
    handler: ({ services, project, params }) => getItemJson(spec, services, project.id, params.id),
  }),
  route({
    method: 'POST',
    path: '/events/list',
    capability: READ,
    body: ListEventsBody,
    handler: ({ services, project, body }) => listEvents(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/events/byids',
    capability: READ,
    body: EventIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/events/update',
    capability: WRITE,
    body: UpdateEventsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/events/delete',
    capability: WRITE,
    body: EventIdsBody,
    handler: async ({ services, project, body }) => {
      await deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
      return {};
    },
  }),
  route({
    method: 'POST',
    path: '/events/search',
    capability: READ,
    body: SearchEventsBody,
    handler: ({ services, project, body }) => searchEvents(services, project.id, body),
  }),
  route({
    method: 'POST',
    path: '/events/aggregate',
    capability: READ,
    body: AggregateEventsBody,
    handler: ({ services, project, body }) => aggregateEvents(services, project.id, body),
  }),
];
