/**
 * A file's content: uploads through signed links, whole or in parts, and downloads through signed links,
 * all served by Strata itself (http/links.ts) and streamed to and from the blob store, never held whole.
 *
 * - An upload link (`POST /files`, `/files/uploadlink`) is good for one upload, for a week: a PUT of the
 *   content through it stores the content and marks the file uploaded; the link is then used up (410).
 * - A multipart upload (`/files/initmultipartupload`, `/files/multiuploadlink`) gives one link per part.
 *   Parts are PUT in any order, side by side, each once; `/files/completemultipartupload` puts them together
 *   in order once every one is there. Until then the file keeps what it had (nothing, or its old content).
 * - A download link is good for 30 seconds (an hour with `extendedExpiration`), for as many requests as the
 *   client makes (ranges of a large file), as long as the file still holds the content it was made for.
 *
 * Uploading content to a file managed by data modeling sets `isUploaded` and `uploadedTime` of its node
 * (`cdf_cdm:CogniteFile`), in the same write, through the instance write path.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { ApiError, badRequest, formatPath } from '../../http/errors.js';
import type { LinkAnswer, LinkClaims, LinkContext, LinkRoute } from '../../http/links.js';
import type { Services } from '../../http/services.js';
import type { RefInput } from '../../query/refs.js';
import { BlobTooLarge, type BlobInfo } from '../../storage/blobs/blob-store.js';
import { allocateIds } from '../../storage/ids.js';
import type { Item } from '../../storage/items.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { inWrite, retrieveItems, writableIds, type ResourceSpec } from '../crud.js';
import { applySystemInstances } from '../models/instance-writes-store.js';
import { blobsOf, contentKey, deleteBlobs, partKey } from './blobs.js';
import { FILE_LIMITS } from './model.js';
import { fileSpec } from './service.js';

const spec = fileSpec as ResourceSpec<unknown>;

const DAY = 86_400_000;
/** How long links live (the reference's: a week for uploads, 30 seconds or an hour for downloads). */
const LINK_LIFETIMES = { upload: 7 * DAY, download: 30_000, extendedDownload: 3_600_000 } as const;

const KINDS = { upload: 'file-upload', part: 'file-part', download: 'file-download' } as const;

function linksOf(services: Services) {
  if (!services.links) throw new Error('files need the link signer of a built app');
  return services.links;
}

interface UploadRow {
  id: number;
  file_id: number;
  upload_id: string;
  parts: number | null;
  completed_time: number | null;
}

/**
 * Starts an upload of a file in the caller's write: one link, or (with `parts`) a multipart upload with
 * its id and a link per part.
 */
export async function startUpload(services: Services, projectId: number, fileId: number, parts?: number): Promise<{ uploadUrl: string } | { uploadId: string; uploadUrls: string[] }> {
  const { db } = services;
  const now = services.now();
  const expires = now + LINK_LIFETIMES.upload;
  const [id] = await allocateIds(db, 'file_uploads', 1);
  const uploadId = randomBytes(16).toString('base64url');
  await db.run(sql`INSERT INTO file_uploads (id, project_id, file_id, upload_id, parts, created_time, expires_time) VALUES (${id}, ${projectId}, ${fileId}, ${uploadId}, ${parts ?? null}, ${now}, ${expires})`);
  const links = linksOf(services);
  const claims = { p: projectId, f: fileId, u: id };
  if (parts === undefined) return { uploadUrl: links.url(KINDS.upload, claims, expires) };
  return { uploadId, uploadUrls: Array.from({ length: parts }, (_, n) => links.url(KINDS.part, { ...claims, n }, expires)) };
}

const gone = (message: string) => new ApiError(410, message);
const USED = 'This link was used already: an upload link takes one upload, and the upload it belongs to is complete; ask for a new link';

/** The upload a link names, refused (410) when the file is gone or the upload already completed. */
async function openUpload(db: Queryable, claims: LinkClaims, lock = false): Promise<UploadRow> {
  const upload = await db.get<UploadRow>(
    sql`SELECT id, file_id, upload_id, parts, completed_time FROM file_uploads WHERE project_id = ${claims.p} AND id = ${claims.u}${Sql.raw(lock ? db.dialect.forUpdate : '')}`,
  );
  if (!upload || Number(upload.file_id) !== claims.f) throw gone('The file of this link was deleted');
  if (upload.completed_time !== null) throw gone(USED);
  return upload;
}

/** Refuses a body whose declared length is over the limit before reading any of it. */
function requireDeclaredLength(headers: IncomingHttpHeaders, maxBytes: number, what: string): void {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new ApiError(413, `The body declares ${declared} bytes (Content-Length); ${what} takes at most ${maxBytes}`);
  }
}

/** Streams a request body into a new blob; a body too long, or that ends early, stores nothing. */
async function receive(services: Services, projectId: number, key: string, body: Readable | undefined, maxBytes: number, what: string): Promise<BlobInfo> {
  const source = body ?? Readable.from([]);
  let bodyError: unknown;
  source.once('error', (e) => (bodyError ??= e));
  try {
    return await blobsOf(services).put(projectId, key, source, { maxBytes });
  } catch (error) {
    if (error instanceof BlobTooLarge) throw new ApiError(413, `The body is larger than ${maxBytes} bytes, the most ${what} takes`);
    if (bodyError instanceof ApiError) throw bodyError;
    if (bodyError !== undefined) throw badRequest(`The body could not be read to its end (${(bodyError as Error).message}); nothing was stored`);
    throw error;
  }
}

/**
 * Makes `key` the content of the file, in the caller's write: the file is uploaded from now on, and its node
 * (if data modeling manages it) says so too. Returns the blob of the content it replaces, for deleteBlobs.
 */
async function setContent(services: Services, projectId: number, fileId: number, key: string): Promise<string | null> {
  const { db } = services;
  const now = services.now();
  const row = await db.get<{ blob_key: string | null; instance_space: string | null; instance_external_id: string | null }>(
    sql`SELECT blob_key, instance_space, instance_external_id FROM files WHERE project_id = ${projectId} AND id = ${fileId}${Sql.raw(db.dialect.forUpdate)}`,
  );
  if (!row) throw gone('The file of this link was deleted');
  await db.run(sql`UPDATE files SET blob_key = ${key}, uploaded = 1, uploaded_time = ${now}, last_updated_time = ${now} WHERE project_id = ${projectId} AND id = ${fileId}`);
  if (row.instance_space !== null) {
    const properties = { isUploaded: true, uploadedTime: new Date(now).toISOString() };
    await applySystemInstances(db, services, projectId, {
      items: [{ instanceType: 'node', space: row.instance_space, externalId: row.instance_external_id!, sources: [{ source: { type: 'container', space: 'cdf_cdm', externalId: 'CogniteFile' }, properties }] }],
    });
  }
  return row.blob_key;
}

/**
 * Runs `commit` in a write once the blob `key` is stored; if it is refused, the blob goes. Afterwards the
 * blobs it returns (what the content replaced) go.
 */
async function commitBlob(services: Services, projectId: number, key: string, commit: (services: Services) => Promise<readonly string[]>): Promise<void> {
  let released: readonly string[];
  try {
    released = await inWrite(services, commit);
  } catch (error) {
    await deleteBlobs(services, projectId, [key]);
    throw error;
  }
  await deleteBlobs(services, projectId, released);
}

const claimUpload = (db: Queryable, projectId: number, upload: number, now: number) =>
  db.run(sql`UPDATE file_uploads SET completed_time = ${now} WHERE project_id = ${projectId} AND id = ${upload} AND completed_time IS NULL`);

const stored: LinkAnswer = { status: 200, body: {} };

async function uploadThroughLink({ claims, services, body, headers }: LinkContext): Promise<LinkAnswer> {
  const projectId = claims.p as number;
  const fileId = claims.f as number;
  const upload = await openUpload(services.db, claims);
  if (upload.parts !== null) throw gone('This link belongs to a multipart upload');
  const what = 'an upload link (a multipart upload takes more)';
  requireDeclaredLength(headers, FILE_LIMITS.singleUploadBytes, what);
  const key = contentKey(fileId);
  await receive(services, projectId, key, body, FILE_LIMITS.singleUploadBytes, what);
  await commitBlob(services, projectId, key, async (services) => {
    // Two uploads through one link: the first to get here completes it, the other is refused and its blob goes.
    if ((await claimUpload(services.db, projectId, upload.id, services.now())).changes === 0) {
      await openUpload(services.db, claims);
      throw gone(USED);
    }
    const old = await setContent(services, projectId, fileId, key);
    return old === null ? [] : [old];
  });
  return stored;
}

async function uploadPart({ claims, services, body, headers }: LinkContext): Promise<LinkAnswer> {
  const projectId = claims.p as number;
  const part = claims.n as number;
  const upload = await openUpload(services.db, claims);
  const used = () => gone(`Part ${part} of this upload was uploaded already: a part's link takes one upload`);
  if (await services.db.get(sql`SELECT 1 AS x FROM file_upload_parts WHERE project_id = ${projectId} AND upload = ${upload.id} AND part = ${part}`)) throw used();
  const what = 'a part of a multipart upload';
  requireDeclaredLength(headers, FILE_LIMITS.maxPartBytes, what);
  const key = partKey(claims.f as number);
  const { size } = await receive(services, projectId, key, body, FILE_LIMITS.maxPartBytes, what);
  await commitBlob(services, projectId, key, async ({ db }) => {
    // Locked, so that a completion under way sees this part or refuses it.
    await openUpload(db, claims, true);
    const added = await db.run(sql`INSERT INTO file_upload_parts (project_id, upload, part, blob_key, size) VALUES (${projectId}, ${upload.id}, ${part}, ${key}, ${size}) ON CONFLICT DO NOTHING`);
    if (added.changes === 0) throw used();
    return [];
  });
  return stored;
}

/** Completes a multipart upload: its parts, all there, become the file's content in their order. */
export async function completeMultipart(services: Services, projectId: number, ref: RefInput, uploadId: string): Promise<void> {
  const [fileId] = await writableIds(spec, services, projectId, [ref]);
  const { db } = services;
  const upload = await db.get<UploadRow>(
    sql`SELECT id, file_id, upload_id, parts, completed_time FROM file_uploads WHERE project_id = ${projectId} AND upload_id = ${uploadId} AND file_id = ${fileId}`,
  );
  if (!upload || upload.parts === null) throw badRequest(`uploadId: ${JSON.stringify(uploadId)} is not a multipart upload of this file`);
  // Completed already: the end state a retry asks for.
  if (upload.completed_time !== null) return;
  const parts = await db.all<{ part: number; blob_key: string; size: number }>(
    sql`SELECT part, blob_key, size FROM file_upload_parts WHERE project_id = ${projectId} AND upload = ${upload.id} ORDER BY part`,
  );
  const have = new Set(parts.map((p) => Number(p.part)));
  const missing = Array.from({ length: upload.parts }, (_, n) => n).filter((n) => !have.has(n));
  if (missing.length > 0) {
    throw badRequest(`uploadId: parts ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ` and ${missing.length - 20} more` : ''} of ${upload.parts} were not uploaded; upload every part before completing`);
  }
  const small = parts.slice(0, -1).find((p) => Number(p.size) < FILE_LIMITS.minPartBytes);
  if (small) throw badRequest(`uploadId: part ${small.part} has ${small.size} bytes; every part but the last must have at least ${FILE_LIMITS.minPartBytes} (5 MiB)`);
  const key = contentKey(fileId);
  await blobsOf(services).compose(projectId, key, parts.map((p) => p.blob_key));
  await commitBlob(services, projectId, key, async (services) => {
    const { db } = services;
    // Completed by another request meanwhile: it stands, and this one's blob goes.
    if ((await claimUpload(db, projectId, upload.id, services.now())).changes === 0) return [key];
    const old = await setContent(services, projectId, fileId, key);
    await db.run(sql`DELETE FROM file_upload_parts WHERE project_id = ${projectId} AND upload = ${upload.id}`);
    return [...parts.map((p) => p.blob_key), ...(old === null ? [] : [old])];
  });
}

/** Files named by the request (as it sees them), with where their content is. */
async function filesWithContent(services: Services, projectId: number, refs: readonly RefInput[]): Promise<Array<Item & { blobKey: string | null }>> {
  const items = await retrieveItems(spec, services, projectId, refs);
  const ids = [...new Set(items.map((i) => i.id))];
  const keys = new Map(
    (await services.db.all<{ id: number; blob_key: string | null }>(sql`SELECT id, blob_key FROM files WHERE project_id = ${projectId} AND id IN (${ids})`)).map((r) => [Number(r.id), r.blob_key]),
  );
  const notUploaded = refs.filter((_, i) => !items[i].uploaded || !keys.get(items[i].id));
  if (notUploaded.length > 0) {
    throw badRequest(`Files not uploaded: ${notUploaded.map((r) => JSON.stringify(r)).join(', ')}; upload their content first`);
  }
  return items.map((item) => ({ ...item, blobKey: keys.get(item.id)! }));
}

/** Download links of files, each echoing the reference that named it. */
export async function downloadLinks(services: Services, projectId: number, refs: readonly RefInput[], extended = false) {
  const files = await filesWithContent(services, projectId, refs);
  const expires = services.now() + (extended ? LINK_LIFETIMES.extendedDownload : LINK_LIFETIMES.download);
  const links = linksOf(services);
  return {
    items: refs.map((ref, i) => ({ ...ref, downloadUrl: links.url(KINDS.download, { p: projectId, f: files[i].id, b: files[i].blobKey! }, expires) })),
  };
}

/** The content of one uploaded file the request sees: its size and a stream of it. */
export async function openContent(services: Services, projectId: number, ref: RefInput, path: Array<string | number>): Promise<{ file: Item; size: number; open(): Promise<Readable> }> {
  const [file] = await filesWithContent(services, projectId, [ref]);
  const blobs = blobsOf(services);
  const info = await blobs.head(projectId, file.blobKey!);
  if (!info) throw badRequest(`${formatPath(path)}: the content of the file is gone`);
  return { file, size: info.size, open: async () => (await blobs.get(projectId, file.blobKey!))! };
}

/**
 * The one byte range a `Range` header asks for (`bytes=a-b`, `bytes=a-`, `bytes=-n`), or undefined for the
 * whole content (no header, several ranges, or a unit other than bytes: a server may always answer whole).
 * A range that starts past the end is 416.
 */
function requestedRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  const m = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== '' && Number(m[2]) < start) return undefined;
  }
  if (start >= size || (m[1] === '' && Number(m[2]) === 0)) {
    throw new ApiError(416, `The range ${header} is outside the content, which has ${size} bytes`, {}, { 'content-range': `bytes */${size}` });
  }
  return { start, end };
}

async function download({ claims, services, headers, method }: LinkContext): Promise<LinkAnswer> {
  const projectId = claims.p as number;
  const key = claims.b as string;
  const row = await services.db.get<{ blob_key: string | null; mime_type: string | null }>(sql`SELECT blob_key, mime_type FROM files WHERE project_id = ${projectId} AND id = ${claims.f}`);
  const replaced = gone('The file of this link was deleted, or its content replaced since the link was made; ask for a new link');
  if (!row || row.blob_key !== key) throw replaced;
  const blobs = blobsOf(services);
  const info = await blobs.head(projectId, key);
  if (!info) throw replaced;
  const range = requestedRange(typeof headers.range === 'string' ? headers.range : undefined, info.size);
  const body = method === 'HEAD' ? undefined : await blobs.get(projectId, key, range);
  if (!body && method !== 'HEAD') throw replaced;
  const common = { 'content-type': row.mime_type ?? 'application/octet-stream', 'accept-ranges': 'bytes' };
  if (!range) return { status: 200, headers: { ...common, 'content-length': info.size }, body };
  return { status: 206, headers: { ...common, 'content-length': range.end - range.start + 1, 'content-range': `bytes ${range.start}-${range.end}/${info.size}` }, body };
}

export const fileLinks: LinkRoute[] = [
  { method: 'PUT', kind: KINDS.upload, summary: "Uploads a file's content through the link POST /files or /files/uploadlink gave", bodyLimit: FILE_LIMITS.singleUploadBytes, handler: uploadThroughLink },
  { method: 'PUT', kind: KINDS.part, summary: 'Uploads one part of a multipart upload through the link it was given', bodyLimit: FILE_LIMITS.maxPartBytes, handler: uploadPart },
  { method: 'GET', kind: KINDS.download, summary: "Downloads a file's content (or a byte range of it) through the link /files/downloadlink gave", handler: download },
];
