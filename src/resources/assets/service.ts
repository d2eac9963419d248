/**
 * Assets: the shared create/retrieve/update/delete and query machinery, with the hierarchy kept right in the
 * same transaction (hierarchy.ts) and responses completed at read time (present.ts).
 */
import type { Services } from '../../http/services.js';
import { runAggregate } from '../../query/aggregate.js';
import { assetIdsOfExternalIds, assetScopeNode, hierarchiesOf, inAssetSetNode, refersToAssetsNode } from '../../query/assets-scope.js';
import { and, equalsLeaf, inLeaf, isNullNode, labelsNode, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import { nameDescriptionSearch, type FilterNode } from '../../query/filter.js';
import { resolveReferences } from '../../query/references.js';
import type { RefInput } from '../../query/refs.js';
import { visibleIn, type Visible } from '../../query/visibility.js';
import { sql } from '../../storage/sql.js';
import type { Item } from '../../storage/items.js';
import {
  createItems,
  deleteItems,
  fromModel,
  inWrite,
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
import { checkGeoLocation, geoFilterNode, type GeoLocation } from '../../query/geo.js';
import { applyMoves, deleteDescendants, placeCreatedAssets, planMoves, refuseOrphans } from './hierarchy.js';
import { presentAssets } from './present.js';
import {
  type AggregateAssetsBody,
  type AggregatedProperty,
  type AssetCreate,
  type AssetFilter,
  type AssetPatch,
  type AssetUpdateItem,
  type SearchAssetsBody,
} from './schema.js';
import type { Label } from '../../http/common-schemas.js';
import { dataSetCatalog } from '../datasets/model.js';
import { assetCatalog as catalog, assetModel } from './model.js';
import { holdLock } from '../../storage/locks.js';

const labelIds = (labels: readonly Label[] | undefined) => labels?.map((l) => l.externalId);

export const assetSpec: ResourceSpec<AssetCreate> = {
  ...fromModel(assetModel),
  createValues: (item) => ({
    // Set by placeCreatedAssets once every asset of the request exists, since a parent may be one of them.
    parentId: null,
    rootId: null,
    // Stored as label external ids; presentAssets gives them back as `{externalId}` objects.
    labels: labelIds(item.labels) ?? null,
  }),
  check(v, path) {
    checkGeoLocation(v.geoLocation as GeoLocation | null, [...path, 'geoLocation']);
  },
  references: [{ field: 'dataSetId', catalog: dataSetCatalog }],

};
const spec = assetSpec as ResourceSpec<unknown>;

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
export async function assetFilterNode(f: AssetFilter | undefined, services: Services, projectId: number): Promise<FilterNode | undefined> {
  if (!f) return undefined;
  const { db } = services;
  const assets = visibleIn(services, catalog);
  return and([
    equalsLeaf(catalog, 'name', f.name),
    f.parentIds && childrenOf(assets, projectId, f.parentIds),
    // Resolved among the assets the request sees, so no narrowing to visible parents is left to do.
    f.parentExternalIds && refersToAssetsNode(catalog, 'parentId', await assetIdsOfExternalIds(db, assets, projectId, f.parentExternalIds)),
    f.rootIds && inAssetSetNode(catalog, 'id', await hierarchiesOf(db, assets, projectId, await resolveReferences(db, assets, projectId, f.rootIds, ['filter', 'rootIds']))),
    await assetScopeNode(db, assets, projectId, catalog, 'id', { assetSubtreeIds: f.assetSubtreeIds }),
    f.dataSetIds && inLeaf(catalog, 'dataSetId', await resolveReferences(db, visibleIn(services, dataSetCatalog), projectId, f.dataSetIds, ['filter', 'dataSetIds'])),
    metadataNode(catalog, f.metadata),
    equalsLeaf(catalog, 'source', f.source),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
    f.root === undefined ? undefined : isNullNode(catalog, 'parentId', f.root),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    labelsNode(catalog, 'labels', f.labels),
    await geoFilterNode(db, catalog, projectId, f.geoLocation, ['filter', 'geoLocation']),
  ]);
}

/** Assets as the request sees them (see present.ts). */
async function present(services: Services, projectId: number, items: readonly Item[], aggregated?: AggregatedProperty[]): Promise<Item[]> {
  return presentAssets(services.db, visibleIn(services, catalog), projectId, items, aggregated);
}

/**
 * Creates, moves and deletes hold the project's hierarchy lock: each checks the hierarchy as it stands (a
 * parent exists, a move makes no cycle, a deleted asset has no children), and two such checks made side by
 * side could each pass and together break it.
 */
function lockHierarchy(services: Services, projectId: number): Promise<void> {
  return holdLock(services.db, 'assetHierarchy', projectId);
}

export async function createAssets(services: Services, projectId: number, items: readonly AssetCreate[]): Promise<Item[]> {
  return inWrite(services, async (services) => {
    await lockHierarchy(services, projectId);
    const ids = (await createItems(assetSpec, services, projectId, items)).map((a) => a.id);
    await placeCreatedAssets(services.db, visibleIn(services, catalog), projectId, items, ids);
    return present(services, projectId, await retrieveItems(spec, services, projectId, ids.map((id) => ({ id }))));
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

export async function updateAssets(services: Services, projectId: number, items: readonly AssetUpdateItem[]): Promise<Item[]> {
  return inWrite(services, async (services) => {
    const { db } = services;
    if (items.some((item) => item.update.parentId !== undefined || item.update.parentExternalId !== undefined)) await lockHierarchy(services, projectId);
    // Resolved as the update resolves them, so that an asset the request cannot write is refused before
    // its move is looked at.
    const ids = await writableIds(spec, services, projectId, items);
    const moves = await planMoves(db, visibleIn(services, catalog), projectId, items, ids);
    const updates: UpdateItem[] = items.map((item, i) => ({ ...item, update: storedPatch(item.update, moves.get(ids[i])) }));
    const updated = await updateItems(spec, services, projectId, updates);
    await applyMoves(db, projectId, moves);
    return present(services, projectId, updated);
  });
}

export async function deleteAssets(
  services: Services,
  projectId: number,
  req: { items: RefInput[]; recursive?: boolean; ignoreUnknownIds?: boolean },
): Promise<void> {
  const beforeDelete: ResourceSpec<unknown>['beforeDelete'] = req.recursive
    ? (ids, ctx) => deleteDescendants(ctx.services, visibleIn(ctx.services, catalog), ctx.projectId, ids)
    : (ids, ctx) => refuseOrphans(ctx.db, visibleIn(ctx.services, catalog), ctx.projectId, ids, ctx.services.access);
  await inWrite(services, async (services) => {
    await lockHierarchy(services, projectId);
    await deleteItems({ ...spec, beforeDelete }, services, projectId, req.items, req.ignoreUnknownIds);
  });
}

export async function retrieveAssets(
  services: Services,
  projectId: number,
  req: { items: RefInput[]; ignoreUnknownIds?: boolean; aggregatedProperties?: AggregatedProperty[] },
): Promise<Item[]> {
  const items = await retrieveItems(spec, services, projectId, req.items, req.ignoreUnknownIds);
  return present(services, projectId, items, req.aggregatedProperties);
}

export async function getAsset(services: Services, projectId: number, id: number): Promise<Item> {
  return (await present(services, projectId, [await getItem(spec, services, projectId, id)]))[0];
}

export type ListAssetsInput = ListInput & { filter?: AssetFilter; aggregatedProperties?: AggregatedProperty[] };

const WITHOUT_METADATA = new Set(['metadata']);

export async function listAssets(services: Services, projectId: number, req: ListAssetsInput, includeMetadata = true) {
  const page = await listItems(spec, services, projectId, req, await assetFilterNode(req.filter, services, projectId), includeMetadata ? undefined : WITHOUT_METADATA);
  return { ...page, items: await present(services, projectId, page.items, req.aggregatedProperties) };
}

/** `name`, `description` and `query` (both) searches, ranked by relevance; an item matching any of them is found. */
export async function searchAssets(services: Services, projectId: number, req: SearchAssetsBody) {
  const match = nameDescriptionSearch(catalog, req.search);
  const node = await assetFilterNode(req.filter, services, projectId);
  const { items } = await searchItems(spec, services, projectId, node, match, req.limit);
  return { items: await present(services, projectId, items) };
}

export async function aggregateAssets(services: Services, projectId: number, req: AggregateAssetsBody) {
  return runAggregate(services, catalog, projectId, { ...req, filter: await assetFilterNode(req.filter, services, projectId) });
}
