/**
 * Aggregates through the official JavaScript client, as its users ask for them (`client.datapoints.retrieve`
 * with items, start, end, aggregates, granularity, timeZone and cursors), checked against the definitions
 * (test/support/aggregate-oracle.ts): series with gaps shorter and longer than an hour, step and continuous,
 * a last point in the middle of a bucket, daylight-saving changes, half-hour offsets and months.
 */
import type { Aggregate, DatapointAggregate, DatapointAggregates, DatapointsQuery } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oracleAggregates, oracleBounds, HOUR, type OraclePoint } from '../support/aggregate-oracle.js';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'datapoints-aggregates' });
});
afterAll(() => h?.close());

const MINUTE = 60_000;
const DAY = 86_400_000;
/** Every aggregate the client's types name. */
const AGGREGATES: Aggregate[] = ['average', 'max', 'min', 'count', 'sum', 'interpolation', 'stepInterpolation', 'totalVariation', 'continuousVariance', 'discreteVariance'];

/** Points around the spring daylight-saving change in Europe (2024-03-31) and in Australia (2024-04-07). */
function points(): OraclePoint[] {
  const out: OraclePoint[] = [];
  const start = Date.UTC(2024, 2, 29);
  let t = start;
  let i = 0;
  // Gaps cycle through well under an hour, just under and just over an hour, and several hours.
  const gaps = [7 * MINUTE, 20 * MINUTE, 59 * MINUTE, 61 * MINUTE, 3 * HOUR, 11 * MINUTE, 26 * HOUR, 45 * MINUTE];
  while (t < start + 12 * DAY) {
    out.push({ ts: t, value: Math.round(Math.sin(i / 3) * 1000) / 10, code: i % 17 === 5 ? 0x80000000 : i % 13 === 3 ? 0x40000000 : 0 });
    t += gaps[i++ % gaps.length] + (i % 5) * 1000;
  }
  // The last point lies in the middle of an hour, a day and a month.
  out.push({ ts: Date.UTC(2024, 3, 12, 10, 30), value: 42, code: 0 });
  return out;
}

async function createWith(isStep: boolean, pts: OraclePoint[]): Promise<string> {
  const externalId = `sdk-agg-${isStep ? 'step' : 'linear'}-${Math.random().toString(36).slice(2)}`;
  await h.client.timeseries.create([{ externalId, isStep }]);
  await h.client.datapoints.insert([
    {
      externalId,
      datapoints: pts.map((p) => ({ timestamp: p.ts, value: p.value!, ...(p.code ? { status: { code: p.code } } : {}) })) as never,
    },
  ]);
  return externalId;
}

/** Every bucket of one query, following `nextCursor` as a client user does. */
async function retrieveAll(query: DatapointsQuery & Record<string, unknown>): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  do {
    const [item] = (await h.client.datapoints.retrieve({ items: [{ ...query, ...(cursor ? { cursor } : {}) }] })) as DatapointAggregates[];
    for (const dp of item.datapoints as DatapointAggregate[]) out.push({ ...dp, timestamp: dp.timestamp.getTime() });
    cursor = item.nextCursor;
  } while (cursor);
  return out;
}

function expectClose(actual: Array<Record<string, unknown>>, expected: Array<Record<string, unknown>>, what: string): void {
  expect(actual.map((b) => b.timestamp), `${what}: buckets`).toEqual(expected.map((b) => b.timestamp));
  actual.forEach((b, i) => {
    expect(Object.keys(b).sort(), `${what} @${b.timestamp}`).toEqual(Object.keys(expected[i]).sort());
    for (const [key, value] of Object.entries(expected[i])) {
      if (typeof value === 'number') expect(b[key] as number, `${what} @${b.timestamp}.${key}`).toBeCloseTo(value, 6);
    }
  });
}

describe('aggregates through the official JavaScript client', () => {
  it('follow the definitions in every zone and granularity, page by page', async () => {
    const pts = points();
    for (const isStep of [false, true]) {
      const externalId = await createWith(isStep, pts);
      const cases: Array<{ granularity: string; timeZone: string; start: number; end: number; limit?: number }> = [
        { granularity: '1h', timeZone: 'Europe/Oslo', start: Date.UTC(2024, 2, 30), end: Date.UTC(2024, 3, 2), limit: 25 },
        { granularity: '1d', timeZone: 'Europe/Oslo', start: Date.UTC(2024, 2, 28), end: Date.UTC(2024, 3, 14) },
        { granularity: '1d', timeZone: 'Australia/Adelaide', start: Date.UTC(2024, 3, 4), end: Date.UTC(2024, 3, 14) },
        { granularity: '3h', timeZone: 'Asia/Kolkata', start: Date.UTC(2024, 2, 29, 5), end: Date.UTC(2024, 3, 5) },
        { granularity: '1mo', timeZone: 'America/New_York', start: Date.UTC(2024, 0, 15), end: Date.UTC(2024, 5, 1) },
        { granularity: '90s', timeZone: 'UTC', start: Date.UTC(2024, 2, 29), end: Date.UTC(2024, 2, 29, 6), limit: 40 },
        { granularity: '1s', timeZone: 'UTC', start: Date.UTC(2024, 3, 12, 10), end: Date.UTC(2024, 3, 12, 11) },
      ];
      for (const c of cases) {
        const got = await retrieveAll({ externalId, start: c.start, end: c.end, aggregates: [...AGGREGATES], granularity: c.granularity, timeZone: c.timeZone, limit: c.limit ?? 10_000 });
        const expected = oracleAggregates(pts, oracleBounds(c.granularity, c.timeZone, c.start, c.end), { isStep, ignoreBad: true, uncertainIsBad: true, aggregates: AGGREGATES });
        expect(expected.length, `${c.granularity} ${c.timeZone}`).toBeGreaterThan(0);
        expectClose(got, expected, `${isStep ? 'step' : 'linear'} ${c.granularity} ${c.timeZone}`);
      }
      // With the status options and gap filling (a preview the client passes through as given).
      const query = { externalId, start: Date.UTC(2024, 2, 29), end: Date.UTC(2024, 3, 13), granularity: '2h', aggregates: [...AGGREGATES], ignoreBadDataPoints: false, treatUncertainAsBad: false, fill: { limit: '4h' } };
      const filled = await retrieveAll(query as DatapointsQuery & Record<string, unknown>);
      const expected = oracleAggregates(pts, oracleBounds('2h', 'UTC', query.start, query.end), { isStep, ignoreBad: false, uncertainIsBad: false, fill: 4 * HOUR, aggregates: AGGREGATES });
      expectClose(filled, expected, `${isStep ? 'step' : 'linear'} filled`);
    }
  });

  it('gives step interpolation in the first bucket after the last point, and nothing after it', async () => {
    const externalId = await createWith(false, [{ ts: Date.UTC(2024, 0, 1, 10, 30), value: 3, code: 0 }]);
    const buckets = await retrieveAll({ externalId, start: Date.UTC(2024, 0, 1), end: Date.UTC(2024, 0, 1, 20), aggregates: ['stepInterpolation', 'interpolation', 'count'], granularity: '1h' });
    expect(buckets).toEqual([
      { timestamp: Date.UTC(2024, 0, 1, 10), count: 1 },
      { timestamp: Date.UTC(2024, 0, 1, 11), stepInterpolation: 3 },
    ]);
  });

  it("averages each month over its own points across a month without data, as the client's own monthly test expects", async () => {
    const months = [Date.UTC(2022, 9, 1), Date.UTC(2022, 10, 1), Date.UTC(2022, 11, 1), Date.UTC(2023, 0, 1), Date.UTC(2023, 2, 1)];
    const externalId = await createWith(
      false,
      months.flatMap((ts, i) => [
        { ts, value: 20 * i + 10, code: 0 },
        { ts: ts + DAY, value: 20 * i + 20, code: 0 },
      ]),
    );
    const buckets = await retrieveAll({ externalId, start: Date.UTC(2022, 9, 1), end: Date.UTC(2023, 2, 15), aggregates: ['average'], granularity: '1mo' });
    expect(buckets).toEqual(months.map((timestamp, i) => ({ timestamp, average: 20 * i + 15 })));
  });

  it('is refused, with the granularity to send, for a unit the API does not take', async () => {
    const externalId = await createWith(false, [{ ts: Date.UTC(2024, 0, 1), value: 1, code: 0 }]);
    const err = await h.client.datapoints.retrieve({ items: [{ externalId, aggregates: ['average'], granularity: '1w' }] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, errorMessage: expect.stringMatching(/^items\[0\]\.granularity: "1w" .*send "7d" instead/) });
  });
});
