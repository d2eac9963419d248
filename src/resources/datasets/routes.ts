/**
 * The data sets operations. Data sets have no delete operation: other items keep pointing at them. A
 * write-protected data set is changed only by its owners (`datasetsAcl:OWNER` on it), and so is the flag
 * itself; creating a protected data set needs no more than creating any other.
 */
import { route, type ApiRoute } from '../../http/route.js';
import { runAggregate } from '../../query/aggregate.js';
import { and, equalsLeaf, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import type { FilterNode } from '../../query/filter.js';
import { createItems, fromModel, listItemsJson, retrieveItemsJson, updateItems, type ResourceSpec } from '../crud.js';
import {
  AggregateDataSetsBody,
  CreateDataSetsBody,
  DataSetIdsBody,
  ListDataSetsBody,
  UpdateDataSetsBody,
  type DataSetCreate,
  type DataSetFilter,
} from './schema.js';
import { dataSetCatalog as catalog, dataSetModel } from './model.js';

export const dataSetSpec: ResourceSpec<DataSetCreate> = {
  ...fromModel(dataSetModel),
  createValues: (item) => ({ writeProtected: item.writeProtected ?? false }),
  writeProtects: (values) => values.writeProtected === true,
};
const spec = dataSetSpec as ResourceSpec<unknown>;

function dataSetFilterNode(f: DataSetFilter | undefined): FilterNode | undefined {
  if (!f) return undefined;
  return and([
    metadataNode(catalog, f.metadata),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    equalsLeaf(catalog, 'writeProtected', f.writeProtected === undefined ? undefined : f.writeProtected ? 1 : 0),
  ]);
}

const READ = { acl: 'datasetsAcl', action: 'READ' };
const WRITE = { acl: 'datasetsAcl', action: 'WRITE' };

export const dataSetRoutes: ApiRoute[] = [
  route({
    method: 'POST',
    path: '/datasets',
    capability: WRITE,
    body: CreateDataSetsBody,
    // 200, where the other resources answer a create with 201: the reference lists only 200 here.
    handler: async ({ services, project, body }) => ({ items: await createItems(dataSetSpec, services, project.id, body.items) }),
  }),
  route({
    method: 'POST',
    path: '/datasets/byids',
    capability: READ,
    body: DataSetIdsBody,
    handler: ({ services, project, body }) => retrieveItemsJson(spec, services, project.id, body.items, body.ignoreUnknownIds),
  }),
  route({
    method: 'POST',
    path: '/datasets/list',
    capability: READ,
    body: ListDataSetsBody,
    handler: ({ services, project, body }) => listItemsJson(spec, services, project.id, body, dataSetFilterNode(body.filter)),
  }),
  route({
    method: 'POST',
    path: '/datasets/aggregate',
    capability: READ,
    body: AggregateDataSetsBody,
    handler: ({ services, project, body }) => runAggregate(services, catalog, project.id, { filter: dataSetFilterNode(body.filter) }),
  }),
  route({
    method: 'POST',
    path: '/datasets/update',
    capability: WRITE,
    body: UpdateDataSetsBody,
    handler: async ({ services, project, body }) => ({ items: await updateItems(spec, services, project.id, body.items) }),
  }),
];
