/** 1 GiB through the S3 store with resident memory bounded (see support/blob-stream.ts); the server runs in this process, and counts. */
import { it } from 'vitest';
import { S3BlobStore } from '../../src/storage/blobs/s3-store.js';
import { streamThrough } from '../support/blob-stream.js';
import { startS3Server } from '../support/s3-server.js';

it('streams a 1 GiB blob through an S3-compatible store', { timeout: 600_000 }, async () => {
  const s3 = await startS3Server(['big']);
  const blobs = await S3BlobStore.open({ bucket: 'big', prefix: '', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
  try {
    await streamThrough(blobs, 1);
  } finally {
    await blobs.close();
    await s3.stop();
  }
});
