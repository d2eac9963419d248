/**
 * Assets: the shared create/retrieve/update/delete and query machinery, with the hierarchy kept right in the
 * same transaction (hierarchy.ts) and responses completed at read time (present.ts).
 */
import { badRequest } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { runAggregate } from '../../query/aggregate.js';
import { assetIdsOfExternalIds, assetScopeNode, hierarchiesOf, inAssetSetNode } from '../../query/assets-scope.js';
import { and, equalsLeaf, inLeaf, isNullNode, metadataNode, prefixLeaf, propertyTarget, rangeLeaf } from '../../query/basic.js';
import { ftsAnyOf, type FilterNode, type LeafNode } from '../../query/filter.js';
import { resolveReferences } from '../../query/references.js';
import type { RefInput } from '../../query/refs.js';
import { visibleIn, type Visible } from '../../query/visibility.js';
import { inTransaction } from '../../storage/db.js';
import { sql } from '../../storage/sql.js';
import type { Item } from '../../storage/items.js';
import {
  createItems,
  deleteItems,
  getItem,
  listItems,
  retrieveItems,
  searchItems,
  updateItems,
  writableIds,
  type ListInput,
  type ResourceSpec,
  type UpdateItem,
} from '../crud.js';
import { checkGeoLocation, geoFilterNode } from './geo.js';
import { applyMoves, deleteDescendants, placeCreatedAssets, planMoves, refuseOrphans } from './hierarchy.js';
import { presentAssets } from './present.js';
import {
  ASSET_LIMITS,
  ASSET_METADATA_LIMITS,
  type AggregateAssetsBody,
  type AggregatedProperty,
  type AssetCreate,
  type AssetFilter,
  type AssetPatch,
  type AssetUpdateItem,
  type GeoLocation,
  type Label,
  type SearchAssetsBody,
} from './schema.js';
import { dataSetCatalog } from '../datasets/model.js';
import { assetCatalog as catalog, assetTable } from './model.js';

const labelIds = (labels: readonly Label[] | undefined) => labels?.map((l) => l.externalId);

export const assetSpec: ResourceSpec<AssetCreate> = {
  table: assetTable,
  catalog,
  metadataLimits: ASSET_METADATA_LIMITS,
  createValues: (item) => ({
    // Set by placeCreatedAssets once every asset of the request exists, since a parent may be one of them.
    parentId: null,
    rootId: null,
    // Stored as label external ids; presentAssets gives them back as `{externalId}` objects.
    labels: labelIds(item.labels) ?? null,
  }),
  patches: {
    externalId: 'nullable',
    name: 'required',
    description: 'nullable',
    dataSetId: 'nullable',
    metadata: 'metadata',
    source: 'nullable',
    parentId: 'required',
    labels: { array: ASSET_LIMITS.labels },
    geoLocation: 'nullable',
  },
  check(v, path) {
    checkGeoLocation(v.geoLocation as GeoLocation | null, [...path, 'geoLocation']);
  },
  references: [{ field: 'dataSetId', catalog: dataSetCatalog }],

};
const spec = assetSpec as ResourceSpec<unknown>;

function labelsNode(labels: AssetFilter['labels']): LeafNode | undefined {
  if (!labels) return undefined;
  const { containsAny, containsAll } = labels;
  if ((containsAny === undefined) === (containsAll === undefined)) {
    throw badRequest('filter.labels: give exactly one of "containsAny" and "containsAll"');
  }
  const target = propertyTarget(catalog, 'labels');
  return containsAny ? { op: 'containsAny', target, values: labelIds(containsAny)! } : { op: 'containsAll', target, values: labelIds(containsAll)! };
}

/**
 * "The parent is one of these assets". A parent the request does not see is no parent to it, so for a
 * scoped principal the ids are narrowed to visible ones (the stored column keeps its index, unlike the
 * visible parent's expression that the advanced filter reads).
 */
function childrenOf(assets: Visible, projectId: number, parentIds: number[]): FilterNode {
  if (!assets.where) return inLeaf(catalog, 'parentId', parentIds)!;
  return inAssetSetNode(catalog, 'parentId', sql`SELECT id FROM assets WHERE project_id = ${projectId} AND id IN (${parentIds}) AND ${assets.where}`);
}

/**
 * The basic `filter` object as filter language, with its references to other assets and data sets resolved
 * among those the request sees.
 */
export function assetFilterNode(f: AssetFilter | undefined, services: Services, projectId: number): FilterNode | undefined {
  if (!f) return undefined;
  const { db } = services;
  const assets = visibleIn(services, catalog);
  return and([
    equalsLeaf(catalog, 'name', f.name),
    f.parentIds && childrenOf(assets, projectId, f.parentIds),
    f.parentExternalIds && childrenOf(assets, projectId, assetIdsOfExternalIds(db, assets, projectId, f.parentExternalIds, ['filter', 'parentExternalIds'])),
    f.rootIds && inAssetSetNode(catalog, 'id', hierarchiesOf(db, assets, projectId, resolveReferences(db, assets, projectId, f.rootIds, ['filter', 'rootIds']))),
    assetScopeNode(db, assets, projectId, catalog, 'id', { assetSubtreeIds: f.assetSubtreeIds }),
    f.dataSetIds && inLeaf(catalog, 'dataSetId', resolveReferences(db, visibleIn(services, dataSetCatalog), projectId, f.dataSetIds, ['filter', 'dataSetIds'])),
    metadataNode(catalog, f.metadata),
    equalsLeaf(catalog, 'source', f.source),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
    f.root === undefined ? undefined : isNullNode(catalog, 'parentId', f.root),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    labelsNode(f.labels),
    geoFilterNode(projectId, f.geoLocation, ['filter', 'geoLocation']),
  ]);
}

/** Assets as the request sees them (see present.ts). */
function present(services: Services, projectId: number, items: readonly Item[], aggregated?: AggregatedProperty[]): Item[] {
  return presentAssets(services.db, visibleIn(services, catalog), projectId, items, aggregated);
}

export function createAssets(services: Services, projectId: number, items: readonly AssetCreate[]): Item[] {
  return inTransaction(services.db, () => {
    const ids = createItems(assetSpec, services, projectId, items).map((a) => a.id);
    placeCreatedAssets(services.db, visibleIn(services, catalog), projectId, items, ids);
    return present(services, projectId, retrieveItems(spec, services, projectId, ids.map((id) => ({ id }))));
  });
}

/** An update as stored: the parent as an id (a move, already checked), labels as external ids. */
function storedPatch(update: AssetPatch, parentId: number | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...update };
  delete out.parentExternalId;
  delete out.parentId;
  if (parentId !== undefined) out.parentId = { set: parentId };
  const { labels } = update;
  if (labels) out.labels = { set: labelIds(labels.set), add: labelIds(labels.add), remove: labelIds(labels.remove) };
  return out;
}

export function updateAssets(services: Services, projectId: number, items: readonly AssetUpdateItem[]): Item[] {
  const { db } = services;
  return inTransaction(db, () => {
    // Resolved as the update resolves them, so that an asset the request cannot write is refused before
    // its move is looked at.
    const ids = writableIds(spec, services, projectId, items);
    const moves = planMoves(db, visibleIn(services, catalog), projectId, items, ids);
    const updates: UpdateItem[] = items.map((item, i) => ({ ...item, update: storedPatch(item.update, moves.get(ids[i])) }));
    const updated = updateItems(spec, services, projectId, updates);
    applyMoves(db, projectId, moves);
    return present(services, projectId, updated);
  });
}

export function deleteAssets(
  services: Services,
  projectId: number,
  req: { items: RefInput[]; recursive?: boolean; ignoreUnknownIds?: boolean },
): void {
  const beforeDelete: ResourceSpec<unknown>['beforeDelete'] = req.recursive
    ? (ids, ctx) => deleteDescendants(ctx.services, visibleIn(ctx.services, catalog), ctx.projectId, ids)
    : (ids, ctx) => refuseOrphans(ctx.db, visibleIn(ctx.services, catalog), ctx.projectId, ids, ctx.services.access);
  deleteItems({ ...spec, beforeDelete }, services, projectId, req.items, req.ignoreUnknownIds);
}

export function retrieveAssets(
  services: Services,
  projectId: number,
  req: { items: RefInput[]; ignoreUnknownIds?: boolean; aggregatedProperties?: AggregatedProperty[] },
): Item[] {
  const items = retrieveItems(spec, services, projectId, req.items, req.ignoreUnknownIds);
  return present(services, projectId, items, req.aggregatedProperties);
}

export function getAsset(services: Services, projectId: number, id: number): Item {
  return present(services, projectId, [getItem(spec, services, projectId, id)])[0];
}

export type ListAssetsInput = ListInput & { filter?: AssetFilter; aggregatedProperties?: AggregatedProperty[] };

const WITHOUT_METADATA = new Set(['metadata']);

export async function listAssets(services: Services, projectId: number, req: ListAssetsInput, includeMetadata = true) {
  const page = await listItems(spec, services, projectId, req, assetFilterNode(req.filter, services, projectId), includeMetadata ? undefined : WITHOUT_METADATA);
  return { ...page, items: present(services, projectId, page.items, req.aggregatedProperties) };
}

/** `name`, `description` and `query` (both) searches, ranked by relevance; an item matching any of them is found. */
export function searchAssets(services: Services, projectId: number, req: SearchAssetsBody) {
  const match = ftsAnyOf([
    [req.search?.name, 'name'],
    [req.search?.description, 'description'],
    [req.search?.query, '{name description}'],
  ]);
  const node = assetFilterNode(req.filter, services, projectId);
  const { items } = searchItems(spec, services, projectId, node, match, req.limit);
  return { items: present(services, projectId, items) };
}

export function aggregateAssets(services: Services, projectId: number, req: AggregateAssetsBody) {
  return runAggregate(services, catalog, projectId, { ...req, filter: assetFilterNode(req.filter, services, projectId) });
}
