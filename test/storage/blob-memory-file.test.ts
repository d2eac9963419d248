/** 1 GiB through the directory store with resident memory bounded (see support/blob-stream.ts). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, it } from 'vitest';
import { FileBlobStore } from '../../src/storage/blobs/file-store.js';
import { streamThrough } from '../support/blob-stream.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-big-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('streams a 1 GiB blob through a directory', { timeout: 300_000 }, async () => {
  await streamThrough(await FileBlobStore.open(dir), 1);
});
