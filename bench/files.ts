/**
 * Files workload (issue 30): a file's content through Strata against copying the same bytes on the same disk.
 *
 * - Upload and download of one large file (BENCH_FILES_BYTES, default 1 GiB), from a file on disk through
 *   an upload link and back to a file on disk through a download link, each against `cp` of the same file in
 *   the same directory, in the same run. The server keeps the content in its blob store (a directory under
 *   its data directory, unless STRATA_BLOB_URL says otherwise through BENCH_STRATA_ENV).
 * - Many small files (BENCH_FILES_SMALL, default 1000, of 10 KB each) created and uploaded 8 at a time: each is
 *   a POST /files and a PUT of its content through the link it gives.
 *
 * The server's links carry its configured public address; the runner sends them to the address it listens on.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { intEnv } from './lib/env.js';
import type { BenchContext, Suite } from './lib/context.js';
import { expectStatus } from './lib/http.js';
import { pool } from './lib/load.js';
import { fmtInt, fmtRatio, timed } from './lib/stats.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const SMALL_BYTES = 10 * 1000;
const PARALLEL = 8;
const TARGETS = { transfer: 0.5, smallPerSecond: 300 } as const;

/** A link the server gave, at the address it listens on. */
const onServer = (ctx: BenchContext, link: string) => {
  const { pathname, search } = new URL(link);
  return `${ctx.server.apiOrigin}${pathname}${search}`;
};

/** Sends a request with `body` streamed from a file (or none) and streams the answer to `out` (or drops it). */
function transfer(method: 'PUT' | 'GET', url: string, opts: { from?: string; size?: number; to?: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: opts.from ? { 'content-type': 'application/octet-stream', 'content-length': String(opts.size) } : {} }, (res) => {
      const sink = opts.to ? createWriteStream(opts.to) : null;
      const done = sink ? pipeline(res, sink) : new Promise<void>((ok) => res.resume().once('end', ok));
      done.then(() => resolve(res.statusCode ?? 0), reject);
    });
    req.on('error', reject);
    if (opts.from) pipeline(createReadStream(opts.from), req).catch(reject);
    else req.end();
  });
}

/** Writes `bytes` of varied content to `path`. */
async function makeFile(path: string, bytes: number): Promise<void> {
  const piece = Buffer.alloc(MiB);
  for (let i = 0; i < MiB; i += 4) piece.writeUInt32LE((i * 2654435761) >>> 0, i);
  async function* pieces() {
    for (let at = 0; at < bytes; at += MiB) {
      const p = Buffer.from(piece.subarray(0, Math.min(MiB, bytes - at)));
      p.writeUInt32LE(at / MiB, 0);
      yield p;
    }
  }
  await pipeline(pieces, createWriteStream(path));
}

async function largeFile(ctx: BenchContext): Promise<void> {
  const bytes = intEnv('BENCH_FILES_BYTES', GiB);
  const source = join(ctx.tmpDir, 'files-source.bin');
  await makeFile(source, bytes);
  const cp = await timed(() => promisify(execFile)('cp', [source, join(ctx.tmpDir, 'files-copy.bin')]));
  // How fast this process copies the file through its own streams: what is left when HTTP and the server are not.
  const streamed = await timed(() => pipeline(createReadStream(source), createWriteStream(join(ctx.tmpDir, 'files-stream-copy.bin'))));
  const created = expectStatus(await ctx.call('POST', '/files', { name: 'large.bin', mimeType: 'application/octet-stream' }), 201, 'POST /files');
  const file = JSON.parse(created.body.toString('utf8')) as { id: number; uploadUrl: string };
  const up = await timed(() => transfer('PUT', onServer(ctx, file.uploadUrl), { from: source, size: bytes }));
  if (up.value !== 200) throw new Error(`PUT through the upload link: HTTP ${up.value}`);
  const links = expectStatus(await ctx.call('POST', '/files/downloadlink', { items: [{ id: file.id }] }), 200, 'POST /files/downloadlink');
  const { downloadUrl } = (JSON.parse(links.body.toString('utf8')) as { items: Array<{ downloadUrl: string }> }).items[0];
  const target = join(ctx.tmpDir, 'files-download.bin');
  const down = await timed(() => transfer('GET', onServer(ctx, downloadUrl), { to: target }));
  if (down.value !== 200 || statSync(target).size !== bytes) throw new Error(`GET through the download link: HTTP ${down.value}, ${statSync(target).size} bytes`);
  const rate = (ms: number) => bytes / MiB / (ms / 1000);
  const size = bytes >= GiB ? `${(bytes / GiB).toFixed(1)} GiB` : `${fmtInt(bytes / MiB)} MiB`;
  for (const [id, what, ms] of [
    ['files.upload', `Upload of a ${size} file from disk through an upload link`, up.ms],
    ['files.download', `Download of a ${size} file to disk through a download link`, down.ms],
  ] as const) {
    const ratio = cp.ms / ms;
    ctx.report({
      id,
      workload: what,
      value: `${fmtInt(rate(ms))} MiB/s`,
      reference: `cp of the same file on the same disk: ${fmtInt(rate(cp.ms))} MiB/s`,
      ratio: `${fmtRatio(ratio)} of cp`,
      target: `≥ ${TARGETS.transfer}× of cp`,
      met: ratio >= TARGETS.transfer,
      data: { bytes, ms, cpMs: cp.ms, streamCopyMs: streamed.ms, ratio },
    });
  }
  ctx.note(`Files: a copy of the same file through Node.js streams in the runner took ${fmtInt(rate(streamed.ms))} MiB/s (cp: ${fmtInt(rate(cp.ms))} MiB/s).`);
}

async function smallFiles(ctx: BenchContext): Promise<void> {
  const count = intEnv('BENCH_FILES_SMALL', 1000);
  const content = Buffer.alloc(SMALL_BYTES, 'x');
  const one = async (i: number) => {
    const res = expectStatus(await ctx.call('POST', '/files', { externalId: `bench-small-${i}`, name: `small-${i}.txt`, mimeType: 'text/plain' }), 201, 'POST /files');
    const { uploadUrl } = JSON.parse(res.body.toString('utf8')) as { uploadUrl: string };
    const put = await new Promise<number>((resolve, reject) => {
      const req = http.request(onServer(ctx, uploadUrl), { method: 'PUT', headers: { 'content-type': 'text/plain', 'content-length': String(SMALL_BYTES) } }, (r) => {
        r.resume().once('end', () => resolve(r.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(content);
    });
    if (put !== 200) throw new Error(`PUT of small file ${i}: HTTP ${put}`);
  };
  await pool(Math.min(50, count), PARALLEL, (i) => one(count + i));
  const { ms } = await timed(() => ctx.profiled('files-small', () => pool(count, PARALLEL, one)));
  const perSecond = count / (ms / 1000);
  ctx.report({
    id: 'files.small',
    workload: `${fmtInt(count)} files of 10 KB, each created and uploaded (POST /files, PUT), ${PARALLEL} in parallel`,
    value: `${fmtInt(perSecond)} files/s`,
    target: `≥ ${TARGETS.smallPerSecond} files/s`,
    met: perSecond >= TARGETS.smallPerSecond,
    data: { count, ms, perSecond },
  });
}

export const filesSuite: Suite = {
  name: 'files',
  async run(ctx) {
    await largeFile(ctx);
    await smallFiles(ctx);
    ctx.note('Files reference: `cp` of the same file in the runner\'s scratch directory; Strata\'s blob store is the directory store under the server\'s data directory on the same machine.');
  },
};
