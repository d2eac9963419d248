/**
 * Blobs in the database, for several processes on one PostgreSQL without a shared disk (and on SQLite
 * alike). A blob names a content; a content is rows of at most CHUNK bytes, keyed by their byte position.
 *
 * A write streams its chunks into a new content, one short statement each (no transaction stays open while
 * the client sends), and then, in one transaction, points the blob at it and deletes the content it replaces.
 * A reader reads a chunk at a time: a blob replaced or deleted while it is read ends its stream with an
 * error rather than with wrong bytes. Contents whose writer died are removed when a store opens, once a
 * day old.
 */
import { Readable } from 'node:stream';
import type { TableDef } from '../schema.js';
import { allocateIds } from '../ids.js';
import { Sql, sql } from '../sql.js';
import type { Queryable } from '../store.js';
import { BlobNotFound, BlobTooLarge, checkKey, rangeEnd, type BlobInfo, type BlobRange, type BlobStore, type PutOptions } from './blob-store.js';

export const blobTables: readonly TableDef[] = [
  {
    name: 'blob_contents',
    columns: {
      id: { type: 'id' },
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      // 0 while its writer streams it; a complete content belongs to a blob.
      complete: { type: 'integer', notNull: true, default: 0 },
      created_time: { type: 'integer', notNull: true },
    },
    indexes: [{ name: 'blob_contents_incomplete', columns: ['complete', 'created_time'] }],
  },
  {
    name: 'blob_chunks',
    columns: {
      project_id: { type: 'integer', notNull: true },
      content_id: { type: 'integer', notNull: true },
      position: { type: 'integer', notNull: true },
      size: { type: 'integer', notNull: true },
      data: { type: 'blob', notNull: true },
    },
    primaryKey: ['project_id', 'content_id', 'position'],
  },
  {
    name: 'blob_objects',
    columns: {
      project_id: { type: 'integer', notNull: true, references: 'projects' },
      blob_key: { type: 'text', notNull: true },
      content_id: { type: 'integer', notNull: true },
      size: { type: 'integer', notNull: true },
      created_time: { type: 'integer', notNull: true },
    },
    primaryKey: ['project_id', 'blob_key'],
  },
];

/** Bytes per chunk row: large enough that a gigabyte is a thousand statements, small enough to hold a few in memory. */
export const CHUNK = 1024 * 1024;
const STALE_CONTENT_MS = 86_400_000;

/** Chunks read ahead of the reader: what a stream holds in memory at most, besides the one it hands out. */
const READ_AHEAD = 1;

export class DatabaseBlobStore implements BlobStore {
  readonly kind = 'database' as const;
  readonly location: string;

  private constructor(
    private readonly db: Queryable,
    location: string,
    private readonly now: () => number,
  ) {
    this.location = `the database (${location})`;
  }

  static async open(db: Queryable, location: string, now: () => number = Date.now): Promise<DatabaseBlobStore> {
    const store = new DatabaseBlobStore(db, location, now);
    const stale = await db.all<{ projectId: number; id: number }>(
      sql`SELECT project_id AS "projectId", id FROM blob_contents WHERE complete = 0 AND created_time < ${now() - STALE_CONTENT_MS}`,
    );
    for (const c of stale) await store.dropContent(db, c.projectId, c.id);
    return store;
  }

  private async dropContent(db: Queryable, projectId: number, contentId: number): Promise<void> {
    await db.transaction(async (tx) => {
      await tx.run(sql`DELETE FROM blob_chunks WHERE project_id = ${projectId} AND content_id = ${contentId}`);
      await tx.run(sql`DELETE FROM blob_contents WHERE project_id = ${projectId} AND id = ${contentId}`);
    });
  }

  private async newContent(projectId: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [id] = await allocateIds(tx, 'blob_contents', 1);
      await tx.run(sql`INSERT INTO blob_contents (id, project_id, complete, created_time) VALUES (${id}, ${projectId}, 0, ${this.now()})`);
      return id;
    });
  }

  /** Writes what `fill` adds to a new content, then makes it the blob's. */
  private async replace(projectId: number, key: string, fill: (contentId: number) => Promise<number>): Promise<BlobInfo> {
    checkKey(projectId, key);
    const contentId = await this.newContent(projectId);
    try {
      const size = await fill(contentId);
      await this.db.transaction(async (tx) => {
        const old = await tx.get<{ contentId: number }>(
          sql`SELECT content_id AS "contentId" FROM blob_objects WHERE project_id = ${projectId} AND blob_key = ${key}${Sql.raw(tx.dialect.forUpdate)}`,
        );
        await tx.run(sql`INSERT INTO blob_objects (project_id, blob_key, content_id, size, created_time) VALUES (${projectId}, ${key}, ${contentId}, ${size}, ${this.now()})
          ON CONFLICT (project_id, blob_key) DO UPDATE SET content_id = excluded.content_id, size = excluded.size, created_time = excluded.created_time`);
        await tx.run(sql`UPDATE blob_contents SET complete = 1 WHERE project_id = ${projectId} AND id = ${contentId}`);
        if (old) await this.dropContent(tx, projectId, old.contentId);
      });
      return { size };
    } catch (error) {
      await this.dropContent(this.db, projectId, contentId).catch(() => {});
      throw error;
    }
  }

  async put(projectId: number, key: string, body: Readable, options: PutOptions = {}): Promise<BlobInfo> {
    const max = options.maxBytes ?? Infinity;
    return this.replace(projectId, key, async (contentId) => {
      const buffer = Buffer.allocUnsafe(CHUNK);
      let filled = 0;
      let size = 0;
      const flush = async () => {
        if (filled === 0) return;
        await this.db.run(sql`INSERT INTO blob_chunks (project_id, content_id, position, size, data) VALUES (${projectId}, ${contentId}, ${size - filled}, ${filled}, ${buffer.subarray(0, filled)})`);
        filled = 0;
      };
      for await (const piece of body) {
        const bytes = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as string);
        if (size + bytes.length > max) {
          body.destroy();
          throw new BlobTooLarge(max);
        }
        let at = 0;
        while (at < bytes.length) {
          const n = bytes.copy(buffer, filled, at);
          filled += n;
          size += n;
          at += n;
          if (filled === CHUNK) await flush();
        }
      }
      await flush();
      return size;
    });
  }

  private async object(projectId: number, key: string): Promise<{ contentId: number; size: number } | undefined> {
    checkKey(projectId, key);
    return this.db.get<{ contentId: number; size: number }>(sql`SELECT content_id AS "contentId", size FROM blob_objects WHERE project_id = ${projectId} AND blob_key = ${key}`);
  }

  async head(projectId: number, key: string): Promise<BlobInfo | undefined> {
    const o = await this.object(projectId, key);
    return o && { size: o.size };
  }

  async get(projectId: number, key: string, range?: BlobRange): Promise<Readable | undefined> {
    const o = await this.object(projectId, key);
    if (!o) return undefined;
    return Readable.from(this.read(projectId, o.contentId, range?.start ?? 0, rangeEnd(o.size, range)), { objectMode: false, highWaterMark: READ_AHEAD * CHUNK });
  }

  /** The bytes `start` to `end` of a content, a chunk at a time. */
  private async *read(projectId: number, contentId: number, start: number, end: number): AsyncGenerator<Buffer> {
    if (end < start) return;
    const first = await this.db.get<{ position: number }>(
      sql`SELECT max(position) AS position FROM blob_chunks WHERE project_id = ${projectId} AND content_id = ${contentId} AND position <= ${start}`,
    );
    let position = first?.position ?? null;
    while (position !== null && position <= end) {
      const from = Math.max(start - position, 0);
      const chunk = await this.db.get<{ size: number; data: Buffer | string }>(sql`SELECT size, substr(data, ${from + 1}, ${end - position - from + 1}) AS data
        FROM blob_chunks WHERE project_id = ${projectId} AND content_id = ${contentId} AND position = ${position}`);
      if (!chunk) throw new Error('the blob was replaced or deleted while it was read');
      yield Buffer.isBuffer(chunk.data) ? chunk.data : Buffer.from(chunk.data);
      position += chunk.size;
    }
    if (position === null || position <= end) throw new Error('the blob was replaced or deleted while it was read');
  }

  async delete(projectId: number, key: string): Promise<void> {
    checkKey(projectId, key);
    await this.db.transaction(async (tx) => {
      const o = await tx.get<{ contentId: number }>(sql`SELECT content_id AS "contentId" FROM blob_objects WHERE project_id = ${projectId} AND blob_key = ${key}${Sql.raw(tx.dialect.forUpdate)}`);
      if (!o) return;
      await tx.run(sql`DELETE FROM blob_objects WHERE project_id = ${projectId} AND blob_key = ${key}`);
      await this.dropContent(tx, projectId, o.contentId);
    });
  }

  async compose(projectId: number, key: string, parts: readonly string[]): Promise<BlobInfo> {
    const sources: Array<{ contentId: number; size: number }> = [];
    for (const part of parts) {
      const o = await this.object(projectId, part);
      if (!o) throw new BlobNotFound(part);
      sources.push(o);
    }
    return this.replace(projectId, key, async (contentId) => {
      let offset = 0;
      // Copied by the database, a part a statement: no byte passes through this process.
      for (const s of sources) {
        await this.db.run(sql`INSERT INTO blob_chunks (project_id, content_id, position, size, data)
          SELECT project_id, ${contentId}, position + ${offset}, size, data FROM blob_chunks WHERE project_id = ${projectId} AND content_id = ${s.contentId}`);
        offset += s.size;
      }
      const copied = await this.db.get<{ size: number | null }>(sql`SELECT sum(size) AS size FROM blob_chunks WHERE project_id = ${projectId} AND content_id = ${contentId}`);
      if ((copied?.size ?? 0) !== offset) throw new Error('a part was replaced or deleted while the parts were composed');
      return offset;
    });
  }

  async close(): Promise<void> {}
}
