/**
 * Sequences: the resource's own rules (its columns, the rows deleted with it), on top of the shared create,
 * retrieve, update, delete and query machinery.
 */
import type { Services } from '../../http/services.js';
import { runAggregate, type AggregateRequest } from '../../query/aggregate.js';
import { assetScopeNode } from '../../query/assets-scope.js';
import { and, equalsLeaf, inLeaf, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import { nameDescriptionSearch, type FilterNode } from '../../query/filter.js';
import { visibleIn } from '../../query/visibility.js';
import { assetCatalog } from '../assets/model.js';
import { fromModel, listItemsJson, searchItemsJson, type ListInput, type ResourceSpec } from '../crud.js';
import { dataSetCatalog } from '../datasets/model.js';
import { dataSetIdsNode } from '../datasets/service.js';
import { applyColumnsPatch, createColumns } from './columns.js';
import { sequenceCatalog as catalog, sequenceModel, type ColumnsPatch } from './model.js';
import { deleteRowsOf } from './rows.js';
import type { SequenceCreate, SequenceFilter } from './schema.js';

export const sequenceSpec: ResourceSpec<SequenceCreate> = {
  ...fromModel(sequenceModel),
  // Required by the create schema (which its static type, knowing only the fields, leaves optional).
  createValues: (item, now, path) => ({ columns: createColumns(item.columns!, now, [...path, 'columns']), columnsRemoved: 0 }),
  applyPatch(_field, v, patch, path, now) {
    applyColumnsPatch(v, patch as ColumnsPatch, path, now);
  },
  references: [
    { field: 'dataSetId', catalog: dataSetCatalog },
    { field: 'assetId', catalog: assetCatalog },
  ],
  async beforeDelete(ids, { db, projectId }) {
    await deleteRowsOf(db, projectId, ids);
  },
};
export const anySequenceSpec = sequenceSpec as ResourceSpec<unknown>;

/** The basic `filter` object as filter language; its references are resolved among what the request sees. */
export async function sequenceFilterNode(f: SequenceFilter | undefined, services: Services, projectId: number): Promise<FilterNode | undefined> {
  if (!f) return undefined;
  const assets = await assetScopeNode(services.db, visibleIn(services, assetCatalog), projectId, catalog, 'assetId', f);
  const dataSetIds = await dataSetIdsNode(services, projectId, catalog, f.dataSetIds);
  return and([
    equalsLeaf(catalog, 'name', f.name),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    metadataNode(catalog, f.metadata),
    inLeaf(catalog, 'assetId', f.assetIds),
    assets,
    dataSetIds,
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
  ]);
}

export async function listSequences(services: Services, projectId: number, req: ListInput & { filter?: SequenceFilter }) {
  return listItemsJson(anySequenceSpec, services, projectId, req, await sequenceFilterNode(req.filter, services, projectId));
}

/** `name`, `description` and `query` (both) searches; a sequence matching any of them is found. */
export async function searchSequences(
  services: Services,
  projectId: number,
  req: { filter?: SequenceFilter; search?: { name?: string | null; description?: string | null; query?: string | null }; limit?: number },
) {
  const text = nameDescriptionSearch(catalog, req.search);
  return searchItemsJson(anySequenceSpec, services, projectId, await sequenceFilterNode(req.filter, services, projectId), text, req.limit);
}

export async function aggregateSequences(services: Services, projectId: number, req: Omit<AggregateRequest, 'filter'> & { filter?: SequenceFilter }) {
  return runAggregate(services, catalog, projectId, { ...req, filter: await sequenceFilterNode(req.filter, services, projectId) });
}
