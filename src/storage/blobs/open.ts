/**
 * Which blob store a deployment uses, from one URL: `file:///path` (a directory), `database:` (the store's
 * own database), or `s3://bucket/prefix` (an S3-compatible store). Without one, blobs live in `blobs/`
 * under the data directory, or in the database when there is no data directory (`:memory:`).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queryable } from '../store.js';
import type { BlobStore } from './blob-store.js';
import { DatabaseBlobStore } from './database-store.js';
import { FileBlobStore } from './file-store.js';
import { S3BlobStore } from './s3-store.js';

export type BlobLocation = { kind: 'file'; path: string } | { kind: 'database' } | { kind: 's3'; bucket: string; prefix: string };

export interface BlobSettings {
  location?: BlobLocation;
  /** An S3-compatible server's address (s3 only). */
  endpoint?: string;
  /** Path-style addressing (s3 only). */
  pathStyle?: boolean;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const EXAMPLES = 'file:///var/lib/strata/blobs, database: or s3://bucket/prefix';

/** Reads a blob URL; throws an Error whose message says what is wrong with it. */
export function parseBlobUrl(raw: string): BlobLocation {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not a URL; expected one of ${EXAMPLES}`);
  }
  if (url.protocol === 'database:') {
    if (raw !== 'database:') throw new Error(`"${raw}": a database blob store takes nothing after "database:"`);
    return { kind: 'database' };
  }
  if (url.protocol === 'file:') {
    if (url.search || url.hash || url.pathname === '/' ) throw new Error(`"${raw}" must name a directory, such as file:///var/lib/strata/blobs`);
    return { kind: 'file', path: fileURLToPath(url) };
  }
  if (url.protocol === 's3:') {
    if (!BUCKET.test(url.hostname)) throw new Error(`"${raw}": "${url.hostname}" is not a bucket name (3 to 63 lower-case letters, digits, '.' and '-')`);
    if (url.username || url.password || url.port || url.search || url.hash) {
      throw new Error(`"${raw}" must be s3://bucket or s3://bucket/prefix; credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the address from STRATA_BLOB_ENDPOINT`);
    }
    const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
    return { kind: 's3', bucket: url.hostname, prefix: prefix ? `${prefix}/` : '' };
  }
  throw new Error(`"${raw}" is not a blob store URL; expected one of ${EXAMPLES}`);
}

export interface OpenBlobOptions {
  dataDir: string;
  /** The store's database, for `database:`. */
  db: Queryable;
  /** How the database is named in messages. */
  dbLocation: string;
  now?: () => number;
}

export async function openBlobStore(settings: BlobSettings, o: OpenBlobOptions): Promise<BlobStore> {
  const location = settings.location ?? (o.dataDir === ':memory:' ? { kind: 'database' } : { kind: 'file', path: join(o.dataDir, 'blobs') });
  switch (location.kind) {
    case 'file':
      return FileBlobStore.open(location.path);
    case 'database':
      return DatabaseBlobStore.open(o.db, o.dbLocation, o.now);
    case 's3':
      return S3BlobStore.open({
        bucket: location.bucket,
        prefix: location.prefix,
        endpoint: settings.endpoint,
        forcePathStyle: settings.pathStyle ?? settings.endpoint !== undefined,
        region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION,
      });
  }
}
