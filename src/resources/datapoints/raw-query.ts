/**
 * Raw points of one series in a time range, as response objects, decoded chunk by chunk.
 */
import type { Db } from '../../storage/db.js';
import type { StatusTreatment } from './bucket-walker.js';
import { decodeChunk } from './chunk-codec.js';
import { ChunkStore } from './chunk-store.js';
import { lowerBound, type PointBlock } from './point-block.js';
import { SeriesReader, type PointAt } from './series-reader.js';
import { statusOutput } from './status-codes.js';
import { shownBy } from './treatment.js';

export interface RawPoint {
  timestamp: number;
  value?: number | string;
  status?: { code: number; symbol: string };
}

export interface RawQuery {
  start: number;
  end: number;
  limit: number;
  treatment: StatusTreatment;
  includeStatus: boolean;
  includeOutsidePoints: boolean;
}

/** JSON has no NaN or infinities; bad numeric points carry them as these strings. */
function jsonValue(v: number): number | string {
  if (Number.isFinite(v)) return v;
  return v !== v ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

function toRaw(p: PointAt, includeStatus: boolean): RawPoint {
  const out: RawPoint = { timestamp: p.ts };
  if (p.value !== null) out.value = typeof p.value === 'number' ? jsonValue(p.value) : p.value;
  if (includeStatus) {
    const status = statusOutput(p.code);
    if (status) out.status = status;
  }
  return out;
}

function pushBlock(out: RawPoint[], b: PointBlock, from: number, end: number, max: number, keep: (code: number) => boolean, includeStatus: boolean): number {
  const { ts, num, str, codes, nulls } = b;
  let i = from;
  if (!codes && !nulls && !includeStatus && num) {
    // All Good numeric points: the common case, without per-point status work.
    for (; i < b.n && ts[i] < end && out.length < max; i++) out.push({ timestamp: ts[i], value: num[i] });
    return i;
  }
  for (; i < b.n && ts[i] < end && out.length < max; i++) {
    const code = codes ? codes[i] : 0;
    if (!keep(code)) continue;
    const p: RawPoint = { timestamp: ts[i] };
    if (num) {
      if (!(nulls && nulls[i])) p.value = jsonValue(num[i]);
    } else if (str![i] !== null) p.value = str![i]!;
    if (includeStatus && code !== 0) p.status = statusOutput(code);
    out.push(p);
  }
  return i;
}

/** Points in [start, end) up to `limit`; `nextStart` is where the next page begins when more remain. */
export function rawSeries(db: Db, projectId: number, seriesId: number, q: RawQuery): { points: RawPoint[]; nextStart?: number } {
  const keep = shownBy(q.treatment);
  const points: RawPoint[] = [];
  let nextStart: number | undefined;
  const store = new ChunkStore(db, projectId, seriesId);
  if (q.start < q.end) {
    store.forEach(q.start, q.end, (row) => {
      const block = decodeChunk(row.data);
      let i = pushBlock(points, block, lowerBound(block, q.start), q.end, q.limit, keep, q.includeStatus);
      if (points.length < q.limit) return true;
      for (; i < block.n && block.ts[i] < q.end; i++) {
        if (keep(block.codes ? block.codes[i] : 0)) {
          nextStart = block.ts[i];
          return false;
        }
      }
      return false;
    });
  }
  if (points.length === q.limit && nextStart === undefined) {
    const after = points.length ? points[points.length - 1].timestamp + 1 : q.start;
    const more = new SeriesReader(db, projectId, seriesId).firstAtOrAfter(after, keep);
    if (more && more.ts < q.end) nextStart = more.ts;
  }
  if (q.includeOutsidePoints) {
    const reader = new SeriesReader(db, projectId, seriesId);
    const before = reader.lastBefore(q.start, keep);
    const after = reader.firstAtOrAfter(q.end, keep);
    if (before) points.unshift(toRaw(before, q.includeStatus));
    if (after) points.push(toRaw(after, q.includeStatus));
    return { points };
  }
  return nextStart === undefined ? { points } : { points, nextStart };
}

/** The last point before `before` that the treatment shows. */
export function latestPoint(db: Db, projectId: number, seriesId: number, before: number, treatment: StatusTreatment, includeStatus: boolean): RawPoint | undefined {
  const p = new SeriesReader(db, projectId, seriesId).lastBefore(before, shownBy(treatment));
  return p && toRaw(p, includeStatus);
}
