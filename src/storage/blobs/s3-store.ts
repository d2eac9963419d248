/**
 * Blobs in an S3-compatible store (AWS S3, MinIO, Ceph, ...) through the AWS SDK: `<prefix><project>/<key>`
 * in one bucket. Credentials and region come from the SDK's usual sources (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_REGION, profiles, instance roles). A write is one multipart upload of PART-sized
 * parts, at most QUEUE of them in memory; S3 shows the object only once the upload completes, whole.
 * Composing parts copies them inside the store (UploadPartCopy) when S3 allows it (every part but the last
 * at least 5 MiB, at most 10,000 parts), and otherwise streams them through.
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  S3Client,
  UploadPartCopyCommand,
  AbortMultipartUploadCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { BlobNotFound, BlobTooLarge, byteCounter, checkKey, type BlobInfo, type BlobRange, type BlobStore, type PutOptions } from './blob-store.js';

const PART = 8 * 1024 * 1024;
const QUEUE = 2;
/** S3's smallest part of a multipart upload (but the last), and its most parts. */
const MIN_COPY_PART = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

export interface S3Options {
  bucket: string;
  /** Prepended to every object's key; ends with `/` unless empty. */
  prefix: string;
  /** An S3-compatible server's address instead of AWS's. */
  endpoint?: string;
  /** Bucket in the path (`host/bucket/key`) rather than the host name: what most S3-compatible servers need. */
  forcePathStyle?: boolean;
  region?: string;
  /** Explicit credentials; the SDK's default sources when absent. */
  credentials?: S3ClientConfig['credentials'];
}

/** The bucket could not be reached with the settings given; the message says where and why. */
export class BlobStoreUnreachable extends Error {
  override readonly name = 'BlobStoreUnreachable';
}

const status = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
const isMissing = (error: unknown) => ['NoSuchKey', 'NotFound'].includes((error as Error).name) || status(error) === 404;

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;
  readonly location: string;

  private constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
    endpoint: string | undefined,
  ) {
    this.location = `s3://${bucket}/${prefix}${endpoint ? ` at ${endpoint}` : ''}`;
  }

  /** Opens the store once the bucket answers. */
  static async open(o: S3Options): Promise<S3BlobStore> {
    const client = new S3Client({
      region: o.region ?? 'us-east-1',
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
      forcePathStyle: o.forcePathStyle ?? false,
      ...(o.credentials ? { credentials: o.credentials } : {}),
      // A bucket that does not answer is a setting to fix, not something to wait out at start.
      maxAttempts: 2,
    });
    const store = new S3BlobStore(client, o.bucket, o.prefix, o.endpoint);
    try {
      await client.send(new HeadBucketCommand({ Bucket: o.bucket }), { abortSignal: AbortSignal.timeout(10_000) });
    } catch (error) {
      client.destroy();
      const code = status(error);
      const why = code === 404 ? 'there is no such bucket' : code === 403 ? 'access is denied (check the credentials)' : (error as Error).message || (error as Error).name;
      throw new BlobStoreUnreachable(`the bucket "${o.bucket}"${o.endpoint ? ` at ${o.endpoint}` : ''} cannot be reached: ${why}`, { cause: error });
    }
    return store;
  }

  private objectKey(projectId: number, key: string): string {
    checkKey(projectId, key);
    return `${this.prefix}${projectId}/${key}`;
  }

  async put(projectId: number, key: string, body: Readable, options: PutOptions = {}): Promise<BlobInfo> {
    return this.upload(this.objectKey(projectId, key), body, options.maxBytes);
  }

  private async upload(objectKey: string, body: Readable, maxBytes?: number): Promise<BlobInfo> {
    const counter = byteCounter(maxBytes);
    let refused: unknown;
    body.once('error', (error) => counter.destroy(error));
    counter.once('error', (error) => (refused = error));
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: objectKey, Body: body.pipe(counter) }, partSize: PART, queueSize: QUEUE, leavePartsOnError: false });
    try {
      await upload.done();
    } catch (error) {
      throw refused instanceof BlobTooLarge ? refused : (refused ?? error);
    }
    return { size: counter.bytes };
  }

  async get(projectId: number, key: string, range?: BlobRange): Promise<Readable | undefined> {
    const Range = range ? `bytes=${range.start}-${range.end ?? ''}` : undefined;
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(projectId, key), Range }));
      return out.Body as Readable;
    } catch (error) {
      if (isMissing(error)) return undefined;
      // A range that starts past the end: no bytes, as the other stores answer.
      if (status(error) === 416) return Readable.from([]);
      throw error;
    }
  }

  async head(projectId: number, key: string): Promise<BlobInfo | undefined> {
    return this.headObject(this.objectKey(projectId, key));
  }

  private async headObject(objectKey: string): Promise<BlobInfo | undefined> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return { size: out.ContentLength ?? 0 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(projectId: number, key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(projectId, key) }));
  }

  async compose(projectId: number, key: string, parts: readonly string[]): Promise<BlobInfo> {
    const target = this.objectKey(projectId, key);
    const sources: Array<{ objectKey: string; size: number }> = [];
    for (const part of parts) {
      const objectKey = this.objectKey(projectId, part);
      const info = await this.headObject(objectKey);
      if (!info) throw new BlobNotFound(part);
      sources.push({ objectKey, size: info.size });
    }
    const copyable = sources.length > 0 && sources.length <= MAX_PARTS && sources.slice(0, -1).every((s) => s.size >= MIN_COPY_PART) && sources.at(-1)!.size > 0;
    if (copyable) return this.copyParts(target, sources);
    const get = (objectKey: string) => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    async function* concatenation() {
      for (const s of sources) yield* (await get(s.objectKey)).Body as Readable;
    }
    return this.upload(target, Readable.from(concatenation()));
  }

  /** Composes inside the store: a multipart upload whose parts are copies of the sources. */
  private async copyParts(target: string, sources: ReadonlyArray<{ objectKey: string; size: number }>): Promise<BlobInfo> {
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: target }));
    try {
      const Parts = [];
      for (const [i, s] of sources.entries()) {
        const copy = await this.client.send(
          new UploadPartCopyCommand({ Bucket: this.bucket, Key: target, UploadId, PartNumber: i + 1, CopySource: `${this.bucket}/${s.objectKey.split('/').map(encodeURIComponent).join('/')}` }),
        );
        Parts.push({ PartNumber: i + 1, ETag: copy.CopyPartResult?.ETag });
      }
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: target, UploadId, MultipartUpload: { Parts } }));
    } catch (error) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: target, UploadId })).catch(() => {});
      throw error;
    }
    return { size: sources.reduce((n, s) => n + s.size, 0) };
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
