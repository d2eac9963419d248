/**
 * Files: the shared create/retrieve/update/delete and query machinery, with the rules of files on top: a
 * create may overwrite the file of its external id, a file managed by data modeling takes some changes only
 * through its node, and a file's content goes with it (content.ts).
 */
import { badRequest, formatPath } from '../../http/errors.js';
import type { Services } from '../../http/services.js';
import { runAggregate } from '../../query/aggregate.js';
import { assetScopeNode } from '../../query/assets-scope.js';
import { and, containsAnyLeaf, equalsLeaf, inLeaf, labelsNode, metadataNode, prefixLeaf, rangeLeaf } from '../../query/basic.js';
import { textSearchOf, type FilterNode } from '../../query/filter.js';
import { checkGeoLocation, geoFilterNode, type GeoLocation } from '../../query/geo.js';
import { resolveReferences } from '../../query/references.js';
import type { RefInput } from '../../query/refs.js';
import { visibleIn } from '../../query/visibility.js';
import type { Item, Values } from '../../storage/items.js';
import { sql } from '../../storage/sql.js';
import { assetCatalog } from '../assets/model.js';
import { dataSetCatalog } from '../datasets/model.js';
import {
  createItems,
  deleteItems,
  fromModel,
  inWrite,
  listItemsJson,
  retrieveItems,
  searchItemsJson,
  updateItems,
  type ListInput,
  type ResourceSpec,
  type UpdateItem,
} from '../crud.js';
import { deleteBlobs, releaseFiles } from './blobs.js';
import type { FileCreate, FileFilter, SearchFilesBody } from './schema.js';
import { fileCatalog as catalog, fileModel } from './model.js';

/** Fields that data modeling owns on a file that carries an `instanceId`: they follow its node (instances.ts). */
const MANAGED_BY_DATA_MODELING = ['name', 'directory', 'mimeType', 'sourceCreatedTime', 'sourceModifiedTime'] as const;

function refuseManaged(current: Values, update: Record<string, unknown>, path: Array<string | number>): void {
  if (current.instanceId === null) return;
  const managed = MANAGED_BY_DATA_MODELING.filter((f) => update[f] !== undefined);
  if (managed.length === 0) return;
  throw badRequest(
    `${formatPath(path)}: ${managed.join(', ')} ${managed.length === 1 ? 'is' : 'are'} managed by data modeling on a file with an instanceId; change ${managed.length === 1 ? 'it' : 'them'} through its instance`,
  );
}

export const fileSpec: ResourceSpec<FileCreate> = {
  ...fromModel(fileModel),
  instanceIds: true,
  createValues: () => ({ uploaded: false, uploadedTime: null, instanceId: null }),
  check(v, path) {
    checkGeoLocation(v.geoLocation as GeoLocation | null, [...path, 'geoLocation']);
  },
  checkUpdate(current, update, path) {
    if (update.name !== undefined) {
      throw badRequest(`${formatPath([...path, 'name'])}: a file's name is set when it is created, or by POST /files with overwrite=true`);
    }
    refuseManaged(current, update, path);
  },
  references: [
    { field: 'dataSetId', catalog: dataSetCatalog },
    { field: 'assetIds', catalog: assetCatalog },
  ],
};
const spec = fileSpec as ResourceSpec<unknown>;

/** The basic `filter` object as filter language; its references are resolved among what the request sees. */
export async function fileFilterNode(f: FileFilter | undefined, services: Services, projectId: number): Promise<FilterNode | undefined> {
  if (!f) return undefined;
  const { db } = services;
  const assets = await assetScopeNode(db, visibleIn(services, assetCatalog), projectId, catalog, 'assetIds', f);
  const dataSetIds = f.dataSetIds && (await resolveReferences(db, visibleIn(services, dataSetCatalog), projectId, f.dataSetIds, ['filter', 'dataSetIds']));
  return and([
    equalsLeaf(catalog, 'name', f.name),
    prefixLeaf(catalog, 'directory', f.directoryPrefix),
    equalsLeaf(catalog, 'mimeType', f.mimeType),
    metadataNode(catalog, f.metadata),
    containsAnyLeaf(catalog, 'assetIds', f.assetIds),
    assets,
    dataSetIds && inLeaf(catalog, 'dataSetId', dataSetIds),
    equalsLeaf(catalog, 'source', f.source),
    rangeLeaf(catalog, 'createdTime', f.createdTime),
    rangeLeaf(catalog, 'lastUpdatedTime', f.lastUpdatedTime),
    rangeLeaf(catalog, 'uploadedTime', f.uploadedTime),
    rangeLeaf(catalog, 'sourceCreatedTime', f.sourceCreatedTime),
    rangeLeaf(catalog, 'sourceModifiedTime', f.sourceModifiedTime),
    prefixLeaf(catalog, 'externalId', f.externalIdPrefix),
    f.uploaded === undefined ? undefined : equalsLeaf(catalog, 'uploaded', f.uploaded ? 1 : 0),
    labelsNode(catalog, 'labels', f.labels),
    await geoFilterNode(db, catalog, projectId, f.geoLocation, ['filter', 'geoLocation']),
  ]);
}

export async function listFiles(services: Services, projectId: number, req: ListInput & { filter?: FileFilter }) {
  return listItemsJson(spec, services, projectId, req, await fileFilterNode(req.filter, services, projectId));
}

export async function searchFiles(services: Services, projectId: number, req: SearchFilesBody) {
  const text = textSearchOf(catalog, [[req.search?.name]]);
  return searchItemsJson(spec, services, projectId, await fileFilterNode(req.filter, services, projectId), text, req.limit);
}

export async function aggregateFiles(services: Services, projectId: number, req: { filter?: FileFilter }) {
  return runAggregate(services, catalog, projectId, { filter: await fileFilterNode(req.filter, services, projectId) });
}

export function updateFiles(services: Services, projectId: number, items: readonly UpdateItem[]): Promise<Item[]> {
  return updateItems(spec, services, projectId, items);
}

/**
 * Creates a file, or with `overwrite` changes the file its external id names: the fields the request gives
 * replace the stored ones (metadata whole; asset ids only when given), and its content stays until an upload
 * replaces it. Runs in the caller's write.
 */
export async function createOrOverwrite(services: Services, projectId: number, item: FileCreate, overwrite: boolean): Promise<Item> {
  if (overwrite && item.externalId !== undefined) {
    const [existing] = await retrieveItems(spec, services, projectId, [{ externalId: item.externalId }], true);
    if (existing) {
      const update = Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'externalId').map(([k, v]) => [k, { set: v }]));
      // The name too, which an update request may not change: this is the reference's way to rename a file.
      const [updated] = await updateItems({ ...spec, checkUpdate: refuseManaged }, services, projectId, [{ id: existing.id, update }]);
      return updated;
    }
  }
  const [created] = await createItems(fileSpec, services, projectId, [item]);
  return created;
}

/** Deletes files, and once the deletion has committed, their content and the parts of their uploads. */
export async function deleteFiles(services: Services, projectId: number, items: readonly RefInput[], ignoreUnknownIds = false): Promise<void> {
  let keys: string[] = [];
  const beforeDelete: ResourceSpec<unknown>['beforeDelete'] = async (ids, { db }) => {
    if (ids.length === 0) return;
    const managed = await db.all<{ id: number }>(sql`SELECT id FROM files WHERE project_id = ${projectId} AND id IN (${ids}) AND instance_space IS NOT NULL`);
    if (managed.length > 0) throw badRequest(`The files ${managed.map((m) => m.id).join(', ')} are managed by data modeling; delete their instances instead`);
    keys = await releaseFiles(db, projectId, ids);
  };
  await inWrite(services, (services) => deleteItems({ ...spec, beforeDelete }, services, projectId, items, ignoreUnknownIds));
  await deleteBlobs(services, projectId, keys);
}
