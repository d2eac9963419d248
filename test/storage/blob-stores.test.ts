/**
 * The blob stores, each through the one interface: a directory, this run's database, and an S3-compatible
 * server started here. Writes replace a blob whole (a reader never sees part of one), reads take byte
 * ranges, a stream over the size limit stores nothing, parts compose in order (S3: copied inside the store
 * when they are large enough, streamed through otherwise), and keys are checked.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobNotFound, BlobTooLarge, type BlobStore } from '../../src/storage/blobs/blob-store.js';
import { CHUNK, DatabaseBlobStore } from '../../src/storage/blobs/database-store.js';
import { FileBlobStore } from '../../src/storage/blobs/file-store.js';
import { parseBlobUrl } from '../../src/storage/blobs/open.js';
import { BlobStoreUnreachable, S3BlobStore } from '../../src/storage/blobs/s3-store.js';
import { ensureProjects } from '../../src/storage/projects.js';
import { sql } from '../../src/storage/sql.js';
import type { Store } from '../../src/storage/store.js';
import { startS3Server, type S3Server } from '../support/s3-server.js';
import { openTestStore } from '../support/test-store.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-blobs-'));
let s3: S3Server;
let db: Store;
/** The ids of the projects `dev` and `other`. */
let P1: number;
let P2: number;
beforeAll(async () => {
  s3 = await startS3Server(['strata-test']);
  db = await openTestStore();
  await ensureProjects(db, ['dev', 'other'], Date.now());
  [P1, P2] = await Promise.all(['dev', 'other'].map(async (name) => (await db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${name}`))!.id));
});
afterAll(async () => {
  await db.close();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
});

const read = async (stream: Readable | undefined): Promise<string | undefined> => {
  if (!stream) return undefined;
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(p as Buffer);
  return Buffer.concat(parts).toString();
};
const text = (s: string) => Readable.from([Buffer.from(s)]);

const stores: Array<{ name: string; open(): Promise<BlobStore> }> = [
  { name: 'directory', open: () => FileBlobStore.open(dir) },
  { name: 'database', open: () => DatabaseBlobStore.open(db, db.location) },
  { name: 's3', open: () => S3BlobStore.open({ bucket: 'strata-test', prefix: 'blobs/', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials }) },
];

describe.each(stores)('$name blob store', ({ open }) => {
  let blobs: BlobStore;
  beforeAll(async () => {
    blobs = await open();
  });
  afterAll(() => blobs.close());

  it('stores, reads, ranges, replaces and deletes a blob, per project', async () => {
    expect(await blobs.put(P1, 'files/1', text('hello, blob'))).toEqual({ size: 11 });
    expect(await read(await blobs.get(P1, 'files/1'))).toBe('hello, blob');
    expect(await read(await blobs.get(P1, 'files/1', { start: 7 }))).toBe('blob');
    expect(await read(await blobs.get(P1, 'files/1', { start: 0, end: 4 }))).toBe('hello');
    expect(await read(await blobs.get(P1, 'files/1', { start: 7, end: 100 }))).toBe('blob');
    expect(await read(await blobs.get(P1, 'files/1', { start: 11 }))).toBe('');
    expect(await blobs.head(P1, 'files/1')).toEqual({ size: 11 });
    // Another project's blob of the same key is another blob.
    expect(await blobs.get(P2, 'files/1')).toBeUndefined();
    expect(await blobs.head(P2, 'files/1')).toBeUndefined();
    await blobs.put(P1, 'files/1', text('replaced'));
    expect(await read(await blobs.get(P1, 'files/1'))).toBe('replaced');
    await blobs.delete(P1, 'files/1');
    expect(await blobs.get(P1, 'files/1')).toBeUndefined();
    expect(await blobs.head(P1, 'files/1')).toBeUndefined();
    await blobs.delete(P1, 'files/1');
    expect(await blobs.put(P1, 'empty', Readable.from([]))).toEqual({ size: 0 });
    expect(await read(await blobs.get(P1, 'empty'))).toBe('');
  });

  it('shows the old content, never part of the new, while a write is under way', async () => {
    await blobs.put(P1, 'files/2', text('old'));
    const body = new PassThrough();
    const writing = blobs.put(P1, 'files/2', body);
    body.write(Buffer.alloc(CHUNK + 10, 'n'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await read(await blobs.get(P1, 'files/2'))).toBe('old');
    body.end('end');
    expect(await writing).toEqual({ size: CHUNK + 13 });
    const content = (await read(await blobs.get(P1, 'files/2')))!;
    expect(content.length).toBe(CHUNK + 13);
    expect(content.endsWith('nnend')).toBe(true);
    // A range across the end of the first chunk of the database store.
    expect(await read(await blobs.get(P1, 'files/2', { start: CHUNK + 8, end: CHUNK + 11 }))).toBe('nnen');
  });

  it('refuses a stream longer than the limit and keeps what was there', async () => {
    await blobs.put(P1, 'files/3', text('kept'));
    const long = Readable.from([Buffer.alloc(600), Buffer.alloc(600)]);
    await expect(blobs.put(P1, 'files/3', long, { maxBytes: 1000 })).rejects.toBeInstanceOf(BlobTooLarge);
    expect(await read(await blobs.get(P1, 'files/3'))).toBe('kept');
    await expect(blobs.put(P1, 'files/4', Readable.from([Buffer.alloc(1001)]), { maxBytes: 1000 })).rejects.toThrow('larger than 1000 bytes');
    expect(await blobs.head(P1, 'files/4')).toBeUndefined();
    expect(await blobs.put(P1, 'files/4', Readable.from([Buffer.alloc(1000)]), { maxBytes: 1000 })).toEqual({ size: 1000 });
  });

  it('composes parts in order without changing them, and names a missing part', async () => {
    await blobs.put(P1, 'uploads/9/part-1', text('first '));
    await blobs.put(P1, 'uploads/9/part-2', text('second '));
    await blobs.put(P1, 'uploads/9/part-3', text('third'));
    expect(await blobs.compose(P1, 'files/9', ['uploads/9/part-1', 'uploads/9/part-2', 'uploads/9/part-3'])).toEqual({ size: 18 });
    expect(await read(await blobs.get(P1, 'files/9'))).toBe('first second third');
    expect(await read(await blobs.get(P1, 'files/9', { start: 3, end: 9 }))).toBe('st seco');
    expect(await read(await blobs.get(P1, 'uploads/9/part-2'))).toBe('second ');
    await expect(blobs.compose(P1, 'files/10', ['uploads/9/part-1', 'uploads/9/part-4'])).rejects.toEqual(new BlobNotFound('uploads/9/part-4'));
    expect(await blobs.head(P1, 'files/10')).toBeUndefined();
  });

  it('composes large parts (copied inside an S3 store)', async () => {
    const big = 5 * 1024 * 1024;
    await blobs.put(P1, 'uploads/11/1', Readable.from([Buffer.alloc(big, 'a')]));
    await blobs.put(P1, 'uploads/11/2', Readable.from([Buffer.alloc(big, 'b')]));
    await blobs.put(P1, 'uploads/11/3', text('tail'));
    expect(await blobs.compose(P1, 'files/11', ['uploads/11/1', 'uploads/11/2', 'uploads/11/3'])).toEqual({ size: 2 * big + 4 });
    expect(await read(await blobs.get(P1, 'files/11', { start: big - 2, end: big + 1 }))).toBe('aabb');
    expect(await read(await blobs.get(P1, 'files/11', { start: 2 * big }))).toBe('tail');
  });

  it('refuses keys that are not keys', async () => {
    for (const key of ['', '../x', 'a//b', '/a', 'a/', 'a/../b', '.hidden', 'sp ace', 'x'.repeat(513)]) {
      await expect(blobs.put(P1, key, text('x'))).rejects.toThrow('is not a blob key');
    }
    await expect(blobs.head(-1, 'a')).rejects.toThrow("a blob's project must be an id");
  });
});

describe('blob stores, further', () => {
  it('leaves no partial files behind in a directory after a refused write', async () => {
    const blobs = await FileBlobStore.open(dir);
    await expect(blobs.put(P1, 'x', Readable.from([Buffer.alloc(10)]), { maxBytes: 5 })).rejects.toBeInstanceOf(BlobTooLarge);
    expect(readdirSync(join(dir, '.partial'))).toEqual([]);
  });

  it('leaves no content behind in the database after a refused write', async () => {
    const blobs = await DatabaseBlobStore.open(db, db.location);
    const before = (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM blob_chunks`))!.n;
    await expect(blobs.put(P1, 'y', Readable.from([Buffer.alloc(CHUNK), Buffer.alloc(CHUNK)]), { maxBytes: CHUNK + 1 })).rejects.toBeInstanceOf(BlobTooLarge);
    expect((await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM blob_chunks`))!.n).toBe(before);
    expect((await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM blob_contents WHERE complete = 0`))!.n).toBe(0);
  });

  it('refuses to open an S3 store whose bucket does not exist or cannot be reached, saying which', async () => {
    const open = (bucket: string, endpoint: string) => S3BlobStore.open({ bucket, prefix: '', endpoint, forcePathStyle: true, credentials: s3.credentials });
    await expect(open('no-such-bucket', s3.endpoint)).rejects.toThrow(new BlobStoreUnreachable(`the bucket "no-such-bucket" at ${s3.endpoint} cannot be reached: there is no such bucket`));
    await expect(open('strata-test', 'http://127.0.0.1:1')).rejects.toThrow(/^the bucket "strata-test" at http:\/\/127\.0\.0\.1:1 cannot be reached: /);
  });

  it('reads blob URLs, and says what is wrong with one that is not', () => {
    expect(parseBlobUrl('s3://my-bucket/some/prefix/')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: 'some/prefix/' });
    expect(parseBlobUrl('s3://my-bucket')).toEqual({ kind: 's3', bucket: 'my-bucket', prefix: '' });
    expect(parseBlobUrl('file:///var/lib/strata/blobs')).toEqual({ kind: 'file', path: '/var/lib/strata/blobs' });
    expect(parseBlobUrl('database:')).toEqual({ kind: 'database' });
    expect(() => parseBlobUrl('not a url')).toThrow('"not a url" is not a URL; expected one of file:///var/lib/strata/blobs, database: or s3://bucket/prefix');
    expect(() => parseBlobUrl('ftp://host/x')).toThrow('"ftp://host/x" is not a blob store URL');
    expect(() => parseBlobUrl('s3://Bad_Bucket/x')).toThrow('"Bad_Bucket" is not a bucket name');
    expect(() => parseBlobUrl('s3://key:secret@bucket/x')).toThrow('credentials come from AWS_ACCESS_KEY_ID');
    expect(() => parseBlobUrl('database:extra')).toThrow('takes nothing after "database:"');
  });
});
