/**
 * Streams and records workloads: ingest of records of 5 properties into an immutable stream, 1000 per
 * request; a filtered page of 1000 sorted by a property of the records, and one in the stream's own order
 * (lastUpdatedTime); a time histogram (daily buckets) over every record; and a sync chain over the stream.
 * On whichever store the server child uses (SQLite, or PostgreSQL when BENCH_BACKEND=postgres).
 *
 * Environment:
 *   BENCH_RECORDS           records to ingest (default 1000000; a multiple of 1000)
 *   BENCH_RECORDS_REQUESTS  timed requests per read after warm-up (default 30)
 */
import type { Suite } from './lib/context.js';
import { intEnv } from './lib/env.js';
import { expectStatus, type HttpResponse } from './lib/http.js';
import { sequential } from './lib/load.js';
import { fmtInt, fmtMs, fmtRatio, now, summarize } from './lib/stats.js';

const BATCH = 1000;
const WARMUP = 5;
const CATEGORIES = 20;
const DAY = 86_400_000;

const ok = (res: HttpResponse, what: string, status = 200): any => JSON.parse(expectStatus(res, status, what).body.toString('utf8'));

// A space and a stream of their own per run, so a reused BENCH_DATA_DIR or database starts empty.
const RUN = Date.now().toString(36);
const SPACE = `bench-rec-${RUN}`;
const STREAM = `bench-${RUN}`;
const container = { type: 'container', space: SPACE, externalId: 'Reading' } as const;
const prop = (p: string) => [SPACE, 'Reading', p];

function record(i: number) {
  return {
    space: SPACE,
    externalId: `rec-${i}`,
    sources: [
      {
        source: container,
        properties: {
          name: `Reading ${i}`,
          category: `cat-${i % CATEGORIES}`,
          value: (i % 1000) / 10,
          count: i,
          at: new Date(Date.UTC(2024, 0, 1) + (i % 1000) * DAY + (i % 86_400) * 1000).toISOString(),
        },
      },
    ],
  };
}

export const recordsSuite: Suite = {
  name: 'records',
  async run(ctx) {
    const records = Math.ceil(intEnv('BENCH_RECORDS', 1_000_000, BATCH) / BATCH) * BATCH;
    const requests = intEnv('BENCH_RECORDS_REQUESTS', 30, 5);
    const engine = process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite';

    ok(await ctx.call('POST', '/models/spaces', { items: [{ space: SPACE }] }), 'POST /models/spaces');
    const properties = {
      name: { type: { type: 'text' } },
      category: { type: { type: 'text' } },
      value: { type: { type: 'float64' } },
      count: { type: { type: 'int64' } },
      at: { type: { type: 'timestamp' } },
    };
    ok(await ctx.call('POST', '/models/containers', { items: [{ space: SPACE, externalId: 'Reading', usedFor: 'record', properties }] }), 'POST /models/containers');
    ok(await ctx.call('POST', '/streams', { items: [{ externalId: STREAM, settings: { template: { name: 'ImmutableArchive' } } }] }), 'POST /streams', 201);

    ctx.log(`records: ingesting ${fmtInt(records)} records, ${BATCH} per request (${engine})`);
    const perRequest: number[] = [];
    const t0 = now();
    await ctx.profiled(`records-ingest-${engine}`, async () => {
      for (let at = 0; at < records; at += BATCH) {
        const body = { items: Array.from({ length: BATCH }, (_, k) => record(at + k)) };
        const t = now();
        ok(await ctx.call('POST', `/streams/${STREAM}/records`, body), 'ingest', 202);
        perRequest.push(now() - t);
      }
    });
    const seconds = (now() - t0) / 1000;
    const rate = records / seconds;
    const tenth = Math.max(1, Math.floor(perRequest.length / 10));
    const firstTenth = summarize(perRequest.slice(0, tenth)).p50;
    const lastTenth = summarize(perRequest.slice(-tenth)).p50;
    ctx.report({
      id: `records.ingest.${engine}`,
      workload: `Records ingest (${engine}): ${fmtInt(records)} records, 5 properties, ${BATCH}/request`,
      value: `${fmtInt(rate)} records/s`,
      reference: `median request ${fmtMs(firstTenth)} over the first tenth, ${fmtMs(lastTenth)} over the last`,
      ratio: `${fmtRatio(lastTenth / firstTenth)} of the first tenth`,
      target: engine === 'SQLite' ? '≥ 20,000 records/s' : undefined,
      met: engine === 'SQLite' ? rate >= 20_000 : undefined,
      data: { records, seconds, rate, firstTenthMs: firstTenth, lastTenthMs: lastTenth },
    });

    // An immutable stream is read in ranges of lastUpdatedTime: this one covers every record.
    const range = { gte: Date.now() - DAY };
    const timed = async (what: string, path: string, body: unknown) => {
      await sequential(WARMUP, async () => void ok(await ctx.call('POST', path, body), what));
      return summarize(await ctx.profiled(`records-${what}-${engine}`, () => sequential(requests, async () => void ok(await ctx.call('POST', path, body), what))));
    };
    const filter = { equals: { property: prop('category'), value: 'cat-3' } };
    const sorted = { lastUpdatedTime: range, filter, sort: [{ property: prop('value'), direction: 'descending' }], sources: [{ source: container, properties: ['*'] }], limit: 1000 };
    const inOrder = { ...sorted, sort: undefined };
    for (const [what, body] of [
      ['sorted', sorted],
      ['ordered', inOrder],
    ] as const) {
      const page = ok(await ctx.call('POST', `/streams/${STREAM}/records/filter`, body), what);
      if (page.items.length !== Math.min(1000, records / CATEGORIES)) throw new Error(`${what}: ${page.items.length} records`);
    }
    const bySort = await timed('sorted', `/streams/${STREAM}/records/filter`, sorted);
    const byTime = await timed('ordered', `/streams/${STREAM}/records/filter`, inOrder);
    ctx.report({
      id: `records.filter.sorted.${engine}`,
      workload: `Records filter (${engine}): equals on a property (1 in ${CATEGORIES}), sorted by another, limit 1000, ${fmtInt(records)} records`,
      value: `p50 ${fmtMs(bySort.p50)}, p90 ${fmtMs(bySort.p90)}`,
      reference: `the same filter in the stream's order (lastUpdatedTime): p50 ${fmtMs(byTime.p50)}`,
      ratio: `${fmtRatio(bySort.p50 / byTime.p50)} of it`,
      target: 'p50 ≤ 25 ms',
      met: bySort.p50 <= 25,
      data: { sorted: bySort, ordered: byTime },
    });

    const histogram = { lastUpdatedTime: range, aggregates: { daily: { timeHistogram: { property: prop('at'), calendarInterval: '1d' } } } };
    const buckets = ok(await ctx.call('POST', `/streams/${STREAM}/records/aggregate`, histogram), 'histogram').aggregates.daily.timeHistogramBuckets;
    const counted = buckets.reduce((n: number, b: { count: number }) => n + b.count, 0);
    if (counted !== records) throw new Error(`histogram: ${counted} records in ${buckets.length} buckets`);
    const hist = await timed('histogram', `/streams/${STREAM}/records/aggregate`, histogram);
    const count = await timed('count', `/streams/${STREAM}/records/aggregate`, { lastUpdatedTime: range, aggregates: { n: { count: {} } } });
    ctx.report({
      id: `records.aggregate.timeHistogram.${engine}`,
      workload: `Records aggregate (${engine}): daily time histogram of a timestamp property over ${fmtInt(records)} records (${buckets.length} buckets)`,
      value: `p50 ${fmtMs(hist.p50)}, p90 ${fmtMs(hist.p90)}`,
      reference: `count of the same records: p50 ${fmtMs(count.p50)}`,
      ratio: `${fmtRatio(hist.p50 / count.p50)} of it`,
      target: 'p50 ≤ 500 ms',
      met: hist.p50 <= 500,
      data: { histogram: hist, count },
    });

    // The stream's feed from its start, 1000 per page with every property, as a client that mirrors it would.
    const tSync = now();
    let synced = 0;
    let pages = 0;
    let body: Record<string, unknown> = { initializeCursor: '1d-ago', limit: 1000, sources: [{ source: container, properties: ['*'] }] };
    for (;;) {
      const page = ok(await ctx.call('POST', `/streams/${STREAM}/records/sync`, body), 'sync');
      synced += page.items.length;
      pages++;
      if (!page.hasNext) break;
      body = { cursor: page.nextCursor, limit: 1000, sources: body.sources };
    }
    const syncSeconds = (now() - tSync) / 1000;
    if (synced !== records) throw new Error(`sync: ${synced} records of ${records}`);
    ctx.report({
      id: `records.sync.${engine}`,
      workload: `Records sync (${engine}): a chain of cursors over ${fmtInt(records)} records, 1000 per page, every property`,
      value: `${fmtInt(synced / syncSeconds)} records/s`,
      reference: `${pages} requests in ${syncSeconds.toFixed(1)} s`,
      data: { records: synced, seconds: syncSeconds, pages },
    });
  },
};
