/**
 * An S3-compatible server in this process (the npm package @20minutes/s3rver) on a free loopback port,
 * storing objects in a temporary directory, for the credentials S3RVER / S3RVER. It signs bucket-level
 * requests (`/bucket/`) otherwise than the current AWS SDK does, so it is told to accept mismatched signatures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: the package ships no types
import S3rver from '@20minutes/s3rver';

export interface S3Server {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

export async function startS3Server(buckets: readonly string[]): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 'strata-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, allowMismatchedSignatures: true, configureBuckets: buckets.map((name) => ({ name })) });
  const { port } = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
