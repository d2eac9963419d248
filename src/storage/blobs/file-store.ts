/**
 * Blobs as files in a directory: `<root>/<project>/<key>`. A write goes to a file of its own under
 * `<root>/.partial/`, is flushed to disk, and is then renamed over the blob's name: readers see the whole old
 * file or the whole new one, and a reader that opened the old one reads it to its end. Files left in
 * `.partial/` by a process that died mid-write are removed when a store opens, once a day old.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobNotFound, byteCounter, checkKey, rangeEnd, type BlobInfo, type BlobRange, type BlobStore, type PutOptions } from './blob-store.js';

const STALE_PARTIAL_MS = 86_400_000;

const missing = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

export class FileBlobStore implements BlobStore {
  readonly kind = 'file' as const;
  private readonly partial: string;

  private constructor(readonly location: string) {
    this.partial = join(location, '.partial');
  }

  static async open(root: string): Promise<FileBlobStore> {
    const store = new FileBlobStore(root);
    // Readable by Strata's user alone, as the data directory is.
    await mkdir(store.partial, { recursive: true, mode: 0o700 });
    const now = Date.now();
    for (const name of await readdir(store.partial)) {
      const path = join(store.partial, name);
      const info = await stat(path).catch(() => undefined);
      if (info && now - info.mtimeMs > STALE_PARTIAL_MS) await rm(path, { force: true });
    }
    return store;
  }

  private path(projectId: number, key: string): string {
    checkKey(projectId, key);
    return join(this.location, String(projectId), ...key.split('/'));
  }

  /** Writes the content into a new file, flushed to disk, then renames it to the blob's name. */
  private async replace(target: string, content: Readable, maxBytes?: number): Promise<BlobInfo> {
    const temporary = join(this.partial, randomUUID());
    try {
      await pipeline(content, byteCounter(maxBytes), createWriteStream(temporary, { flags: 'wx' }));
      const handle = await open(temporary, 'r+');
      try {
        await handle.datasync();
      } finally {
        await handle.close();
      }
      const { size } = await stat(temporary);
      await mkdir(dirname(target), { recursive: true });
      await rename(temporary, target);
      return { size };
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async put(projectId: number, key: string, body: Readable, options: PutOptions = {}): Promise<BlobInfo> {
    return this.replace(this.path(projectId, key), body, options.maxBytes);
  }

  private async openBlob(path: string): Promise<FileHandle | undefined> {
    try {
      return await open(path, 'r');
    } catch (error) {
      if (missing(error)) return undefined;
      throw error;
    }
  }

  async get(projectId: number, key: string, range?: BlobRange): Promise<Readable | undefined> {
    const handle = await this.openBlob(this.path(projectId, key));
    if (!handle) return undefined;
    const start = range?.start ?? 0;
    const end = rangeEnd((await handle.stat()).size, range);
    if (end < start) {
      await handle.close();
      return Readable.from([]);
    }
    return handle.createReadStream({ start, end, autoClose: true });
  }

  async head(projectId: number, key: string): Promise<BlobInfo | undefined> {
    try {
      return { size: (await stat(this.path(projectId, key))).size };
    } catch (error) {
      if (missing(error)) return undefined;
      throw error;
    }
  }

  async delete(projectId: number, key: string): Promise<void> {
    await rm(this.path(projectId, key), { force: true });
  }

  async compose(projectId: number, key: string, parts: readonly string[]): Promise<BlobInfo> {
    const target = this.path(projectId, key);
    const sources = parts.map((part) => ({ part, path: this.path(projectId, part) }));
    const openBlob = (path: string) => this.openBlob(path);
    async function* concatenation() {
      for (const { part, path } of sources) {
        const handle = await openBlob(path);
        if (!handle) throw new BlobNotFound(part);
        yield* handle.createReadStream({ autoClose: true });
      }
    }
    return this.replace(target, Readable.from(concatenation()));
  }

  async close(): Promise<void> {}
}
