/**
 * Catalog workloads (issue 3): time-series counts by externalId prefix and by data set, and the
 * `assetSubtreeIds` filter on events and time series under one large subtree.
 *
 * Seeds through the API: data sets, an asset hierarchy (roots of 4-ary trees, created level by level, parents
 * before children, 1000 per request, depth up to 8 with 10,000 assets per root), time series (externalIds under
 * a few prefixes, spread over the data sets, each linked to one asset) and events (each linked to two assets).
 * One root's subtree is the subtree of the filters (BENCH_CATALOG_ASSETS ÷ 10 assets; 10,000 at full size).
 * Each query is timed sequentially after warm-up; the reference is the very SQL the server ran for it
 * (recorded in the server child) on a raw better-sqlite3 connection in the benchmark process.
 *
 * Environment:
 *   BENCH_CATALOG_SERIES  time series to seed (default 100000)
 *   BENCH_CATALOG_ASSETS  assets to seed (default 100000; a multiple of 10)
 *   BENCH_CATALOG_EVENTS  events linked to assets to seed (default 100000)
 */
import type { BenchContext, Suite } from './lib/context.js';
import { intEnv } from './lib/env.js';
import type { RecordedStatement } from './lib/capture.js';
import type { HttpResponse } from './lib/http.js';
import { pool, sequential } from './lib/load.js';
import { fmtCpu, oneLine, openRaw, statementCounts, timeStatements, totalCpu, type RawDb } from './lib/raw.js';
import { fmtInt, fmtMs, fmtRatio, now, summarize } from './lib/stats.js';

const BATCH = 1000;
const WARMUP = 20;
const ROOTS = 10;
const BRANCHING = 4;
const DATA_SETS = 10;
const PREFIXES = 5;
const LIST_LIMIT = 1000;
/** Step between the assets of consecutive series and events (a prime, so every asset is used). */
const SPREAD = 7919;

function ok(res: HttpResponse, what: string): unknown {
  if (res.status !== 200 && res.status !== 201) throw new Error(`${what}: HTTP ${res.status}: ${res.body.toString('utf8').slice(0, 500)}`);
  return JSON.parse(res.body.toString('utf8'));
}

type Created = { items: Array<{ id: number; externalId?: string }> };

/** Depth (1 = root) of node k of a heap-ordered tree with `BRANCHING` children per node. */
function depthOf(k: number): number {
  let d = 1;
  while (k > 0) {
    k = Math.floor((k - 1) / BRANCHING);
    d++;
  }
  return d;
}

/** Assets in the subtree of node k (itself included) of a heap-ordered tree of `size` nodes. */
function subtreeSize(k: number, size: number): number {
  let n = 0;
  for (let lo = k, hi = k; lo < size; lo = lo * BRANCHING + 1, hi = hi * BRANCHING + BRANCHING) n += Math.min(hi, size - 1) - lo + 1;
  return n;
}

interface Seeded {
  tag: string;
  dataSetIds: number[];
  subtreeRootId: number;
  subtreeAssets: number;
  /** A small subtree: the first asset at depth 5 of root 0 (or the deepest level there is). */
  smallSubtreeId: number;
  smallSubtreeAssets: number;
  smallSubtreeDepth: number;
  maxDepth: number;
  series: number;
  events: number;
  assets: number;
}

export const catalogSuite: Suite = {
  name: 'catalog',
  async run(ctx) {
    const seeded = await seed(ctx);
    await ctx.backend.analyze();
    const raw = await openRaw(ctx.backend, ctx.dataDir);
    try {
      await queries(ctx, raw, seeded);
    } finally {
      await raw.close();
    }
  },
};

// ---------------------------------------------------------------------------------------------------------
// Seed

async function seed(ctx: BenchContext): Promise<Seeded> {
  const nSeries = intEnv('BENCH_CATALOG_SERIES', 100_000, 1000);
  const nAssets = intEnv('BENCH_CATALOG_ASSETS', 100_000, ROOTS * 10);
  const nEvents = intEnv('BENCH_CATALOG_EVENTS', 100_000, 0);
  const perRoot = Math.floor(nAssets / ROOTS);
  const assets = perRoot * ROOTS;
  // A tag in every externalId, so a reused BENCH_DATA_DIR does not conflict and the counts stay exact.
  const tag = Date.now().toString(36);

  const ds = ok(
    await ctx.call('POST', '/datasets', { items: Array.from({ length: DATA_SETS }, (_, i) => ({ externalId: `cat-${tag}-ds-${i}`, name: `catalog ${i}` })) }),
    'POST /datasets',
  ) as Created;
  const dataSetIds = ds.items.map((d) => d.id);

  // Assets: level by level, so every parent exists before its children.
  const assetIds = new Array<number>(assets);
  const byDepth = new Map<number, number[]>();
  let maxDepth = 0;
  for (let k = 0; k < perRoot; k++) {
    const d = depthOf(k);
    maxDepth = Math.max(maxDepth, d);
    let level = byDepth.get(d);
    if (!level) byDepth.set(d, (level = []));
    for (let r = 0; r < ROOTS; r++) level.push(r * perRoot + k);
  }
  const assetXid = (g: number) => `cat-${tag}-a${Math.floor(g / perRoot)}-${g % perRoot}`;
  ctx.log(`catalog: seeding ${fmtInt(assets)} assets (${ROOTS} roots, ${BRANCHING}-ary, depth ${maxDepth}) through POST /assets, level by level`);
  let t0 = now();
  for (let d = 1; d <= maxDepth; d++) {
    const level = byDepth.get(d)!;
    await pool(Math.ceil(level.length / BATCH), 2, async (b) => {
      const chunk = level.slice(b * BATCH, (b + 1) * BATCH);
      const items = chunk.map((g) => {
        const k = g % perRoot;
        return {
          externalId: assetXid(g),
          name: `asset ${g}`,
          dataSetId: dataSetIds[g % DATA_SETS],
          ...(k > 0 ? { parentExternalId: assetXid(Math.floor(g / perRoot) * perRoot + Math.floor((k - 1) / BRANCHING)) } : {}),
          metadata: { level: String(d) },
        };
      });
      const res = ok(await ctx.call('POST', '/assets', { items }), `POST /assets (depth ${d})`) as Created;
      res.items.forEach((a, i) => {
        if (a.externalId !== undefined && a.externalId !== items[i].externalId) throw new Error('POST /assets: items not returned in request order');
        assetIds[chunk[i]] = a.id;
      });
    });
  }
  const assetMs = now() - t0;
  ctx.log(`  assets in ${(assetMs / 1000).toFixed(1)} s (${fmtInt((assets * 1000) / assetMs)}/s)`);

  // Rows on one subtree are spread evenly over creation order (not created first or last), so a list that
  // walks rows in creation order meets matches at the subtree's average rate.
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const stride = gcd(SPREAD, assets) === 1 ? SPREAD : 1;
  const spread = (i: number) => assetIds[(i * stride) % assets];
  ctx.log(`catalog: seeding ${fmtInt(nSeries)} time series (${PREFIXES} externalId prefixes, ${DATA_SETS} data sets, one asset each)`);
  t0 = now();
  const perDataSet = Math.ceil(nSeries / DATA_SETS);
  await pool(Math.ceil(nSeries / BATCH), 2, async (b) => {
    const items = [];
    for (let i = b * BATCH; i < Math.min(nSeries, (b + 1) * BATCH); i++) {
      items.push({
        externalId: `cat-${tag}/site-${i % PREFIXES}/series-${i}`,
        name: `series ${i}`,
        unit: 'bar',
        dataSetId: dataSetIds[Math.floor(i / perDataSet)],
        assetId: spread(i),
        metadata: { kind: i % 3 === 0 ? 'pressure' : 'flow' },
      });
    }
    ok(await ctx.call('POST', '/timeseries', { items }), 'POST /timeseries');
  });
  const seriesMs = now() - t0;
  ctx.log(`  time series in ${(seriesMs / 1000).toFixed(1)} s (${fmtInt((nSeries * 1000) / seriesMs)}/s)`);

  if (nEvents > 0) {
    ctx.log(`catalog: seeding ${fmtInt(nEvents)} events with assetIds (two assets each)`);
    t0 = now();
    const start = Date.UTC(2025, 0, 1);
    await pool(Math.ceil(nEvents / BATCH), 2, async (b) => {
      const items = [];
      for (let i = b * BATCH; i < Math.min(nEvents, (b + 1) * BATCH); i++) {
        const a1 = spread(i);
        const a2 = spread(i + Math.floor(assets / 2) + 3);
        items.push({
          externalId: `cat-${tag}-ev-${i}`,
          type: i % 2 ? 'alarm' : 'maintenance',
          startTime: start + i * 60_000,
          endTime: start + i * 60_000 + 30_000,
          assetIds: a1 === a2 ? [a1] : [a1, a2],
          dataSetId: dataSetIds[i % DATA_SETS],
        });
      }
      ok(await ctx.call('POST', '/events', { items }), 'POST /events (catalog)');
    });
    const eventsMs = now() - t0;
    ctx.log(`  events in ${(eventsMs / 1000).toFixed(1)} s (${fmtInt((nEvents * 1000) / eventsMs)}/s)`);
  }
  ctx.note(
    `Catalog data: ${fmtInt(assets)} assets (${ROOTS} roots, each a ${BRANCHING}-ary tree of ${fmtInt(perRoot)}, depth ${maxDepth}, created level by level ${BATCH}/request), ${fmtInt(nSeries)} time series (${PREFIXES} externalId prefixes of ${fmtInt(nSeries / PREFIXES)}, ${DATA_SETS} data sets of ${fmtInt(perDataSet)}, each on one asset), ${fmtInt(nEvents)} events on two assets each, all through the API; consecutive series/events go to assets ${stride} apart, so one subtree's rows are spread evenly over creation order. The subtree filter names root 0 (${fmtInt(perRoot)} assets).`,
  );
  const smallDepth = Math.min(5, maxDepth);
  const smallK = byDepth.get(smallDepth)![0];
  return {
    tag,
    dataSetIds,
    subtreeRootId: assetIds[0],
    subtreeAssets: perRoot,
    smallSubtreeId: assetIds[smallK],
    smallSubtreeAssets: subtreeSize(smallK, perRoot),
    smallSubtreeDepth: smallDepth,
    maxDepth,
    series: nSeries,
    events: nEvents,
    assets,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Queries

interface Query {
  id: string;
  name: string;
  path: string;
  body: Record<string, unknown>;
  /** The target; undefined for an informational row. */
  targetMs?: number;
  /** Checks the first response (a count or a page size). */
  check(res: unknown): string;
}

const TABLES = /\b(FROM|JOIN)\s+(events|event_\w+|timeseries\w*|assets|asset_\w+|data_sets)\b/i;

async function queries(ctx: BenchContext, raw: RawDb, s: Seeded): Promise<void> {
  const count = ctx.settings.listRequests;
  const expectCount = (expected: number) => (res: unknown) => {
    const n = (res as { items: Array<{ count: number }> }).items[0]?.count;
    if (n !== expected) throw new Error(`expected count ${expected}, got ${JSON.stringify(res).slice(0, 200)}`);
    return `count ${fmtInt(n)}`;
  };
  const page = (res: unknown) => {
    const n = (res as { items: unknown[] }).items.length;
    if (n === 0) throw new Error('empty page');
    return `${n} items`;
  };
  const subtree = [{ id: s.subtreeRootId }];
  const list: Query[] = [
    {
      id: 'timeseries.aggregate.prefix',
      name: `POST /timeseries/aggregate count, filter.externalIdPrefix (${fmtInt(s.series / PREFIXES)} of ${fmtInt(s.series)})`,
      path: '/timeseries/aggregate',
      body: { filter: { externalIdPrefix: `cat-${s.tag}/site-2/` } },
      targetMs: 20,
      check: expectCount(s.series / PREFIXES),
    },
    {
      id: 'timeseries.aggregate.dataSet',
      name: `POST /timeseries/aggregate count, filter.dataSetIds (one of ${DATA_SETS} data sets)`,
      path: '/timeseries/aggregate',
      body: { filter: { dataSetIds: [{ id: s.dataSetIds[3] }] } },
      targetMs: 20,
      check: expectCount(Math.ceil(s.series / DATA_SETS)),
    },
    {
      id: 'events.list.subtree',
      name: `POST /events/list, filter.assetSubtreeIds = a ${fmtInt(s.subtreeAssets)}-asset subtree, limit ${LIST_LIMIT}`,
      path: '/events/list',
      body: { filter: { assetSubtreeIds: subtree }, limit: LIST_LIMIT },
      targetMs: 50,
      check: page,
    },
    {
      id: 'timeseries.list.subtree',
      name: `POST /timeseries/list, filter.assetSubtreeIds = a ${fmtInt(s.subtreeAssets)}-asset subtree, limit ${LIST_LIMIT}`,
      path: '/timeseries/list',
      body: { filter: { assetSubtreeIds: subtree }, limit: LIST_LIMIT },
      targetMs: 50,
      check: page,
    },
    {
      id: 'events.list.smallSubtree',
      name: `POST /events/list, filter.assetSubtreeIds = a ${fmtInt(s.smallSubtreeAssets)}-asset subtree (depth ${s.smallSubtreeDepth}), limit ${LIST_LIMIT} (info)`,
      path: '/events/list',
      body: { filter: { assetSubtreeIds: [{ id: s.smallSubtreeId }] }, limit: LIST_LIMIT },
      check: (res) => `${(res as { items: unknown[] }).items.length} items`,
    },
  ];
  if (s.events === 0) list.splice(2, 1);
  if (s.events === 0) list.pop();

  for (const q of list) {
    const first = ok(await ctx.call('POST', q.path, q.body), q.path);
    const checked = q.check(first);
    const run = async () => {
      const res = await ctx.call('POST', q.path, q.body);
      if (res.status !== 200) throw new Error(`${q.path}: HTTP ${res.status}`);
    };
    for (let i = 0; i < WARMUP; i++) await run();
    const timed = await ctx.serverCpu(() => ctx.profiled(`catalog-${q.id}`, () => sequential(count, run)));
    const http = summarize(timed.value);
    const serverCpu = timed.cpuMs / count;
    const databaseCpu = timed.databaseCpuMs === undefined ? undefined : timed.databaseCpuMs / count;

    // Reference: the server's own statements for this request, on a raw connection.
    let statements: RecordedStatement[] = [];
    let all: RecordedStatement[] = [];
    let plans: string[][] = [];
    let ref: { p50: number; p99: number; cpu: number; databaseCpu?: number } | undefined;
    try {
      await ctx.server.command({ type: 'capture-start' });
      try {
        await run();
      } finally {
        all = await ctx.server.command<RecordedStatement[]>({ type: 'capture-stop' });
        statements = all.filter((st) => TABLES.test(st.text));
      }
      plans = [];
      for (const st of statements) plans.push(await raw.explain(st));
      const timing = await timeStatements(raw, statements, count, WARMUP);
      const sq = summarize(timing.latencies);
      ref = { p50: sq.p50, p99: sq.p99, cpu: timing.cpuMs, databaseCpu: timing.databaseCpuMs };
    } catch (err) {
      ctx.log(`  ${q.id}: no SQL reference (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`);
    }
    ctx.report({
      id: `catalog.${q.id}`,
      workload: q.name,
      value: `p50 ${fmtMs(http.p50)} / p99 ${fmtMs(http.p99)}; ${fmtCpu(serverCpu, databaseCpu)}`,
      reference: ref
        ? `same SQL (${statements.length} statements), ${raw.label}: p50 ${fmtMs(ref.p50)} / p99 ${fmtMs(ref.p99)}; ${fmtCpu(ref.cpu, ref.databaseCpu)}`
        : 'n/a (SQL capture off)',
      ratio: ref ? `${fmtRatio(http.p50 / ref.p50)} raw time (p50); ${fmtRatio(totalCpu(serverCpu, databaseCpu) / totalCpu(ref.cpu, ref.databaseCpu))} its CPU` : undefined,
      target: q.targetMs === undefined ? undefined : `p99 ≤ ${q.targetMs} ms`,
      met: q.targetMs === undefined ? undefined : http.p99 <= q.targetMs,
      data: {
        http,
        serverCpuMsPerRequest: serverCpu,
        databaseCpuMsPerRequest: databaseCpu,
        sqlOnly: ref,
        result: checked,
        body: q.body,
        // Everything the request sent (the project lookup and transaction control too): round trips on PostgreSQL.
        statementsPerRequest: statementCounts(all).statements,
        transactionControlPerRequest: statementCounts(all).transactionControl,
      },
    });
    ctx.diagnose(`catalog.${q.id}`, { sql: statements.map((st) => oneLine(st.text.length > 400 ? { ...st, text: st.text.replace(/^\s*SELECT\s[\s\S]*?\sFROM\s/i, 'SELECT … FROM ') } : st)), plans, serverCpuMs: serverCpu, databaseCpuMs: databaseCpu, sqlCpuMs: ref?.cpu ?? NaN, sqlDatabaseCpuMs: ref?.databaseCpu });
    ctx.log(`  ${q.id}: ${checked}; HTTP p50 ${fmtMs(http.p50)} p99 ${fmtMs(http.p99)}, server ${fmtCpu(serverCpu, databaseCpu)}; raw SQL p50 ${ref ? fmtMs(ref.p50) : 'n/a'}`);
  }
  ctx.note(
    'Catalog reference: the statements on the catalog tables (assets, events, time series, data sets and their side tables) the server ran for one request (recorded in the server child, including subtree resolution and its size check), executed on a raw connection in the benchmark process (better-sqlite3, read-only; or one node-postgres connection). Ratios: Strata p50 over HTTP ÷ raw SQL p50, and server CPU per request ÷ raw SQL CPU per run.',
  );
}
