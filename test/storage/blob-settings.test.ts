/**
 * The blob store a server uses, set by STRATA_BLOB_URL: `strata serve` refuses to start, naming the setting,
 * when the URL does not parse or its bucket cannot be reached, and starts on an S3-compatible store with the
 * usual AWS variables and an endpoint.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';
import { startS3Server, type S3Server } from '../support/s3-server.js';

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3Server(['strata-blobs']);
});
afterAll(() => s3.stop());

/** Runs `strata serve` until it says it listens (then stops it) or exits; its exit code and output. */
async function serve(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--port', String(port), '--data-dir', ':memory:'], {
    env: { ...process.env, STRATA_PROJECTS: 'dev', AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      output += d;
      if (output.includes('Get a token')) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d) => (output += d));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('STRATA_BLOB_URL', () => {
  it('refuses to start on a URL that does not parse, naming the setting', async () => {
    const { code, output } = await serve({ STRATA_BLOB_URL: 'ftp://files.example.com/blobs' });
    expect(code).toBe(2);
    expect(output).toContain('strata: STRATA_BLOB_URL (--blob-url): "ftp://files.example.com/blobs" is not a blob store URL; expected one of file:///var/lib/strata/blobs, database: or s3://bucket/prefix');
  });

  it('refuses to start when its bucket does not exist or its endpoint does not answer, naming the setting', async () => {
    const missing = await serve({ STRATA_BLOB_URL: 's3://no-such-bucket/strata', STRATA_BLOB_ENDPOINT: s3.endpoint });
    expect(missing.code).toBe(2);
    expect(missing.output).toContain(`strata: STRATA_BLOB_URL (--blob-url): the bucket "no-such-bucket" at ${s3.endpoint} cannot be reached: there is no such bucket`);
    const away = await serve({ STRATA_BLOB_URL: 's3://strata-blobs', AWS_ENDPOINT_URL: 'http://127.0.0.1:1' });
    expect(away.code).toBe(2);
    expect(away.output).toContain('strata: STRATA_BLOB_URL (--blob-url): the bucket "strata-blobs" at http://127.0.0.1:1 cannot be reached: ');
    const endpoint = await serve({ STRATA_BLOB_URL: 's3://strata-blobs', STRATA_BLOB_ENDPOINT: 'not-a-url' });
    expect(endpoint.code).toBe(2);
    expect(endpoint.output).toContain('strata: STRATA_BLOB_ENDPOINT (--blob-endpoint) must be an http:// or https:// URL such as http://127.0.0.1:9000, got "not-a-url"');
  });

  it('starts on an S3-compatible store with the AWS variables and an endpoint', async () => {
    const { output } = await serve({ STRATA_BLOB_URL: 's3://strata-blobs/prefix', STRATA_BLOB_ENDPOINT: s3.endpoint });
    expect(output).toMatch(/Strata \S+ is listening on/);
  });
});
