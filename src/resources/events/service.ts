/**
 * Events: the resource's own rules, on top of the shared create/retrieve/update/delete and query machinery.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { runAggregate, type AggregateRequest } from '../../query/aggregate.js';
import { and, containsAnyLeaf, equalsLeaf, isNullNode, metadataNode, prefixLeaf, propertyTarget, rangeLeaf } from '../../query/basic.js';
import { textSearchOf, type FilterNode } from '../../query/filter.js';
import type { Values } from '../../storage/items.js';
import { assetScopeNode } from '../../query/assets-scope.js';
import { visibleIn } from '../../query/visibility.js';
import { assetCatalog } from '../assets/model.js';
import { dataSetCatalog } from '../datasets/model.js';
import { dataSetIdsNode } from '../datasets/service.js';
import { fromModel, listItemsJson, searchItemsJson, type ListInput, type ResourceSpec } from '../crud.js';
import type { EventCreate, EventFilter } from './schema.js';
import { eventCatalog as catalog, eventModel } from './model.js';

export const eventSpec: ResourceSpec<EventCreate> = {
  ...fromModel(eventModel),
  references: [
    { field: 'dataSetId', catalog: dataSetCatalog },
    { field: 'assetIds', catalog: assetCatalog },
  ],

  check(v: Values, path) {
    const { startTime, endTime } = v as { startTime: number | null; endTime: number | null };
    if (startTime !== null && endTime !== null && endTime < startTime) {
      throw badRequest(`${formatPath(path)}: endTime (${endTime}) must not be before startTime (${startTime})`);
    }
  },
};

/**
 * The basic `filter` object as filter language, so it shares the compiler and the semantics; its references
 * to assets and data sets are resolved among those the request sees.
 */
export async function eventFilterNode(f: EventFilter | undefined, services: Services, projectId: number): Promise<FilterNode | undefined> {
  if (!f) return undefined;
  let endTime: FilterNode | undefined;
  if (f.endTime && 'isNull' in f.endTime) endTime = isNullNode(catalog, 'endTime', f.endTime.isNull);
  else endTime = rangeLeaf(catalog, 'endTime', f.endTime);
  let active: FilterNode | undefined;
  if (f.activeAtTime && (f.activeAtTime.min !== undefined || f.activeAtTime.max !== undefined)) {
    // Active from startTime to endTime inclusive; never active without startTime; open-ended without endTime.
    const { min, max } = f.activeAtTime;
    active = and([
      { op: 'exists', target: propertyTarget(catalog, 'startTime') },
      max !== undefined ? rangeLeaf(catalog, 'startTime', { max }) : undefined,
      min !== undefined ? { op: 'or', args: [isNullNode(catalog, 'endTime', true), rangeLeaf(catalog, 'endTime', { min })!] } : undefined,
    ]);
  }
  const assets = await assetScopeNode(services.db, visibleIn(services, assetCatalog), projectId, catalog, 'assetIds', f);
  const dataSetIds = await dataSetIdsNode(services, projectId, catalog, f.dataSetIds);
  return and([
    rangeLeaf(catalog, 'startTime', f.startTime),
    endTime,
    active,
    metadataNode(catalog, f.metadata),
    containsAnyLeaf(catalog, 'assetIds', f.assetIds),
    assets,
    equalsLeaf(catalog, 'source', f.source),
    equalsLeaf(catalog, 'type', f.type),
    equalsLeaf(catalog, 'subtype', f.subtype),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    dataSetIds,
  ]);
}

const WITHOUT_METADATA = new Set(['metadata']);

export async function listEvents(services: Services, projectId: number, req: ListEventsInput, includeMetadata = true) {
  const node = await eventFilterNode(req.filter, services, projectId);
  return listItemsJson(eventSpec as ResourceSpec<unknown>, services, projectId, req, node, includeMetadata ? undefined : WITHOUT_METADATA);
}

export async function searchEvents(
  services: Services,
  projectId: number,
  req: { filter?: EventFilter; search?: { description?: string | null }; limit?: number },
) {
  const text = textSearchOf(catalog, [[req.search?.description]]);
  return searchItemsJson(eventSpec as ResourceSpec<unknown>, services, projectId, await eventFilterNode(req.filter, services, projectId), text, req.limit);
}

export async function aggregateEvents(services: Services, projectId: number, req: Omit<AggregateRequest, 'filter'> & { filter?: EventFilter }) {
  return runAggregate(services, catalog, projectId, { ...req, filter: await eventFilterNode(req.filter, services, projectId) });
}

export type ListEventsInput = ListInput & { filter?: EventFilter };
