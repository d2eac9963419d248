/**
 * Aggregates as the official clients' integration tests expect them. Those tests ran against the reference
 * service, so their expected figures show how it aggregates across gaps between points. Where a test reads
 * the standing data of the service's test project, the data is rebuilt here from the recipe that wrote it
 * (the Python client's script for its integration test series) or from the points the expectations depend
 * on; where its expected figures come from a direct computation in the test (the Python client's
 * `cdf_aggregate`), that computation is redone here over data of the same shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

let seriesCounter = 0;

async function seriesWith(points: Array<Record<string, unknown>>, isStep = false): Promise<string> {
  const externalId = `ref-${seriesCounter++}`;
  expect((await h.post('/timeseries', { items: [{ externalId, isStep }] })).status).toBe(201);
  for (let i = 0; i < points.length; i += 50_000) {
    const res = await h.post('/timeseries/data', { items: [{ externalId, datapoints: points.slice(i, i + 50_000) }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  return externalId;
}

type Bucket = Record<string, number> & { timestamp: number };

/** Every bucket of each item, following cursors. */
async function aggregates(items: Array<Record<string, unknown>>, common: Record<string, unknown> = {}): Promise<Bucket[][]> {
  const out: Bucket[][] = items.map(() => []);
  let pending = items.map((item, i) => ({ i, item }));
  while (pending.length) {
    const res = await h.post('/timeseries/data/list', { ...common, items: pending.map((p) => p.item) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const next: typeof pending = [];
    res.body.items.forEach((got: { datapoints: Bucket[]; nextCursor?: string }, j: number) => {
      out[pending[j].i].push(...got.datapoints);
      if (got.nextCursor) next.push({ i: pending[j].i, item: { ...pending[j].item, cursor: got.nextCursor } });
    });
    pending = next;
  }
  return out;
}

/** One aggregate over the buckets, NaN where a bucket has none (as the Python client shows it). */
const column = (buckets: Bucket[], name: string) => buckets.map((b) => (name in b ? b[name] : NaN));

/** numpy's `assert_allclose` with its default tolerance (relative 1e-7, NaN equal to NaN). */
function allClose(actual: number[], expected: number[], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  actual.forEach((a, i) => {
    const e = expected[i];
    if (Number.isNaN(e)) expect(a, `${what}[${i}]`).toBeNaN();
    else if (Math.abs(a - e) > 1e-7 * Math.abs(e)) expect(a, `${what}[${i}]`).toBe(e);
  });
}

// ---------------------------------------------------------------------------------------------------------
// The Python client's series with mixed status codes, rebuilt

/** Python's `random.Random(seed)` for a seed below 2^32: the Mersenne Twister MT19937 and the draws built on it. */
function pythonRandom(seed: number) {
  const N = 624;
  const mt = new Uint32Array(N);
  mt[0] = 19650218;
  for (let i = 1; i < N; i++) mt[i] = (Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i) >>> 0;
  // Seeding with an integer mixes in its 32-bit words; here the one word `seed`.
  let i = 1;
  for (let k = N; k > 0; k--) {
    mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + seed) >>> 0;
    if (++i >= N) {
      mt[0] = mt[N - 1];
      i = 1;
    }
  }
  for (let k = N - 1; k > 0; k--) {
    mt[i] = ((mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i) >>> 0;
    if (++i >= N) {
      mt[0] = mt[N - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000;
  let index = N;
  const word = () => {
    if (index >= N) {
      for (let k = 0; k < N; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
        mt[k] = mt[(k + 397) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      index = 0;
    }
    let y = mt[index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  };
  const random = () => ((word() >>> 5) * 67108864 + (word() >>> 6)) / 9007199254740992;
  let spare: number | undefined;
  return {
    /** An item at an index of as many random bits as the length has, drawn again while out of range. */
    choice<T>(items: readonly T[]): T {
      const bits = 32 - Math.clz32(items.length);
      for (;;) {
        const r = word() >>> (32 - bits);
        if (r < items.length) return items[r];
      }
    },
    /** Box-Muller, keeping the second value of each pair for the next call. */
    gauss(mu: number, sigma: number): number {
      let z = spare;
      spare = undefined;
      if (z === undefined) {
        const angle = random() * 2 * Math.PI;
        const radius = Math.sqrt(-2 * Math.log(1 - random()));
        z = Math.cos(angle) * radius;
        spare = Math.sin(angle) * radius;
      }
      return mu + z * sigma;
    },
  };
}

const span = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/**
 * The Python client's "mixed status codes, daily values, 2023-2024" and "only bad status codes" series: one
 * point a day through 2023, each a random Good (value ~ N(0, 1e3)), Uncertain (~ N(0, 1e6)) or Bad point
 * (a value from a fixed list, or none), with status codes drawn from its lists (the top 16 bits given).
 */
function statusCodeSeries(): { mixed: Array<Record<string, unknown>>; bad: Array<Record<string, unknown>> } {
  const rnd = pythonRandom(123456789);
  const good = [0, 45, 46, 47, 48, 150, 162, 163, 167, 168, 169, 170, 186, 217, 220, 224, 278, 279, 280, 1026, 1027, 1032, 1033];
  const uncertain = [16384, 16492, 16527, 16528, 16529, 16530, 16531, 16533, 16548, 16572, 16576, 16606, 16610, 16905, 16906, 16911];
  const bad = [
    ...span(32768, 32808), ...span(32810, 32812), ...span(32817, 32875), ...span(32877, 32910), ...span(32919, 32923),
    ...span(32925, 32929), ...span(32939, 32953), ...span(32968, 32984), ...span(33037, 33045), ...span(33049, 33055),
  ];
  const badValues = [null, 'NaN', 'Infinity', '-Infinity', -1e100, 2.71, 3.14, 420, 1e100, -5e-324, 5e-324];
  const point = (timestamp: number, value: unknown, top: number) => ({ timestamp, ...(value === null ? {} : { value }), status: { code: top * 65536 } });
  const draws = {
    good: (ts: number) => {
      const v = rnd.gauss(0, 1e3);
      return point(ts, v, rnd.choice(good));
    },
    uncertain: (ts: number) => {
      const v = rnd.gauss(0, 1e6);
      return point(ts, v, rnd.choice(uncertain));
    },
    bad: (ts: number) => {
      const v = rnd.choice(badValues);
      return point(ts, v, rnd.choice(bad));
    },
  };
  const out = { mixed: [] as Array<Record<string, unknown>>, bad: [] as Array<Record<string, unknown>> };
  for (let ts = Date.UTC(2023, 0, 1); ts < Date.UTC(2024, 0, 1); ts += DAY) {
    out.bad.push(draws.bad(ts));
    out.mixed.push(rnd.choice([draws.good, draws.uncertain, draws.bad])(ts));
  }
  return out;
}

const ALL_AGGREGATES = [
  'average', 'continuousVariance', 'count', 'countBad', 'countGood', 'countUncertain', 'discreteVariance', 'durationBad', 'durationGood',
  'durationUncertain', 'interpolation', 'max', 'min', 'stepInterpolation', 'sum', 'totalVariation',
];

describe("the Python client's test_status_codes_affect_aggregate_calculations", () => {
  let m: Bucket[][];
  let b: Bucket[][];
  beforeAll(async () => {
    const data = statusCodeSeries();
    // The recipe's draws: 117 Good, 122 Uncertain and 126 Bad points in the mixed series.
    const classes = data.mixed.map((p) => (p.status as { code: number }).code >>> 30);
    expect([0, 1, 2].map((c) => classes.filter((x) => x === c).length)).toEqual([117, 122, 126]);
    const mixed = await seriesWith(data.mixed);
    const bad = await seriesWith(data.bad);
    const options = [
      { treatUncertainAsBad: true, ignoreBadDataPoints: true },
      { treatUncertainAsBad: false, ignoreBadDataPoints: true },
      { treatUncertainAsBad: true, ignoreBadDataPoints: false },
      { treatUncertainAsBad: false, ignoreBadDataPoints: false },
    ];
    const all = await aggregates(
      [...options.map((o) => ({ externalId: mixed, ...o })), ...options.map((o) => ({ externalId: bad, ...o }))],
      { start: Date.UTC(2023, 0, 1), end: Date.UTC(2024, 0, 1), aggregates: ALL_AGGREGATES, granularity: '30d' },
    );
    m = all.slice(0, 4);
    b = all.slice(4);
  });

  it('gives the expected average and continuousVariance under each status option', () => {
    const average = [
      [-100.266803, 180.102903, 709.306477, -342.590187],
      [-166855.089388, 113784.358276, 13372.24363, -65191.492671],
      [-283.850509, 205.634247, 881.584739, -91.393828],
      [-264471.559047, 117022.569448, -38772.339529, 47902.527674],
    ];
    const continuousVariance = [
      [642800.685332, 426005.553231, 435043.668454, 622115.239423],
      [284755948510.1042, 375008672701.96277, 148584225325.00912, 375298973299.39276],
      [625723.5820629946, 638941.7823122272, 675739.8119564621, 1583061.859119803],
      [349079144838.96564, 512343998481.7162, 159180999248.7119, 529224146671.5178],
    ];
    const stepInterpolation = [
      [NaN, -1138.57277, 274.866615, 651.621005],
      [NaN, -1355647.5886087606, -110240.71105459922, 651.6210049165213],
      [NaN, NaN, NaN, 651.621005],
      [NaN, NaN, -110240.711055, 651.621005],
    ];
    m.forEach((buckets, i) => {
      expect(buckets).toHaveLength(13);
      allClose(column(buckets, 'average').slice(0, 4), average[i], `m${i + 1}.average`);
      allClose(column(buckets, 'continuousVariance').slice(0, 4), continuousVariance[i], `m${i + 1}.continuousVariance`);
      allClose(column(buckets, 'stepInterpolation').slice(0, 4), stepInterpolation[i], `m${i + 1}.stepInterpolation`);
      // The last bucket's one usable point.
      allClose([buckets[12].average, buckets[12].interpolation, buckets[12].totalVariation], [-543.501385, -543.501385, 0], `m${i + 1} last bucket`);
    });
  });

  it('gives totalVariation, interpolation and the aggregates of points by treatUncertainAsBad alone', () => {
    const [m1, m2, m3, m4] = m;
    for (const name of ['min', 'max', 'sum', 'interpolation', 'discreteVariance', 'totalVariation']) {
      allClose(column(m3, name), column(m1, name), `${name}: m3 as m1`);
      allClose(column(m4, name), column(m2, name), `${name}: m4 as m2`);
      expect(column(m1, name), name).not.toEqual(column(m2, name));
    }
    expect(column(m3, 'count')).toEqual(column(m1, 'count'));
    expect(column(m4, 'count')).toEqual(column(m2, 'count'));
    const total = (bs: Bucket[]) => column(bs, 'count').reduce((x, y) => x + (Number.isNaN(y) ? 0 : y), 0);
    expect(total(m1)).toBeLessThan(total(m2));
  });

  it('counts points and their durations by status whatever the options, and leaves a series of Bad points without values', () => {
    for (const group of [m, b]) {
      for (const name of ['countGood', 'countUncertain', 'countBad', 'durationGood', 'durationUncertain', 'durationBad']) {
        for (const buckets of group.slice(1)) expect(column(buckets, name), name).toEqual(column(group[0], name));
      }
    }
    for (const buckets of b) {
      expect(buckets).toHaveLength(13);
      for (const name of ['count', 'average', 'interpolation', 'totalVariation']) expect(column(buckets, name).every(Number.isNaN), name).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Gaps between points

describe("the JavaScript client's monthly aggregates with a data gap between months", () => {
  it('averages each month over its own two points and sums them', async () => {
    const utc = (y: number, mo: number, d: number) => Date.UTC(y, mo, d);
    const months = [utc(2022, 9, 1), utc(2022, 10, 1), utc(2022, 11, 1), utc(2023, 0, 1), utc(2023, 2, 1)];
    const first = await seriesWith(months.flatMap((t, i) => [{ timestamp: t, value: 20 * i + 10 }, { timestamp: t + DAY, value: 20 * i + 20 }]));
    const second = await seriesWith(
      [utc(2022, 9, 1), utc(2022, 10, 1), utc(2022, 11, 1), utc(2023, 1, 1), utc(2023, 2, 1)].flatMap((t, i) => [
        { timestamp: t, value: 20 * i },
        { timestamp: t + DAY, value: 20 * i + 10 },
      ]),
    );
    const query = { start: Date.UTC(2022, 9, 1), end: Date.UTC(2023, 2, 15), granularity: '1mo' };
    const [average, sum, sum2] = await aggregates([
      { externalId: first, aggregates: ['average'] },
      { externalId: first, aggregates: ['sum'] },
      { externalId: second, aggregates: ['sum'] },
    ], query);
    expect(average).toEqual(months.map((timestamp, i) => ({ timestamp, average: 20 * i + 15 })));
    expect(sum).toEqual(months.map((timestamp, i) => ({ timestamp, sum: 40 * i + 30 })));
    expect(sum2.map((x) => x.sum)).toEqual([10, 50, 90, 130, 170]);
    expect(sum2[3].timestamp).toBe(Date.UTC(2023, 1, 1));
  });
});

describe("the Python client's test_edge_case_all_aggs_missing", () => {
  it('gives one-second buckets only where the points are, with no interpolation across gaps of an hour or more', async () => {
    // The points of its series "1mill dps, random distribution" around the query (numpy's generator seeded
    // with 42 put them there): gaps of 178, 170, 61, 156, 93, 112 and 48 minutes.
    const points: Array<[string, number]> = [
      ['1970-09-05T06:12:10.827Z', -204521],
      ['1970-09-05T09:10:10.433Z', -204520],
      ['1970-09-05T12:00:06.777Z', -204519],
      ['1970-09-05T13:00:37.639Z', -204518],
      ['1970-09-05T15:36:47.927Z', -204517],
      ['1970-09-05T17:10:08.513Z', -204516],
      ['1970-09-05T19:02:03.457Z', -204515],
      ['1970-09-05T19:49:40.175Z', -204514],
      ['1970-09-05T19:49:47.887Z', -204513],
    ];
    const xid = await seriesWith(points.map(([t, value]) => ({ timestamp: Date.parse(t), value })));
    const [buckets] = await aggregates([
      { externalId: xid, start: Date.parse('1970-09-05T12:00:06Z'), end: Date.parse('1970-09-05T19:49:40Z'), granularity: '1s', aggregates: ['average', 'count', 'interpolation'] },
    ]);
    const inside = points.slice(2, 7);
    expect(buckets.map((x) => x.timestamp)).toEqual(inside.map(([t]) => Math.floor(Date.parse(t) / 1000) * 1000));
    buckets.forEach((x, i) => {
      expect(x.count).toBe(1);
      expect(x.interpolation).toBeUndefined();
      // The last one also takes its share of the 48 minutes to the point after the query's end.
      expect(x.average).toBeCloseTo(inside[i][1], 3);
    });
  });
});

/** Hourly and minute series of the Python client's `cdf_aggregate` cases, with values of a fixed formula. */
const wave = (t: number) => Math.round(1000 * Math.sin(t / 5_000_000) + 300 * Math.cos(t / 777_777)) / 100;

/**
 * The Python client's `cdf_aggregate` for averages: on data an hour or more apart, each bucket's mean of the
 * trapezoids between its own points; on data less than an hour apart, the trapezoids of the bucket's points
 * and the first point at or after its end (a rolling window closed at both ends).
 */
function expectedAverages(times: number[], bounds: number[], spacing: number): number[] {
  return bounds.slice(0, -1).map((b0, k) => {
    const b1 = bounds[k + 1];
    const inside = times.filter((t) => t >= b0 && (spacing >= HOUR ? t < b1 : t <= b1));
    let area = 0;
    for (let i = 1; i < inside.length; i++) area += ((inside[i] - inside[i - 1]) * (wave(inside[i]) + wave(inside[i - 1]))) / 2;
    return area / (inside[inside.length - 1] - inside[0]);
  });
}

describe("the Python client's test_cdf_aggregate_equal_to_cdf and test_retrieve_dataframe_in_tz_aggregate_raw_hourly", () => {
  let hourly: string;
  let minutely: string;
  const hours = span(0, 24 * 40).map((i) => Date.UTC(2023, 2, 10) + i * HOUR);
  const minutes = span(0, 2 * 24 * 60).map((i) => Date.UTC(2023, 0, 1) + i * MINUTE);
  beforeAll(async () => {
    hourly = await seriesWith(hours.map((timestamp) => ({ timestamp, value: wave(timestamp) })));
    minutely = await seriesWith(minutes.map((timestamp) => ({ timestamp, value: wave(timestamp) })));
  });

  it('on hourly data, does not join the last point of a bucket to the next bucket an hour later', async () => {
    const start = Date.UTC(2023, 2, 11);
    const end = Date.UTC(2023, 2, 12) + 1000;
    for (const g of [2, 3]) {
      const [buckets] = await aggregates([{ externalId: hourly, start, end, granularity: `${g}h`, aggregates: ['average'] }]);
      const bounds = span(0, Math.ceil((end - start) / (g * HOUR))).map((i) => start + i * g * HOUR);
      // As the client's test, all but the last bucket, whose raw points the test's query cuts off.
      allClose(column(buckets, 'average').slice(0, -1), expectedAverages(hours, bounds, HOUR).slice(0, -1), `${g}h`);
    }
  });

  it('on data a minute apart, joins each bucket to the first point of the next', async () => {
    const start = Date.UTC(2023, 0, 1);
    for (const [granularity, size, end] of [['2m', 2 * MINUTE, start + DAY + 59_000], ['15m', 15 * MINUTE, start + DAY - 59_000], ['1h', HOUR, start + DAY - 59_000]] as const) {
      const [buckets] = await aggregates([{ externalId: minutely, start, end, granularity, aggregates: ['average'] }]);
      const bounds = span(0, Math.ceil((end - start) / size)).map((i) => start + i * size);
      allClose(column(buckets, 'average').slice(0, -1), expectedAverages(minutes, bounds, MINUTE).slice(0, -1), granularity);
    }
  });

  it('on hourly data in Europe/Oslo, takes each local day (23 hours when the clocks go forward) from its own points', async () => {
    const start = Date.UTC(2023, 2, 14, 23);
    const end = Date.UTC(2023, 3, 8, 22);
    for (const g of [1, 5]) {
      const [buckets] = await aggregates([{ externalId: hourly, start, end, granularity: `${g}d`, timeZone: 'Europe/Oslo', aggregates: ['average'] }]);
      const bounds = buckets.map((x) => x.timestamp);
      expect(bounds.includes(Date.UTC(2023, 2, 25, 23)) || g === 5).toBe(true);
      bounds.push(buckets[buckets.length - 1].timestamp + g * DAY);
      allClose(column(buckets, 'average').slice(0, -1), expectedAverages(hours, bounds, HOUR).slice(0, -1), `${g}d`);
    }
  });
});

describe("the Python client's test_agg_uniform_true_false", () => {
  it('gives stepInterpolation in the first empty bucket after one with points only, and average only where the points are', async () => {
    // Three-hour buckets from 0: points in buckets 0 (two), 1, 3 (one empty bucket before it) and 6 (two).
    const offsets = [10 * MINUTE, 2 * HOUR, 4 * HOUR, 10 * HOUR, 19 * HOUR];
    const T = Date.UTC(1965, 0, 1);
    const xid = await seriesWith(offsets.map((o, i) => ({ timestamp: T + o, value: i })));
    const [buckets] = await aggregates([{ externalId: xid, start: T, end: T + DAY, granularity: '3h', aggregates: ['stepInterpolation', 'average'] }]);
    expect(buckets.map((x) => [(x.timestamp - T) / (3 * HOUR), x.stepInterpolation, x.average])).toEqual([
      [0, undefined, 0.5],
      [1, 1, 2],
      [2, 2, undefined],
      [3, 2, 3],
      [4, 3, undefined],
      [6, 3, 4],
      [7, 4, undefined],
    ]);
  });
});
