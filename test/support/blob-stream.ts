/**
 * Memory does not grow with a blob's size: 1 GiB, generated as it is sent (nothing read from disk), streams
 * into a blob store and back out, byte for byte, while the process's resident memory stays within BOUND of
 * what it was before (plus, on SQLite, the page cache its connection is configured to keep, the same
 * whatever the blob's size). Resident memory here is the anonymous part (heap, buffers, caches: /proc's
 * RssAnon); pages of files the process maps (SQLite maps its database file) are the kernel's page cache,
 * given back under pressure. Each store is measured in a test file of its own, so in a process of its own.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { expect } from 'vitest';
import type { BlobStore } from '../../src/storage/blobs/blob-store.js';

const SIZE = 1024 ** 3;
const PIECE = 1024 * 1024;
const BOUND = 192 * 1024 * 1024;

/** Resident anonymous memory, in bytes. */
export function residentAnonymous(): number {
  const line = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
  return line ? Number(line[1]) * 1024 : process.memoryUsage.rss();
}

/** Tracks the most resident memory seen, sampled every few pieces. */
export class Peak {
  readonly base = residentAnonymous();
  max = this.base;
  private n = 0;
  sample(): void {
    if (++this.n % 16 === 0) this.max = Math.max(this.max, residentAnonymous());
  }
  get growth(): number {
    return this.max - this.base;
  }
}

/** `size` bytes (whole pieces) made as they are read: a random piece, each copy stamped with its number; their hash. */
export function generated(peak: Peak, size = SIZE): { stream: Readable; digest(): string } {
  const base = Buffer.alloc(PIECE);
  for (let i = 0; i < PIECE; i += 4) base.writeUInt32LE((i * 2654435761) >>> 0, i);
  const hash = createHash('sha256');
  function* pieces() {
    for (let n = 0; n < size / PIECE; n++) {
      const piece = Buffer.from(base);
      piece.writeUInt32LE(n, 0);
      hash.update(piece);
      peak.sample();
      yield piece;
    }
  }
  return { stream: Readable.from(pieces(), { objectMode: false, highWaterMark: PIECE }), digest: () => hash.digest('hex') };
}

export async function digestOf(stream: AsyncIterable<unknown>, peak: Peak): Promise<{ digest: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const piece of stream) {
    hash.update(piece as Buffer);
    size += (piece as Buffer).length;
    peak.sample();
  }
  return { digest: hash.digest('hex'), size };
}

/**
 * Streams 1 GiB into `blobs` and back as a blob of the project `projectId`, checking every byte; `cache` is
 * memory the store keeps whatever a blob's size.
 */
export async function streamThrough(blobs: BlobStore, projectId: number, cache = 0): Promise<void> {
  const peak = new Peak();
  const started = performance.now();
  const source = generated(peak);
  expect(await blobs.put(projectId, 'big/one', source.stream)).toEqual({ size: SIZE });
  const written = performance.now();
  const back = await digestOf((await blobs.get(projectId, 'big/one'))!, peak);
  expect(back).toEqual({ digest: source.digest(), size: SIZE });
  const seconds = (t: number) => (t / 1000).toFixed(1);
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  console.log(`${blobs.kind}: 1 GiB written in ${seconds(written - started)} s, read in ${seconds(performance.now() - written)} s; resident memory grew ${mib(peak.growth)} (bound ${mib(BOUND + cache)})`);
  expect(peak.growth).toBeLessThan(BOUND + cache);
  await blobs.delete(projectId, 'big/one');
}

