/** 1 GiB through the database store, on this run's engine, with resident memory bounded (see support/blob-stream.ts). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, it } from 'vitest';
import { appSchema } from '../../src/app.js';
import { DatabaseBlobStore } from '../../src/storage/blobs/database-store.js';
import { migrate } from '../../src/storage/migrate.js';
import { openStore } from '../../src/storage/open.js';
import { ensureProjects } from '../../src/storage/projects.js';
import { SqliteStore } from '../../src/storage/sqlite-store.js';
import { sql } from '../../src/storage/sql.js';
import { streamThrough } from '../support/blob-stream.js';
import { newPostgresDatabase, testEngine } from '../support/test-store.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-big-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('streams a 1 GiB blob through the database', { timeout: 600_000 }, async () => {
  // A database file (not memory) on SQLite.
  const store = testEngine() === 'postgres' ? openStore({ dataDir: ':memory:', databaseUrl: await newPostgresDatabase() }) : openStore({ dataDir: dir });
  try {
    await migrate(store, appSchema());
    await ensureProjects(store, ['dev'], Date.now());
    const { id } = (await store.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'dev'`))!;
    // SQLite's page cache, set in KiB as a negative `cache_size` (storage/connection.ts).
    const cache = store instanceof SqliteStore ? -(store.connection.pragma('cache_size', { simple: true }) as number) * 1024 : 0;
    await streamThrough(await DatabaseBlobStore.open(store, store.location), id, cache);
  } finally {
    await store.close();
  }
});
