/**
 * Checks and packs the data points of one insert item: every rule a point must obey, with a message that
 * names the point, in one pass that also builds the arrays the store writes.
 */
import { badRequest } from '../../http/errors.js';
import type { DatedValue } from '../../http/dated-changes.js';
import { DATAPOINT_LIMITS as L } from './limits.js';
import type { PointBlock } from './point-block.js';
import { parseStatus } from './status-codes.js';

export type StringLimit = DatedValue<'stringDatapointMaxLength'>;

const SPECIAL: Record<string, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };
const ALLOWED_KEYS = '(allowed: timestamp, value, status)';

export interface SeriesKind {
  isString: boolean;
  /** How to name the series in messages. */
  label: string;
}

const where = (i: number, j: number) => `items[${i}].datapoints[${j}]`;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function stringTooLong(s: string, limit: StringLimit): string | undefined {
  if (limit.unit === 'utf8Bytes') {
    if (s.length * 3 <= limit.max) return undefined;
    const bytes = Buffer.byteLength(s, 'utf8');
    return bytes > limit.max ? `must be at most ${limit.max} bytes of UTF-8, got ${bytes}` : undefined;
  }
  if (s.length <= limit.max) return undefined;
  const chars = [...s].length;
  return chars > limit.max ? `must be at most ${limit.max} characters, got ${chars}` : undefined;
}

/** The points of `items[i].datapoints`, in time order; of equal timestamps the last one given wins. */
export function packPoints(raw: readonly unknown[], i: number, kind: SeriesKind, stringLimit: StringLimit): PointBlock {
  const n = raw.length;
  const ts = new Float64Array(n);
  const num = kind.isString ? null : new Float64Array(n);
  const str: Array<string | null> | null = kind.isString ? new Array(n) : null;
  let codes: Uint32Array | null = null;
  let nulls: Uint8Array | null = null;
  let sorted = true;
  for (let j = 0; j < n; j++) {
    const p = raw[j] as Record<string, unknown>;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw badRequest(`${where(i, j)}: expected an object with "timestamp" and "value", got ${describe(p)}`);
    for (const key in p) {
      if (key !== 'timestamp' && key !== 'value' && key !== 'status') throw badRequest(`${where(i, j)}: unknown property "${key}" ${ALLOWED_KEYS}`);
    }
    const t = p.timestamp;
    if (typeof t !== 'number' || !Number.isInteger(t)) {
      throw badRequest(t === undefined ? `${where(i, j)}: missing required property "timestamp"` : `${where(i, j)}.timestamp: expected an integer (ms since the epoch), got ${describe(t)}${typeof t === 'number' ? ` ${t}` : ''}`);
    }
    if (t < L.minTimestamp || t > L.maxTimestamp) {
      throw badRequest(`${where(i, j)}.timestamp: must be from ${L.minTimestamp} (1900-01-01) to ${L.maxTimestamp} (2099-12-31), got ${t}`);
    }
    ts[j] = t;
    if (j > 0 && t <= ts[j - 1]) sorted = false;
    let code = 0;
    if (p.status !== undefined) {
      code = parseStatus(p.status, `${where(i, j)}.status`);
      if (code !== 0) (codes ??= new Uint32Array(n))[j] = code;
    }
    const bad = code >>> 30 === 2;
    const v = p.value;
    if (v === undefined || v === null) {
      if (!bad) throw badRequest(`${where(i, j)}.value: ${v === null ? 'null is not allowed' : 'missing'}; only a point with a Bad status may leave out its value`);
      if (num) (nulls ??= new Uint8Array(n))[j] = 1;
      else str![j] = null;
      continue;
    }
    if (num) {
      if (typeof v === 'number') {
        // A Bad point's value is kept as given, whatever its size: it is never a usable value.
        if (!bad && !(Math.abs(v) < L.maxAbsValue)) {
          throw badRequest(`${where(i, j)}.value: must be greater than -1e100 and less than 1e100 (a point with a Bad status may carry any number), got ${v}`);
        }
        num[j] = v;
      } else if (typeof v === 'string' && v in SPECIAL) {
        if (!bad) throw badRequest(`${where(i, j)}.value: "${v}" is allowed only on a point with a Bad status`);
        num[j] = SPECIAL[v];
      } else {
        throw badRequest(`${where(i, j)}.value: ${kind.label} is numeric; expected a number, got ${describe(v)}`);
      }
    } else {
      if (typeof v !== 'string') throw badRequest(`${where(i, j)}.value: ${kind.label} holds strings; expected a string, got ${describe(v)}`);
      const problem = stringTooLong(v, stringLimit);
      if (problem) throw badRequest(`${where(i, j)}.value: ${problem}`);
      str![j] = v;
    }
  }
  const block: PointBlock = { n, ts, num, str, codes, nulls };
  return sorted ? block : sortPoints(block);
}

/** Time order, keeping of each timestamp the point given last. */
function sortPoints(b: PointBlock): PointBlock {
  const order = Array.from({ length: b.n }, (_, k) => k);
  order.sort((x, y) => b.ts[x] - b.ts[y] || x - y);
  const keep = order.filter((k, idx) => idx === order.length - 1 || b.ts[order[idx + 1]] !== b.ts[k]);
  const m = keep.length;
  const out: PointBlock = {
    n: m,
    ts: new Float64Array(m),
    num: b.num ? new Float64Array(m) : null,
    str: b.str ? new Array(m) : null,
    codes: b.codes ? new Uint32Array(m) : null,
    nulls: b.nulls ? new Uint8Array(m) : null,
  };
  keep.forEach((k, idx) => {
    out.ts[idx] = b.ts[k];
    if (out.num) out.num[idx] = b.num![k];
    if (out.str) out.str[idx] = b.str![k];
    if (out.codes) out.codes[idx] = b.codes![k];
    if (out.nulls) out.nulls[idx] = b.nulls![k];
  });
  return out;
}
