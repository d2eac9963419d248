/**
 * A file's content through Strata over HTTP, as a client sends and fetches it: 100 MiB, generated as it is
 * sent, PUT through an upload link of a real listening server and read back through a download link, byte for
 * byte, while the process's resident memory (the server's and the client's, both in this process) stays
 * within BOUND of what it was before, plus, when the content is kept in an SQLite database, the page cache
 * its connection keeps whatever a blob's size.
 * See blob-stream.ts for how memory is measured.
 */
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { SqliteStore } from '../../src/storage/sqlite-store.js';
import { startHarness } from './harness.js';
import { freePort } from './net.js';
import { digestOf, generated, Peak } from './blob-stream.js';

const SIZE = 100 * 1024 * 1024;
/**
 * Less than the content itself with what the streaming stores need at their least (40 to 90 MiB here, the
 * in-process S3 server's included): an upload or download held whole would pass it.
 */
const BOUND = 128 * 1024 * 1024;

/** PUT or GET of a link on the server; resolves with the response (its body unread). */
function send(method: 'PUT' | 'GET', url: string, body?: NodeJS.ReadableStream): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: body ? { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) } : {} }, resolve);
    req.on('error', reject);
    if (body) pipeline(body, req).catch(reject);
    else req.end();
  });
}

/** Uploads and downloads 100 MiB through a server built with `config` (no read workers: one connection's cache). */
export async function fileThroughServer(config: Partial<Config>): Promise<void> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const h = await startHarness({ ...config, readWorkers: 0, port, publicUrl: origin });
  // SQLite's page cache, set in KiB as a negative `cache_size` (storage/connection.ts), when the content passes through it.
  const store = h.strata.store;
  const cache = store instanceof SqliteStore && config.blobs?.location?.kind === 'database' ? -(store.connection.pragma('cache_size', { simple: true }) as number) * 1024 : 0;
  try {
    await h.strata.app.listen({ port, host: '127.0.0.1' });
    const created = await h.post('/files', { name: 'big.bin' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    global.gc?.();
    const peak = new Peak();
    const source = generated(peak, SIZE);
    const started = performance.now();
    const put = await send('PUT', created.body.uploadUrl, source.stream);
    expect(put.statusCode).toBe(200);
    put.resume();
    const uploaded = performance.now();
    const link = await h.post('/files/downloadlink', { items: [{ id: created.body.id }] });
    const got = await send('GET', link.body.items[0].downloadUrl);
    expect(got.statusCode).toBe(200);
    expect(await digestOf(got, peak)).toEqual({ digest: source.digest(), size: SIZE });
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
    const seconds = (t: number) => (t / 1000).toFixed(1);
    console.log(`${h.strata.services.blobs!.kind}: 100 MiB uploaded in ${seconds(uploaded - started)} s, downloaded in ${seconds(performance.now() - uploaded)} s; resident memory grew ${mib(peak.growth)} (bound ${mib(BOUND + cache)})`);
    expect(peak.growth).toBeLessThan(BOUND + cache);
  } finally {
    await h.close();
  }
}
