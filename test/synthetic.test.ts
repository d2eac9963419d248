/**
 * Synthetic time series over HTTP, on both backends. Results are checked against a direct computation on
 * the same points: a small evaluator here that interpolates each series at every timestamp by searching its
 * points (linear, or step for step series; nothing outside a series' first and last point) and applies the
 * operation in plain JavaScript. Also: aggregates inside references (against the data point aggregates of
 * the same series, and aligned by `alignment`), units, errors as points, scopes, limits, and the refusals,
 * each naming the position in the expression.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, builtInSigner, capability, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

type Point = { timestamp: number; value: number };
type Out = { timestamp: number; value?: number; error?: string };

const query = async (expression: string, extra: Record<string, unknown> = {}): Promise<Out[]> =>
  ok(await h.post('/timeseries/synthetic/query', { items: [{ expression, start: 0, end: 1_000_000, limit: 10_000, ...extra }] })).items[0].datapoints;

/** The value of a series at `t` from its points, as the reference describes it; undefined outside its points. */
function valueAt(points: readonly Point[], t: number, step: boolean): number | undefined {
  let before: Point | undefined;
  let after: Point | undefined;
  for (const p of points) {
    if (p.timestamp <= t) before = p;
    if (p.timestamp >= t && after === undefined) after = p;
  }
  if (!before || !after) return undefined;
  if (before.timestamp === t) return before.value;
  return step ? before.value : before.value + ((after.value - before.value) * (t - before.timestamp)) / (after.timestamp - before.timestamp);
}

/** The expected output of `f` over the series: at every timestamp of any of them where all have a value. */
function expected(series: ReadonlyArray<{ points: readonly Point[]; step?: boolean }>, f: (...v: number[]) => number | string): Out[] {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => p.timestamp)))].sort((a, b) => a - b);
  const out: Out[] = [];
  for (const t of times) {
    const values = series.map((s) => valueAt(s.points, t, s.step ?? false));
    if (values.some((v) => v === undefined)) continue;
    const r = f(...(values as number[]));
    out.push(typeof r === 'string' ? { timestamp: t, error: r } : { timestamp: t, value: r });
  }
  return out;
}

function expectClose(actual: Out[], wanted: Out[]): void {
  expect(actual.map((p) => p.timestamp)).toEqual(wanted.map((p) => p.timestamp));
  actual.forEach((p, i) => {
    if (wanted[i].error !== undefined) expect(p.error).toMatch(wanted[i].error!);
    else {
      expect(p.error).toBeUndefined();
      expect(p.value).toBeCloseTo(wanted[i].value!, 9);
    }
  });
}

async function seriesWith(externalId: string, points: Point[], fields: Record<string, unknown> = {}): Promise<number> {
  const [{ id }] = ok(await h.post('/timeseries', { items: [{ externalId, ...fields }] }), 201).items;
  if (points.length) ok(await h.post('/timeseries/data', { items: [{ id, datapoints: points }] }));
  return id;
}

const DIVIDE = /BAD_DOMAIN: Division by zero/;

describe('results, against a direct computation on the same points', () => {
  const a: Point[] = [];
  const b: Point[] = [];
  const s: Point[] = [];
  beforeAll(async () => {
    // Irregular timestamps that only partly meet; b is zero now and then, a negative now and then.
    for (let t = 1000; t < 60_000; t += 700 + ((t * 7) % 900)) a.push({ timestamp: t, value: Math.round(Math.sin(t / 5000) * 1000) / 10 });
    for (let t = 3000; t < 70_000; t += 1100 + ((t * 3) % 500)) b.push({ timestamp: t, value: ((t / 100) % 7) - 3 });
    for (let t = 0; t < 50_000; t += 4000) s.push({ timestamp: t, value: t % 3 });
    await seriesWith('syn-a', a);
    await seriesWith('syn-b', b);
    await seriesWith('syn-step', s, { isStep: true });
  });

  it.each([
    ['ts{externalId=\'syn-a\'} + ts{externalId=\'syn-b\'}', (x: number, y: number) => x + y],
    ['TS{externalId:"syn-a"} * 2 - ts{externalId:"syn-b"} / 4', (x: number, y: number) => x * 2 - y / 4],
    ['-(ts{externalId=\'syn-a\'} - 3) * (1 + ts{externalId=\'syn-b\'})', (x: number, y: number) => -(x - 3) * (1 + y)],
    ['max(ts{externalId=\'syn-a\'}, ts{externalId=\'syn-b\'}, 0) + min(ts{externalId=\'syn-a\'}, 1)', (x: number, y: number) => Math.max(x, y, 0) + Math.min(x, 1)],
    ['avg(ts{externalId=\'syn-a\'}, ts{externalId=\'syn-b\'}) + sum(ts{externalId=\'syn-b\'}, 2, 3)', (x: number, y: number) => (x + y) / 2 + y + 5],
    ['sin(ts{externalId=\'syn-a\'}) * cos(ts{externalId=\'syn-b\'}) + abs(ts{externalId=\'syn-b\'}) + pi()', (x: number, y: number) => Math.sin(x) * Math.cos(y) + Math.abs(y) + Math.PI],
    ['round(ts{externalId=\'syn-a\'} / 7, 2) + pow(ts{externalId=\'syn-b\'}, 2) + exp(ts{externalId=\'syn-b\'})', (x: number, y: number) => Math.round((x / 7) * 100) / 100 + y ** 2 + Math.exp(y)],
  ])('%s', async (expression, f) => {
    expectClose(await query(expression), expected([{ points: a }, { points: b }], f));
  });

  it('division by zero, roots of negative numbers and logarithms of non-positive ones are errors at their points; on_error replaces them', async () => {
    expectClose(await query("ts{externalId='syn-a'} / ts{externalId='syn-b'}"), expected([{ points: a }, { points: b }], (x, y) => (y === 0 ? 'Division by zero' : x / y)));
    expectClose(await query("sqrt(ts{externalId='syn-a'}) + ln(ts{externalId='syn-a'} + 50)"), expected([{ points: a }], (x) => (x < 0 ? 'Square root of a negative number' : x + 50 <= 0 ? 'Logarithm' : Math.sqrt(x) + Math.log(x + 50))));
    expectClose(await query("on_error(1 / ts{externalId='syn-b'}, -99)"), expected([{ points: b }], (y) => (y === 0 ? -99 : 1 / y)));
    const zeros = (await query("1 / ts{externalId='syn-b'}")).filter((p) => p.error);
    expect(zeros.length).toBeGreaterThan(0);
    for (const p of zeros) expect(p.error).toMatch(DIVIDE);
  });

  it('a step series keeps its value until its next point', async () => {
    expectClose(await query("ts{externalId='syn-a'} + ts{externalId='syn-step'}"), expected([{ points: a }, { points: s, step: true }], (x, y) => x + y));
  });

  it('interpolates exactly as the direct computation for any points (generated)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 15 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 15 }),
        fc.boolean(),
        async (ta, tb, step) => {
          const pa = ta.sort((x, y) => x - y).map((t) => ({ timestamp: t, value: (t % 17) - 8 }));
          const pb = tb.sort((x, y) => x - y).map((t) => ({ timestamp: t, value: (t % 11) + 1 }));
          n++;
          await seriesWith(`gen-a-${n}`, pa);
          await seriesWith(`gen-b-${n}`, pb, { isStep: step });
          const got = await query(`ts{externalId='gen-a-${n}'} * 3 + ts{externalId='gen-b-${n}'}`);
          expectClose(got, expected([{ points: pa }, { points: pb, step }], (x, y) => x * 3 + y));
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reads series by id and by instance id', async () => {
    const id = await seriesWith('syn-by-id', [{ timestamp: 10, value: 4 }, { timestamp: 20, value: 6 }]);
    await seriesWith('syn-dm', [{ timestamp: 10, value: 1 }, { timestamp: 20, value: 1 }], { instanceId: { space: 'sp', externalId: 'syn-dm' } });
    expect(await query(`ts{id=${id}} + TS{space='sp', externalId='syn-dm'} + ts{id:${id}}`)).toEqual([
      { timestamp: 10, value: 9 },
      { timestamp: 20, value: 13 },
    ]);
  });

  it('maps the values of a string series to numbers; a string elsewhere is a type error', async () => {
    await seriesWith('syn-valve', [], { isString: true });
    ok(await h.post('/timeseries/data', { items: [{ externalId: 'syn-valve', datapoints: [{ timestamp: 0, value: 'OPEN' }, { timestamp: 10, value: 'CLOSED' }, { timestamp: 20, value: 'STUCK' }] }] }));
    expect(await query("map(TS{externalId='syn-valve'}, ['OPEN', 'CLOSED'], [1, 0], -1)")).toEqual([
      { timestamp: 0, value: 1 },
      { timestamp: 10, value: 0 },
      { timestamp: 20, value: -1 },
    ]);
    const typed = await query("ts{externalId='syn-valve'} * 2");
    expect(typed.map((p) => p.error)).toEqual(Array(3).fill(expect.stringMatching(/TYPE_ERROR/)));
    expect((await query("on_error(ts{externalId='syn-valve'} * 2, 5)")).map((p) => p.value)).toEqual([5, 5, 5]);
  });

  it('computes a chain of a thousand operations', async () => {
    expect(await query("ts{externalId='syn-a'} * 0" + '+1'.repeat(999))).toEqual(a.map((p) => ({ timestamp: p.timestamp, value: 999 })));
  });

  it('gives an overflow as an error', async () => {
    await seriesWith('syn-big', [{ timestamp: 1, value: 1e60 }, { timestamp: 2, value: 1 }]);
    const out = await query("ts{externalId='syn-big'} * ts{externalId='syn-big'}");
    expect(out[0].error).toMatch(/OVERFLOW/);
    expect(out[1]).toEqual({ timestamp: 2, value: 1 });
  });

  it('gives at most `limit` points, from the first where every series has a value; the next page starts after the last', async () => {
    const all = await query("ts{externalId='syn-a'} + ts{externalId='syn-b'}");
    const first = await query("ts{externalId='syn-a'} + ts{externalId='syn-b'}", { limit: 7 });
    expect(first).toEqual(all.slice(0, 7));
    const next = await query("ts{externalId='syn-a'} + ts{externalId='syn-b'}", { limit: 7, start: first[6].timestamp + 1 });
    expect(next).toEqual(all.slice(7, 14));
  });
});

describe('aggregates inside references', () => {
  const HOUR = 3_600_000;
  let id: number;
  const points: Point[] = Array.from({ length: 200 }, (_, k) => ({ timestamp: Date.UTC(2024, 2, 30) + k * 17 * 60_000, value: (k * 37) % 23 }));
  beforeAll(async () => {
    id = await seriesWith('syn-agg', points, { unitExternalId: 'temperature:deg_c' });
  });
  const range = { start: points[0].timestamp, end: points[points.length - 1].timestamp + 1 };

  it('are those the data point aggregates give', async () => {
    const direct = ok(await h.post('/timeseries/data/list', { items: [{ id, aggregates: ['average', 'max', 'count'], granularity: '2h', ...range, limit: 1000 }] })).items[0].datapoints;
    const got = await query(`ts{id=${id}, aggregate='average', granularity='2h'} * 2 + TS{id=${id}, aggregate:'MAX', granularity:'2h'} + ts{id=${id}, aggregate='count', granularity='2h'}`, range);
    expectClose(got, direct.map((b: any) => ({ timestamp: b.timestamp, value: b.average * 2 + b.max + b.count })));
  });

  it('align to the time zone of the query, or start at `alignment` plus whole buckets', async () => {
    const zoned = ok(await h.post('/timeseries/data/list', { items: [{ id, aggregates: ['sum'], granularity: '1d', timeZone: 'Europe/Oslo', ...range }] })).items[0].datapoints;
    expect(await query(`ts{id=${id}, aggregate='sum', granularity='1d'}`, { ...range, timeZone: 'Europe/Oslo' })).toEqual(zoned.map((b: any) => ({ timestamp: b.timestamp, value: b.sum })));
    const aligned = await query(`ts{id=${id}, aggregate='sum', granularity='1h', alignment=${HOUR / 2}} * 1000 + ts{id=${id}, aggregate='count', granularity='1h', alignment=${HOUR / 2}}`, range);
    expect(aligned.length).toBeGreaterThan(20);
    for (const bucket of aligned) {
      expect(bucket.timestamp % HOUR).toBe(HOUR / 2);
      const inside = points.filter((p) => p.timestamp >= bucket.timestamp && p.timestamp < bucket.timestamp + HOUR);
      expect(bucket.value).toBe(inside.reduce((sum, p) => sum + p.value, 0) * 1000 + inside.length);
    }
  });

  it('convert to another unit, raw points and aggregates alike', async () => {
    const raw = await query(`ts{id=${id}, targetUnit='temperature:deg_f'}`, range);
    expectClose(raw.slice(0, 10), points.slice(0, 10).map((p) => ({ timestamp: p.timestamp, value: (p.value * 9) / 5 + 32 })));
    const kelvin = await query(`ts{id=${id}, targetUnitSystem='SI'} - ts{id=${id}}`, range);
    expect(kelvin[0].value).toBeCloseTo(273.15, 9);
    const converted = await query(`ts{id=${id}, aggregate='max', granularity='2h', targetUnit='temperature:deg_f'}`, range);
    const direct = ok(await h.post('/timeseries/data/list', { items: [{ id, aggregates: ['max'], granularity: '2h', targetUnit: 'temperature:deg_f', ...range }] })).items[0].datapoints;
    expectClose(converted, direct.map((b: any) => ({ timestamp: b.timestamp, value: b.max })));
  });
});

describe('refusals', () => {
  beforeAll(async () => {
    await seriesWith('r-num', [{ timestamp: 1, value: 1 }]);
    await seriesWith('r-text', [], { isString: true });
  });
  const refused = async (expression: string, extra: Record<string, unknown> = {}) => errorMessage(await h.post('/timeseries/synthetic/query', { items: [{ expression, ...extra }] }), 400);

  it.each([
    ['1 +', /items\[0\]\.expression at position 4: expected a number, a time series, a function or "\(", found the end of the expression/],
    ['(1 + 2', /at position 7: expected "\)" or an operator/],
    ['1 + 2)', /at position 6: expected an operator or the end of the expression, found "\)"/],
    ['2 # 3', /at position 3: unexpected character "#"/],
    ["ts{externalId='x}", /at position 15: a string is not closed/],
    ["ts{colour='red'}", /at position 4: unknown parameter "colour"/],
    ['ts{externalId=3}', /at position 15: externalId takes a quoted string, found "3"/],
    ["ts{id='3'}", /at position 7: id takes a number/],
    ["ts{space='s'}", /at position 1: a time series named by space needs its externalId too/],
    ["ts{id=1, externalId='x'}", /at position 1: a time series is named by id, by externalId, or by space and externalId/],
    ["ts{externalId='r-num', aggregate='average'}", /at position 1: aggregate and granularity go together/],
    ["ts{externalId='r-num', externalId='y'}", /at position 24: the parameter externalId is given twice/],
    ['tan(1)', /at position 1: unknown function "tan"/],
    ['constructor(1)', /at position 1: unknown function "constructor"/],
    ['pow(1)', /at position 6: pow takes 2 arguments, got 1/],
    ['round(1.5, 10)', /round takes a whole number of decimals greater than -10 and less than 10, got 10/],
    ["map(1, ['a', 'b'], [1], 0)", /at position 8: map takes two lists of the same length, got 2 and 1 values/],
    ["map(1, ['a'], ['b'], 0)", /at position 15: map maps to numbers/],
    ["ts{externalId='r-num', aggregate='median', granularity='1h'}", /items\[0\]\.expression at position 1: "median" is not an aggregate of synthetic time series/],
    ["ts{externalId='r-num', aggregate='sum', granularity='1mo', alignment=5}", /alignment applies to granularities in seconds, minutes, hours and days/],
    ["ts{externalId='r-num', aggregate='sum', granularity='1x'}", /items\[0\]\.expression at position 1: granularity: "1x" is not a granularity/],
    ["ts{externalId='r-num', targetUnit='length:parsec'}", /items\[0\]\.expression at position 1: targetUnit/],
    ["ts{externalId='r-num', targetUnit='temperature:deg_f'}", /items\[0\]\.expression at position 1: .*has no unitExternalId/],
    ["ts{externalId='r-text', aggregate='sum', granularity='1h'}", /holds strings; aggregates are available for numeric time series only/],
  ])('%s', async (expression, message) => {
    expect(await refused(expression)).toMatch(message);
  });

  it('an expression too long, too deep, with too many operations, or naming too many series', async () => {
    expect(await refused('1+'.repeat(5000) + '1')).toMatch(/items\[0\]\.expression: the expression has 10001 characters; at most 10000 are allowed/);
    expect(await refused("ts{externalId='r-num'}" + '+1'.repeat(1001))).toMatch(/at position 2023: an expression has at most 1000 operators and function calls/);
    expect(await refused('('.repeat(101) + '1' + ')'.repeat(101))).toMatch(/at position 101: the expression is nested more than 100 deep/);
    expect(await refused(Array.from({ length: 101 }, () => "ts{externalId='r-num'}").join('+'))).toMatch(/at position 2301: an expression refers to at most 100 time series/);
  });

  it('unknown series, with `missing`', async () => {
    const res = await h.post('/timeseries/synthetic/query', { items: [{ expression: "ts{externalId='r-num'} + ts{externalId='nowhere'} + ts{id=12345}" }] });
    expect(errorMessage(res, 400)).toMatch(/not found/);
    expect(res.body.error.missing).toEqual([{ externalId: 'nowhere' }, { id: 12345 }]);
  });

  it('a series outside the scope of the request, as if it did not exist', async () => {
    const signer = await builtInSigner(h);
    const [ds] = ok(await h.post('/datasets', { items: [{ externalId: 'syn-ds' }] })).items;
    await seriesWith('r-scoped', [{ timestamp: 1, value: 1 }], { dataSetId: ds.id });
    await createGroup(h, { name: 'syn reader', members: ['syn reader'], capabilities: [capability('timeSeriesAcl', ['READ'], { datasetScope: { ids: [ds.id] } })] });
    const reader = bearer(await signer.sign({ sub: 'syn reader' }));
    const call = (expression: string) => h.request('POST', '/timeseries/synthetic/query', { items: [{ expression, start: 0, end: 10 }] }, reader);
    expect(ok(await call("ts{externalId='r-scoped'} * 2")).items[0].datapoints).toEqual([{ timestamp: 1, value: 2 }]);
    expect((await call("ts{externalId='r-num'} * 2")).body.error.missing).toEqual([{ externalId: 'r-num' }]);
  });

  it('requests past the limits of items and points, and a window that ends before it starts', async () => {
    const item = { expression: '1' };
    expect(errorMessage(await h.post('/timeseries/synthetic/query', { items: Array(11).fill(item) }), 400)).toMatch(/items/);
    expect(errorMessage(await h.post('/timeseries/synthetic/query', { items: [{ ...item, limit: 10_001 }] }), 400)).toMatch(/limit/);
    expect(await refused('1', { start: 10, end: 10 })).toMatch(/items\[0\]: end \(10\) must be after start \(10\)/);
  });
});
