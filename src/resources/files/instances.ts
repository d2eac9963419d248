/**
 * Files managed as instances: a node with data in the core data model's `CogniteFile` container has a file
 * bound to it by `instanceId` (bound-items.ts), whose managed fields (MANAGED_BY_DATA_MODELING) follow the
 * node: its name (the node's external id when it has none, as a file always has a name), directory, MIME type
 * and source times. When nodes are deleted, their files go, with their content once the write has committed.
 * The other fields (metadata, data set, asset ids, labels) belong to the files API and are kept.
 */
import type { Services } from '../../http/services.js';
import type { InstanceId } from '../../query/refs.js';
import { deleteItem } from '../../storage/items.js';
import type { Queryable } from '../../storage/store.js';
import { boundItemIds, syncBoundItems } from '../bound-items.js';
import { deleteBlobs, releaseFiles } from './blobs.js';
import { fileTable as table } from './model.js';

/** A node's file as its data says: the fields of MANAGED_BY_DATA_MODELING (service.ts). */
export interface ManagedFile {
  instanceId: InstanceId;
  name: string;
  directory: string | null;
  mimeType: string | null;
  sourceCreatedTime: number | null;
  sourceModifiedTime: number | null;
}

/** Creates the files of nodes that have none (not uploaded), and sets the managed fields of those that do. */
export async function syncManagedFiles(db: Queryable, projectId: number, files: readonly ManagedFile[], now: number): Promise<void> {
  const items = files.map(({ instanceId, ...fields }) => ({ instanceId, fields }));
  await syncBoundItems(db, table, projectId, items, now, { uploaded: false });
}

/** Deletes the files bound to these nodes; their content goes once the write has committed. */
export async function deleteManagedFiles(db: Queryable, services: Pick<Services, 'blobs'>, projectId: number, instanceIds: readonly InstanceId[]): Promise<void> {
  const ids = await boundItemIds(db, table, projectId, instanceIds);
  if (ids.length === 0) return;
  const keys = await releaseFiles(db, projectId, ids);
  for (const id of ids) await deleteItem(db, table, projectId, id);
  if (keys.length > 0) db.afterCommit(() => deleteBlobs(services, projectId, keys));
}
