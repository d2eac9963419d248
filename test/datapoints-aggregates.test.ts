/**
 * Every aggregate, checked against a direct computation from the points (below, "the oracle": no rollups,
 * no streaming, each bucket computed on its own from the definitions) over random series: clusters dense
 * enough to fill rollup cells, sparse points between them, Good/Uncertain/Bad statuses, overwrites,
 * out-of-order writes and deleted ranges, queried in UTC, fixed offsets and IANA zones across
 * daylight-saving transitions, with granularities from seconds to quarters.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

// ---------------------------------------------------------------------------------------------------------
// The oracle

interface P {
  ts: number;
  /** null: no value (Bad points only); NaN and infinities appear on Bad points only. */
  value: number | null;
  code: number;
}

interface Treatment {
  ignoreBad: boolean;
  uncertainIsBad: boolean;
}

const AGGREGATES = [
  'average', 'max', 'maxDatapoint', 'min', 'minDatapoint', 'count', 'sum', 'interpolation', 'stepInterpolation', 'totalVariation',
  'continuousVariance', 'discreteVariance', 'countGood', 'countUncertain', 'countBad', 'durationGood', 'durationUncertain', 'durationBad',
] as const;
type Agg = (typeof AGGREGATES)[number];

const cls = (code: number) => code >>> 30;

function oracle(points: P[], bounds: number[], isStep: boolean, t: Treatment, aggregates: readonly Agg[]): Array<Record<string, unknown>> {
  const usable = (p: P) => cls(p.code) === 0 || (cls(p.code) === 1 && !t.uncertainIsBad);
  const chain = t.ignoreBad ? points.filter(usable) : points;
  // The interpolated function: pieces [t0, t1) from a usable chain point to the next chain point.
  const segments: Array<{ t0: number; t1: number; v0: number; v1: number }> = [];
  for (let i = 0; i + 1 < chain.length; i++) {
    const a = chain[i];
    const b = chain[i + 1];
    if (!usable(a)) continue;
    const linear = !isStep && usable(b);
    segments.push({ t0: a.ts, t1: b.ts, v0: a.value!, v1: linear ? b.value! : a.value! });
  }
  const f = (s: { t0: number; t1: number; v0: number; v1: number }, x: number) => s.v0 + ((s.v1 - s.v0) * (x - s.t0)) / (s.t1 - s.t0);
  /** Index of the first element whose key is >= x (all arrays here are in time order). */
  const first = <T>(arr: T[], key: (e: T) => number, x: number) => {
    let lo = 0;
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (key(arr[mid]) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const out: Array<Record<string, unknown>> = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const B0 = bounds[k];
    const B1 = bounds[k + 1];
    const inB = points.slice(first(points, (p) => p.ts, B0), first(points, (p) => p.ts, B1));
    const u = inB.filter(usable);
    const r: Record<string, unknown> = {};
    const n = u.length;
    if (n > 0) {
      const vals = u.map((p) => p.value!);
      const sum = vals.reduce((x, y) => x + y, 0);
      const mean = sum / n;
      let minP = u[0];
      let maxP = u[0];
      for (const p of u) {
        if (p.value! < minP.value!) minP = p;
        if (p.value! > maxP.value!) maxP = p;
      }
      Object.assign(r, {
        count: n,
        sum,
        min: minP.value,
        max: maxP.value,
        minDatapoint: { timestamp: minP.ts, value: minP.value },
        maxDatapoint: { timestamp: maxP.ts, value: maxP.value },
        discreteVariance: vals.reduce((x, v) => x + (v - mean) ** 2, 0) / n,
      });
    }
    const pieces: Array<{ w: number; f0: number; f1: number }> = [];
    for (let i = first(segments, (s) => s.t1, B0 + 1); i < segments.length && segments[i].t0 < B1; i++) {
      const s = segments[i];
      const x0 = Math.max(s.t0, B0);
      const x1 = Math.min(s.t1, B1);
      if (x1 > x0) pieces.push({ w: x1 - x0, f0: f(s, x0), f1: f(s, x1) });
    }
    const len = pieces.reduce((x, p) => x + p.w, 0);
    if (len > 0) {
      const avg = pieces.reduce((x, p) => x + (p.w * (p.f0 + p.f1)) / 2, 0) / len;
      r.average = avg;
      r.continuousVariance = pieces.reduce((x, p) => {
        const a = p.f0 - avg;
        const b = p.f1 - avg;
        return x + (p.w * (a * a + a * b + b * b)) / 3;
      }, 0) / len;
    } else if (n > 0) {
      r.average = (r.sum as number) / n;
      r.continuousVariance = 0;
    }
    if (r.average !== undefined) {
      if (isStep) {
        let tv = 0;
        for (let i = Math.max(1, first(chain, (c) => c.ts, B0)); i < chain.length && chain[i].ts < B1; i++) {
          if (usable(chain[i]) && usable(chain[i - 1])) tv += Math.abs(chain[i].value! - chain[i - 1].value!);
        }
        r.totalVariation = tv;
      } else r.totalVariation = pieces.reduce((x, p) => x + Math.abs(p.f1 - p.f0), 0);
    }
    const atOrAfter = first(chain, (c) => c.ts, B0);
    const at = chain[atOrAfter]?.ts === B0 ? chain[atOrAfter] : undefined;
    if (at) {
      if (usable(at)) r.interpolation = at.value;
    } else {
      const s = segments[first(segments, (s) => s.t1, B0 + 1)];
      if (s && s.t0 < B0) r.interpolation = f(s, B0);
    }
    const before = at ?? chain[atOrAfter - 1];
    if (before && usable(before)) r.stepInterpolation = before.value;
    if (inB.length > 0) {
      r.countGood = inB.filter((p) => cls(p.code) === 0).length;
      r.countUncertain = inB.filter((p) => cls(p.code) === 1).length;
      r.countBad = inB.filter((p) => cls(p.code) === 2).length;
    }
    if (points.length > 0 && points[0].ts < B1 && points[points.length - 1].ts >= B0) {
      const d = [0, 0, 0];
      for (let i = Math.max(0, first(points, (p) => p.ts, B0) - 1); i + 1 < points.length && points[i].ts < B1; i++) {
        const w = Math.min(points[i + 1].ts, B1) - Math.max(points[i].ts, B0);
        if (w > 0) d[cls(points[i].code)] += w;
      }
      Object.assign(r, { durationGood: d[0], durationUncertain: d[1], durationBad: d[2] });
    }
    const shown: Record<string, unknown> = {};
    for (const a of aggregates) if (r[a] !== undefined) shown[a] = r[a];
    if (Object.keys(shown).length > 0) out.push({ timestamp: B0, ...shown });
  }
  return out;
}

// Bucket boundaries, from a table of UTC offsets sampled every hour (the IANA zones used here change offset
// on whole UTC hours) and scanned in quarter hours (where half-hour zones start their days), independent of
// the server's calendar code.
const Q = 15 * 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const offsetTables = new Map<string, { from: number; offsets: number[] }>();

function fixedOffset(zone: string): number | undefined {
  if (zone === 'UTC') return 0;
  const m = /^UTC([+-])(\d{2}):(\d{2})$/.exec(zone);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * HOUR + Number(m[3]) * 60_000) : undefined;
}

function localAt(zone: string, t: number): number {
  const fixed = fixedOffset(zone);
  if (fixed !== undefined) return t + fixed;
  let table = offsetTables.get(zone);
  if (!table) {
    const from = Date.UTC(2023, 9, 1);
    const to = Date.UTC(2025, 5, 1);
    const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    const offsets: number[] = [];
    for (let x = from; x < to; x += HOUR) {
      const p = Object.fromEntries(fmt.formatToParts(x).map((q) => [q.type, Number(q.value)]));
      offsets.push(Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - x);
    }
    table = { from, offsets };
    offsetTables.set(zone, table);
  }
  return t + table.offsets[Math.floor((t - table.from) / HOUR)];
}

function unitKey(unit: string, local: number): number {
  const d = new Date(local);
  switch (unit) {
    case 'h':
      return Math.floor(local / HOUR);
    case 'd':
      return Math.floor(local / DAY);
    case 'w':
      return Math.floor((Math.floor(local / DAY) + 3) / 7);
    case 'mo':
      return d.getUTCFullYear() * 12 + d.getUTCMonth();
    case 'q':
      return d.getUTCFullYear() * 4 + Math.floor(d.getUTCMonth() / 3);
    default:
      return d.getUTCFullYear();
  }
}

function oracleBounds(granularity: string, zone: string, start: number, end: number): number[] {
  const m = /^(\d+)(s|m|h|d|w|mo|q|y)$/.exec(granularity)!;
  const n = Number(m[1]);
  const unit = m[2];
  if (unit === 's' || unit === 'm') {
    const size = unit === 's' ? 1000 : 60_000;
    const out = [Math.floor(start / size) * size];
    while (out[out.length - 1] < end) out.push(out[out.length - 1] + n * size);
    return out;
  }
  // Instants where a new local unit begins, scanning quarter hours from well before the start.
  const starts: number[] = [];
  let prev = NaN;
  let prevLocal = -Infinity;
  const lookBack: Record<string, number> = { h: 1, d: 2, w: 8, mo: 32, q: 93, y: 367 };
  for (let x = Math.floor(start / Q) * Q - lookBack[unit] * DAY; ; x += Q) {
    const local = localAt(zone, x);
    const key = unitKey(unit, local);
    // When clocks are set back, the repeated hour is a new hour although its number is not.
    const repeated = unit === 'h' && local <= prevLocal;
    prevLocal = local;
    if (key !== prev || repeated) {
      starts.push(x);
      if (x > end && starts.filter((s) => s > end).length > n) break;
    }
    prev = key;
  }
  let i = starts.length - 1;
  while (starts[i] > start) i--;
  const out = [starts[i]];
  while (out[out.length - 1] < end) {
    i += n;
    out.push(starts[i]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Comparing

function close(actual: unknown, expected: unknown, scale: number, path: string): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    const tol = 1e-7 * (1 + Math.abs(expected) + scale);
    if (Math.abs((actual as number) - expected) > tol) expect(actual, path).toBe(expected);
  } else if (expected && typeof expected === 'object') {
    for (const [k, v] of Object.entries(expected)) close((actual as Record<string, unknown>)?.[k], v, scale, `${path}.${k}`);
  } else expect(actual, path).toEqual(expected);
}

function compareBuckets(actual: Array<Record<string, unknown>>, expected: Array<Record<string, unknown>>, scale: number, what: string): void {
  expect(actual.map((b) => b.timestamp), `${what}: bucket timestamps`).toEqual(expected.map((b) => b.timestamp));
  actual.forEach((b, i) => {
    const e = expected[i];
    expect(Object.keys(b).sort(), `${what}: aggregates present at ${e.timestamp}`).toEqual(Object.keys(e).sort());
    for (const key of Object.keys(e)) {
      if (key === 'timestamp') continue;
      // Variances are differences of squares: compare them on the scale of the squared values.
      const s = key.endsWith('Variance') ? scale * scale : key === 'totalVariation' ? scale * 100 : scale;
      close(b[key], e[key], s, `${what} @${e.timestamp}.${key}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// Random series

const UNCERTAIN = 0x40000000;
const BAD = 0x80000000;
const SPRING = Date.UTC(2024, 1, 20);
const AUTUMN = Date.UTC(2024, 8, 20);
const WINDOW = 80 * DAY;

interface Case {
  window: number;
  points: P[];
  batches: number;
  overwrite: number;
  deletion?: [number, number];
  isStep: boolean;
}

const statusArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.constantFrom(UNCERTAIN, 0x40900000, 0x00300000) },
  { weight: 1, arbitrary: fc.constantFrom(BAD, 0x808c0000) },
);

const valueArb = fc.oneof(fc.integer({ min: -100, max: 100 }), fc.double({ min: -1000, max: 1000, noNaN: true, noDefaultInfinity: true }));

function pointsArb(window: number, goodOnly: boolean) {
  const cluster = fc
    .record({
      at: fc.integer({ min: 0, max: WINDOW - 1 }),
      span: fc.constantFrom(60_000, 20 * 60_000, 3 * HOUR, 2 * DAY),
      n: fc.integer({ min: 30, max: 140 }),
    })
    .chain(({ at, span, n }) => fc.array(fc.integer({ min: 0, max: span - 1 }), { minLength: n, maxLength: n }).map((offs) => offs.map((o) => window + Math.min(WINDOW - 1, at + o))));
  const sparse = fc.array(fc.integer({ min: 0, max: WINDOW - 1 }).map((o) => window + o), { maxLength: 40 });
  return fc.tuple(fc.array(cluster, { maxLength: 3 }), sparse).chain(([clusters, scattered]) => {
    const times = [...new Set([...clusters.flat(), ...scattered])].sort((a, b) => a - b);
    return fc.array(fc.tuple(valueArb, goodOnly ? fc.constant(0) : statusArb, fc.constantFrom<'number' | 'null' | 'NaN' | 'Infinity'>('number', 'null', 'NaN', 'Infinity')), {
      minLength: times.length,
      maxLength: times.length,
    }).map((vals) =>
      times.map((ts, i): P => {
        const [v, code, badForm] = vals[i];
        if (cls(code) !== 2 || badForm === 'number') return { ts, value: v, code };
        return { ts, value: badForm === 'null' ? null : badForm === 'NaN' ? NaN : Infinity, code };
      }),
    );
  });
}

// Half the series hold only Good points (the shape most data has, which has its own fast path).
const caseArb: fc.Arbitrary<Case> = fc.tuple(fc.constantFrom(SPRING, AUTUMN), fc.boolean()).chain(([window, goodOnly]) =>
  fc.record({
    window: fc.constant(window),
    points: pointsArb(window, goodOnly),
    batches: fc.integer({ min: 1, max: 3 }),
    overwrite: fc.integer({ min: 0, max: 20 }),
    deletion: fc.option(
      fc.tuple(fc.integer({ min: 0, max: WINDOW }), fc.integer({ min: 1, max: 20 * DAY })).map(([a, w]) => [window + a, window + a + w] as [number, number]),
      { nil: undefined },
    ),
    isStep: fc.boolean(),
  }),
);

function wire(p: P): Record<string, unknown> {
  const out: Record<string, unknown> = { timestamp: p.ts };
  if (p.value !== null) out.value = Number.isFinite(p.value) ? p.value : String(p.value);
  if (p.code !== 0) out.status = { code: p.code };
  return out;
}

let seriesCounter = 0;

/** Writes a case through the API (batches in random order, some points first written with other values) and returns the points it should leave. */
async function store(c: Case, seed: number): Promise<{ xid: string; points: P[] }> {
  const xid = `agg-${seriesCounter++}`;
  const created = await h.post('/timeseries', { items: [{ externalId: xid, isStep: c.isStep }] });
  expect(created.status).toBe(201);
  const rnd = mulberry(seed);
  const decoys = c.points.slice(0, c.overwrite).map((p) => ({ ...p, value: 12345, code: 0 }));
  if (decoys.length) expect((await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: decoys.map(wire) }] })).status).toBe(200);
  const batches: P[][] = Array.from({ length: c.batches }, () => []);
  for (const p of c.points) batches[Math.floor(rnd() * c.batches)].push(p);
  for (const b of batches) {
    b.sort(() => rnd() - 0.5);
    const res = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: b.map(wire) }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  let points = c.points;
  if (c.deletion) {
    const [a, b] = c.deletion;
    expect((await h.post('/timeseries/data/delete', { items: [{ externalId: xid, inclusiveBegin: a, exclusiveEnd: b }] })).status).toBe(200);
    points = points.filter((p) => p.ts < a || p.ts >= b);
  }
  return { xid, points };
}

function mulberry(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Granularities with the span of query that keeps their buckets within one page. */
const GRANULARITIES: Array<[string, number]> = [
  ['45s', 2 * HOUR],
  ['7m', DAY],
  ['15m', 4 * DAY],
  ['1h', 60 * DAY],
  ['3h', 90 * DAY],
  ['1d', 90 * DAY],
  ['2d', 90 * DAY],
  ['1w', 90 * DAY],
  ['1mo', 90 * DAY],
  ['1q', 90 * DAY],
];
const ZONES = ['UTC', 'Europe/Oslo', 'America/New_York', 'Asia/Kolkata', 'UTC+05:30', 'UTC-03:45'];

const queryArb = fc.record({
  granularity: fc.constantFrom(...GRANULARITIES),
  zone: fc.constantFrom(...ZONES),
  from: fc.double({ min: -0.05, max: 1, noNaN: true }),
  length: fc.double({ min: 0.01, max: 1, noNaN: true }),
  ignoreBad: fc.boolean(),
  uncertainIsBad: fc.boolean(),
});

describe('aggregates agree with the definitions', () => {
  it('over random series, granularities, zones and status treatments', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, fc.array(queryArb, { minLength: 3, maxLength: 3 }), fc.integer(), async (c, queries, seed) => {
        const { xid, points } = await store(c, seed);
        const scale = Math.max(1, ...points.filter((p) => cls(p.code) !== 2).map((p) => Math.abs(p.value!)));
        for (const q of queries) {
          const [granularity, span] = q.granularity;
          const start = Math.round(c.window + q.from * WINDOW);
          const end = start + Math.max(1000, Math.round(q.length * span));
          const res = await h.post('/timeseries/data/list', {
            items: [{ externalId: xid }],
            start,
            end,
            aggregates: [...AGGREGATES],
            granularity,
            timeZone: q.zone,
            ignoreBadDataPoints: q.ignoreBad,
            treatUncertainAsBad: q.uncertainIsBad,
            limit: 10_000,
          });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          const expected = oracle(points, oracleBounds(granularity, q.zone, start, end), c.isStep, q, AGGREGATES);
          compareBuckets(res.body.items[0].datapoints, expected, scale, `${granularity} ${q.zone} [${start}, ${end}) step=${c.isStep} ignoreBad=${q.ignoreBad} uncertainIsBad=${q.uncertainIsBad}`);
          expect(res.body.items[0].nextCursor).toBeUndefined();
          (globalThis as any).__buckets = ((globalThis as any).__buckets ?? 0) + expected.length;
        }
      }),
      { numRuns: 60 },
    );
    console.log('buckets compared', (globalThis as any).__buckets);
    const db = h.strata.services.db;
    console.log(db.prepare('SELECT level, count(*) AS n FROM datapoint_rollups GROUP BY level').all());
    console.log(db.prepare('SELECT count(*) AS n, sum(n) AS points FROM datapoint_chunks').all());
  });
});
