/** 100 MiB of a file's content through Strata over HTTP, kept in an S3-compatible store, with resident memory bounded (see support/file-stream.ts); the S3 server runs in this process, and counts. */
import { it } from 'vitest';
import { fileThroughServer } from '../support/file-stream.js';
import { startS3Server } from '../support/s3-server.js';

it('uploads and downloads 100 MiB through an S3-compatible store', { timeout: 300_000 }, async () => {
  const s3 = await startS3Server(['files']);
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  try {
    await fileThroughServer({ blobs: { location: { kind: 's3', bucket: 'files', prefix: '' }, endpoint: s3.endpoint, pathStyle: true } });
  } finally {
    await s3.stop();
  }
});
