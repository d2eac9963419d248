/**
 * `POST /streams/{id}/records/aggregate` over HTTP: metrics, unique values (most frequent first, `size`),
 * number and time histograms (calendar and fixed intervals, empty buckets between, hard bounds), filters
 * buckets, aggregates nested in buckets, moving functions, units and typing, the limits of a tree, the
 * properties each aggregate takes, and the aggregate identifier rule on both sides of its date (20260325).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { createStream, ok, reading, setUpSchema, SPACE } from './support/records.js';

let h: Harness;
const P = (p: string) => [SPACE, 'Reading', p];

beforeAll(async () => {
  h = await startHarness();
  await setUpSchema(h);
  await createStream(h, 'games', 'BasicLiveData');
  const games: Array<[string, string, number, string]> = [
    ['g1', 'ann', 10, '2025-05-25T08:00:00Z'],
    ['g2', 'ann', 20, '2025-05-25T20:00:00Z'],
    ['g3', 'bob', 5, '2025-05-25T09:00:00Z'],
    ['g4', 'bob', 7, '2025-05-27T10:00:00Z'],
    ['g5', 'cid', 30, '2025-05-27T11:00:00Z'],
    ['g6', 'ann', 1, '2025-06-02T00:00:00Z'],
  ];
  await ok(h, '/streams/games/records', { items: games.map(([id, who, points, at]) => reading(id, { site: who, count: points, value: points / 2, pressure: points, at })) }, 202);
  await ok(h, '/streams/games/records', { items: [reading('empty', {})] }, 202);
});
afterAll(() => h.close());

const aggregate = (aggregates: Record<string, unknown>, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  h.request('POST', '/streams/games/records/aggregate', { aggregates, ...extra }, headers);
const answer = async (aggregates: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const res = await aggregate(aggregates, extra);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.aggregates;
};

describe('metrics', () => {
  it('counts, sums, averages and finds extremes, over the records a filter selects', async () => {
    const all = await answer({
      n: { count: {} },
      withAt: { count: { property: P('at') } },
      sum: { sum: { property: P('count') } },
      avg: { avg: { property: P('count') } },
      min: { min: { property: P('at') } },
    });
    expect(all).toEqual({ n: { count: 7 }, withAt: { count: 6 }, sum: { sum: 73 }, avg: { avg: 73 / 6 }, min: { min: Date.parse('2025-05-25T08:00:00Z') } });
    const some = await answer({ max: { max: { property: P('count') } }, created: { max: { property: ['createdTime'] } } }, { filter: { equals: { property: P('site'), value: 'bob' } } });
    expect(some.max).toEqual({ max: 7 });
    expect(some.created.max).toBeGreaterThan(0);
    const none = await answer({ n: { count: {} }, s: { sum: { property: P('count') } }, a: { avg: { property: P('count') } } }, { filter: { equals: { property: P('site'), value: 'nobody' } } });
    expect(none).toEqual({ n: { count: 0 }, s: { sum: 0 }, a: { avg: null } });
  });
});

describe('buckets', () => {
  it('groups by unique values, most frequent first, with aggregates in each bucket', async () => {
    const res = await answer({
      players: { uniqueValues: { property: P('site'), size: 2, aggregates: { total: { sum: { property: P('count') } }, best: { max: { property: P('count') } } } } },
      spaces: { uniqueValues: { property: ['space'] } },
    });
    expect(res.players).toEqual({
      uniqueValueBuckets: [
        { value: 'ann', count: 3, aggregates: { total: { sum: 31 }, best: { max: 20 } } },
        { value: 'bob', count: 2, aggregates: { total: { sum: 12 }, best: { max: 7 } } },
      ],
    });
    expect(res.spaces).toEqual({ uniqueValueBuckets: [{ value: SPACE, count: 7 }] });
  });

  it('makes time histograms by calendar and fixed intervals, empty buckets between, nested buckets inside', async () => {
    const res = await answer({
      daily: {
        timeHistogram: {
          calendarInterval: '1d',
          property: P('at'),
          aggregates: { avg: { avg: { property: P('count') } }, who: { uniqueValues: { property: P('site'), aggregates: { pts: { sum: { property: P('count') } } } } } },
        },
      },
    });
    const days = res.daily.timeHistogramBuckets;
    expect(days.map((b: any) => [b.intervalStart, b.count])).toEqual([
      ['2025-05-25T00:00:00Z', 3],
      ['2025-05-26T00:00:00Z', 0],
      ['2025-05-27T00:00:00Z', 2],
      ['2025-05-28T00:00:00Z', 0],
      ['2025-05-29T00:00:00Z', 0],
      ['2025-05-30T00:00:00Z', 0],
      ['2025-05-31T00:00:00Z', 0],
      ['2025-06-01T00:00:00Z', 0],
      ['2025-06-02T00:00:00Z', 1],
    ]);
    expect(days[0].aggregates).toEqual({
      avg: { avg: 35 / 3 },
      who: { uniqueValueBuckets: [{ value: 'ann', count: 2, aggregates: { pts: { sum: 30 } } }, { value: 'bob', count: 1, aggregates: { pts: { sum: 5 } } }] },
    });
    expect(days[1].aggregates).toEqual({ avg: { avg: null }, who: { uniqueValueBuckets: [] } });
    const weekly = await answer({ w: { timeHistogram: { calendarInterval: '1w', property: P('at') } }, m: { timeHistogram: { calendarInterval: '1M', property: P('at') } } });
    // ISO weeks start on Mondays: Sunday 2025-05-25 is in the week of 2025-05-19.
    expect(weekly.w.timeHistogramBuckets).toEqual([
      { intervalStart: '2025-05-19T00:00:00Z', count: 3 },
      { intervalStart: '2025-05-26T00:00:00Z', count: 2 },
      { intervalStart: '2025-06-02T00:00:00Z', count: 1 },
    ]);
    expect(weekly.m.timeHistogramBuckets).toEqual([
      { intervalStart: '2025-05-01T00:00:00Z', count: 5 },
      { intervalStart: '2025-06-01T00:00:00Z', count: 1 },
    ]);
    const fixed = await answer({ f: { timeHistogram: { fixedInterval: '12h', property: P('at'), hardBounds: { min: '2025-05-27T00:00:00Z', max: '2025-06-01T00:00:00Z' } } } });
    expect(fixed.f.timeHistogramBuckets).toEqual([{ intervalStart: '2025-05-27T00:00:00Z', count: 2 }]);
  });

  it('makes number histograms, in the units asked for, within hard bounds', async () => {
    const res = await answer({ h: { numberHistogram: { property: P('count'), interval: 10 } }, b: { numberHistogram: { property: P('count'), interval: 10, hardBounds: { min: 10, max: 20 } } } });
    expect(res.h.numberHistogramBuckets).toEqual([
      { intervalStart: 0, count: 3 },
      { intervalStart: 10, count: 1 },
      { intervalStart: 20, count: 1 },
      { intervalStart: 30, count: 1 },
    ]);
    expect(res.b.numberHistogramBuckets).toEqual([
      { intervalStart: 10, count: 1 },
      { intervalStart: 20, count: 1 },
    ]);
    // pressure is in bar; 10 bar is 1 MPa = 1,000,000 Pa.
    const pa = await answer({ h: { numberHistogram: { property: P('pressure'), interval: 1_000_000 } }, avg: { avg: { property: P('pressure') } } }, {
      targetUnits: { properties: [{ property: P('pressure'), unit: { externalId: 'pressure:pa' } }] },
      includeTyping: true,
    });
    expect(pa.h.numberHistogramBuckets.map((b: any) => [b.intervalStart, b.count])).toEqual([
      [0, 3],
      [1_000_000, 1],
      [2_000_000, 1],
      [3_000_000, 1],
    ]);
    expect(pa.avg.avg).toBeCloseTo((73 / 6) * 100_000, 3);
    const typed = await aggregate({ avg: { avg: { property: P('pressure') } } }, { targetUnits: { unitSystemName: 'SI' }, includeTyping: true });
    expect(typed.body.typing[SPACE].Reading.pressure.type).toEqual({ type: 'float64', list: false, unit: { externalId: 'pressure:pa' } });
  });

  it('makes a bucket per filter, and moving functions over histogram buckets', async () => {
    const res = await answer({
      split: {
        filters: {
          filters: [{ range: { property: P('at'), lt: '2025-05-26T00:00:00Z' } }, { range: { property: P('at'), gte: '2025-05-26T00:00:00Z' } }],
          aggregates: { best: { max: { property: P('count') } } },
        },
      },
      daily: {
        timeHistogram: {
          calendarInterval: '1d',
          property: P('at'),
          hardBounds: { max: '2025-05-28T00:00:00Z' },
          aggregates: {
            points: { sum: { property: P('count') } },
            twoDayCount: { movingFunction: { bucketsPath: '_count', window: 2, function: 'MovingFunctions.sum' } },
            twoDayMax: { movingFunction: { bucketsPath: 'points', window: 2, function: 'MovingFunctions.max' } },
          },
        },
      },
    });
    expect(res.split.filterBuckets).toEqual([
      { count: 3, aggregates: { best: { max: 20 } } },
      { count: 3, aggregates: { best: { max: 30 } } },
    ]);
    // The window holds the buckets before each one, not the bucket itself.
    expect(res.daily.timeHistogramBuckets.map((b: any) => [b.count, b.aggregates.twoDayCount.fnValue, b.aggregates.twoDayMax.fnValue])).toEqual([
      [3, 0, null],
      [0, 3, 35],
      [2, 3, 35],
    ]);
    expect(errorMessage(await aggregate({ m: { movingFunction: { bucketsPath: '_count', window: 2, function: 'MovingFunctions.sum' } } }), 400)).toContain(
      'a movingFunction goes among the aggregates of a numberHistogram or timeHistogram',
    );
  });
});

describe('refused aggregates', () => {
  it('refuses properties an aggregate does not take, and trees past their limits', async () => {
    const bad = async (aggregates: Record<string, unknown>) => errorMessage(await aggregate(aggregates), 400);
    expect(await bad({ a: { avg: { property: P('site') } } })).toBe('aggregates.a.avg.property: ["rs","Reading","site"] is text; this aggregate takes a number property of a container');
    expect(await bad({ a: { avg: { property: ['createdTime'] } } })).toContain('is a field of the record');
    expect(await bad({ u: { uniqueValues: { property: P('labels') } } })).toContain('is list of text');
    expect(await bad({ t: { timeHistogram: { property: P('count'), calendarInterval: '1d' } } })).toContain('takes a timestamp property');
    expect(await bad({ t: { timeHistogram: { property: P('at') } } })).toBe('aggregates.t.timeHistogram: give exactly one of calendarInterval and fixedInterval');
    expect(await bad({ t: { timeHistogram: { property: P('at'), calendarInterval: '2d' } } })).toContain('aggregates.t.timeHistogram.calendarInterval: expected one of');
    expect(await bad({ t: { timeHistogram: { property: P('at'), fixedInterval: '1s', hardBounds: { min: 0 } } } })).toContain('hardBounds.min: expected an ISO 8601 time');
    expect(await bad({ n: { numberHistogram: { property: P('count'), interval: 0.0001 } } })).toContain('more than 10000 buckets');
    expect(await bad({ x: { median: { property: P('count') } } })).toContain('aggregates.x: expected exactly one of');
    const nest = (depth: number): Record<string, unknown> => ({ [`l${depth}`]: { uniqueValues: { property: P('site'), ...(depth < 6 ? { aggregates: nest(depth + 1) } : {}) } } });
    expect(await bad(nest(1))).toContain('aggregates nest at most 5 levels deep');
    const wide = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`c${i}`, { count: {} }]));
    expect(await bad({ u: { uniqueValues: { property: P('site'), aggregates: wide } } })).toContain('at most 5 aggregates on a level');
    const many = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`u${i}`, { uniqueValues: { property: P('site'), aggregates: { [`a${i}`]: { count: {} }, [`b${i}`]: { count: {} }, [`c${i}`]: { count: {} } } } }]));
    expect(await bad(many)).toContain('at most 16 aggregates in all');
  });
});

describe('aggregate identifiers by version', () => {
  const tree = {
    'by.site': { uniqueValues: { property: P('site'), aggregates: { n: { count: {} } } } },
    n: { count: {} },
  };

  it('takes any identifier of 1 to 255 characters before 20260325', async () => {
    for (const version of ['20230101', '20260324']) {
      const res = await aggregate(tree, {}, { 'cdf-version': version });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.aggregates['by.site'].uniqueValueBuckets[0].aggregates).toEqual({ n: { count: 3 } });
      expect((await aggregate({ _count: { count: {} } }, {}, { 'cdf-version': version })).status).toBe(200);
    }
  });

  it('from 20260325 refuses "[", "]", ">" and ".", the reserved identifiers, and an identifier used twice in the tree', async () => {
    for (const version of ['20260325', '20261201-beta']) {
      const at = { 'cdf-version': version };
      expect(errorMessage(await aggregate(tree, {}, at), 400)).toBe(
        'aggregates["by.site"]: the aggregate identifier "by.site" holds one of "[", "]", ">", "."; from version 20260325 identifiers cannot (they are the separators of bucketsPath)',
      );
      for (const id of ['a[0]', 'a>b']) expect(errorMessage(await aggregate({ [id]: { count: {} } }, {}, at), 400)).toContain('from version 20260325');
      for (const id of ['_count', '_bucket_count']) expect(errorMessage(await aggregate({ [id]: { count: {} } }, {}, at), 400)).toBe(`aggregates.${id}: "${id}" is reserved and cannot be an aggregate identifier`);
      const twice = { by_site: { uniqueValues: { property: P('site'), aggregates: { n: { count: {} } } } }, n: { count: {} } };
      expect(errorMessage(await aggregate(twice, {}, at), 400)).toContain('the aggregate identifier "n" is used twice in the tree');
    }
    // Without a version header: the newest behaviour.
    expect((await aggregate(tree)).status).toBe(400);
  });
});
