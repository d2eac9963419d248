/**
 * Where a file's bytes are kept in the blob store (storage/blobs): each upload writes a blob of its own,
 * `files/<file id>/<random>`, and each part of a multipart upload one too, `files/<file id>/parts/<random>`;
 * the file's row names the blob of its content once an upload completes. A new blob per upload keeps the
 * old content readable until the new one is whole, and two uploads through one link from writing one blob.
 *
 * Blobs outlive nothing that names them: when a file goes, its rows of uploads and parts go in the same
 * write, and the blobs they named are deleted once that write has committed (a blob store is not part of the
 * database's transaction, so a blob is deleted only when nothing can name it any more).
 */
import { randomBytes } from 'node:crypto';
import type { Services } from '../../http/services.js';
import type { BlobStore } from '../../storage/blobs/blob-store.js';
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';

const random = () => randomBytes(12).toString('base64url');

/** A new blob for the content of an upload of `fileId`. */
export const contentKey = (fileId: number) => `files/${fileId}/${random()}`;

/** A new blob for one part of a multipart upload of `fileId`. */
export const partKey = (fileId: number) => `files/${fileId}/parts/${random()}`;

/** The blob store of a built app (areas are served only by one). */
export function blobsOf(services: Pick<Services, 'blobs'>): BlobStore {
  if (!services.blobs) throw new Error('files need the blob store of a built app');
  return services.blobs;
}

/**
 * In the write that deletes the files `fileIds`: deletes the rows of their uploads and parts, and returns
 * the keys of every blob the files and their parts held, for deleteBlobs once the write has committed.
 */
export async function releaseFiles(db: Queryable, projectId: number, fileIds: readonly number[]): Promise<string[]> {
  if (fileIds.length === 0) return [];
  const uploads = sql`SELECT id FROM file_uploads WHERE project_id = ${projectId} AND file_id IN (${fileIds})`;
  const keys = await db.all<{ key: string }>(sql`SELECT blob_key AS key FROM files WHERE project_id = ${projectId} AND id IN (${fileIds}) AND blob_key IS NOT NULL
      UNION ALL SELECT blob_key AS key FROM file_upload_parts WHERE project_id = ${projectId} AND upload IN (${uploads})`);
  await db.run(sql`DELETE FROM file_upload_parts WHERE project_id = ${projectId} AND upload IN (${uploads})`);
  await db.run(sql`DELETE FROM file_uploads WHERE project_id = ${projectId} AND file_id IN (${fileIds})`);
  return keys.map((k) => k.key);
}

/** Deletes blobs no row names any more; one that cannot be deleted now is reported, and the request stands. */
export async function deleteBlobs(services: Pick<Services, 'blobs'>, projectId: number, keys: readonly string[]): Promise<void> {
  const blobs = blobsOf(services);
  const failed = (await Promise.allSettled(keys.map((key) => blobs.delete(projectId, key)))).filter((r) => r.status === 'rejected');
  for (const f of failed) process.emitWarning(f.reason instanceof Error ? f.reason : new Error(String(f.reason)), 'BlobDeleteWarning');
}
