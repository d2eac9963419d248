/**
 * Aggregates against their definitions. Random series (clusters dense enough to fill rollup cells, sparse
 * points with gaps shorter and longer than an hour, Good/Uncertain/Bad statuses, overwrites, out-of-order
 * writes and deleted ranges) are queried in UTC, fixed offsets and IANA zones across daylight-saving changes
 * (half-hour offsets among them), with granularities from seconds to months, with and without gap filling,
 * page by page; every answer is compared with `oracleAggregates` (test/support/aggregate-oracle.ts), which
 * computes each bucket on its own from the documented rules. Hand-made cases pin each rule down on its own.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { oracleAggregates, oracleBounds, HOUR, type OraclePoint } from './support/aggregate-oracle.js';
import { sql } from '../src/storage/sql.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const AGGREGATES = [
  'average', 'max', 'maxDatapoint', 'min', 'minDatapoint', 'count', 'sum', 'interpolation', 'stepInterpolation', 'totalVariation',
  'continuousVariance', 'discreteVariance', 'countGood', 'countUncertain', 'countBad', 'durationGood', 'durationUncertain', 'durationBad',
] as const;

const MINUTE = 60_000;
const DAY = 86_400_000;
const UNCERTAIN = 0x40000000;
const BAD = 0x80000000;
const cls = (code: number) => code >>> 30;

// ---------------------------------------------------------------------------------------------------------
// Talking to the server

let seriesCounter = 0;

async function createSeries(isStep: boolean): Promise<string> {
  const xid = `agg-${seriesCounter++}`;
  const created = await h.post('/timeseries', { items: [{ externalId: xid, isStep }] });
  expect(created.status).toBe(201);
  return xid;
}

function wire(p: OraclePoint): Record<string, unknown> {
  const out: Record<string, unknown> = { timestamp: p.ts };
  if (p.value !== null) out.value = Number.isFinite(p.value) ? p.value : String(p.value);
  if (p.code !== 0) out.status = { code: p.code };
  return out;
}

async function insert(xid: string, points: OraclePoint[]): Promise<void> {
  for (let i = 0; i < points.length; i += 50_000) {
    const res = await h.post('/timeseries/data', { items: [{ externalId: xid, datapoints: points.slice(i, i + 50_000).map(wire) }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
}

/** Every bucket of a query, page by page with cursors. */
async function fetchAll(item: Record<string, unknown>, limit = 10_000): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    expect(page, 'pages').toBeLessThan(1000);
    const res = await h.post('/timeseries/data/list', { items: [{ ...item, limit, ...(cursor ? { cursor } : {}) }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = res.body.items[0];
    expect(got.datapoints.length).toBeLessThanOrEqual(limit);
    out.push(...got.datapoints);
    cursor = got.nextCursor;
    if (!cursor) return out;
    expect(got.datapoints.length, 'a page with a cursor is full').toBe(limit);
  }
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

const SPRING = Date.UTC(2024, 1, 20);
const AUTUMN = Date.UTC(2024, 8, 20);
const WINDOW = 80 * DAY;

interface Case {
  window: number;
  points: OraclePoint[];
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

/** Gaps between sparse points: well inside an hour, around an hour (both sides, and exactly), and far longer. */
const gapArb = fc.oneof(
  fc.integer({ min: 1, max: 50 * MINUTE }),
  fc.constantFrom(HOUR - 1, HOUR, HOUR + 1, 2 * HOUR),
  fc.integer({ min: 59 * MINUTE, max: 62 * MINUTE }),
  fc.integer({ min: 2 * HOUR, max: 5 * DAY }),
);

function timesArb(window: number) {
  const cluster = fc
    .record({
      at: fc.integer({ min: 0, max: WINDOW - 1 }),
      span: fc.constantFrom(MINUTE, 20 * MINUTE, 3 * HOUR, 2 * DAY),
      n: fc.integer({ min: 30, max: 140 }),
    })
    .chain(({ at, span, n }) => fc.array(fc.integer({ min: 0, max: span - 1 }), { minLength: n, maxLength: n }).map((offs) => offs.map((o) => at + o)));
  // Walks on whole seconds or minutes put points at the starts of buckets, where they give the start values themselves.
  const walk = fc
    .tuple(fc.integer({ min: 0, max: WINDOW - 1 }), fc.array(gapArb, { minLength: 5, maxLength: 40 }), fc.constantFrom(1, 1000, MINUTE))
    .map(([at, gaps, unit]) => gaps.reduce((ts, g) => [...ts, ts[ts.length - 1] + Math.max(unit, g - (g % unit))], [at - ((window + at) % unit)]));
  // Some on whole hours and days (the starts of buckets), where a point gives a bucket's start values itself.
  const scattered = fc.array(
    fc.tuple(fc.integer({ min: 0, max: WINDOW - 1 }), fc.constantFrom(1, 1, MINUTE, HOUR, DAY)).map(([o, unit]) => o - ((window + o) % unit)),
    { maxLength: 10 },
  );
  return fc
    .tuple(fc.array(cluster, { maxLength: 3 }), fc.array(walk, { maxLength: 2 }), scattered)
    .map(([clusters, walks, s]) => [...new Set([...clusters.flat(), ...walks.flat(), ...s].filter((o) => o < WINDOW).map((o) => window + o))].sort((a, b) => a - b));
}

function pointsArb(window: number, goodOnly: boolean) {
  return timesArb(window).chain((times) =>
    fc
      .array(fc.tuple(valueArb, goodOnly ? fc.constant(0) : statusArb, fc.constantFrom<'number' | 'null' | 'NaN' | 'Infinity' | 'huge'>('number', 'null', 'NaN', 'Infinity', 'huge')), {
        minLength: times.length,
        maxLength: times.length,
      })
      .map((vals) =>
        times.map((ts, i): OraclePoint => {
          const [v, code, badForm] = vals[i];
          if (cls(code) !== 2 || badForm === 'number') return { ts, value: v, code };
          const value = badForm === 'null' ? null : badForm === 'NaN' ? NaN : badForm === 'Infinity' ? Infinity : -1e250;
          return { ts, value, code };
        }),
      ),
  );
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

/** Writes a case through the API (batches in random order, some points first written with other values) and returns the points it should leave. */
async function store(c: Case, seed: number): Promise<{ xid: string; points: OraclePoint[] }> {
  const xid = await createSeries(c.isStep);
  const rnd = mulberry(seed);
  const decoys = c.points.slice(0, c.overwrite).map((p) => ({ ...p, value: 12345, code: 0 }));
  if (decoys.length) await insert(xid, decoys);
  const batches: OraclePoint[][] = Array.from({ length: c.batches }, () => []);
  for (const p of c.points) batches[Math.floor(rnd() * c.batches)].push(p);
  for (const b of batches) {
    b.sort(() => rnd() - 0.5);
    await insert(xid, b);
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

/** Granularities with the longest query span each is tried over. */
const GRANULARITIES: Array<[string, number]> = [
  ['1s', 20 * MINUTE],
  ['45s', 2 * HOUR],
  ['7m', DAY],
  ['15m', 4 * DAY],
  ['1h', 30 * DAY],
  ['3h', 80 * DAY],
  ['1d', 80 * DAY],
  ['2d', 80 * DAY],
  ['1mo', 80 * DAY],
  ['2mo', 80 * DAY],
];
const ZONES = ['UTC', 'Europe/Oslo', 'America/New_York', 'Asia/Kolkata', 'Australia/Adelaide', 'UTC+05:30', 'UTC-03:45'];
const FILLS: Array<[string, number]> = [
  ['1m', MINUTE],
  ['10m', 10 * MINUTE],
  ['15m', 15 * MINUTE],
  ['45m', 45 * MINUTE],
  ['1h', HOUR],
  ['2h', 2 * HOUR],
  ['1d', DAY],
];

const queryArb = fc.record({
  granularity: fc.constantFrom(...GRANULARITIES),
  zone: fc.constantFrom(...ZONES),
  /** Where the query starts: near one of the points (by index fraction), or anywhere in the window. */
  near: fc.option(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { nil: undefined }),
  from: fc.double({ min: -0.05, max: 1, noNaN: true }),
  length: fc.double({ min: 0.01, max: 1, noNaN: true }),
  ignoreBad: fc.boolean(),
  uncertainIsBad: fc.boolean(),
  fill: fc.option(fc.constantFrom(...FILLS), { nil: undefined, freq: 3 }),
  limit: fc.constantFrom(10_000, 10_000, 37),
});

describe('aggregates agree with the definitions', () => {
  it('over random series, granularities, zones, status treatments and gap filling, page by page', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, fc.array(queryArb, { minLength: 4, maxLength: 4 }), fc.integer(), async (c, queries, seed) => {
        const { xid, points } = await store(c, seed);
        const scale = Math.max(1, ...points.filter((p) => cls(p.code) !== 2).map((p) => Math.abs(p.value!)));
        for (const q of queries) {
          const [granularity, span] = q.granularity;
          const length = Math.max(1000, Math.round(q.length * span));
          const anchor = q.near !== undefined && points.length > 0 ? points[Math.floor(q.near * points.length)].ts - length / 2 : c.window + q.from * WINDOW;
          const start = Math.round(anchor);
          const end = start + length;
          const item = {
            externalId: xid,
            start,
            end,
            aggregates: [...AGGREGATES],
            granularity,
            timeZone: q.zone,
            ignoreBadDataPoints: q.ignoreBad,
            treatUncertainAsBad: q.uncertainIsBad,
            ...(q.fill ? { fill: { limit: q.fill[0] } } : {}),
          };
          const got = await fetchAll(item, q.limit);
          const expected = oracleAggregates(points, oracleBounds(granularity, q.zone, start, end), {
            isStep: c.isStep,
            ignoreBad: q.ignoreBad,
            uncertainIsBad: q.uncertainIsBad,
            fill: q.fill?.[1],
            aggregates: AGGREGATES,
          });
          compareBuckets(got, expected, scale, `${JSON.stringify({ ...item, externalId: undefined })} step=${c.isStep}`);
          compared += expected.length;
        }
      }),
      // A counterexample is reported as found: shrinking one stores a series per step and can take minutes.
      { numRuns: 60, endOnFailure: true },
    );
    expect(compared).toBeGreaterThan(500);
    // The random series were dense enough in places for stored rollups to take part.
    const db = h.strata.services.db;
    const levels = await db.all<{ level: number }>(sql`SELECT DISTINCT level FROM datapoint_rollups ORDER BY level`);
    expect(levels.map((l) => l.level)).toEqual([1, 2, 3]);
  }, 240_000);

  it('gives the same answers from stored rollups as from the raw points alone', async () => {
    const xid = await createSeries(false);
    const step = await createSeries(true);
    // A day of 10 s data with a gap of 50 minutes and one of 3 hours; the step series has a Bad point now and then.
    const T = Date.UTC(2024, 2, 30, 12);
    const points: OraclePoint[] = [];
    for (let t = T; t < T + DAY; t += 10_000) {
      const off = t - T;
      if ((off > 3 * HOUR && off < 3 * HOUR + 50 * MINUTE) || (off > 9 * HOUR && off < 12 * HOUR)) continue;
      points.push({ ts: t, value: Math.sin(off / 3e6) * 50 + (off % 7), code: 0 });
    }
    await insert(xid, points);
    await insert(step, points.map((p) => ({ ...p, code: (p.ts - T) % 97_000 === 0 ? BAD : 0 })));
    const db = h.strata.services.db;
    const idOf = async (x: string) => (await db.get<{ id: number }>(sql`SELECT id FROM timeseries WHERE external_id = ${x}`))!.id;
    const queries = [
      { granularity: '1h', timeZone: 'Europe/Oslo' },
      { granularity: '1d', timeZone: 'Australia/Adelaide' },
      { granularity: '15m', timeZone: 'Asia/Kolkata' },
      { granularity: '1mo', timeZone: 'UTC' },
      { granularity: '30m', timeZone: 'UTC', fill: { limit: '1h' } },
      { granularity: '1d', timeZone: 'UTC', fill: { limit: '20m' } },
      { granularity: '2h', timeZone: 'UTC', ignoreBadDataPoints: false },
    ];
    const answers = async () =>
      Promise.all(
        [xid, step].flatMap((x) => queries.map((q) => fetchAll({ externalId: x, start: T - DAY, end: T + 2 * DAY, aggregates: [...AGGREGATES], ...q }))),
      );
    const withRollups = await answers();
    expect((await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM datapoint_rollups WHERE series_id = ${await idOf(xid)}`))!.n).toBeGreaterThan(0);
    await db.run(sql`DELETE FROM datapoint_rollups WHERE series_id IN (${await idOf(xid)}, ${await idOf(step)})`);
    const rawOnly = await answers();
    withRollups.forEach((buckets, i) => compareBuckets(buckets, rawOnly[i], 100, `query ${i % queries.length} of ${i < queries.length ? 'continuous' : 'step'}`));
  });
});

// ---------------------------------------------------------------------------------------------------------
// Hand-made cases, one rule each

const T0 = Date.UTC(2024, 0, 10);

/** A series with the given points (value per timestamp offset from T0) and the buckets of a query over it. */
async function scenario(isStep: boolean, points: Array<[number, number]>, query: Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  const xid = await createSeries(isStep);
  await insert(xid, points.map(([off, value]) => ({ ts: T0 + off, value, code: 0 })));
  const buckets = await fetchAll({ externalId: xid, ...query, start: T0 + (query.start as number), end: T0 + (query.end as number) });
  return buckets.map((b) => ({ ...b, timestamp: (b.timestamp as number) - T0 }));
}

describe('average and its neighbours', () => {
  it('on a continuous series joins a point outside the bucket only when less than an hour away', async () => {
    // Buckets of an hour: [0, 1h) holds 20 at 20m; the point before lies 40 minutes before it, the one after
    // 80 minutes after it.
    const near = await scenario(false, [[-20 * MINUTE, 0], [20 * MINUTE, 20], [100 * MINUTE, 0]], { start: 0, end: HOUR, aggregates: ['average', 'interpolation'], granularity: '1h' });
    // [0, 20m) rises from 10 to 20; [20m, 1h) is undefined.
    expect(near).toEqual([{ timestamp: 0, average: 15, interpolation: 10 }]);
    // An hour apart, or more, on either side: the bucket has only its own point.
    const far = await scenario(false, [[-30 * MINUTE, 0], [30 * MINUTE, 10], [90 * MINUTE, 40], [150 * MINUTE + 1, 0]], {
      start: 0,
      end: 2 * HOUR,
      aggregates: ['average', 'interpolation', 'totalVariation'],
      granularity: '1h',
    });
    expect(far).toEqual([
      { timestamp: 0, average: 10, totalVariation: 0 },
      { timestamp: HOUR, average: 40, totalVariation: 0 },
    ]);
    // Just under an hour apart: joined.
    const under = await scenario(false, [[-30 * MINUTE + 1, 0], [30 * MINUTE, 10]], { start: 0, end: HOUR, aggregates: ['average', 'interpolation'], granularity: '1h' });
    expect(under[0].interpolation).toBeCloseTo(5, 3);
    expect(under[0].average).toBeCloseTo(7.5, 3);
  });

  it('joins points in one bucket however far apart', async () => {
    const buckets = await scenario(false, [[HOUR, 0], [5 * HOUR, 40], [25 * HOUR, 80]], { start: 0, end: 2 * DAY, aggregates: ['average', 'totalVariation', 'durationGood'], granularity: '1d' });
    expect(buckets).toEqual([
      { timestamp: 0, average: 20, totalVariation: 40, durationGood: 4 * HOUR },
      { timestamp: DAY, average: 80, totalVariation: 0, durationGood: 0 },
    ]);
  });

  it('on a step series uses the previous point however far, and holds the last point to the end of its bucket', async () => {
    const buckets = await scenario(true, [[-5 * DAY, 4], [30 * MINUTE, 10], [45 * MINUTE, 16]], { start: 0, end: 3 * HOUR, aggregates: ['average', 'totalVariation', 'durationGood'], granularity: '1h' });
    expect(buckets).toEqual([{ timestamp: 0, average: (30 * 4 + 15 * 10 + 15 * 16) / 60, totalVariation: 6 + 6, durationGood: HOUR }]);
  });

  it('on a continuous series ends at the last point, and is the value itself for an isolated point', async () => {
    const buckets = await scenario(false, [[20 * MINUTE, 7], [3 * HOUR + 10 * MINUTE, 9], [3 * HOUR + 40 * MINUTE, 3]], {
      start: 0,
      end: 4 * HOUR,
      aggregates: ['average', 'continuousVariance', 'totalVariation', 'durationGood', 'count'],
      granularity: '1h',
    });
    expect(buckets).toEqual([
      { timestamp: 0, average: 7, continuousVariance: 0, totalVariation: 0, durationGood: 0, count: 1 },
      { timestamp: 3 * HOUR, average: 6, continuousVariance: 3, totalVariation: 6, durationGood: 30 * MINUTE, count: 2 },
    ]);
  });
});

describe('empty buckets', () => {
  const points: Array<[number, number]> = [[30 * MINUTE, 0], [3 * HOUR + 30 * MINUTE, 30]];
  const query = { start: -2 * HOUR, end: 7 * HOUR, granularity: '1h' };

  it('are left out for every aggregate but step interpolation', async () => {
    const aggs = ['average', 'count', 'sum', 'min', 'max', 'totalVariation', 'continuousVariance', 'discreteVariance', 'countGood', 'durationGood', 'minDatapoint', 'interpolation'];
    const buckets = await scenario(false, points, { ...query, aggregates: aggs });
    expect(buckets.map((b) => b.timestamp)).toEqual([0, 3 * HOUR]);
    const step = await scenario(true, points, { ...query, aggregates: aggs.filter((a) => a !== 'interpolation') });
    expect(step.map((b) => b.timestamp)).toEqual([0, 3 * HOUR]);
  });

  it('have step interpolation only after a bucket with a point, or in the query\'s first bucket; none before the first point', async () => {
    for (const isStep of [false, true]) {
      const buckets = await scenario(isStep, points, { ...query, aggregates: ['stepInterpolation'] });
      expect(buckets, `step=${isStep}`).toEqual([
        { timestamp: HOUR, stepInterpolation: 0 },
        { timestamp: 3 * HOUR, stepInterpolation: 0 },
        { timestamp: 4 * HOUR, stepInterpolation: 30 },
      ]);
    }
    // A query that starts inside a gap, or after the last point, gets it in its first bucket.
    const inside = await scenario(false, points, { start: 2 * HOUR + 5 * MINUTE, end: 5 * HOUR, aggregates: ['count', 'stepInterpolation'], granularity: '1h' });
    expect(inside).toEqual([{ timestamp: 2 * HOUR, stepInterpolation: 0 }, { timestamp: 3 * HOUR, count: 1, stepInterpolation: 0 }, { timestamp: 4 * HOUR, stepInterpolation: 30 }]);
    const after = await scenario(false, points, { start: 30 * DAY + 5 * MINUTE, end: 90 * DAY, aggregates: ['count', 'stepInterpolation'], granularity: '1d' });
    expect(after).toEqual([{ timestamp: 30 * DAY, stepInterpolation: 30 }]);
  });

  it('have no interpolation on a continuous series, even between points less than an hour apart; on a step series its step interpolation', async () => {
    const cont = await scenario(false, [[50 * MINUTE, 0], [100 * MINUTE, 50], [6 * HOUR, 5]], { start: 0, end: 8 * HOUR, aggregates: ['interpolation'], granularity: '15m' });
    // 45m: no point before. 1h and 1h15m lie inside the 50 minutes between the first two points but hold
    // none. 1h30m: 40 minutes along them. 6h: a point at the start. Nothing after the last point.
    expect(cont).toEqual([{ timestamp: 90 * MINUTE, interpolation: 40 }, { timestamp: 6 * HOUR, interpolation: 5 }]);
    const step = await scenario(true, [[50 * MINUTE, 0], [2 * HOUR + 10 * MINUTE, 80], [6 * HOUR, 5]], { start: 0, end: 8 * HOUR, aggregates: ['interpolation', 'stepInterpolation'], granularity: '1h' });
    expect(step).toEqual([1, 2, 3, 6, 7].map((hr) => {
      const v = hr < 3 ? 0 : hr < 6 ? 80 : 5;
      return { timestamp: hr * HOUR, interpolation: v, stepInterpolation: v };
    }));
  });
});

describe('bucket edges', () => {
  it('give totalVariation, continuousVariance and durations their share of the stretches across them', async () => {
    // Continuous, a zigzag 40 minutes apart: 0 at -20m, 20 at 20m, 0 at 60m, 20 at 100m; buckets of 40 minutes from 0.
    const buckets = await scenario(false, [[-20 * MINUTE, 0], [20 * MINUTE, 20], [60 * MINUTE, 0], [100 * MINUTE, 20]], {
      start: 0,
      end: 80 * MINUTE,
      aggregates: ['totalVariation', 'continuousVariance', 'durationGood', 'average'],
      granularity: '40m',
    });
    // The first bucket sees 10 -> 20 -> 10, the second 10 -> 0 -> 10: each varies by 20 and spreads its values
    // evenly over a range of 10 (variance 100/12), over the whole bucket.
    expect(buckets.map((b) => [b.timestamp, b.durationGood])).toEqual([[0, 40 * MINUTE], [40 * MINUTE, 40 * MINUTE]]);
    buckets.forEach((b, i) => {
      expect(b.totalVariation).toBeCloseTo(20, 9);
      expect(b.average).toBeCloseTo(i === 0 ? 15 : 5, 9);
      expect(b.continuousVariance).toBeCloseTo(100 / 12, 9);
    });
  });

  it('give totalVariation and interpolation from the usable points alone, whatever ignoreBadDataPoints says', async () => {
    // Good 0 at 40m, Bad at 70m, Good 30 at 90m; buckets of an hour from 0.
    const xid = await createSeries(false);
    await insert(xid, [
      { ts: T0 + 40 * MINUTE, value: 0, code: 0 },
      { ts: T0 + 70 * MINUTE, value: 1000, code: BAD },
      { ts: T0 + 90 * MINUTE, value: 30, code: 0 },
    ]);
    const query = { externalId: xid, start: T0, end: T0 + 2 * HOUR, granularity: '1h', aggregates: ['average', 'totalVariation', 'interpolation', 'stepInterpolation'] };
    const rounded = (buckets: Array<Record<string, unknown>>) =>
      buckets.map((b) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Math.round((v as number) * 1e9) / 1e9])));
    const keep = rounded(await fetchAll({ ...query, ignoreBadDataPoints: false }));
    const ignore = rounded(await fetchAll({ ...query, ignoreBadDataPoints: true }));
    // Through the usable points: 0 at 40m rising to 12 at 1h and 30 at 90m. With the Bad point in the chain,
    // the function holds 0 from 40m to 70m and is undefined from 70m to 90m.
    expect(keep).toEqual([
      { timestamp: T0, average: 0, totalVariation: 12 },
      { timestamp: T0 + HOUR, average: 0, totalVariation: 18, interpolation: 12, stepInterpolation: 0 },
    ]);
    expect(ignore).toEqual([
      { timestamp: T0, average: 6, totalVariation: 12 },
      { timestamp: T0 + HOUR, average: 21, totalVariation: 18, interpolation: 12, stepInterpolation: 0 },
    ]);
  });

  it('leave count, sum, min, max, discreteVariance, the extreme points and the counts to the points inside', async () => {
    const buckets = await scenario(false, [[-10 * MINUTE, 100], [10 * MINUTE, 1], [50 * MINUTE, 3], [70 * MINUTE, -100]], {
      start: 0,
      end: HOUR,
      aggregates: ['count', 'sum', 'min', 'max', 'discreteVariance', 'minDatapoint', 'maxDatapoint', 'countGood', 'countBad'],
      granularity: '1h',
    });
    expect(buckets).toEqual([
      { timestamp: 0, count: 2, sum: 4, min: 1, max: 3, discreteVariance: 1, minDatapoint: { timestamp: T0 + 10 * MINUTE, value: 1 }, maxDatapoint: { timestamp: T0 + 50 * MINUTE, value: 3 }, countGood: 2, countBad: 0 },
    ]);
  });
});

describe('gap filling', () => {
  it('interpolates across gaps up to the limit, carries the last value forward for the limit, and leaves out the rest', async () => {
    const xid = await createSeries(false);
    await insert(xid, [[0, 0], [2 * HOUR, 20], [10 * HOUR, 5]].map(([off, value]) => ({ ts: T0 + off, value, code: 0 })));
    const q = { externalId: xid, start: T0, end: T0 + 16 * HOUR, aggregates: ['average', 'interpolation', 'stepInterpolation', 'count'], granularity: '1h' };
    const filled = (await fetchAll({ ...q, fill: { limit: '3h' } })).map((b) => ({ ...b, timestamp: ((b.timestamp as number) - T0) / HOUR }));
    expect(filled).toEqual([
      { timestamp: 0, average: 5, interpolation: 0, stepInterpolation: 0, count: 1 },
      { timestamp: 1, average: 15, interpolation: 10, stepInterpolation: 0 },
      // 2h to 10h is longer than the limit: undefined until the point at 10h.
      { timestamp: 2, interpolation: 20, stepInterpolation: 20, count: 1, average: 20 },
      { timestamp: 10, average: 5, interpolation: 5, stepInterpolation: 5, count: 1 },
      { timestamp: 11, average: 5, interpolation: 5, stepInterpolation: 5 },
      { timestamp: 12, average: 5, interpolation: 5, stepInterpolation: 5 },
    ]);
  });

  it('refuses a malformed limit, naming the place', async () => {
    const xid = await createSeries(false);
    const base = { externalId: xid, aggregates: ['average'], granularity: '1h' };
    for (const limit of ['1 h', '0h', 'h', '1mo', '1.5h', '-1h', 'PT1H']) {
      const message = errorMessage(await h.post('/timeseries/data/list', { items: [{ ...base, fill: { limit } }] }), 400);
      expect(message, limit).toMatch(/^items\[0\]\.fill\.limit: ".*" is not a length of time/);
    }
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ items: [{ ...base, fill: {} }] }, /^items\[0\]\.fill: missing required property "limit"/],
      [{ items: [{ ...base, fill: { limit: 30 } }] }, /^items\[0\]\.fill\.limit: expected string/],
      [{ items: [{ ...base, fill: { limit: '1h', mode: 'linear' } }] }, /^items\[0\]\.fill: unknown property "mode"/],
      [{ items: [{ externalId: xid, fill: { limit: '1h' } }] }, /^items\[0\]: fill applies to aggregates/],
      // Gap filling is set per item.
      [{ items: [base], fill: { limit: '1h' } }, /unknown property "fill"/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await h.post('/timeseries/data/list', body), 400)).toMatch(message);
  });
});

describe('granularity', () => {
  it('takes the units the API defines, in short and long form', async () => {
    const xid = await createSeries(false);
    await insert(xid, [{ ts: T0 + 90 * MINUTE, value: 1, code: 0 }]);
    for (const granularity of ['1s', '2second', 'm', '3minute', '1h', 'hour', '1d', '2day', '1mo', 'month', '120s', '120m', '100000h', '100000mo']) {
      const res = await h.post('/timeseries/data/list', { items: [{ externalId: xid, start: T0, end: T0 + DAY, aggregates: ['count'], granularity }] });
      expect(res.status, `${granularity}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.items[0].datapoints.map((b: any) => b.count)).toEqual([1]);
    }
  });

  it('refuses other units with the granularity to send instead', async () => {
    const xid = await createSeries(false);
    const cases: Array<[string, RegExp]> = [
      ['1w', /"1w" is not a granularity this API takes; send "7d" instead/],
      ['2weeks', /send "14d" instead/],
      ['1q', /send "3mo" instead/],
      ['quarter', /send "3mo" instead/],
      ['1y', /send "12mo" instead/],
      ['2years', /send "24mo" instead/],
      ['5min', /send "5m" instead/],
      ['10sec', /send "10s" instead/],
      ['3hours', /send "3h" instead/],
      ['1H', /send "1h" instead/],
      ['1Mo', /send "1mo" instead/],
      ['20000w', /the longest granularity in d is 100000d/],
      ['1fortnight', /"1fortnight" is not a granularity; use an optional whole number and a unit/],
      ['1.5h', /is not a granularity/],
      [' 1h', /is not a granularity/],
      ['121s', /the multiple of "s" must be from 1 to 120, got 121/],
      ['0h', /the multiple of "h" must be from 1 to 100000, got 0/],
    ];
    for (const [granularity, message] of cases) {
      const res = await h.post('/timeseries/data/list', { items: [{ externalId: xid, aggregates: ['count'] }], granularity });
      expect(errorMessage(res, 400), granularity).toMatch(new RegExp(`^items\\[0\\]\\.granularity: .*${message.source}`));
    }
  });
});

describe('paging', () => {
  it('ends: one-second buckets over decades of sparse data give the buckets with data, page by page', async () => {
    const xid = await createSeries(false);
    // A point every ~200 days from 1950 to 2030, plus a burst of a minute.
    const points: OraclePoint[] = [];
    for (let t = Date.UTC(1950, 0, 1); t < Date.UTC(2030, 0, 1); t += 200 * DAY + 12_345) points.push({ ts: t, value: t % 1000, code: 0 });
    const burst = Date.UTC(2000, 5, 1);
    for (let i = 0; i < 60; i++) points.push({ ts: burst + i * 1000 + 500, value: i, code: 0 });
    points.sort((a, b) => a.ts - b.ts);
    await insert(xid, points);
    const item = { externalId: xid, start: Date.UTC(1940, 0, 1), end: Date.UTC(2099, 0, 1), granularity: '1s', aggregates: ['average', 'count', 'interpolation', 'durationGood', 'totalVariation'] };
    for (const limit of [10_000, 50, 7]) {
      const buckets = await fetchAll(item, limit);
      expect(buckets.length).toBe(points.length);
      expect(buckets.map((b) => b.count)).toEqual(points.map(() => 1));
      expect(buckets.map((b) => b.timestamp)).toEqual(points.map((p) => Math.floor(p.ts / 1000) * 1000));
    }
    // Clients that page by moving `start` past the last bucket they got (the official Python client does) end too.
    let start = item.start;
    let got = 0;
    for (let page = 0; page < 100; page++) {
      const res = await h.post('/timeseries/data/list', { items: [{ ...item, start, limit: 20 }] });
      const dps = res.body.items[0].datapoints;
      got += dps.length;
      if (dps.length < 20) break;
      start = dps[dps.length - 1].timestamp + 1000;
    }
    expect(got).toBe(points.length);
  });

  it('fills every page with a cursor to the limit, also when a point ahead of a long stretch is read first', async () => {
    const xid = await createSeries(false);
    const T = Date.UTC(2024, 2, 4, 20);
    // A Bad point (left out of the interpolation, counted in the durations) inside a stretch between two Good
    // points, filled across: its bucket is opened before the buckets the stretch crosses.
    await insert(xid, [
      { ts: T, value: 0, code: 0 },
      { ts: T + 46_400, value: -1e250, code: BAD },
      { ts: T + 56_400, value: 10, code: 0 },
    ]);
    const item = { externalId: xid, start: T + 500, end: T + 120_000, granularity: '1s', aggregates: ['interpolation', 'count', 'durationBad'], fill: { limit: '1h' } };
    const first = await h.post('/timeseries/data/list', { items: [{ ...item, limit: 37 }] });
    expect(first.body.items[0].nextCursor).toBeDefined();
    expect(first.body.items[0].datapoints).toHaveLength(37);
    const all = await fetchAll(item, 37);
    expect(all.map((b) => b.timestamp)).toEqual(Array.from({ length: 120 }, (_, i) => T + i * 1000));
  });

  it('keeps few buckets waiting through a long run of Bad points left out of the chain, and answers by the definitions', async () => {
    const xid = await createSeries(false);
    const T = Date.UTC(2024, 3, 1);
    const RUN = 6000;
    // A Good point, then a Bad or Uncertain point every second, then two Good points: with ignoreBadDataPoints
    // the stretch from the first Good point stays open across the run, and the run's buckets wait behind it.
    const points: OraclePoint[] = [{ ts: T, value: 1, code: 0 }];
    for (let i = 1; i <= RUN; i++) points.push({ ts: T + i * 1000, value: i, code: i % 7 === 0 ? UNCERTAIN : BAD });
    points.push({ ts: T + (RUN + 1) * 1000, value: 2, code: 0 }, { ts: T + (RUN + 2) * 1000 + 500, value: 3, code: 0 });
    await insert(xid, points);
    const bounds = { start: T - 5000, end: T + (RUN + 10) * 1000 };
    const queries = [
      { aggregates: ['average', 'interpolation', 'totalVariation'] as const, fill: undefined },
      { aggregates: AGGREGATES, fill: undefined },
      { aggregates: ['average', 'stepInterpolation'] as const, fill: ['1h', HOUR] as const },
    ];
    for (const { aggregates, fill } of queries) {
      const item = { externalId: xid, ...bounds, granularity: '1s', aggregates, ...(fill ? { fill: { limit: fill[0] } } : {}) };
      const expected = oracleAggregates(points, oracleBounds('1s', 'UTC', bounds.start, bounds.end), {
        isStep: false,
        ignoreBad: true,
        uncertainIsBad: true,
        fill: fill?.[1],
        aggregates: [...aggregates],
      });
      for (const limit of aggregates.length > 3 ? [10_000, 500] : [10_000, 500, 37]) compareBuckets(await fetchAll(item, limit), expected, RUN, `${aggregates.join()} fill=${fill?.[0]} limit=${limit}`);
    }
    // Each waiting bucket is an array of numbers: one request holds about twice its limit of them, not the run.
    let made = 0;
    const Counted = class extends Float64Array {
      constructor(...args: ConstructorParameters<typeof Float64Array>) {
        super(...args);
        made++;
      }
    };
    vi.stubGlobal('Float64Array', Counted);
    try {
      for (const { aggregates } of queries.slice(0, 2)) {
        made = 0;
        const res = await h.post('/timeseries/data/list', { items: [{ externalId: xid, ...bounds, granularity: '1s', aggregates, limit: 500 }] });
        expect(res.status).toBe(200);
        expect(made, aggregates.join()).toBeLessThan(RUN / 2);
      }
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('keeps multi-hour buckets three hours long across a clock change, whichever page they start', async () => {
    const xid = await createSeries(false);
    // America/New_York went back from EDT to EST at 06:00 UTC on 3 November 2024 (01:00 local repeats).
    const from = Date.UTC(2024, 10, 2, 12);
    await insert(xid, Array.from({ length: 96 }, (_, i) => ({ ts: from + i * 30 * MINUTE, value: i, code: 0 })));
    const item = { externalId: xid, start: from, end: from + 2 * DAY, granularity: '3h', timeZone: 'America/New_York', aggregates: ['count'] };
    const expected = Array.from({ length: 16 }, (_, i) => from + i * 3 * HOUR);
    for (const limit of [10_000, 1, 2]) {
      const buckets = await fetchAll(item, limit);
      expect(buckets.map((b) => b.timestamp)).toEqual(expected);
      expect(buckets.map((b) => b.count)).toEqual(expected.map(() => 6));
    }
  });

  it('never gives buckets past the data or the query range', async () => {
    const xid = await createSeries(true);
    await insert(xid, [{ ts: Date.UTC(2030, 0, 1), value: 1, code: 0 }]);
    const buckets = await fetchAll({ externalId: xid, start: Date.UTC(2029, 11, 1), end: Date.UTC(2099, 11, 1), granularity: '1mo', aggregates: [...AGGREGATES] });
    expect(buckets.map((b) => new Date(b.timestamp as number).toISOString())).toEqual(['2030-01-01T00:00:00.000Z', '2030-02-01T00:00:00.000Z']);
    const within = await fetchAll({ externalId: xid, start: Date.UTC(2029, 0, 1), end: Date.UTC(2029, 11, 15), granularity: '1d', aggregates: [...AGGREGATES] });
    expect(within).toEqual([]);
  });

  it('takes any start and end, however far from the data', async () => {
    const xid = await createSeries(true);
    await insert(xid, [{ ts: 1500, value: 1, code: 0 }]);
    const far = Number.MAX_SAFE_INTEGER;
    for (const [granularity, timeZone] of [['1mo', 'Europe/Oslo'], ['7d', 'America/New_York'], ['1s', 'UTC'], ['100000mo', 'Asia/Kolkata']]) {
      for (const [start, end] of [[-far, far], [-far, -far + 1], [far - 1, far], [-8.64e15, 0], [0, 8.64e15]]) {
        const what = `${granularity} ${timeZone} [${start}, ${end})`;
        const res = await h.post('/timeseries/data/list', { items: [{ externalId: xid, start, end, granularity, timeZone, aggregates: ['count', 'stepInterpolation'] }] });
        expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(200);
        const buckets = res.body.items[0].datapoints;
        const shapes = buckets.map((b: any) => Object.keys(b).sort().join());
        // The bucket of the point and the first bucket after it; a query before the point gets at most a
        // bucket reaching over it; one beyond the year 250,000 nothing.
        if (start < 1500 && end > 1500) expect(shapes, what).toEqual(['count,timestamp', 'stepInterpolation,timestamp']);
        else if (start > 1500) expect(shapes, what).toEqual([]);
        else expect(buckets.filter((b: any) => b.count !== 1), what).toEqual([]);
        expect(buckets.filter((b: any) => b.timestamp >= end), what).toEqual([]);
      }
    }
  });
});
