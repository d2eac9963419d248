/**
 * Data point subscriptions and synthetic time series (issue 31).
 *
 * Delivery: a long poll waits on a subscription of one series; a point is inserted; the figure is the time
 * from the insert's 200 to the long poll's answer carrying the point (negative when the answer came first:
 * waiters are woken at commit, before the insert's response is written). Reference from the same run: the
 * insert's own round trip.
 *
 * Synthetic: `ts{a} + ts{b}` over two series of 100,000 points each at the same timestamps, read in pages
 * of 10,000 as a client pages (`start` after the last point). Reference from the same run: the raw points
 * of both series through `/timeseries/data/list`.
 *
 * Environment:
 *   BENCH_SUBSCRIPTION_ROUNDS   long polls measured after warm-up (default 200)
 *   BENCH_SYNTHETIC_POINTS      points in each of the two synthetic inputs (default 100000)
 */
import type { BenchContext, Suite } from './lib/context.js';
import { expectStatus } from './lib/http.js';
import { sequential } from './lib/load.js';
import { fmtInt, fmtMs, fmtRatio, now, summarize } from './lib/stats.js';
import { intEnv } from './lib/env.js';

const START = Date.UTC(2024, 0, 1);
const SYNTHETIC_PAGE = 10_000;

async function call(ctx: BenchContext, path: string, body: unknown, what: string, status = 200): Promise<any> {
  return JSON.parse(expectStatus(await ctx.call('POST', path, body), status, what).body.toString('utf8'));
}

async function delivery(ctx: BenchContext, tag: string): Promise<void> {
  const rounds = intEnv('BENCH_SUBSCRIPTION_ROUNDS', 200, 10, 100_000);
  const series = `bench-sub-${tag}`;
  await call(ctx, '/timeseries', { items: [{ externalId: series }] }, 'POST /timeseries', 201);
  await call(ctx, '/timeseries/subscriptions', { items: [{ externalId: series, partitionCount: 1, timeSeriesIds: [series] }] }, 'POST /timeseries/subscriptions', 201);
  let cursor: string = (await call(ctx, '/timeseries/subscriptions/data/list', { externalId: series, partitions: [{ index: 0 }], pollTimeoutSeconds: 0 }, 'data/list')).partitions[0].nextCursor;
  const afterInsert: number[] = [];
  const insertTrip: number[] = [];
  const round = async (k: number, keep: boolean) => {
    const poll = call(ctx, '/timeseries/subscriptions/data/list', { externalId: series, partitions: [{ index: 0, cursor }], pollTimeoutSeconds: 5 }, 'data/list (long poll)');
    let answered = 0;
    const answer = poll.then((body) => ((answered = now()), body));
    // Give the poll time to reach its wait: the figure is the wake-up, not a read that finds the point.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const sent = now();
    await call(ctx, '/timeseries/data', { items: [{ externalId: series, datapoints: [{ timestamp: START + k, value: k }] }] }, 'POST /timeseries/data');
    const ok = now();
    const body = await answer;
    if (body.updates.length !== 1 || body.updates[0].upserts[0].timestamp !== START + k) throw new Error(`the long poll answered ${JSON.stringify(body).slice(0, 300)}`);
    cursor = body.partitions[0].nextCursor;
    if (keep) {
      afterInsert.push(answered - ok);
      insertTrip.push(ok - sent);
    }
  };
  await sequential(20, (k) => round(k, false));
  await ctx.profiled('subscriptions-delivery', () => sequential(rounds, (k) => round(1000 + k, true)));
  const delay = summarize(afterInsert.map((ms) => Math.max(ms, 0)));
  const trip = summarize(insertTrip);
  const first = afterInsert.filter((ms) => ms <= 0).length;
  ctx.report({
    id: 'subscriptions.delivery',
    workload: `Subscription delivery: insert's 200 to the waiting long poll's answer, ${fmtInt(rounds)} rounds`,
    value: `p50 ${fmtMs(delay.p50)} / p99 ${fmtMs(delay.p99)} (answer first in ${first} of ${rounds})`,
    reference: `the insert's round trip: p50 ${fmtMs(trip.p50)} / p99 ${fmtMs(trip.p99)}`,
    target: 'p99 ≤ 50 ms',
    met: delay.p99 <= 50,
    data: { rounds, delay, insertTrip: trip, answeredFirst: first },
  });
  ctx.log(`  delivery: p50 ${fmtMs(delay.p50)} / p99 ${fmtMs(delay.p99)} after the insert's 200`);
}

async function synthetic(ctx: BenchContext, tag: string): Promise<void> {
  const points = intEnv('BENCH_SYNTHETIC_POINTS', 100_000, 10_000, 10_000_000);
  const ids = [`bench-syn-a-${tag}`, `bench-syn-b-${tag}`];
  await call(ctx, '/timeseries', { items: ids.map((externalId) => ({ externalId })) }, 'POST /timeseries', 201);
  for (const [s, externalId] of ids.entries()) {
    for (let from = 0; from < points; from += 100_000) {
      const datapoints = Array.from({ length: Math.min(100_000, points - from) }, (_, k) => ({ timestamp: START + (from + k) * 1000, value: (from + k) * (s + 1) }));
      await call(ctx, '/timeseries/data', { items: [{ externalId, datapoints }] }, 'POST /timeseries/data');
    }
  }
  const end = START + points * 1000;
  const readSynthetic = async () => {
    let start = START;
    let got = 0;
    for (;;) {
      const body = await call(ctx, '/timeseries/synthetic/query', { items: [{ expression: `ts{externalId='${ids[0]}'} + ts{externalId='${ids[1]}'}`, start, end, limit: SYNTHETIC_PAGE }] }, 'synthetic');
      const page = body.items[0].datapoints as Array<{ timestamp: number }>;
      got += page.length;
      if (page.length < SYNTHETIC_PAGE) return got;
      start = page[page.length - 1].timestamp + 1;
    }
  };
  const readRaw = async () => {
    let got = 0;
    for (const externalId of ids) {
      let cursor: string | undefined;
      do {
        const body = await call(ctx, '/timeseries/data/list', { items: [{ externalId, start: START, end, limit: 100_000, ...(cursor ? { cursor } : {}) }] }, 'data/list');
        got += body.items[0].datapoints.length;
        cursor = body.items[0].nextCursor;
      } while (cursor);
    }
    return got;
  };
  if ((await readSynthetic()) !== points) throw new Error('the synthetic query did not give a point per timestamp');
  await readRaw();
  const times = await ctx.profiled('synthetic', () => sequential(5, async () => void (await readSynthetic())));
  const rawTimes = await sequential(5, async () => void (await readRaw()));
  const ms = summarize(times).p50;
  const rate = (points * 1000) / ms;
  const rawRate = (2 * points * 1000) / summarize(rawTimes).p50;
  ctx.report({
    id: 'synthetic.sum',
    workload: `Synthetic \`ts{a} + ts{b}\`, two series of ${fmtInt(points)} points, pages of ${fmtInt(SYNTHETIC_PAGE)}`,
    value: `${fmtInt(rate)} output points/s`,
    reference: `raw points of both series through /timeseries/data/list: ${fmtInt(rawRate)} points/s`,
    ratio: `${fmtRatio(rate / rawRate)} of the raw read (which reads 2 points per output point)`,
    target: '≥ 1,000,000 output points/s',
    met: rate >= 1_000_000,
    data: { points, ms, pointsPerSecond: rate, rawPointsPerSecond: rawRate },
  });
  ctx.log(`  synthetic: ${fmtInt(rate)} output points/s; raw read ${fmtInt(rawRate)} points/s`);
}

export const subscriptionsSuite: Suite = {
  name: 'subscriptions',
  async run(ctx) {
    const tag = Date.now().toString(36);
    ctx.log('subscriptions: delivery latency and synthetic queries');
    await delivery(ctx, tag);
    await synthetic(ctx, tag);
  },
};
