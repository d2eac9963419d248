/**
 * A run of data points of one series in time order, as parallel arrays: the form points take between the
 * request, the chunk codec and the queries, so no per-point objects are made on the hot paths.
 */
export interface PointBlock {
  n: number;
  /** Timestamps, ascending and distinct. */
  ts: Float64Array;
  /** Numeric values (numeric series); NaN, Infinity or -Infinity only on bad points. */
  num: Float64Array | null;
  /** String values (string series); null only on bad points without a value. */
  str: Array<string | null> | null;
  /** Status codes; null when every point is Good (0). */
  codes: Uint32Array | null;
  /** 1 where a numeric (bad) point carries no value at all; null when none does. */
  nulls: Uint8Array | null;
}

export const emptyBlock = (isString: boolean): PointBlock => ({
  n: 0,
  ts: new Float64Array(0),
  num: isString ? null : new Float64Array(0),
  str: isString ? [] : null,
  codes: null,
  nulls: null,
});

/** Points i..j-1 of a block (views, not copies). */
export function sliceBlock(b: PointBlock, i: number, j: number): PointBlock {
  return {
    n: j - i,
    ts: b.ts.subarray(i, j),
    num: b.num ? b.num.subarray(i, j) : null,
    str: b.str ? b.str.slice(i, j) : null,
    codes: b.codes ? b.codes.subarray(i, j) : null,
    nulls: b.nulls ? b.nulls.subarray(i, j) : null,
  };
}

/** First index with ts >= t (n when none). */
export function lowerBound(b: PointBlock, t: number): number {
  let lo = 0;
  let hi = b.n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (b.ts[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The union of two blocks of one series; where both have a timestamp, `newer` wins (an insert overwrites
 * the point with the same timestamp).
 */
export function mergeBlocks(older: PointBlock, newer: PointBlock): PointBlock {
  if (older.n === 0) return newer;
  if (newer.n === 0) return older;
  const isString = newer.str !== null;
  const cap = older.n + newer.n;
  const ts = new Float64Array(cap);
  const num = isString ? null : new Float64Array(cap);
  const str: Array<string | null> | null = isString ? new Array(cap) : null;
  const withCodes = older.codes !== null || newer.codes !== null;
  const withNulls = older.nulls !== null || newer.nulls !== null;
  const codes = withCodes ? new Uint32Array(cap) : null;
  const nulls = withNulls ? new Uint8Array(cap) : null;
  let i = 0;
  let j = 0;
  let n = 0;
  const take = (b: PointBlock, k: number) => {
    ts[n] = b.ts[k];
    if (num) num[n] = b.num![k];
    else str![n] = b.str![k];
    if (codes) codes[n] = b.codes ? b.codes[k] : 0;
    if (nulls) nulls[n] = b.nulls ? b.nulls[k] : 0;
    n++;
  };
  while (i < older.n || j < newer.n) {
    if (j >= newer.n || (i < older.n && older.ts[i] < newer.ts[j])) take(older, i++);
    else {
      if (i < older.n && older.ts[i] === newer.ts[j]) i++;
      take(newer, j++);
    }
  }
  return {
    n,
    ts: ts.subarray(0, n),
    num: num ? num.subarray(0, n) : null,
    str: str ? str.slice(0, n) : null,
    codes: codes ? codes.subarray(0, n) : null,
    nulls: nulls ? nulls.subarray(0, n) : null,
  };
}
