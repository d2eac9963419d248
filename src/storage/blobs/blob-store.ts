/**
 * Blob contents (file contents, uploaded parts, job outputs) behind one interface, apart from the metadata
 * that describes them: a directory (the default), the database, or an S3-compatible store. Contents stream
 * both ways, so memory never grows with a blob's size.
 *
 * A blob is named by its project and a key of the area's choosing (`files/123`): segments of letters,
 * digits, `.`, `_` and `-`, separated by `/`. Writing a blob replaces it whole: a reader sees the old
 * content or the new one, never part of a write. A multipart upload stores each part as a blob of its own
 * and composes them at the end, without loading them.
 */
import { Transform, type Readable } from 'node:stream';

export interface BlobInfo {
  /** Bytes. */
  size: number;
}

/** Bytes `start` to `end`, both included (as in an HTTP Range header); to the end when `end` is absent. */
export interface BlobRange {
  start: number;
  end?: number;
}

export interface PutOptions {
  /** The most bytes the blob may have: a longer stream is refused (`BlobTooLarge`) and nothing is stored. */
  maxBytes?: number;
}

export type BlobStoreKind = 'file' | 'database' | 's3';

export interface BlobStore {
  readonly kind: BlobStoreKind;
  /** Where the blobs are, for messages (no secrets). */
  readonly location: string;
  /** Stores the stream as the blob, replacing any; resolves once it is stored whole. */
  put(projectId: number, key: string, body: Readable, options?: PutOptions): Promise<BlobInfo>;
  /**
   * The blob's bytes, or of a range of it (clamped to its end; a start past the end gives no bytes), or
   * undefined when there is no such blob.
   */
  get(projectId: number, key: string, range?: BlobRange): Promise<Readable | undefined>;
  head(projectId: number, key: string): Promise<BlobInfo | undefined>;
  /** Deletes the blob if there is one. */
  delete(projectId: number, key: string): Promise<void>;
  /** Stores the concatenation of the blobs `parts` (in order) as the blob `key`; the parts stay. */
  compose(projectId: number, key: string, parts: readonly string[]): Promise<BlobInfo>;
  close(): Promise<void>;
}

/** A stream longer than `PutOptions.maxBytes`. */
export class BlobTooLarge extends Error {
  override readonly name = 'BlobTooLarge';
  constructor(readonly maxBytes: number) {
    super(`the content is larger than ${maxBytes} bytes`);
  }
}

/** A part named in `compose` that does not exist. */
export class BlobNotFound extends Error {
  override readonly name = 'BlobNotFound';
  constructor(readonly key: string) {
    super(`there is no blob "${key}"`);
  }
}

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;
const MAX_KEY = 512;

/** Refuses a key that is not one (a programming error: areas build keys, clients do not). */
export function checkKey(projectId: number, key: string): void {
  if (!Number.isSafeInteger(projectId) || projectId < 0) throw new Error(`a blob's project must be an id, got ${projectId}`);
  if (key.length > MAX_KEY || !KEY.test(key)) throw new Error(`"${key}" is not a blob key: segments of letters, digits, '.', '_' and '-' (not starting with '.'), separated by '/'`);
}

/** A pass-through that counts bytes and fails with BlobTooLarge past the limit; `bytes` says how many went through. */
export function byteCounter(maxBytes = Infinity): Transform & { bytes: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counter.bytes += chunk.length;
      if (counter.bytes > maxBytes) done(new BlobTooLarge(maxBytes));
      else done(null, chunk);
    },
  }) as Transform & { bytes: number };
  counter.bytes = 0;
  return counter;
}

/** The last byte a range reads of a blob of `size` bytes (-1: none). */
export function rangeEnd(size: number, range?: BlobRange): number {
  return Math.min(size - 1, range?.end ?? Infinity);
}
