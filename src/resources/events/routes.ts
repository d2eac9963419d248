/**
 * The events operations: paths, capabilities and schemas, as data.
 */
import { badRequest } from '../../http/errors.js';
import { route, type ApiRoute } from '../../http/route.js';
import { MAX_SAFE_ID } from '../../http/common-schemas.js';
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
import { createItems, deleteItems, getItem, retrieveItems, updateItems, type ResourceSpec } from '../crud.js';
import { aggregateEvents, eventSpec, listEvents, searchEvents } from './service.js';

const spec = eventSpec as ResourceSpec<unknown>;

const READ = { acl: 'eventsAcl', action: 'READ' };
const WRITE = { acl: 'eventsAcl', action: 'WRITE' };

function range(min: number | undefined, max: number | undefined) {
  return min === undefined && max === undefined ? undefined : { min, max };
}

function parseIdList(raw: string | undefined, name: string): number[] | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw badRequest(`query parameter "${name}": expected a JSON array of ids, such as [1,2,3]`);
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length < 1 ||
    parsed.length > EVENT_LIMITS.filterAssetIds ||
    !parsed.every((x) => Number.isInteger(x) && x >= 1 && x <= MAX_SAFE_ID)
  ) {
    throw badRequest(`query parameter "${name}": expected a JSON array of 1 to ${EVENT_LIMITS.filterAssetIds} ids, such as [1,2,3]`);
  }
  return parsed as number[];
}

/** The query-parameter form of the basic filter, as the filter object. */
function filterFromQuery(q: ListEventsQueryT): EventFilter {
  const f: EventFilter = {
    startTime: range(q.minStartTime, q.maxStartTime),
    endTime: range(q.minEndTime, q.maxEndTime),
    activeAtTime: range(q.minActiveAtTime, q.maxActiveAtTime),
    createdTime: range(q.minCreatedTime, q.maxCreatedTime),
    lastUpdatedTime: range(q.minLastUpdatedTime, q.maxLastUpdatedTime),
    assetIds: parseIdList(q.assetIds, 'assetIds'),
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
    handler: ({ services, project, body }) => ({ items: createItems(eventSpec, services, project.id, body.items) }),
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
        { filter: filterFromQuery(query), limit: query.limit, cursor: query.cursor, partition: query.partition, sort: query.sort },
        query.includeMetadata ?? true,
      ),
  }),
  route({
    method: 'GET',
    path: '/events/:id',
    capability: READ,
    params: EventIdParams,
    handler: ({ services, project, params }) => getItem(spec, services, project.id, params.id),
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
    handler: ({ services, project, body }) => ({ items: retrieveItems(spec, services, project.id, body.items, body.ignoreUnknownIds) }),
  }),
  route({
    method: 'POST',
    path: '/events/update',
    capability: WRITE,
    body: UpdateEventsBody,
    handler: ({ services, project, body }) => ({ items: updateItems(spec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/events/delete',
    capability: WRITE,
    body: EventIdsBody,
    handler: ({ services, project, body }) => {
      deleteItems(spec, services, project.id, body.items, body.ignoreUnknownIds);
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
