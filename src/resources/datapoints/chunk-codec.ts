/**
 * The byte layout of a chunk of points (one `datapoint_chunks.data` blob). Timestamps are stored as a start
 * and a fixed step when the points are evenly spaced (the common case for sampled signals: 8 bytes per
 * numeric point in total), as 32-bit deltas when every gap fits, and as 64-bit values otherwise. Status
 * codes and value-less markers are stored only when a chunk has non-Good points.
 *
 *   header (16 bytes): kind u8 (0 numeric, 1 string), time mode u8 (0 full, 1 deltas, 2 regular),
 *                      flags u8 (1 codes, 2 value-less markers), u8 0, n u32, 8 bytes 0
 *   f64 part:  time (regular: first, step; deltas: first; full: n values), numeric values (n)
 *   i32 part:  n-1 deltas (time mode 1)
 *   u32 part:  codes (n, flag 1), string byte lengths (n; 0xFFFFFFFF for none)
 *   u8 part:   value-less markers (n, flag 2), UTF-8 bytes of the strings
 */
import type { PointBlock } from './point-block.js';

const HEADER = 16;
const NO_STRING = 0xffffffff;

function timeMode(ts: Float64Array, i: number, j: number): 0 | 1 | 2 {
  const n = j - i;
  if (n < 2) return 2;
  const step = ts[i + 1] - ts[i];
  let regular = true;
  let fits = true;
  for (let k = i + 1; k < j && (regular || fits); k++) {
    const d = ts[k] - ts[k - 1];
    if (d !== step) regular = false;
    if (d > 0x7fffffff) fits = false;
  }
  return regular ? 2 : fits ? 1 : 0;
}

/** Encodes points i..j-1 of a block. */
export function encodeChunk(b: PointBlock, i: number, j: number): Buffer {
  const n = j - i;
  const isString = b.str !== null;
  const mode = timeMode(b.ts, i, j);
  let withCodes = false;
  if (b.codes) for (let k = i; k < j && !withCodes; k++) withCodes = b.codes[k] !== 0;
  let withNulls = false;
  if (b.nulls) for (let k = i; k < j && !withNulls; k++) withNulls = b.nulls[k] !== 0;
  const strings: Buffer[] = [];
  let stringBytes = 0;
  if (isString) {
    for (let k = i; k < j; k++) {
      const s = b.str![k];
      const bytes = s === null ? Buffer.alloc(0) : Buffer.from(s, 'utf8');
      strings.push(bytes);
      stringBytes += bytes.length;
    }
  }
  const timeF64 = mode === 2 ? 2 : mode === 1 ? 1 : n;
  const f64Count = timeF64 + (isString ? 0 : n);
  const i32Count = mode === 1 ? n - 1 : 0;
  const u32Count = (withCodes ? n : 0) + (isString ? n : 0);
  const u8Count = (withNulls ? n : 0) + stringBytes;
  const size = HEADER + f64Count * 8 + i32Count * 4 + u32Count * 4 + u8Count;
  const ab = new ArrayBuffer(size);
  const bytes = new Uint8Array(ab);
  const head = new DataView(ab);
  head.setUint8(0, isString ? 1 : 0);
  head.setUint8(1, mode);
  head.setUint8(2, (withCodes ? 1 : 0) | (withNulls ? 2 : 0));
  head.setUint32(4, n, true);
  let off = HEADER;
  const f64 = new Float64Array(ab, off, f64Count);
  if (mode === 2) {
    f64[0] = b.ts[i];
    f64[1] = n > 1 ? b.ts[i + 1] - b.ts[i] : 0;
  } else if (mode === 1) f64[0] = b.ts[i];
  else f64.set(b.ts.subarray(i, j), 0);
  if (!isString) f64.set(b.num!.subarray(i, j), timeF64);
  off += f64Count * 8;
  if (mode === 1) {
    const deltas = new Int32Array(ab, off, n - 1);
    for (let k = 1; k < n; k++) deltas[k - 1] = b.ts[i + k] - b.ts[i + k - 1];
    off += (n - 1) * 4;
  }
  if (withCodes) {
    new Uint32Array(ab, off, n).set(b.codes!.subarray(i, j));
    off += n * 4;
  }
  if (isString) {
    const lengths = new Uint32Array(ab, off, n);
    for (let k = 0; k < n; k++) lengths[k] = b.str![i + k] === null ? NO_STRING : strings[k].length;
    off += n * 4;
  }
  if (withNulls) {
    bytes.set(b.nulls!.subarray(i, j), off);
    off += n;
  }
  for (const s of strings) {
    bytes.set(s, off);
    off += s.length;
  }
  return Buffer.from(ab);
}

/** Decodes a chunk blob into a block of its own (aligned) arrays. */
export function decodeChunk(blob: Uint8Array): PointBlock {
  const ab = new ArrayBuffer(blob.length);
  new Uint8Array(ab).set(blob);
  const head = new DataView(ab);
  const isString = head.getUint8(0) === 1;
  const mode = head.getUint8(1);
  const flags = head.getUint8(2);
  const n = head.getUint32(4, true);
  let off = HEADER;
  let ts: Float64Array;
  if (mode === 2) {
    const [first, step] = new Float64Array(ab, off, 2);
    ts = new Float64Array(n);
    for (let k = 0; k < n; k++) ts[k] = first + k * step;
    off += 16;
  } else if (mode === 1) {
    ts = new Float64Array(n);
    ts[0] = new Float64Array(ab, off, 1)[0];
    off += 8;
  } else {
    ts = new Float64Array(ab, off, n);
    off += n * 8;
  }
  let num: Float64Array | null = null;
  if (!isString) {
    num = new Float64Array(ab, off, n);
    off += n * 8;
  }
  if (mode === 1) {
    const deltas = new Int32Array(ab, off, n - 1);
    for (let k = 1; k < n; k++) ts[k] = ts[k - 1] + deltas[k - 1];
    off += (n - 1) * 4;
  }
  let codes: Uint32Array | null = null;
  if (flags & 1) {
    codes = new Uint32Array(ab, off, n);
    off += n * 4;
  }
  let lengths: Uint32Array | null = null;
  if (isString) {
    lengths = new Uint32Array(ab, off, n);
    off += n * 4;
  }
  let nulls: Uint8Array | null = null;
  if (flags & 2) {
    nulls = new Uint8Array(ab, off, n);
    off += n;
  }
  let str: Array<string | null> | null = null;
  if (lengths) {
    const text = Buffer.from(ab);
    str = new Array(n);
    for (let k = 0; k < n; k++) {
      const len = lengths[k];
      if (len === NO_STRING) str[k] = null;
      else {
        str[k] = text.toString('utf8', off, off + len);
        off += len;
      }
    }
  }
  return { n, ts, num, str, codes, nulls };
}
