/** 100 MiB of a file's content through Strata over HTTP, kept in the database (this run's engine), with resident memory bounded (see support/file-stream.ts). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, it } from 'vitest';
import { fileThroughServer } from '../support/file-stream.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('uploads and downloads 100 MiB through the database store', { timeout: 300_000 }, async () => {
  // A database file (not memory) on SQLite.
  await fileThroughServer({ dataDir: dir, blobs: { location: { kind: 'database' } } });
});
