/**
 * Data points over HTTP: insert and read back (numeric, string, statuses, overwrites), raw queries and their
 * options, latest, delete, what deleting a series takes with it, and every bad input refused with a 400 that
 * says what was wrong, leaving the store as it was.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { Sql, sql } from '../src/storage/sql.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const T0 = Date.UTC(2024, 0, 1);
const UNCERTAIN = 0x40000000;
const BAD = 0x80000000;

let counter = 0;
async function series(fields: Record<string, unknown> = {}): Promise<{ id: number; externalId: string }> {
  const externalId = `dp-${counter++}`;
  const res = await h.post('/timeseries', { items: [{ externalId, ...fields }] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.items[0];
}

async function insert(items: unknown[], headers: Record<string, string> = {}) {
  return h.request('POST', '/timeseries/data', { items }, headers);
}

async function list(body: Record<string, unknown>) {
  const res = await h.post('/timeseries/data/list', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as any[];
}

async function all(ref: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return (await list({ items: [{ ...ref, start: -2208988800000, end: 4102444800000, limit: 100_000, ...extra }] }))[0].datapoints as any[];
}

describe('insert and read back', () => {
  it('stores numeric points by id, externalId and instanceId, overwriting equal timestamps', async () => {
    const a = await series();
    const b = await series({ instanceId: { space: 'sp', externalId: 'dp-instance' } });
    expect((await insert([{ id: a.id, datapoints: [{ timestamp: T0 + 2, value: 2 }, { timestamp: T0, value: 0 }, { timestamp: T0 + 1, value: 1.5 }] }])).status).toBe(200);
    expect((await insert([{ externalId: a.externalId, datapoints: [{ timestamp: T0 + 1, value: -1 }, { timestamp: T0 + 1, value: 7 }] }])).status).toBe(200);
    expect((await insert([{ instanceId: { space: 'sp', externalId: 'dp-instance' }, datapoints: [{ timestamp: -2208988800000, value: 1 }, { timestamp: 4102444799999, value: 2 }] }])).status).toBe(200);
    expect(await all({ id: a.id })).toEqual([
      { timestamp: T0, value: 0 },
      { timestamp: T0 + 1, value: 7 },
      { timestamp: T0 + 2, value: 2 },
    ]);
    const [item] = await list({ items: [{ instanceId: { space: 'sp', externalId: 'dp-instance' }, start: -2208988800000, end: 4102444800000 }] });
    expect(item).toMatchObject({ id: b.id, externalId: b.externalId, instanceId: { space: 'sp', externalId: 'dp-instance' }, isString: false, isStep: false, type: 'numeric' });
    expect(item.datapoints).toEqual([
      { timestamp: -2208988800000, value: 1 },
      { timestamp: 4102444799999, value: 2 },
    ]);
  });

  it('stores string points, with the length limit of the requested version', async () => {
    const s = await series({ isString: true });
    const long = 'é'.repeat(511) + 'a'; // 1023 bytes, 512 characters
    expect((await insert([{ externalId: s.externalId, datapoints: [{ timestamp: 10, value: long }, { timestamp: 20, value: '' }, { timestamp: 30, value: '✓ 测试' }] }])).status).toBe(200);
    const [item] = await list({ items: [{ externalId: s.externalId }] });
    expect(item).toMatchObject({ isString: true, type: 'string' });
    expect(item.datapoints).toEqual([
      { timestamp: 10, value: long },
      { timestamp: 20, value: '' },
      { timestamp: 30, value: '✓ 测试' },
    ]);
    const over = await insert([{ externalId: s.externalId, datapoints: [{ timestamp: 40, value: long + 'a' }] }]);
    expect(errorMessage(over, 400)).toMatch(/items\[0\]\.datapoints\[0\]\.value: must be at most 1023 bytes of UTF-8, got 1024/);
    // Before 2025-09-26 the limit was 255 characters, whatever their bytes.
    const old = { 'svc-version': '20250101' };
    expect((await insert([{ externalId: s.externalId, datapoints: [{ timestamp: 50, value: 'é'.repeat(255) }] }], old)).status).toBe(200);
    expect(errorMessage(await insert([{ externalId: s.externalId, datapoints: [{ timestamp: 60, value: 'a'.repeat(256) }] }], old), 400)).toMatch(
      /must be at most 255 characters, got 256/,
    );
    expect((await all({ externalId: s.externalId })).map((p) => p.timestamp)).toEqual([10, 20, 30, 50]);
  });

  it('offers maxDatapoint and minDatapoint at every version: an addition, which the Python SDK asks for with cdf-version 20230101', async () => {
    const s = await series();
    await insert([{ id: s.id, datapoints: [{ timestamp: 1000, value: 5 }, { timestamp: 2000, value: -5 }] }]);
    const query = { items: [{ id: s.id, start: 0, end: 3_600_000, granularity: '1h', aggregates: ['maxDatapoint', 'minDatapoint'] }] };
    const [item] = await list(query);
    expect(item.datapoints[0]).toMatchObject({ timestamp: 0, maxDatapoint: { timestamp: 1000, value: 5 }, minDatapoint: { timestamp: 2000, value: -5 } });
    for (const headers of <Record<string, string>[]>[{ 'cdf-version': '20230101' }, { 'svc-version': '20250311' }, { 'svc-version': '20230101-beta' }]) {
      const res = await h.request('POST', '/timeseries/data/list', query, headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.body.items[0].datapoints).toEqual(item.datapoints);
    }
  });

  it('keeps statuses; bad points may carry NaN, infinities or no value', async () => {
    const s = await series();
    const points = [
      { timestamp: 1, value: 1 },
      { timestamp: 2, value: 2, status: { code: UNCERTAIN } },
      { timestamp: 3, value: 'NaN', status: { symbol: 'Bad' } },
      { timestamp: 4, value: 'Infinity', status: { code: BAD, symbol: 'Bad' } },
      { timestamp: 5, value: '-Infinity', status: { symbol: 'BadSensorFailure' } },
      { timestamp: 6, status: { code: BAD } },
      { timestamp: 7, value: 7, status: { symbol: 'GoodClamped' } },
      { timestamp: 8, value: 8, status: { symbol: 'Uncertain, High' } },
    ];
    expect((await insert([{ id: s.id, datapoints: points }])).status).toBe(200);
    const everything = await all({ id: s.id }, { ignoreBadDataPoints: false, includeStatus: true });
    expect(everything).toEqual([
      { timestamp: 1, value: 1 },
      { timestamp: 2, value: 2, status: { code: UNCERTAIN, symbol: 'Uncertain' } },
      { timestamp: 3, value: 'NaN', status: { code: BAD, symbol: 'Bad' } },
      { timestamp: 4, value: 'Infinity', status: { code: BAD, symbol: 'Bad' } },
      { timestamp: 5, value: '-Infinity', status: { code: 0x808c0000, symbol: 'BadSensorFailure' } },
      { timestamp: 6, status: { code: BAD, symbol: 'Bad' } },
      { timestamp: 7, value: 7, status: { code: 0x00300000, symbol: 'GoodClamped' } },
      { timestamp: 8, value: 8, status: { code: 0x40000600, symbol: 'Uncertain, High' } },
    ]);
    // Defaults: bad and uncertain points are left out, and statuses are not shown.
    expect(await all({ id: s.id })).toEqual([
      { timestamp: 1, value: 1 },
      { timestamp: 7, value: 7 },
    ]);
    expect((await all({ id: s.id }, { treatUncertainAsBad: false })).map((p) => p.timestamp)).toEqual([1, 2, 7, 8]);
    expect((await all({ id: s.id }, { ignoreBadDataPoints: false })).map((p) => p.timestamp)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('raw queries', () => {
  it('start is inclusive, end exclusive; start defaults to 1970 and end to now', async () => {
    const s = await series();
    const now = Date.now();
    await insert([{ id: s.id, datapoints: [-1000, 0, 500, 1000, now - 60_000, now + 3_600_000].map((timestamp) => ({ timestamp, value: 1 })) }]);
    const ts = async (q: Record<string, unknown>) => (await list({ items: [{ id: s.id, ...q }] }))[0].datapoints.map((p: any) => p.timestamp);
    expect(await ts({})).toEqual([0, 500, 1000, now - 60_000]);
    expect(await ts({ start: 0, end: 1000 })).toEqual([0, 500]);
    expect(await ts({ start: -5000, end: 1 })).toEqual([-1000, 0]);
    expect(await ts({ start: '2m-ago', end: '2h-ahead' })).toEqual([now - 60_000, now + 3_600_000]);
    expect(await ts({ start: 1, end: 1000, includeOutsidePoints: true })).toEqual([0, 500, 1000]);
    expect(await ts({ start: 1, end: 2, includeOutsidePoints: true })).toEqual([0, 500]);
  });

  it('applies top-level defaults with per-item overrides, in request order, skipping unknown ids when asked', async () => {
    const s = await series();
    await insert([{ id: s.id, datapoints: [1, 2, 3, 4].map((timestamp) => ({ timestamp, value: timestamp * 10 })) }]);
    const items = await list({
      items: [{ id: s.id }, { externalId: 'no-such-series' }, { externalId: s.externalId, start: 3, limit: 5 }, { id: s.id, start: 1, end: 2 }],
      start: 2,
      end: 100,
      limit: 1,
      ignoreUnknownIds: true,
    });
    expect(items.map((i) => i.datapoints.map((p: any) => p.timestamp))).toEqual([[2], [3, 4], [1]]);
    expect(items[0].nextCursor).toBeDefined();
    expect(items[1].nextCursor).toBeUndefined();
  });

  it('pages through every point exactly once', async () => {
    const s = await series();
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: 20_000 }), { maxLength: 300, size: 'large' }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 20_000 }), async (times, limit, start) => {
        await h.post('/timeseries/data/delete', { items: [{ id: s.id, inclusiveBegin: 0, exclusiveEnd: 30_000 }] });
        if (times.length) await insert([{ id: s.id, datapoints: times.map((timestamp) => ({ timestamp, value: timestamp })) }]);
        const seen: number[] = [];
        let cursor: string | undefined;
        do {
          const [item] = await list({ items: [{ id: s.id, start, end: 25_000, limit, ...(cursor ? { cursor } : {}) }] });
          expect(item.datapoints.length).toBeLessThanOrEqual(limit);
          seen.push(...item.datapoints.map((p: any) => p.timestamp));
          cursor = item.nextCursor;
        } while (cursor);
        expect(seen).toEqual(times.filter((t) => t >= start).sort((a, b) => a - b));
      }),
      { numRuns: 25 },
    );
  });
});

describe('aggregates', () => {
  it('pages through buckets with cursors, each bucket once', async () => {
    const s = await series();
    // Every 10 minutes for three days, with a gap of a day in the middle.
    const points = [];
    for (let t = T0; t < T0 + 3 * 86_400_000; t += 600_000) if (t < T0 + 86_400_000 || t >= T0 + 2 * 86_400_000) points.push({ timestamp: t, value: (t / 600_000) % 7 });
    expect((await insert([{ id: s.id, datapoints: points }])).status).toBe(200);
    const query = { id: s.id, start: T0 - 3_600_000, end: T0 + 4 * 86_400_000, aggregates: ['count', 'average', 'interpolation'], granularity: '1h' };
    const [whole] = await list({ items: [{ ...query, limit: 10_000 }] });
    expect(whole.nextCursor).toBeUndefined();
    for (const limit of [1, 7, 50]) {
      const pages: any[] = [];
      let cursor: string | undefined;
      do {
        const [item] = await list({ items: [{ ...query, limit, ...(cursor ? { cursor } : {}) }] });
        expect(item.datapoints.length).toBeLessThanOrEqual(limit);
        pages.push(...item.datapoints);
        cursor = item.nextCursor;
      } while (cursor);
      expect(pages).toEqual(whole.datapoints);
    }
    // The hours of the day without points are left out: nothing is interpolated across a gap of a day.
    expect(whole.datapoints.filter((b: any) => b.timestamp >= T0 + 86_400_000 && b.timestamp < T0 + 2 * 86_400_000)).toEqual([]);
    expect(whole.datapoints.length).toBe(48);
  });

  it('gives the same aggregates whether points arrive at once or appended in small batches', async () => {
    const once = await series();
    const appended = await series();
    // Dense enough that every quarter hour holds a stored summary, with a Bad point now and then.
    const points = Array.from({ length: 3000 }, (_, i) => ({
      timestamp: T0 + i * 997,
      value: Math.sin(i / 50) * 10,
      ...(i % 97 === 0 ? { status: { code: BAD } } : {}),
    }));
    expect((await insert([{ id: once.id, datapoints: points }])).status).toBe(200);
    for (let i = 0; i < points.length; i += 250) expect((await insert([{ id: appended.id, datapoints: points.slice(i, i + 250) }])).status).toBe(200);
    for (const granularity of ['15m', '1h', '1d']) {
      const q = { start: T0, end: T0 + 86_400_000, granularity, aggregates: ['average', 'count', 'countBad', 'continuousVariance', 'totalVariation', 'durationBad', 'max'] };
      const [a, b] = await list({ items: [{ id: once.id, ...q }, { id: appended.id, ...q }] });
      expect(a.datapoints.length).toBeGreaterThan(0);
      b.datapoints.forEach((bucket: Record<string, number>, i: number) => {
        for (const [key, value] of Object.entries(bucket)) expect(value, `${granularity} ${key}`).toBeCloseTo(a.datapoints[i][key], 6);
      });
    }
    const db = h.strata.services.db;
    expect((await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM datapoint_rollups WHERE series_id = ${appended.id} AND level = 1`))!.n).toBeGreaterThan(0);
  });

  it('aligns days to the time zone, with 23- and 25-hour days at daylight-saving changes', async () => {
    const s = await series({ isStep: true });
    const points = [];
    for (let t = Date.UTC(2024, 2, 28); t < Date.UTC(2024, 3, 3); t += 3_600_000) points.push({ timestamp: t, value: 1 });
    for (let t = Date.UTC(2024, 10, 1); t < Date.UTC(2024, 10, 6); t += 3_600_000) points.push({ timestamp: t, value: 1 });
    expect((await insert([{ id: s.id, datapoints: points }])).status).toBe(200);
    const days = async (timeZone: string, start: number, end: number) => {
      const [item] = await list({ items: [{ id: s.id, start, end, aggregates: ['count', 'durationGood'], granularity: '1d', timeZone }] });
      return item.datapoints.map((b: any) => [new Date(b.timestamp).toISOString(), b.count]);
    };
    expect(await days('Europe/Oslo', Date.UTC(2024, 2, 30), Date.UTC(2024, 3, 1))).toEqual([
      ['2024-03-29T23:00:00.000Z', 24],
      ['2024-03-30T23:00:00.000Z', 23],
      ['2024-03-31T22:00:00.000Z', 24],
    ]);
    expect(await days('America/New_York', Date.UTC(2024, 10, 3, 12), Date.UTC(2024, 10, 4, 12))).toEqual([
      ['2024-11-03T04:00:00.000Z', 25],
      ['2024-11-04T05:00:00.000Z', 24],
    ]);
    expect(await days('Asia/Kolkata', Date.UTC(2024, 2, 29), Date.UTC(2024, 2, 30))).toEqual([
      ['2024-03-28T18:30:00.000Z', 24],
      ['2024-03-29T18:30:00.000Z', 24],
    ]);
    expect(await days('UTC+05:30', Date.UTC(2024, 2, 29), Date.UTC(2024, 2, 29, 12))).toEqual([['2024-03-28T18:30:00.000Z', 24]]);
  });

  it('gives step and linear series their own interpolation', async () => {
    const lin = await series();
    const step = await series({ isStep: true });
    const points = [
      { timestamp: 0, value: 0 },
      { timestamp: 3_000_000, value: 10 },
    ];
    await insert([{ id: lin.id, datapoints: points }, { id: step.id, datapoints: points }]);
    const q = { start: 0, end: 3_600_000, aggregates: ['average', 'interpolation', 'stepInterpolation', 'totalVariation'], granularity: '30m' };
    const [l, st] = await list({ items: [{ id: lin.id, ...q }, { id: step.id, ...q }] });
    // Linear: 0 rising to 6 at 30m, to 10 at 50m, then nothing after the last point.
    expect(l.datapoints).toEqual([
      { timestamp: 0, average: 3, interpolation: 0, stepInterpolation: 0, totalVariation: 6 },
      { timestamp: 1_800_000, average: 8, interpolation: 6, stepInterpolation: 0, totalVariation: 4 },
    ]);
    // Step: 0 until 50m, then 10 held to the end of its bucket.
    expect(st.datapoints).toEqual([
      { timestamp: 0, average: 0, interpolation: 0, stepInterpolation: 0, totalVariation: 0 },
      { timestamp: 1_800_000, average: 10 / 3, interpolation: 0, stepInterpolation: 0, totalVariation: 10 },
    ]);
  });
});

describe('latest', () => {
  it('answers in request order with the last point before `before`, honouring status options', async () => {
    const a = await series();
    const b = await series({ isString: true });
    const empty = await series();
    await insert([
      { id: a.id, datapoints: [{ timestamp: 10, value: 1 }, { timestamp: 20, value: 2, status: { code: UNCERTAIN } }, { timestamp: 30, status: { code: BAD } }] },
      { id: b.id, datapoints: [{ timestamp: 5, value: 'x' }] },
    ]);
    const res = await h.post('/timeseries/data/latest', {
      items: [{ id: b.id }, { externalId: 'nope' }, { id: a.id }, { id: a.id, treatUncertainAsBad: false, includeStatus: true }, { id: a.id, ignoreBadDataPoints: false, includeStatus: true }, { id: a.id, before: 10 }, { id: empty.id }],
      ignoreUnknownIds: true,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items.map((i: any) => [i.id, i.datapoints])).toEqual([
      [b.id, [{ timestamp: 5, value: 'x' }]],
      [a.id, [{ timestamp: 10, value: 1 }]],
      [a.id, [{ timestamp: 20, value: 2, status: { code: UNCERTAIN, symbol: 'Uncertain' } }]],
      [a.id, [{ timestamp: 30, status: { code: BAD, symbol: 'Bad' } }]],
      [a.id, []],
      [empty.id, []],
    ]);
    const missing = await h.post('/timeseries/data/latest', { items: [{ id: a.id }, { externalId: 'nope' }] });
    expect(errorMessage(missing, 400)).toMatch(/not found/);
    expect(missing.body.error.missing).toEqual([{ externalId: 'nope' }]);
  });

  it('reaches back past stored points the treatment leaves out, however many', async () => {
    // 100 Good points, then 3000 Bad ones: the last Good point lies several chunks back.
    const s = await series();
    const datapoints = Array.from({ length: 3100 }, (_, i) => (i < 100 ? { timestamp: T0 + i, value: i } : { timestamp: T0 + i, value: i, status: { code: BAD } }));
    await insert([{ id: s.id, datapoints }]);
    const res = await h.post('/timeseries/data/latest', { items: [{ id: s.id }, { id: s.id, ignoreBadDataPoints: false }, { id: s.id, before: T0 + 50 }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items.map((i: any) => i.datapoints)).toEqual([[{ timestamp: T0 + 99, value: 99 }], [{ timestamp: T0 + 3099, value: 3099 }], [{ timestamp: T0 + 49, value: 49 }]]);
  });
});

describe('concurrent writes', () => {
  it('to one series all count, in its points and in its aggregates', async () => {
    const writers = 8;
    const perWriter = 900;
    // Rounds of writers whose points interleave with every other's, over two hours of 1 s data.
    for (let round = 0; round < 3; round++) {
      const s = await series();
      const writes = Array.from({ length: writers }, (_, w) =>
        insert([{ id: s.id, datapoints: Array.from({ length: perWriter }, (_, i) => ({ timestamp: T0 + (i * writers + w) * 1000, value: w })) }]),
      );
      for (const res of await Promise.all(writes)) expect(res.status, JSON.stringify(res.body)).toBe(200);
      const points = await all({ id: s.id });
      expect(points.length).toBe(writers * perWriter);
      points.forEach((p, k) => expect(p).toEqual({ timestamp: T0 + k * 1000, value: k % writers }));
      const [hours] = await list({ items: [{ id: s.id, start: T0, end: T0 + 86_400_000, granularity: '1h', aggregates: ['count', 'sum'] }] });
      const sumOf = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => (from + i) % writers).reduce((x, y) => x + y, 0);
      expect(hours.datapoints).toEqual([
        { timestamp: T0, count: 3600, sum: sumOf(0, 3600) },
        { timestamp: T0 + 3_600_000, count: 3600, sum: sumOf(3600, 7200) },
      ]);
    }
  });
});

describe('delete', () => {
  it('deletes [inclusiveBegin, exclusiveEnd), or the one point at inclusiveBegin', async () => {
    const s = await series();
    await insert([{ id: s.id, datapoints: Array.from({ length: 3000 }, (_, i) => ({ timestamp: i * 1000, value: i })) }]);
    const del = (items: unknown[]) => h.post('/timeseries/data/delete', { items });
    expect((await del([{ id: s.id, inclusiveBegin: 1000, exclusiveEnd: 5000 }, { externalId: s.externalId, inclusiveBegin: 2_000_000 }])).status).toBe(200);
    const left = (await all({ id: s.id })).map((p) => p.timestamp);
    expect(left.length).toBe(2995);
    expect(left.slice(0, 3)).toEqual([0, 5000, 6000]);
    expect(left).not.toContain(2_000_000);
    const [agg] = await list({ items: [{ id: s.id, start: 0, end: 3_000_000, aggregates: ['count', 'sum'], granularity: '1d' }] });
    expect(agg.datapoints).toEqual([{ timestamp: 0, count: 2995, sum: (2999 * 3000) / 2 - (1 + 2 + 3 + 4) - 2000 }]);
  });

  it('deleting a time series deletes its points', async () => {
    const s = await series();
    await insert([{ id: s.id, datapoints: Array.from({ length: 2000 }, (_, i) => ({ timestamp: i * 1000, value: i })) }]);
    const db = h.strata.services.db;
    const rows = async (table: string) => (await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ${Sql.raw(table)} WHERE series_id = ${s.id}`))!.n;
    expect(await rows('datapoint_chunks')).toBeGreaterThan(0);
    expect(await rows('datapoint_rollups')).toBeGreaterThan(0);
    expect((await h.post('/timeseries/delete', { items: [{ id: s.id }] })).status).toBe(200);
    expect(await rows('datapoint_chunks')).toBe(0);
    expect(await rows('datapoint_rollups')).toBe(0);
    const again = await h.post('/timeseries', { items: [{ externalId: s.externalId }] });
    expect(await all({ id: again.body.items[0].id })).toEqual([]);
    expect(errorMessage(await h.post('/timeseries/data/list', { items: [{ id: s.id }] }), 400)).toMatch(/not found/);
  });
});

describe('bad input is refused with a 400 that says what was wrong, and changes nothing', () => {
  it('on insert', async () => {
    const num = await series();
    const str = await series({ isString: true });
    await insert([{ id: num.id, datapoints: [{ timestamp: 1, value: 1 }] }, { id: str.id, datapoints: [{ timestamp: 1, value: 'a' }] }]);
    const cases: Array<[unknown[], RegExp]> = [
      [[{ id: num.id, datapoints: [{ timestamp: -2208988800001, value: 1 }] }], /items\[0\]\.datapoints\[0\]\.timestamp: must be from -2208988800000 \(1900-01-01\) to 4102444799999/],
      [[{ id: num.id, datapoints: [{ timestamp: 4102444800000, value: 1 }] }], /items\[0\]\.datapoints\[0\]\.timestamp: must be from/],
      [[{ id: num.id, datapoints: [{ timestamp: 1.5, value: 1 }] }], /datapoints\[0\]\.timestamp: expected an integer/],
      [[{ id: num.id, datapoints: [{ value: 1 }] }], /datapoints\[0\]: missing required property "timestamp"/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 'NaN' }] }], /datapoints\[0\]\.value: "NaN" is allowed only on a point with a Bad status/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 'Infinity', status: { code: UNCERTAIN } }] }], /"Infinity" is allowed only on a point with a Bad status/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 1e100 }] }], /datapoints\[0\]\.value: must be greater than -1e100 and less than 1e100/],
      [[{ id: num.id, datapoints: [{ timestamp: 2 }] }], /datapoints\[0\]\.value: missing; only a point with a Bad status may leave out its value/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 'abc' }] }], /datapoints\[0\]\.value: time series "dp-\d+" is numeric; expected a number, got a string/],
      [[{ id: str.id, datapoints: [{ timestamp: 2, value: 3 }] }], /datapoints\[0\]\.value: time series "dp-\d+" holds strings; expected a string, got a number/],
      [[{ id: str.id, datapoints: [{ timestamp: 2, value: 'x'.repeat(1024) }] }], /must be at most 1023 bytes of UTF-8, got 1024/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 1, status: { symbol: 'Fine' } }] }], /datapoints\[0\]\.status\.symbol: "Fine" is not a known status symbol/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 1, status: { code: 0xc0000000 } }] }], /status\.code: 0xC0000000 has the reserved severity bits 11/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 1, status: { code: 0, symbol: 'Bad' } }] }], /status: code 0 and symbol "Bad" name different statuses/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 1, extra: true }] }], /datapoints\[0\]: unknown property "extra"/],
      [[{ id: num.id, datapoints: [{ timestamp: 2, value: 1 }] }, { externalId: 'no-such-series', datapoints: [] }], /not found/],
      [[{ id: num.id, datapoints: [] }, { externalId: num.externalId, datapoints: [{ timestamp: 2, value: 1 }] }], /same item more than once/],
      [[{ id: num.id, externalId: num.externalId, datapoints: [] }], /items\[0\]: give exactly one of "id", "externalId" and "instanceId"/],
      [[{ id: num.id, datapoints: Array.from({ length: 100_001 }, (_, i) => ({ timestamp: i, value: 1 })) }], /datapoints: must have at most 100000 items/],
      [
        [{ id: num.id, datapoints: Array.from({ length: 60_000 }, (_, i) => ({ timestamp: i, value: 1 })) }, { id: str.id, datapoints: Array.from({ length: 40_001 }, (_, i) => ({ timestamp: i, value: 'a' })) }],
        /items: at most 100000 data points per request \(across all items\), got 100001/,
      ],
    ];
    for (const [items, message] of cases) {
      const res = await insert(items);
      expect(res.status, JSON.stringify(items).slice(0, 200)).toBe(res.body.error?.duplicated ? 422 : 400);
      expect(res.body.error.message).toMatch(message);
    }
    const unknown = await insert([{ externalId: 'no-such-series', datapoints: [] }, { instanceId: { space: 's', externalId: 'nope' }, datapoints: [] }]);
    expect(unknown.body.error.missing).toEqual([{ externalId: 'no-such-series' }, { instanceId: { space: 's', externalId: 'nope' } }]);
    expect(await all({ id: num.id })).toEqual([{ timestamp: 1, value: 1 }]);
    expect(await all({ id: str.id })).toEqual([{ timestamp: 1, value: 'a' }]);
  });

  it('on list', async () => {
    const num = await series();
    const str = await series({ isString: true });
    const other = await series();
    const [page] = await list({ items: [{ id: num.id, limit: 1 }] });
    await insert([{ id: num.id, datapoints: [{ timestamp: 1, value: 1 }, { timestamp: 2, value: 2 }] }]);
    const [paged] = await list({ items: [{ id: num.id, limit: 1 }] });
    expect(page.nextCursor).toBeUndefined();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ items: [{ id: num.id, aggregates: ['average'] }] }, /items\[0\]: aggregates need a granularity/],
      [{ items: [{ id: num.id, granularity: '1h' }] }, /items\[0\]: granularity is given without aggregates/],
      ...['0h', '1.5h', '100001h', '5x', '121s', '121m'].map((g): [Record<string, unknown>, RegExp] => [
        { items: [{ id: num.id }], aggregates: ['count'], granularity: g },
        /items\[0\]\.granularity: /,
      ]),
      [{ items: [{ id: num.id, aggregates: ['count'], granularity: '1h', timeZone: 'Mars/Olympus' }] }, /items\[0\]\.timeZone: unknown time zone "Mars\/Olympus"/],
      [{ items: [{ id: num.id, aggregates: ['count'], granularity: '1h', timeZone: 'UTC+05:10' }] }, /items\[0\]\.timeZone: "UTC\+05:10" is not a supported offset/],
      [{ items: [{ id: num.id, aggregates: ['count'], granularity: '1h', includeOutsidePoints: true }] }, /includeOutsidePoints applies to raw points only/],
      [{ items: [{ id: num.id, includeOutsidePoints: true, cursor: paged.nextCursor }] }, /includeOutsidePoints cannot be combined with a cursor/],
      [{ items: [{ id: other.id, limit: 1, cursor: paged.nextCursor }] }, /items\[0\]\.cursor: this cursor does not belong to this query/],
      [{ items: [{ id: num.id, limit: 1, includeStatus: true, cursor: paged.nextCursor }] }, /items\[0\]\.cursor: this cursor does not belong to this query/],
      [{ items: [{ id: num.id, limit: 1, aggregates: ['count'], granularity: '1s', cursor: paged.nextCursor }] }, /items\[0\]\.cursor: this cursor does not belong to this query/],
      [{ items: [{ id: num.id, limit: 1, cursor: 'garbage' }] }, /items\[0\]\.cursor: not a cursor issued by this server/],
      [{ items: [{ id: num.id, limit: 60_000 }, { id: other.id, limit: 40_001 }] }, /the limits of the raw queries add up to 100001; at most 100000/],
      [{ items: [{ id: num.id, aggregates: ['count'], granularity: '1h', limit: 10_001 }] }, /items\[0\]\.limit: at most 10000 for aggregates/],
      [{ items: [{ id: num.id }], limit: 100_001 }, /limit: must be <= 100000/],
      [{ items: Array.from({ length: 101 }, () => ({ id: num.id })) }, /items: must have at most 100 items/],
      [{ items: [{ id: str.id, aggregates: ['count'], granularity: '1h' }] }, /items\[0\]: time series "dp-\d+" holds strings; aggregates are available for numeric time series only/],
      [{ items: [{ id: num.id, start: 10, end: 10 }] }, /items\[0\]: end \(10\) must be after start \(10\)/],
      [{ items: [{ id: num.id, start: '2 days ago' }] }, /items\[0\]\.start: "2 days ago" is not a time/],
      [{ items: [{ id: num.id, aggregates: ['median'], granularity: '1h' }] }, /items\[0\]\.aggregates\[0\]/],
      [{ items: [{ id: num.id, targetUnit: 'temperature:deg_f' }] }, /items\[0\]\.targetUnit: time series "dp-\d+" has no unitExternalId, so its values have no unit to convert from/],
      [{ items: [{ id: num.id }, { externalId: 'no-such-series' }] }, /not found/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await h.post('/timeseries/data/list', body), 400)).toMatch(message);
    const missing = await h.post('/timeseries/data/list', { items: [{ externalId: 'no-such-series' }] });
    expect(missing.body.error.missing).toEqual([{ externalId: 'no-such-series' }]);
  });

  it('on latest and delete', async () => {
    const num = await series();
    await insert([{ id: num.id, datapoints: [{ timestamp: 1, value: 1 }] }]);
    expect(errorMessage(await h.post('/timeseries/data/latest', { items: Array.from({ length: 101 }, () => ({ id: num.id })) }), 400)).toMatch(/at most 100 items/);
    expect(errorMessage(await h.post('/timeseries/data/latest', { items: [{ id: num.id, before: 'yesterday' }] }), 400)).toMatch(/items\[0\]\.before: "yesterday" is not a time/);
    const del = (items: unknown[]) => h.post('/timeseries/data/delete', { items });
    expect(errorMessage(await del([{ id: num.id, inclusiveBegin: 5, exclusiveEnd: 5 }]), 400)).toMatch(/items\[0\]\.exclusiveEnd: must be after inclusiveBegin \(5\), got 5/);
    expect(errorMessage(await del([{ id: num.id }]), 400)).toMatch(/items\[0\]: missing required property "inclusiveBegin"/);
    expect(errorMessage(await del([{ id: num.id, inclusiveBegin: -2208988800001 }]), 400)).toMatch(/items\[0\]\.inclusiveBegin: must be >= -2208988800000/);
    const unknown = await del([{ id: num.id, inclusiveBegin: 0, exclusiveEnd: 10 }, { externalId: 'no-such-series', inclusiveBegin: 0 }]);
    expect(errorMessage(unknown, 400)).toMatch(/not found/);
    expect(unknown.body.error.missing).toEqual([{ externalId: 'no-such-series' }]);
    expect(await all({ id: num.id })).toEqual([{ timestamp: 1, value: 1 }]);
  });
});

describe('scoped access', () => {
  let scopedHarness: Harness;
  let token: string;
  beforeAll(async () => {
    scopedHarness = await startHarness({}, { STRATA_CLIENTS: JSON.stringify([{ clientId: 'dp-scoped', clientSecret: 'dp-secret', groups: ['dp-a'] }]) });
    const [a, b] = (await scopedHarness.post('/datasets', { items: [{ externalId: 'dp-ds-a' }, { externalId: 'dp-ds-b' }] })).body.items;
    await scopedHarness.post('/timeseries', { items: [{ externalId: 'in-a', dataSetId: a.id }, { externalId: 'in-b', dataSetId: b.id }] });
    await scopedHarness.post('/timeseries/data', { items: [{ externalId: 'in-b', datapoints: [{ timestamp: 1, value: 1 }] }] });
    await createGroup(scopedHarness, { name: 'Data set A', sourceId: 'dp-a', capabilities: [capability('timeSeriesAcl', ['READ', 'WRITE'], { datasetScope: { ids: [a.id] } })] });
    token = await clientToken(scopedHarness, 'dp-scoped', 'dp-secret');
  });
  afterAll(() => scopedHarness.close());

  it('reads and writes points of series in scope only; others are unknown', async () => {
    const call = (path: string, body: unknown) => scopedHarness.request('POST', path, body, bearer(token));
    expect((await call('/timeseries/data', { items: [{ externalId: 'in-a', datapoints: [{ timestamp: 1, value: 1 }] }] })).status).toBe(200);
    const write = await call('/timeseries/data', { items: [{ externalId: 'in-b', datapoints: [{ timestamp: 2, value: 2 }] }] });
    expect(errorMessage(write, 400)).toMatch(/not found/);
    expect(write.body.error.missing).toEqual([{ externalId: 'in-b' }]);
    expect(errorMessage(await call('/timeseries/data/list', { items: [{ externalId: 'in-b' }] }), 400)).toMatch(/not found/);
    expect(errorMessage(await call('/timeseries/data/latest', { items: [{ externalId: 'in-b' }] }), 400)).toMatch(/not found/);
    expect(errorMessage(await call('/timeseries/data/delete', { items: [{ externalId: 'in-b', inclusiveBegin: 0, exclusiveEnd: 10 }] }), 400)).toMatch(/not found/);
    const read = await call('/timeseries/data/list', { items: [{ externalId: 'in-a' }, { externalId: 'in-b' }], ignoreUnknownIds: true });
    expect(read.body.items.map((i: any) => [i.externalId, i.datapoints])).toEqual([['in-a', [{ timestamp: 1, value: 1 }]]]);
    const all = await scopedHarness.post('/timeseries/data/list', { items: [{ externalId: 'in-b' }] });
    expect(all.body.items[0].datapoints).toEqual([{ timestamp: 1, value: 1 }]);
  });
});
