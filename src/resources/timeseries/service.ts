/**
 * Time series metadata: the resource's own rules, on top of the shared machinery.
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { runAggregate, type AggregateRequest } from '../../query/aggregate.js';
import { and, equalsLeaf, inLeaf, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import { nameDescriptionSearch, type FilterNode } from '../../query/filter.js';
import { assetScopeNode } from '../../query/assets-scope.js';
import { visibleIn } from '../../query/visibility.js';
import { assetCatalog } from '../assets/model.js';
import { dataSetCatalog } from '../datasets/model.js';
import { dataSetIdsNode } from '../datasets/service.js';
import type { Values } from '../../storage/items.js';
import { deleteSeriesData } from '../datapoints/series-data.js';
import { createItems, fromModel, listItemsJson, searchItemsJson, type ListInput, type ResourceSpec } from '../crud.js';
import { syncSeries } from '../subscriptions/membership.js';
import { requireUnit } from '../units/catalog.js';
import type { TimeSeriesCreate, TimeSeriesFilter } from './schema.js';
import { timeSeriesCatalog as catalog, timeSeriesModel } from './model.js';

/**
 * Fields that data modeling owns on a series that carries an `instanceId`; only the others may be updated.
 * The asset link is not among them: it is asset-centric, and both official SDKs update it by instance id.
 */
export const MANAGED_BY_DATA_MODELING = ['name', 'description', 'unit', 'unitExternalId', 'isStep'] as const;

export const timeSeriesSpec: ResourceSpec<TimeSeriesCreate> = {
  ...fromModel(timeSeriesModel),
  instanceIds: true,
  createValues: (item) => ({
    isString: item.isString ?? false,
    type: item.isString ? 'string' : 'numeric',
    isStep: item.isStep ?? false,
  }),
  check(v: Values, path) {
    if (v.isString && v.unitExternalId !== null) {
      throw badRequest(`${formatPath([...path, 'unitExternalId'])}: a unit from the unit catalog applies only to numeric time series`);
    }
  },
  checkUpdate(current, update, path) {
    if (current.instanceId !== null) {
      const managed = MANAGED_BY_DATA_MODELING.filter((f) => update[f] !== undefined);
      if (managed.length) {
        throw badRequest(
          `${formatPath(path)}: ${managed.join(', ')} ${managed.length === 1 ? 'is' : 'are'} managed by data modeling on a time series with an instanceId; change ${
            managed.length === 1 ? 'it' : 'them'
          } through its instance`,
        );
      }
    }
    const unit = update.unitExternalId as { set?: string } | undefined;
    if (unit?.set !== undefined) requireUnit(unit.set, [...path, 'unitExternalId', 'set']);
  },
  references: [
    { field: 'dataSetId', catalog: dataSetCatalog },
    { field: 'assetId', catalog: assetCatalog },
  ],
  async beforeDelete(ids, { db, projectId, services }) {
    await syncSeries(services, projectId, ids, true);
    await deleteSeriesData(db, projectId, ids);
  },
  afterWrite: (ids, { projectId, services }) => syncSeries(services, projectId, ids),
  duplicateStatus: 422,
};
export const anyTimeSeriesSpec = timeSeriesSpec as ResourceSpec<unknown>;

/**
 * A unit a request gives must be in the units catalog. Only what a request gives is checked (here and in
 * `checkUpdate`): a series stored with a unit the catalog lacks keeps it through updates of other fields.
 */
export function createTimeSeries(services: Services, projectId: number, items: readonly TimeSeriesCreate[]) {
  items.forEach((item, i) => item.unitExternalId !== undefined && requireUnit(item.unitExternalId, ['items', i, 'unitExternalId']));
  return createItems(timeSeriesSpec, services, projectId, items);
}

/** The basic `filter` object as filter language; its references are resolved among what the request sees. */
export async function timeSeriesFilterNode(f: TimeSeriesFilter | undefined, services: Services, projectId: number): Promise<FilterNode | undefined> {
  if (!f) return undefined;
  const assets = await assetScopeNode(services.db, visibleIn(services, assetCatalog), projectId, catalog, 'assetId', f);
  const dataSetIds = await dataSetIdsNode(services, projectId, catalog, f.dataSetIds);
  return and([
    equalsLeaf(catalog, 'name', f.name),
    equalsLeaf(catalog, 'unit', f.unit),
    equalsLeaf(catalog, 'unitExternalId', f.unitExternalId),
    equalsLeaf(catalog, 'unitQuantity', f.unitQuantity),
    f.isString === undefined ? undefined : equalsLeaf(catalog, 'isString', f.isString ? 1 : 0),
    f.isStep === undefined ? undefined : equalsLeaf(catalog, 'isStep', f.isStep ? 1 : 0),
    metadataNode(catalog, f.metadata),
    inLeaf(catalog, 'assetId', f.assetIds),
    assets,
    dataSetIds,
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
  ]);
}

const WITHOUT_METADATA = new Set(['metadata']);

export async function listTimeSeries(
  services: Services,
  projectId: number,
  req: ListInput & { filter?: TimeSeriesFilter },
  includeMetadata = true,
) {
  const node = await timeSeriesFilterNode(req.filter, services, projectId);
  return listItemsJson(anyTimeSeriesSpec, services, projectId, req, node, includeMetadata ? undefined : WITHOUT_METADATA);
}

/** `name`, `description` and `query` (both) searches; an item matching any of them is found. */
export async function searchTimeSeries(
  services: Services,
  projectId: number,
  req: { filter?: TimeSeriesFilter; search?: { name?: string | null; description?: string | null; query?: string | null }; limit?: number },
) {
  const text = nameDescriptionSearch(catalog, req.search);
  const node = await timeSeriesFilterNode(req.filter, services, projectId);
  return searchItemsJson(anyTimeSeriesSpec, services, projectId, node, text, req.limit);
}

export async function aggregateTimeSeries(
  services: Services,
  projectId: number,
  req: Omit<AggregateRequest, 'filter'> & { filter?: TimeSeriesFilter },
) {
  return runAggregate(services, catalog, projectId, { ...req, filter: await timeSeriesFilterNode(req.filter, services, projectId) });
}
