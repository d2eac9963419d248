/**
 * Data point workloads (issue 5): ingest, raw retrieval, aggregates over a year of 1-second data, latest
 * point of many series, and the storage cost per point. Each figure comes with a reference from the same
 * run: JSON.parse of the same request bodies (ingest), JSON.stringify of the same points (retrieval), and a
 * bare Fastify route returning the same response bytes (aggregates, latest).
 *
 * Environment (scales the run; defaults are the issue's sizes):
 *   BENCH_DATAPOINTS            points ingested in 100,000-point requests, over 10 series (default 10000000)
 *   BENCH_DATAPOINTS_YEAR_DAYS  days of 1-second data in the aggregate series (default 365)
 *   BENCH_DATAPOINTS_QUERIES    sequential requests per aggregate query after warm-up (default 100)
 */
import type { BenchContext, Suite } from './lib/context.js';
import { expectStatus } from './lib/http.js';
import { pool, sequential } from './lib/load.js';
import { fmtStatements, oneLine, openRaw, statementCounts, timeStatements } from './lib/raw.js';
import { fmtInt, fmtMs, fmtRatio, now, summarize } from './lib/stats.js';
import { intEnv } from './lib/env.js';

const REQUEST_POINTS = 100_000;
const INGEST_SERIES = 10;
const PAGE = 100_000;
const LATEST_SERIES = 1000;
const LATEST_ITEMS = 100;
const START = Date.UTC(2023, 0, 1);
const DAY = 86_400_000;

/** A smooth signal with noise, so values are not constant (and compress no better than real data). */
const signal = (i: number) => Math.round((Math.sin(i / 3600) * 50 + ((i * 7919) % 1000) / 100) * 1000) / 1000;

/** The `datapoints` array text of `count` points at 1 s spacing, starting at point `from`. */
function pointsText(from: number, count: number): string {
  const parts: string[] = new Array(count);
  for (let k = 0; k < count; k++) {
    const i = from + k;
    parts[k] = `{"timestamp":${START + i * 1000},"value":${signal(i)}}`;
  }
  return `[${parts.join(',')}]`;
}

const body = (externalId: string, points: string) => `{"items":[{"externalId":${JSON.stringify(externalId)},"datapoints":${points}}]}`;

/** Where the next page starts, read from the end of a response without parsing it (as a lean client would). */
function nextCursor(res: Buffer): string | undefined {
  const text = res.toString('latin1', Math.max(0, res.length - 4096));
  const m = /"nextCursor":"([^"]+)"/.exec(text);
  return m ? m[1] : undefined;
}

async function post(ctx: BenchContext, path: string, payload: string | object, what: string): Promise<Buffer> {
  return expectStatus(await ctx.call('POST', path, payload), 200, what).body;
}

/**
 * Records what one request sends to the database (diagnostics `datapoints.statements.<name>`) and returns
 * the counts. For a read (`replay`), also the time of its SELECTs replayed on a raw connection (p50 of 20),
 * and their plans (on PostgreSQL with actual times, planning time included).
 */
async function statementsOf(ctx: BenchContext, name: string, fn: () => Promise<unknown>, replay = false) {
  const statements = await ctx.statementsOf(fn);
  const counts = statementCounts(statements);
  const selects = statements.filter((st) => /^\s*(SELECT|WITH)\b/i.test(st.text));
  let rawSqlP50Ms: number | undefined;
  const plans: string[][] = [];
  if (replay && selects.length) {
    const raw = await openRaw(ctx.backend, ctx.dataDir);
    try {
      rawSqlP50Ms = summarize((await timeStatements(raw, selects, 20, 3)).latencies).p50;
      for (const st of selects) plans.push(await raw.explain(st));
    } finally {
      await raw.close();
    }
  }
  ctx.diagnose(`datapoints.statements.${name}`, { ...counts, rawSqlP50Ms, sql: (replay ? selects : statements).slice(0, 12).map((st) => oneLine(st, 300)), plans });
  ctx.log(`  one ${name} request: ${fmtStatements(counts)}${rawSqlP50Ms === undefined ? '' : `; its SELECTs on a raw connection: p50 ${fmtMs(rawSqlP50Ms)}`}`);
  return { ...counts, rawSqlP50Ms };
}

async function createSeries(ctx: BenchContext, externalIds: string[]): Promise<void> {
  for (let i = 0; i < externalIds.length; i += 1000) {
    const items = externalIds.slice(i, i + 1000).map((externalId) => ({ externalId }));
    expectStatus(await ctx.call('POST', '/timeseries', { items }), 201, 'POST /timeseries');
  }
}

/**
 * Writes `total` points to a series in 100,000-point requests, two in flight; returns elapsed ms. `texts`
 * holds request point arrays made in advance (so the load generator does not slow the measurement).
 */
async function ingest(ctx: BenchContext, externalId: string, total: number, label: string, texts?: string[]): Promise<number> {
  const requests = Math.ceil(total / REQUEST_POINTS);
  const t0 = now();
  let last = t0;
  let done = 0;
  await pool(requests, 2, async (r) => {
    const from = r * REQUEST_POINTS;
    const count = Math.min(REQUEST_POINTS, total - from);
    await post(ctx, '/timeseries/data', body(externalId, texts?.[r] ?? pointsText(from, count)), `POST /timeseries/data (${label})`);
    done += count;
    if (now() - last > 10_000) {
      last = now();
      ctx.log(`  ${label}: ${fmtInt(done)} points, ${fmtInt((done * 1000) / (last - t0))}/s so far`);
    }
  });
  return now() - t0;
}

export const datapointsSuite: Suite = {
  name: 'datapoints',
  async run(ctx) {
    const points = intEnv('BENCH_DATAPOINTS', 10_000_000, 100_000, 100_000_000);
    const yearDays = intEnv('BENCH_DATAPOINTS_YEAR_DAYS', 365, 1, 366);
    const queries = intEnv('BENCH_DATAPOINTS_QUERIES', 100, 10, 10_000);
    const tag = Date.now().toString(36);
    const ingestIds = Array.from({ length: INGEST_SERIES }, (_, i) => `bench-dp-${tag}-${i}`);
    await createSeries(ctx, ingestIds);

    // Ingest: the points spread over 10 series, 1/10 of them each, one series after another.
    const perSeries = Math.ceil(points / INGEST_SERIES);
    ctx.log(`datapoints: ingesting ${fmtInt(points)} points (${INGEST_SERIES} series, ${fmtInt(REQUEST_POINTS)} per request)`);
    // Every series gets the same timestamps and values, so the request texts are made once.
    const texts = Array.from({ length: Math.ceil(perSeries / REQUEST_POINTS) }, (_, r) =>
      pointsText(r * REQUEST_POINTS, Math.min(REQUEST_POINTS, perSeries - r * REQUEST_POINTS)),
    );
    let ingestMs = 0;
    const { cpuMs, databaseCpuMs } = await ctx.serverCpu(() =>
      ctx.profiled('datapoints-ingest', async () => {
        for (const id of ingestIds) ingestMs += await ingest(ctx, id, perSeries, 'ingest', texts);
      }),
    );
    const total = perSeries * INGEST_SERIES;
    const rate = (total * 1000) / ingestMs;
    const cpuPerMillion = (cpuMs * 1e6) / total;
    const databaseCpuPerMillion = databaseCpuMs === undefined ? undefined : (databaseCpuMs * 1e6) / total;
    let parseMs = 0;
    for (const text of texts) {
      const whole = body(ingestIds[0], text);
      const t0 = now();
      JSON.parse(whole);
      parseMs += now() - t0;
    }
    const parseRate = (perSeries * 1000) / parseMs;
    ctx.report({
      id: 'datapoints.ingest',
      workload: `Insert ${fmtInt(total)} numeric points, ${fmtInt(REQUEST_POINTS)}/request, 2 in flight`,
      value: `${fmtInt(rate)} points/s; CPU ${fmtInt(cpuPerMillion)} ms${databaseCpuPerMillion === undefined ? '' : ` + PostgreSQL ${fmtInt(databaseCpuPerMillion)} ms`} per million`,
      reference: `JSON.parse of the same bodies: ${fmtInt(parseRate)} points/s`,
      ratio: `${fmtRatio(rate / parseRate)} of JSON.parse speed`,
      target: '≥ 1,000,000 points/s',
      met: rate >= 1_000_000,
      data: {
        points: total,
        ms: ingestMs,
        pointsPerSecond: rate,
        serverCpuMsPerMillion: cpuPerMillion,
        databaseCpuMsPerMillion: databaseCpuPerMillion,
        parsePointsPerSecond: parseRate,
      },
    });
    ctx.log(`  ingest: ${fmtInt(rate)} points/s; JSON.parse alone ${fmtInt(parseRate)} points/s`);
    const ingestCounts = await statementsOf(ctx, 'ingest', () =>
      post(ctx, '/timeseries/data', body(ingestIds[0], pointsText(perSeries, REQUEST_POINTS)), 'POST /timeseries/data (statements)'),
    );
    (ctx.rows().find((r) => r.id === 'datapoints.ingest')!.data as Record<string, unknown>).statementsPerRequest = ingestCounts.statements;
    await ctx.backend.analyze();

    // Raw retrieval: one series' points in 100,000-point pages.
    const readPoints = Math.min(perSeries, 1_000_000);
    const readAll = async () => {
      const pages: Buffer[] = [];
      let cursor: string | undefined;
      do {
        const res = await post(
          ctx,
          '/timeseries/data/list',
          { items: [{ externalId: ingestIds[0], start: START, end: START + readPoints * 1000, limit: PAGE, ...(cursor ? { cursor } : {}) }] },
          'POST /timeseries/data/list (raw)',
        );
        pages.push(res);
        cursor = nextCursor(res);
      } while (cursor);
      return pages;
    };
    const firstPages = await readAll();
    const rawCounts = await statementsOf(ctx, 'raw', () =>
      post(ctx, '/timeseries/data/list', { items: [{ externalId: ingestIds[0], start: START, end: START + readPoints * 1000, limit: PAGE }] }, 'POST /timeseries/data/list (statements)'),
      true,
    );
    const received = firstPages.reduce((n, p) => n + (JSON.parse(p.toString('utf8')) as { items: Array<{ datapoints: unknown[] }> }).items[0].datapoints.length, 0);
    if (received !== readPoints) throw new Error(`raw retrieval returned ${received} points, expected ${readPoints}`);
    const rounds = 5;
    const readTimes = await ctx.profiled('datapoints-raw', () => sequential(rounds, async () => void (await readAll())));
    const readMs = summarize(readTimes).p50;
    const readRate = (readPoints * 1000) / readMs;
    const objects = firstPages.map((p) => (JSON.parse(p.toString('utf8')) as { items: Array<{ datapoints: unknown[] }> }).items[0].datapoints);
    const stringifyTimes = await sequential(rounds, async () => {
      for (const o of objects) JSON.stringify(o);
    });
    const stringifyRate = (readPoints * 1000) / summarize(stringifyTimes).p50;
    ctx.report({
      id: 'datapoints.raw',
      workload: `Retrieve ${fmtInt(readPoints)} points of one series, ${fmtInt(PAGE)}/page (median of ${rounds})`,
      value: `${fmtInt(readRate)} points/s`,
      reference: `JSON.stringify of the same points: ${fmtInt(stringifyRate)} points/s`,
      ratio: `${fmtRatio(readRate / stringifyRate)} of JSON.stringify speed`,
      target: '≥ 2,000,000 points/s',
      met: readRate >= 2_000_000,
      data: { points: readPoints, msPerRound: readMs, pointsPerSecond: readRate, stringifyPointsPerSecond: stringifyRate, statementsPerRequest: rawCounts.statements, rawSqlP50MsPerPage: rawCounts.rawSqlP50Ms },
    });
    ctx.log(`  raw retrieval: ${fmtInt(readRate)} points/s; JSON.stringify alone ${fmtInt(stringifyRate)} points/s`);

    await latest(ctx, tag);
    await aggregates(ctx, tag, yearDays, queries);
    await storage(ctx);
  },
};

/** p50/p99 of a request against Strata and against the bare route serving the same bytes. */
async function versusBare(ctx: BenchContext, count: number, payload: object, what: string) {
  const sample = await post(ctx, '/timeseries/data/list', payload, what);
  for (let i = 0; i < 5; i++) await post(ctx, '/timeseries/data/list', payload, what);
  const strata = summarize(await sequential(count, async () => void (await post(ctx, '/timeseries/data/list', payload, what))));
  await ctx.server.command({ type: 'bare', payload: sample.toString('utf8') });
  const bareCall = async () => {
    const res = await ctx.client.request('GET', `${ctx.server.bareOrigin}/bare/1`, undefined, { authorization: 'Bearer x' });
    if (res.status !== 200) throw new Error(`bare route: HTTP ${res.status}`);
  };
  for (let i = 0; i < 5; i++) await bareCall();
  const bare = summarize(await sequential(count, bareCall));
  return { strata, bare, bytes: sample.length, sample };
}

async function latest(ctx: BenchContext, tag: string): Promise<void> {
  const ids = Array.from({ length: LATEST_SERIES }, (_, i) => `bench-dp-latest-${tag}-${i}`);
  await createSeries(ctx, ids);
  for (let i = 0; i < LATEST_SERIES; i += 100) {
    const items = ids.slice(i, i + 100).map((externalId, k) => ({
      externalId,
      datapoints: Array.from({ length: 100 }, (_, j) => ({ timestamp: START + j * 60_000, value: i + k + j })),
    }));
    await post(ctx, '/timeseries/data', { items }, 'POST /timeseries/data (latest seed)');
  }
  const requests = Array.from({ length: LATEST_SERIES / LATEST_ITEMS }, (_, r) =>
    JSON.stringify({ items: ids.slice(r * LATEST_ITEMS, (r + 1) * LATEST_ITEMS).map((externalId) => ({ externalId })) }),
  );
  const round = async () => {
    for (const r of requests) await post(ctx, '/timeseries/data/latest', r, 'POST /timeseries/data/latest');
  };
  await round();
  const latestCounts = await statementsOf(ctx, 'latest', () => post(ctx, '/timeseries/data/latest', requests[0], 'POST /timeseries/data/latest (statements)'), true);
  const rounds = 20;
  const times = await ctx.profiled('datapoints-latest', () => sequential(rounds, round));
  const perRound = summarize(times).p50;
  const rate = (LATEST_SERIES * 1000) / perRound;
  const sample = await post(ctx, '/timeseries/data/latest', requests[0], 'POST /timeseries/data/latest');
  await ctx.server.command({ type: 'bare', payload: sample.toString('utf8') });
  const bare = summarize(
    await sequential(rounds, async () => {
      for (let i = 0; i < requests.length; i++) await ctx.client.request('GET', `${ctx.server.bareOrigin}/bare/${i}`, undefined, { authorization: 'Bearer x' });
    }),
  ).p50;
  const bareRate = (LATEST_SERIES * 1000) / bare;
  ctx.report({
    id: 'datapoints.latest',
    workload: `Latest point of ${fmtInt(LATEST_SERIES)} series, ${LATEST_SERIES / LATEST_ITEMS} requests of ${LATEST_ITEMS} (median of ${rounds})`,
    value: `${fmtInt(rate)} series/s`,
    reference: `bare Fastify route, same bytes: ${fmtInt(bareRate)} series/s`,
    ratio: `${fmtRatio(rate / bareRate)} of bare`,
    target: '≥ 20,000 series/s',
    met: rate >= 20_000,
    data: { msPerRound: perRound, seriesPerSecond: rate, bareSeriesPerSecond: bareRate, statementsPerRequest: latestCounts.statements, rawSqlP50MsPerRequest: latestCounts.rawSqlP50Ms },
  });
  ctx.log(`  latest: ${fmtInt(rate)} series/s; bare route ${fmtInt(bareRate)} series/s`);
}

async function aggregates(ctx: BenchContext, tag: string, days: number, count: number): Promise<void> {
  const id = `bench-dp-year-${tag}`;
  await createSeries(ctx, [id]);
  const total = days * 86_400;
  ctx.log(`datapoints: seeding ${fmtInt(total)} points of 1-second data (${days} days) for the aggregate queries`);
  const ms = await ingest(ctx, id, total, 'year');
  ctx.log(`  seeded at ${fmtInt((total * 1000) / ms)} points/s`);
  await ctx.backend.analyze();
  for (const granularity of ['1h', '1d']) {
    const payload = { items: [{ externalId: id, start: START, end: START + days * DAY, aggregates: ['average', 'min', 'max', 'count'], granularity, limit: 10_000 }] };
    const r = await ctx.profiled(`datapoints-aggregate-${granularity}`, () => versusBare(ctx, count, payload, `aggregates ${granularity}`));
    const aggregateCounts = await statementsOf(ctx, `aggregate-${granularity}`, () => post(ctx, '/timeseries/data/list', payload, `aggregates ${granularity} (statements)`), true);
    const buckets = (JSON.parse(r.sample.toString('utf8')) as { items: Array<{ datapoints: Array<{ count: number }> }> }).items[0].datapoints;
    const counted = buckets.reduce((n, b) => n + b.count, 0);
    if (counted !== total) throw new Error(`aggregates ${granularity}: counts add up to ${counted}, expected ${total}`);
    ctx.report({
      id: `datapoints.aggregate.${granularity}`,
      workload: `average,min,max,count at ${granularity} over ${days} days of 1 s data (${fmtInt(total)} points, ${fmtInt(buckets.length)} buckets)`,
      value: `p50 ${fmtMs(r.strata.p50)} / p99 ${fmtMs(r.strata.p99)}`,
      reference: `bare Fastify route, same ${fmtInt(r.bytes)} bytes: p50 ${fmtMs(r.bare.p50)} / p99 ${fmtMs(r.bare.p99)}`,
      ratio: `${fmtRatio(r.strata.p50 / r.bare.p50)} bare time (p50)`,
      target: 'p99 ≤ 50 ms',
      met: r.strata.p99 <= 50,
      data: { strata: r.strata, bare: r.bare, buckets: buckets.length, points: total, responseBytes: r.bytes, statementsPerRequest: aggregateCounts.statements, rawSqlP50Ms: aggregateCounts.rawSqlP50Ms },
    });
    ctx.log(`  aggregates ${granularity}: p50 ${fmtMs(r.strata.p50)}, p99 ${fmtMs(r.strata.p99)} (${buckets.length} buckets)`);
  }
}

async function storage(ctx: BenchContext): Promise<void> {
  const raw = await openRaw(ctx.backend, ctx.dataDir);
  try {
    const sizes = await raw.tableBytes(['datapoint_chunks', 'datapoint_rollups']);
    const [{ points }] = await raw.query<{ points: number }>('SELECT sum(n) AS points FROM datapoint_chunks');
    const chunks = sizes.datapoint_chunks / Number(points);
    const rollups = sizes.datapoint_rollups / Number(points);
    ctx.report({
      id: 'datapoints.storage',
      workload: `Storage on disk, all ${fmtInt(points)} points stored by this run`,
      value: `${(chunks + rollups).toFixed(2)} bytes/point (points ${chunks.toFixed(2)} + rollups ${rollups.toFixed(2)})`,
      data: { points, chunkBytes: sizes.datapoint_chunks, rollupBytes: sizes.datapoint_rollups, bytesPerPoint: chunks + rollups },
    });
    ctx.log(`  storage: ${(chunks + rollups).toFixed(2)} bytes/point`);
  } finally {
    await raw.close();
  }
}
