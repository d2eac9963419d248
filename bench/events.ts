/**
 * Events workloads (issue 2): create throughput, list latency per filter shape, deep paging, partitioned
 * export, and GET by id against a bare route. Each figure comes with a reference measured in the same run.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { appSchema } from '../src/app.js';
import { migrate } from '../src/storage/migrate.js';
import pg from 'pg';
import { numberedPlaceholders, PostgresStore } from '../src/storage/postgres-store.js';
import { SqliteStore } from '../src/storage/sqlite-store.js';
import { sqliteSync } from './lib/backend.js';
import type { BenchContext, Suite } from './lib/context.js';
import { benchEvents, YEAR_MS, YEAR_START } from './events-data.js';
import { expectStatus } from './lib/http.js';
import { closedLoop, pool, sequential } from './lib/load.js';
import { startServers } from './lib/servers.js';
import type { RecordedStatement } from './lib/capture.js';
import { fmtCpu, fmtStatements, oneLine, openRaw, statementCounts, timeStatements, totalCpu, type RawDb } from './lib/raw.js';
import { openReadOnly } from './lib/sqlite.js';
import { cpuNow, fmtInt, fmtMs, fmtRatio, now, summarize } from './lib/stats.js';

const BATCH = 1000;
const LIST_LIMIT = 1000;
const SORT = [{ property: ['startTime'], order: 'desc' as const }];
const WARMUP = 20;

export const eventsSuite: Suite = {
  name: 'events',
  async run(ctx) {
    const n = ctx.settings.events;
    // A PostgreSQL cluster lasts one run: its database starts empty.
    const existing = ctx.backend.kind === 'sqlite' ? countExisting(ctx.dataDir) : 0;
    if (existing === 0) {
      const seeded = await seed(ctx, n);
      await ctx.backend.analyze();
      await seedReference(ctx, n, seeded);
    } else if (existing === n) {
      ctx.log(`reusing the ${fmtInt(n)} events in ${ctx.dataDir}; create is not measured`);
      ctx.note(`Create was not measured: the ${fmtInt(n)} events of an earlier run in BENCH_DATA_DIR were reused.`);
    } else {
      throw new Error(`${ctx.dataDir} holds ${fmtInt(existing)} events, not BENCH_EVENTS=${n}; use another BENCH_DATA_DIR or remove it`);
    }
    const raw = await openRaw(ctx.backend, ctx.dataDir);
    try {
      await listQueries(ctx, raw);
      await deepPaging(ctx, raw);
      await exportAll(ctx, raw, n);
      await getById(ctx, raw);
      await createStatements(ctx, n);
    } finally {
      await raw.close();
    }
  },
};

// ---------------------------------------------------------------------------------------------------------
// Create

/** Events already in the data directory (a reused BENCH_DATA_DIR), 0 for a fresh one. */
function countExisting(dataDir: string): number {
  if (!existsSync(join(dataDir, 'strata.db'))) return 0;
  const db = openReadOnly(dataDir);
  try {
    return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

interface SeedResult {
  /** Elapsed ms at which each request completed, in completion order. */
  completions: number[];
  /** Events the create reference inserts, and the server's CPU ms when that many were created. */
  referenceEvents: number;
  cpuAtReference: number;
  /** The database server's CPU ms when that many were created (PostgreSQL). */
  databaseCpuAtReference?: number;
}

/** Seeds through the API in 1000-item requests, a few in flight. */
async function seed(ctx: BenchContext, n: number): Promise<SeedResult> {
  const batches = Math.ceil(n / BATCH);
  const concurrency = 3;
  const referenceEvents = Math.min(n, Math.max(BATCH, Math.floor(ctx.settings.referenceEvents / BATCH) * BATCH));
  const referenceBatches = Math.ceil(referenceEvents / BATCH);
  const completions: number[] = [];
  let created = 0;
  // The server's CPU clock after each completed request (in completion order), to see cost growth.
  const cpuAfter: Array<Promise<number>> = [];
  ctx.log(`seeding ${fmtInt(n)} events through POST /events (${batches} requests of ${BATCH}, ${concurrency} in flight)`);
  const t0 = now();
  let lastLog = t0;
  const cpuStart = await ctx.server.command<number>({ type: 'cpu' });
  const databaseCpuStart = ctx.backend.cpuMs();
  const databaseCpuAfter: Array<number | undefined> = [];
  const { cpuMs, databaseCpuMs } = await ctx.serverCpu(() =>
    ctx.profiled('create', () =>
      pool(batches, concurrency, async (b) => {
        const items = benchEvents(b * BATCH, Math.min(BATCH, n - b * BATCH));
        const res = await ctx.call('POST', '/events', JSON.stringify({ items }));
        expectStatus(res, 201, `POST /events (batch ${b})`);
        created += items.length;
        completions.push(now() - t0);
        cpuAfter.push(ctx.server.command<number>({ type: 'cpu' }));
        databaseCpuAfter.push(ctx.backend.cpuMs());
        if (now() - lastLog > 10_000) {
          lastLog = now();
          ctx.log(`  ${fmtInt(created)} created, ${fmtInt((created * 1000) / (lastLog - t0))} events/s so far`);
        }
      }),
    ),
  );
  const ms = now() - t0;
  const cpu = (await Promise.all(cpuAfter)).map((c) => c - cpuStart);
  const rate = (n * 1000) / ms;
  const cpuPer1000 = (cpuMs * 1000) / n;
  const databaseCpuPer1000 = databaseCpuMs === undefined ? undefined : (databaseCpuMs * 1000) / n;
  // The first and the last tenth of the requests: does insert cost grow with table size?
  const tenth = Math.max(1, Math.floor(batches / 10));
  const last = batches - 1;
  const firstRate = (tenth * BATCH * 1000) / completions[tenth - 1];
  const lastRate = batches > tenth ? (tenth * BATCH * 1000) / (completions[last] - completions[last - tenth]) : firstRate;
  const firstCpu = cpu[tenth - 1] / tenth;
  const lastCpu = batches > tenth ? (cpu[last] - cpu[last - tenth]) / tenth : firstCpu;
  ctx.log(
    `seeded in ${(ms / 1000).toFixed(1)} s: ${fmtInt(rate)} events/s, server CPU ${cpuPer1000.toFixed(0)} ms per 1000 (first tenth ${fmtInt(firstRate)}/s, ${firstCpu.toFixed(0)} ms CPU per 1000; last tenth ${fmtInt(lastRate)}/s, ${lastCpu.toFixed(0)} ms)`,
  );
  ctx.report({
    id: 'events.create',
    workload: `Create ${fmtInt(n)} events (1000/request, 5 metadata keys)`,
    value: `${fmtInt(rate)} events/s; CPU ${cpuPer1000.toFixed(0)} ms${databaseCpuPer1000 === undefined ? '' : ` + PostgreSQL ${databaseCpuPer1000.toFixed(0)} ms`} per 1000 (first 10%: ${fmtInt(firstRate)}/s, ${firstCpu.toFixed(0)} ms; last 10%: ${fmtInt(lastRate)}/s, ${lastCpu.toFixed(0)} ms)`,
    target: '≥ 50,000 events/s',
    met: rate >= 50_000,
    data: {
      events: n,
      ms,
      eventsPerSecond: rate,
      concurrency,
      serverCpuMs: cpuMs,
      serverCpuMsPer1000: cpuPer1000,
      databaseCpuMsPer1000: databaseCpuPer1000,
      firstTenthPerSecond: firstRate,
      firstTenthCpuMsPer1000: firstCpu,
      lastTenthPerSecond: lastRate,
      lastTenthCpuMsPer1000: lastCpu,
    },
  });
  const databaseAtReference = databaseCpuAfter[referenceBatches - 1];
  return {
    completions,
    referenceEvents,
    cpuAtReference: cpu[referenceBatches - 1],
    databaseCpuAtReference: databaseAtReference === undefined || databaseCpuStart === undefined ? undefined : databaseAtReference - databaseCpuStart,
  };
}

/**
 * Where the create reference inserts: a fresh database with the server's own schema, on the engine under
 * test, reached the fastest plain way (SQLite: better-sqlite3 with the server's pragmas; PostgreSQL: one
 * node-postgres connection to a new database on the same cluster, durable commits as the server's).
 */
interface BulkTarget {
  describe: string;
  run(text: string, params: unknown[]): Promise<void> | void;
  begin(): Promise<void> | void;
  commit(): Promise<void> | void;
  /** CPU ms used so far by the database server (PostgreSQL), undefined when it runs in this process. */
  databaseCpuMs(): number | undefined;
  close(): Promise<void>;
}

async function bulkTarget(ctx: BenchContext): Promise<BulkTarget> {
  if (ctx.backend.kind === 'sqlite') {
    const dir = join(ctx.tmpDir, 'reference-insert');
    const store = new SqliteStore({ dataDir: dir, synchronous: sqliteSync() });
    await migrate(store, appSchema());
    const db = store.connection;
    const statements = new Map<string, Database.Statement>();
    const prepared = (text: string) => {
      let stmt = statements.get(text);
      if (!stmt) statements.set(text, (stmt = db.prepare(text)));
      return stmt;
    };
    return {
      describe: 'raw SQLite insert',
      run: (text, params) => void prepared(text).run(params),
      begin: () => void db.exec('BEGIN IMMEDIATE'),
      commit: () => void db.exec('COMMIT'),
      databaseCpuMs: () => undefined,
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = await ctx.backend.createDatabase!('strata_reference');
  const store = new PostgresStore({ url, poolSize: 1 });
  await migrate(store, appSchema());
  await store.close();
  const client = new pg.Client({ connectionString: url, application_name: 'strata-bench-reference' });
  await client.connect();
  return {
    describe: 'raw PostgreSQL insert (node-postgres)',
    run: async (text, params) => void (await client.query(numberedPlaceholders(text), params)),
    begin: async () => void (await client.query('BEGIN')),
    commit: async () => void (await client.query('COMMIT')),
    databaseCpuMs: () => ctx.backend.cpuMs(),
    close: () => client.end(),
  };
}

/**
 * Reference for create: the same rows into a fresh database with the server's own schema and settings (same
 * indexes, metadata side table, full-text index), bulk-inserted the way the engine is fastest (multi-row
 * INSERTs, explicit ids, metadata rows in index order), 1000 events per transaction. Generating the rows is
 * not timed. This is the floor of the database work a create must do.
 * Only the first BENCH_REFERENCE_EVENTS (default 200,000) are inserted, and compared with the API over the
 * same first events (inserts get slower as tables grow, so like is compared with like).
 */
async function seedReference(ctx: BenchContext, n: number, seeded: SeedResult): Promise<void> {
  const k = seeded.referenceEvents;
  const apiRate = (k * 1000) / seeded.completions[Math.ceil(k / BATCH) - 1];
  const apiCpuPer1000 = (seeded.cpuAtReference * 1000) / k;
  const target = await bulkTarget(ctx);
  try {
    const projectId = 1;
    await target.run('INSERT INTO projects (id, name, created_time) VALUES (?, ?, ?)', [projectId, 'bench', Date.now()]);
    // Best-practice bulk insert: multi-row statements, explicit ids, metadata rows in index order.
    const multi = (head: string, row: string, rows: number) => `${head} VALUES ${Array(rows).fill(row).join(', ')}`;
    const EVENTS_HEAD =
      'INSERT INTO events (id, project_id, external_id, data_set_id, start_time, end_time, type, subtype, description, source, metadata, asset_ids, created_time, last_updated_time)';
    const EVENTS_ROW = '(?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)';
    const META_HEAD = 'INSERT INTO event_metadata (event_id, project_id, key, key_lc, value, value_lc)';
    const META_ROW = '(?, ?, ?, ?, ?, ?)';
    ctx.log(`reference: inserting the first ${fmtInt(k)} of the same rows straight into ${ctx.backend.kind}`);
    let ms = 0;
    let cpuMs = 0;
    let databaseCpuMs = 0;
    let nextId = 1;
    for (let from = 0; from < k; from += BATCH) {
      const items = benchEvents(from, Math.min(BATCH, k - from));
      const t0 = now();
      const c0 = cpuNow();
      const d0 = target.databaseCpuMs();
      await target.begin();
      const ts = Date.now();
      const meta: Array<[number, string, string, string, string]> = [];
      for (let i = 0; i < items.length; i += 500) {
        const chunk = items.slice(i, i + 500);
        const params: unknown[] = [];
        for (const e of chunk) {
          const id = nextId++;
          params.push(id, projectId, e.externalId, e.startTime, e.endTime ?? null, e.type, e.subtype, e.description, e.source, JSON.stringify(e.metadata), ts, ts);
          for (const [key, v] of Object.entries(e.metadata)) meta.push([id, key, key.toLowerCase(), v, v.toLowerCase()]);
        }
        await target.run(multi(EVENTS_HEAD, EVENTS_ROW, chunk.length), params);
      }
      meta.sort((x, y) => (x[2] < y[2] ? -1 : x[2] > y[2] ? 1 : x[4] < y[4] ? -1 : x[4] > y[4] ? 1 : x[0] - y[0]));
      for (let i = 0; i < meta.length; i += 1000) {
        const chunk = meta.slice(i, i + 1000);
        await target.run(
          multi(META_HEAD, META_ROW, chunk.length),
          chunk.flatMap(([id, key, keyLc, v, vLc]) => [id, projectId, key, keyLc, v, vLc]),
        );
      }
      await target.commit();
      cpuMs += cpuNow() - c0;
      const d1 = target.databaseCpuMs();
      if (d0 !== undefined && d1 !== undefined) databaseCpuMs += d1 - d0;
      ms += now() - t0;
    }
    const rate = (k * 1000) / ms;
    const refCpuPer1000 = ((cpuMs + databaseCpuMs) * 1000) / k;
    const row = ctxRow(ctx, 'events.create');
    const apiTotalCpuPer1000 = apiCpuPer1000 + ((seeded.databaseCpuAtReference ?? 0) * 1000) / k;
    const cpuWord = ctx.backend.kind === 'sqlite' ? 'CPU' : 'CPU incl. PostgreSQL';
    const which = k === n ? 'same rows & schema' : `first ${fmtInt(k)} rows (Strata: ${fmtInt(apiRate)}/s, ${apiTotalCpuPer1000.toFixed(0)} ms ${cpuWord} per 1000)`;
    row.reference = `${target.describe}, ${which}: ${fmtInt(rate)} events/s, ${refCpuPer1000.toFixed(0)} ms ${cpuWord} per 1000`;
    row.ratio = `${fmtRatio(apiRate / rate)} of raw rate; ${fmtRatio(apiTotalCpuPer1000 / refCpuPer1000)} its CPU`;
    Object.assign(row.data, {
      referenceEvents: k,
      referenceEventsPerSecond: rate,
      referenceCpuMsPer1000: refCpuPer1000,
      apiEventsPerSecondOverReferenceEvents: apiRate,
      apiCpuMsPer1000OverReferenceEvents: apiTotalCpuPer1000,
    });
    ctx.note(
      `Create reference: the first ${fmtInt(k)} of the same rows bulk-inserted through ${ctx.backend.kind === 'sqlite' ? 'better-sqlite3' : 'one node-postgres connection'} (multi-row INSERTs of 500, explicit ids, metadata rows sorted in index order) into a fresh database with the server schema and settings (indexes, metadata table, full-text index), 1000 events per transaction, from the benchmark process; no HTTP, JSON or validation. Compared with Strata over the same first events: rate, and CPU time per 1000 events (server child vs. benchmark process${ctx.backend.kind === 'sqlite' ? '' : ', each plus the PostgreSQL server\'s processes'}).`,
    );
  } finally {
    await target.close();
  }
}

/**
 * What one create request of 1000 events sends to the database (after the measurements, with events
 * beyond the seeded ones): on PostgreSQL each statement is a round trip.
 */
async function createStatements(ctx: BenchContext, n: number): Promise<void> {
  const items = benchEvents(n, BATCH);
  const statements = await ctx.statementsOf(async () => expectStatus(await ctx.call('POST', '/events', JSON.stringify({ items })), 201, 'POST /events (statements)'));
  const counts = statementCounts(statements);
  const row = ctx.rows().find((r) => r.id === 'events.create');
  if (row) Object.assign(row.data, { statementsPerRequest: counts.statements, transactionControlPerRequest: counts.transactionControl });
  ctx.diagnose('events.create.statements', { ...counts, sql: statements.slice(0, 20).map((st) => oneLine(st, 300)), plans: [] });
  ctx.log(`one create request of ${BATCH}: ${fmtStatements(counts)}`);
}

function ctxRow(ctx: BenchContext, id: string) {
  const row = ctx.rows().find((r) => r.id === id);
  if (!row) throw new Error(`no result row ${id}`);
  return row;
}

// ---------------------------------------------------------------------------------------------------------
// List

/** A list request body (the API's shape; kept local so the benchmark does not depend on server types). */
type ListBody = Record<string, unknown>;

interface ListQuery {
  id: string;
  name: string;
  body: ListBody;
}

const MONTH_START = YEAR_START + Math.floor(YEAR_MS * (5 / 12));
const MONTH_END = MONTH_START + 31 * 24 * 3600 * 1000 - 1;

export const LIST_QUERIES: ListQuery[] = [
  { id: 'none', name: 'no filter', body: {} },
  {
    id: 'typeRange',
    name: 'type equals + startTime range (~1%)',
    body: {
      advancedFilter: {
        and: [{ equals: { property: ['type'], value: 'alarm' } }, { range: { property: ['startTime'], gte: MONTH_START, lte: MONTH_END } }],
      },
    },
  },
  { id: 'metadata', name: 'metadata equals (2%)', body: { advancedFilter: { equals: { property: ['metadata', 'operator'], value: 'op-17' } } } },
  { id: 'prefix', name: 'externalId prefix (2%)', body: { advancedFilter: { prefix: { property: ['externalId'], value: 'site-03/pump-' } } } },
  { id: 'search', name: 'search description (~1.4%)', body: { advancedFilter: { search: { property: ['description'], value: 'cavitation' } } } },
];

function listBody(q: ListQuery, cursor?: string): ListBody {
  return { ...q.body, sort: SORT, limit: LIST_LIMIT, ...(cursor ? { cursor } : {}) };
}

interface ListPage {
  items: Array<{ id: number; startTime?: number }>;
  nextCursor?: string;
}

async function postList(ctx: BenchContext, body: ListBody): Promise<{ bytes: number; page: ListPage }> {
  const res = expectStatus(await ctx.call('POST', '/events/list', body), 200, 'POST /events/list');
  return { bytes: res.body.length, page: JSON.parse(res.body.toString('utf8')) as ListPage };
}

/** Reads the whole response without parsing it, so the load generator stays light. */
async function postListRaw(ctx: BenchContext, body: ListBody): Promise<void> {
  expectStatus(await ctx.call('POST', '/events/list', body), 200, 'POST /events/list');
}

/** The statements on the events table the server ran for one request (recorded in the server child), with plans. */
async function captureList(
  ctx: BenchContext,
  raw: RawDb,
  body: ListBody,
): Promise<{ statements: RecordedStatement[]; plans: string[][]; counts: ReturnType<typeof statementCounts> }> {
  await ctx.server.command({ type: 'capture-start' });
  let recorded: RecordedStatement[];
  try {
    await postListRaw(ctx, body);
  } finally {
    recorded = await ctx.server.command<RecordedStatement[]>({ type: 'capture-stop' });
  }
  const statements = recorded.filter((s) => /\b(FROM|JOIN)\s+events\b/i.test(s.text));
  if (statements.length === 0) throw new Error(`no SQL on the events table was recorded for ${JSON.stringify(body)}`);
  const plans: string[][] = [];
  for (const s of statements) plans.push(await raw.explain(s));
  // Everything the request sent (the project lookup and transaction control too): round trips on PostgreSQL.
  return { statements, plans, counts: statementCounts(recorded) };
}

/** Latencies of `count` calls and the CPU time per call (ms) of this process. */
function cpuTimed(count: number, fn: () => void): { latencies: number[]; cpuMs: number } {
  const c0 = cpuNow();
  const latencies = timeSync(count, fn);
  return { latencies, cpuMs: (cpuNow() - c0) / count };
}

function timeSync(count: number, fn: () => void): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    fn();
    out.push(now() - t0);
  }
  return out;
}

async function listQueries(ctx: BenchContext, raw: RawDb): Promise<void> {
  const count = ctx.settings.listRequests;
  for (const q of LIST_QUERIES) {
    const body = listBody(q);
    const first = await postList(ctx, body);
    checkDescending(first.page, q.id);
    for (let i = 0; i < WARMUP; i++) await postListRaw(ctx, body);
    const timed = await ctx.serverCpu(() => ctx.profiled(`list-${q.id}`, () => sequential(count, () => postListRaw(ctx, body))));
    const http = summarize(timed.value);
    const serverCpu = timed.cpuMs / count;
    const databaseCpu = timed.databaseCpuMs === undefined ? undefined : timed.databaseCpuMs / count;

    // Reference: the server's own statements on a raw connection in this process. For the breakdown also
    // JSON.stringify of the same response.
    const { statements, plans, counts } = await captureList(ctx, raw, body);
    const sqlRun = await timeStatements(raw, statements, count, WARMUP);
    const sqlOnly = summarize(sqlRun.latencies);
    const stringifyRun = cpuTimed(count, () => JSON.stringify(first.page));
    const items = first.page.items.length;
    const joinFix = raw.kind === 'postgres' ? await withProjectInJoin(raw, statements, count) : undefined;
    if (joinFix) ctx.log(`  list ${q.id}: the same SQL with the project in the page's join: raw p50 ${fmtMs(joinFix.p50)} (PostgreSQL CPU ${fmtMs(joinFix.databaseCpuMs ?? NaN)})`);

    ctx.report({
      id: `events.list.${q.id}`,
      workload: `List, ${q.name}, sort startTime desc, limit 1000`,
      value: `p50 ${fmtMs(http.p50)} / p99 ${fmtMs(http.p99)}; ${fmtCpu(serverCpu, databaseCpu)}`,
      reference: `same SQL, ${raw.label}: p50 ${fmtMs(sqlOnly.p50)} / p99 ${fmtMs(sqlOnly.p99)}; ${fmtCpu(sqlRun.cpuMs, sqlRun.databaseCpuMs)}`,
      ratio: `${fmtRatio(http.p50 / sqlOnly.p50)} raw time (p50); ${fmtRatio(totalCpu(serverCpu, databaseCpu) / totalCpu(sqlRun.cpuMs, sqlRun.databaseCpuMs))} its CPU`,
      target: 'p99 ≤ 25 ms',
      met: http.p99 <= 25,
      data: {
        http,
        serverCpuMsPerRequest: serverCpu,
        databaseCpuMsPerRequest: databaseCpu,
        sqlOnly,
        sqlCpuMs: sqlRun.cpuMs,
        sqlDatabaseCpuMs: sqlRun.databaseCpuMs,
        stringifyCpuMs: stringifyRun.cpuMs,
        items,
        responseBytes: first.bytes,
        rawWithProjectInJoin: joinFix,
        statementsPerRequest: counts.statements,
        transactionControlPerRequest: counts.transactionControl,
      },
    });
    ctx.diagnose(`events.list.${q.id}`, {
      serverCpuMsPerRequest: serverCpu,
      databaseCpuMsPerRequest: databaseCpu,
      sqlCpuMs: sqlRun.cpuMs,
      sqlDatabaseCpuMs: sqlRun.databaseCpuMs,
      stringifyCpuMs: stringifyRun.cpuMs,
      otherServerCpuMs: Math.max(0, serverCpu - sqlRun.cpuMs - stringifyRun.cpuMs),
      sql: statements.map((s) => oneLine(s)),
      plans,
    });
    ctx.log(
      `  list ${q.id}: ${items} items, ${fmtInt(first.bytes)} bytes, HTTP p50 ${fmtMs(http.p50)} p99 ${fmtMs(http.p99)}, server ${fmtCpu(serverCpu, databaseCpu)}/request; raw SQL p50 ${fmtMs(sqlOnly.p50)}, ${fmtCpu(sqlRun.cpuMs, sqlRun.databaseCpuMs)}`,
    );
  }
  ctx.note(
    `List reference: the statements on the events table that the server ran for the request (recorded inside the server child) executed through ${raw.kind === 'sqlite' ? 'better-sqlite3 on a read-only connection' : 'one node-postgres connection (unnamed statements, as the server sends them)'} in the benchmark process. Ratios: Strata p50 over HTTP ÷ raw SQL p50, and server CPU per request ÷ raw SQL CPU per run. "CPU" is user+system CPU time per request (server child) or per run (reference), which other load on the machine disturbs far less than latency${raw.kind === 'sqlite' ? '' : '; "+ PostgreSQL" is the CPU time of the database server\'s processes meanwhile (/proc), added in the ratio'}.`,
  );
}

/**
 * PostgreSQL: the page's statements with the events table's project added to the join that fetches the
 * page's rows by id (`JOIN events e ON e.id = q.__id` becomes `... AND e.project_id = <project>`), timed on
 * the raw connection. The table's key there is (project_id, id); a join on the id alone cannot seek it.
 * Undefined when the statements have no such join.
 */
async function withProjectInJoin(raw: RawDb, statements: RecordedStatement[], count: number) {
  let changed = false;
  const patched = statements.map((st) => {
    const project = /\(e\.project_id = \$1\)/.test(st.text) ? Number(st.params[0]) : undefined;
    if (project === undefined || !Number.isInteger(project)) return st;
    const text = st.text.replace(/JOIN events e ON e\.id = ([pq])\.__id/g, (_, alias: string) => {
      changed = true;
      return `JOIN events e ON e.id = ${alias}.__id AND e.project_id = ${project}`;
    });
    return { ...st, text };
  });
  if (!changed) return undefined;
  const t = await timeStatements(raw, patched, count, 5);
  return { ...summarize(t.latencies), cpuMs: t.cpuMs, databaseCpuMs: t.databaseCpuMs };
}

function checkDescending(page: ListPage, what: string): void {
  for (let i = 1; i < page.items.length; i++) {
    const a = page.items[i - 1].startTime ?? Infinity;
    const b = page.items[i].startTime ?? Infinity;
    if (b > a) throw new Error(`list ${what}: items are not sorted by startTime desc at index ${i}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Deep paging

async function deepPaging(ctx: BenchContext, raw: RawDb): Promise<void> {
  const q = LIST_QUERIES[0];
  const totalPages = Math.ceil(ctx.settings.events / LIST_LIMIT);
  const depth = Math.min(500, totalPages);
  ctx.log(`deep paging: following cursors to page ${depth} of ${totalPages}`);
  let cursor: string | undefined;
  for (let p = 1; p < depth; p++) {
    const res = expectStatus(await ctx.call('POST', '/events/list', listBody(q, cursor)), 200, 'POST /events/list');
    cursor = nextCursorOf(res.body);
    if (!cursor) throw new Error(`deep paging: no cursor after page ${p}`);
  }
  const deepBody = listBody(q, cursor);
  const firstBody = listBody(q);
  const count = Math.max(50, Math.floor(ctx.settings.listRequests / 2));
  for (let i = 0; i < WARMUP; i++) {
    await postListRaw(ctx, firstBody);
    await postListRaw(ctx, deepBody);
  }
  // Interleaved, so drift on a noisy machine hits both alike.
  const first: number[] = [];
  const deep: number[] = [];
  for (let i = 0; i < count; i++) {
    let t0 = now();
    await postListRaw(ctx, firstBody);
    first.push(now() - t0);
    t0 = now();
    await postListRaw(ctx, deepBody);
    deep.push(now() - t0);
  }
  const a = summarize(first);
  const b = summarize(deep);
  const c1 = await captureList(ctx, raw, firstBody);
  const cD = await captureList(ctx, raw, deepBody);
  await timeStatements(raw, cD.statements, 0, WARMUP);
  const raw1 = summarize((await timeStatements(raw, c1.statements, count)).latencies);
  const rawD = summarize((await timeStatements(raw, cD.statements, count)).latencies);
  const ratio = b.p50 / a.p50;
  ctx.report({
    id: 'events.list.deepPage',
    workload: `List page ${depth} vs page 1 (no filter, sort startTime desc, limit 1000)`,
    value: `page ${depth} p50 ${fmtMs(b.p50)} vs page 1 p50 ${fmtMs(a.p50)}: ${fmtRatio(ratio)}`,
    reference: `raw SQL: page ${depth} ${fmtMs(rawD.p50)} vs page 1 ${fmtMs(raw1.p50)}`,
    ratio: `${fmtRatio(rawD.p50 / raw1.p50)} raw`,
    target: 'within 1.5×',
    met: ratio <= 1.5,
    data: { depth, totalPages, page1: a, deepPage: b, ratio, rawPage1: raw1, rawDeepPage: rawD },
  });
  ctx.diagnose('events.list.deepPage', { sql: cD.statements.map((s) => oneLine(s)), plans: cD.plans });
  if (depth < 500) ctx.note(`Deep paging: with ${fmtInt(ctx.settings.events)} events there are only ${totalPages} pages of 1000; page ${depth} (the last) was used instead of page 500.`);
}

// ---------------------------------------------------------------------------------------------------------
// Export

const CURSOR_AT_END = /,"nextCursor":"([^"]+)"\}$/;

/** The next cursor of a list response, read from its end without parsing the whole body. */
function nextCursorOf(body: Buffer): string | undefined {
  const tail = body.subarray(Math.max(0, body.length - 2048)).toString('utf8');
  const m = CURSOR_AT_END.exec(tail);
  if (m) return m[1];
  if (tail.endsWith(']}')) return undefined;
  return (JSON.parse(body.toString('utf8')) as ListPage).nextCursor;
}

async function exportAll(ctx: BenchContext, raw: RawDb, n: number): Promise<void> {
  const partitions = 10;
  const maxPages = Math.ceil(n / LIST_LIMIT) + 20;
  ctx.log(`export: ${partitions} partitions in parallel, limit ${LIST_LIMIT}`);
  const bodies: Buffer[][] = Array.from({ length: partitions }, () => []);
  const t0 = now();
  const { cpuMs, databaseCpuMs } = await ctx.serverCpu(() =>
    ctx.profiled('export', () =>
      Promise.all(
        bodies.map(async (pages, k) => {
          let cursor: string | undefined;
          for (let p = 0; p < maxPages; p++) {
            const body = { partition: `${k + 1}/${partitions}`, limit: LIST_LIMIT, ...(cursor ? { cursor } : {}) };
            const res = expectStatus(await ctx.call('POST', '/events/list', body), 200, 'export page');
            pages.push(res.body);
            cursor = nextCursorOf(res.body);
            if (!cursor) return;
          }
          throw new Error(`export: partition ${k + 1} did not end within ${maxPages} pages`);
        }),
      ),
    ),
  );
  const ms = now() - t0;

  // Reference: JSON.stringify of the same pages (parsing them back is not timed); also checks the export.
  let stringifyMs = 0;
  let stringifyCpuMs = 0;
  let items = 0;
  let bytes = 0;
  const ids = new Set<number>();
  for (const pages of bodies) {
    for (const buf of pages) {
      bytes += buf.length;
      const page = JSON.parse(buf.toString('utf8')) as ListPage;
      items += page.items.length;
      for (const it of page.items) ids.add(it.id);
      const s0 = now();
      const c0 = cpuNow();
      JSON.stringify(page);
      stringifyCpuMs += cpuNow() - c0;
      stringifyMs += now() - s0;
    }
  }
  if (items !== n || ids.size !== n) throw new Error(`export: expected ${n} distinct events, got ${items} items with ${ids.size} distinct ids`);
  const rate = (items * 1000) / ms;
  const refRate = (items * 1000) / stringifyMs;

  // Diagnostics: the SQL of a page in the middle of partition 1, its plan and its raw time.
  const mid = bodies[0][Math.floor((bodies[0].length - 1) / 2)];
  const midCursor = nextCursorOf(mid);
  const pageBody = { partition: `1/${partitions}`, limit: LIST_LIMIT, ...(midCursor ? { cursor: midCursor } : {}) };
  const page = await captureList(ctx, raw, pageBody);
  const rawRun = await timeStatements(raw, page.statements, 20, 5);
  const rawPage = summarize(rawRun.latencies);
  const cpuPer1000 = (cpuMs * 1000) / items;
  const databaseCpuPer1000 = databaseCpuMs === undefined ? undefined : (databaseCpuMs * 1000) / items;
  const refCpuPer1000 = (stringifyCpuMs * 1000) / items;
  ctx.diagnose('events.list.exportPage', {
    sql: page.statements.map((s) => oneLine(s)),
    plans: page.plans,
    serverCpuMsPer1000Events: cpuPer1000,
    databaseCpuMsPer1000Events: databaseCpuPer1000,
    rawSqlCpuMsPerPage: rawRun.cpuMs,
    rawSqlDatabaseCpuMsPerPage: rawRun.databaseCpuMs,
    rawSqlWallMsPerPageP50: rawPage.p50,
    stringifyCpuMsPer1000Events: refCpuPer1000,
  });
  ctx.report({
    id: 'events.export',
    workload: `Export all ${fmtInt(n)} events, 10 partitions in parallel, limit 1000`,
    value: `${fmtInt(rate)} events/s (${(ms / 1000).toFixed(1)} s, ${fmtInt(bytes / 2 ** 20)} MiB); ${fmtCpu(cpuPer1000, databaseCpuPer1000)} per 1000`,
    reference: `JSON.stringify of the same pages: ${fmtInt(refRate)} events/s; CPU ${fmtMs(refCpuPer1000)} per 1000`,
    ratio: `${fmtRatio(rate / refRate)} of stringify rate; ${fmtRatio(cpuPer1000 / refCpuPer1000)} its CPU`,
    target: '≥ 200,000 events/s',
    met: rate >= 200_000,
    data: {
      events: items,
      ms,
      eventsPerSecond: rate,
      bytes,
      pages: bodies.reduce((a, p) => a + p.length, 0),
      serverCpuMs: cpuMs,
      serverCpuMsPer1000: cpuPer1000,
      databaseCpuMsPer1000: databaseCpuPer1000,
      stringifyMs,
      stringifyCpuMsPer1000: refCpuPer1000,
      stringifyEventsPerSecond: refRate,
      rawSqlCpuMsPerPage: rawRun.cpuMs,
    },
  });
  ctx.note(
    'Export reference: JSON.stringify, in the benchmark process, of the very pages the export returned (parsed back first, untimed). The export is also checked: every event exactly once.',
  );
}

// ---------------------------------------------------------------------------------------------------------
// GET by id

/**
 * PostgreSQL: the by-id SELECT the server ran, on the raw connection, sent as the server sends it (an
 * unnamed statement: parsed and planned at every execution) and as a named prepared statement (parsed once
 * per connection, its plan cached), sequentially: what parsing and planning cost per request.
 */
async function preparedVersusUnnamed(ctx: BenchContext, raw: RawDb, statements: RecordedStatement[]): Promise<void> {
  const selects = statements.filter((st) => /^\s*SELECT\b/i.test(st.text));
  if (selects.length === 0) return;
  const count = 1000;
  await timeStatements(raw, selects, 0, 100, true);
  const unnamed = await timeStatements(raw, selects, count, 100);
  const named = await timeStatements(raw, selects, count, 0, true);
  const a = summarize(unnamed.latencies);
  const b = summarize(named.latencies);
  const us = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms * 1000).toFixed(0)} µs`);
  ctx.report({
    id: 'events.getById.sql',
    workload: `The by-id SELECT alone (${fmtInt(selects[0].text.length)} characters), ${fmtInt(count)} sequential runs (info)`,
    value: `named prepared statement: p50 ${us(b.p50)}; CPU ${us(named.cpuMs)} + PostgreSQL ${us(named.databaseCpuMs)}`,
    reference: `unnamed, as the server sends it: p50 ${us(a.p50)}; CPU ${us(unnamed.cpuMs)} + PostgreSQL ${us(unnamed.databaseCpuMs)}`,
    ratio: `${fmtRatio(b.p50 / a.p50)} its time (p50)`,
    data: { unnamed: { ...a, cpuMs: unnamed.cpuMs, databaseCpuMs: unnamed.databaseCpuMs }, named: { ...b, cpuMs: named.cpuMs, databaseCpuMs: named.databaseCpuMs } },
  });
  ctx.log(`  by-id SELECT on the raw connection: unnamed p50 ${us(a.p50)} (PostgreSQL CPU ${us(unnamed.databaseCpuMs)}), named p50 ${us(b.p50)} (${us(named.databaseCpuMs)})`);
}

async function getById(ctx: BenchContext, raw: RawDb): Promise<void> {
  const ids = (await raw.query<{ id: number }>('SELECT id FROM events ORDER BY random() LIMIT 10000')).map((r) => Number(r.id));
  const sample = expectStatus(await ctx.call('GET', `/events/${ids[0]}`), 200, 'GET /events/{id}');
  const perGet = await ctx.statementsOf(() => ctx.call('GET', `/events/${ids[1 % ids.length]}`));
  const getCounts = statementCounts(perGet);
  ctx.diagnose('events.getById', { ...getCounts, sql: perGet.map((st) => oneLine(st)), plans: [] });
  if (raw.runPrepared) await preparedVersusUnnamed(ctx, raw, perGet);
  await ctx.server.command({ type: 'bare', payload: sample.body.toString('utf8') });
  const headers = { authorization: `Bearer ${ctx.token}` };
  const { concurrency, durationMs } = ctx.settings;
  const apiPath = (i: number) => `/api/v1/projects/bench/events/${ids[i % ids.length]}`;
  const barePath = (i: number) => `/bare/${ids[i % ids.length]}`;

  /** `concurrency` workers against one origin for `ms`; with the server child's CPU time per request. */
  const measure = async (origin: string, path: (i: number) => string, ms: number) => {
    const { value, cpuMs, databaseCpuMs } = await ctx.serverCpu(() =>
      closedLoop({
        concurrency,
        durationMs: ms,
        fn: async (i) => {
          const res = await ctx.client.request('GET', origin + path(i), undefined, headers);
          if (res.status !== 200) throw new Error(`GET ${origin + path(i)}: HTTP ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
        },
      }),
    );
    return { ...value, cpuMsPerRequest: cpuMs / value.requests, databaseCpuMsPerRequest: databaseCpuMs === undefined ? undefined : databaseCpuMs / value.requests };
  };

  const { apiOrigin, bareOrigin, noLayersOrigin } = ctx.server;
  ctx.log(`GET by id: ${concurrency} concurrent, ${durationMs} ms per round, 2 rounds each`);
  await measure(bareOrigin, barePath, 1000);
  await measure(apiOrigin, apiPath, 1000);
  if (noLayersOrigin) await measure(noLayersOrigin, apiPath, 1000);
  type Run = Awaited<ReturnType<typeof measure>>;
  const bare: Run[] = [];
  const strata: Run[] = [];
  const noLayers: Run[] = [];
  // Alternating rounds, so drift on a noisy machine hits each alike.
  for (let round = 0; round < 2; round++) {
    bare.push(await measure(bareOrigin, barePath, durationMs));
    strata.push(await ctx.profiled(`get-by-id-${round}`, () => measure(apiOrigin, apiPath, durationMs)));
    if (noLayersOrigin) noLayers.push(await measure(noLayersOrigin, apiPath, durationMs));
  }
  const mean = (runs: Run[], f: (r: Run) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  const rps = mean(strata, (r) => r.perSecond);
  const bareRps = mean(bare, (r) => r.perSecond);
  const cpu = mean(strata, (r) => r.cpuMsPerRequest);
  const bareCpu = mean(bare, (r) => r.cpuMsPerRequest);
  const databaseCpu = ctx.backend.kind === 'postgres' ? mean(strata, (r) => r.databaseCpuMsPerRequest ?? NaN) : undefined;
  const sLat = summarize(strata.flatMap((r) => r.latencies));
  const bLat = summarize(bare.flatMap((r) => r.latencies));
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  ctx.report({
    id: 'events.getById',
    workload: `GET /events/{id} with bearer token, ${concurrency} concurrent`,
    value: `${fmtInt(rps)} req/s (p50 ${fmtMs(sLat.p50)}, p99 ${fmtMs(sLat.p99)}); CPU ${us(cpu)}/req${databaseCpu === undefined ? '' : ` + PostgreSQL ${us(databaseCpu)}`}`,
    reference: `bare Fastify route, same bytes: ${fmtInt(bareRps)} req/s; CPU ${us(bareCpu)}/req`,
    ratio: `${fmtRatio(rps / bareRps)} of bare rate; ${fmtRatio(bareCpu / cpu)} by CPU`,
    target: 'ratio ≥ 0.5',
    met: rps / bareRps >= 0.5,
    data: {
      rounds: { strata: strata.map((r) => r.perSecond), bare: bare.map((r) => r.perSecond), noLayers: noLayers.map((r) => r.perSecond) },
      rps,
      bareRps,
      ratio: rps / bareRps,
      cpuMsPerRequest: cpu,
      databaseCpuMsPerRequest: databaseCpu,
      bareCpuMsPerRequest: bareCpu,
      cpuRatio: bareCpu / cpu,
      latency: sLat,
      bareLatency: bLat,
      responseBytes: sample.body.length,
      client: ctx.client.kind,
      statementsPerRequest: getCounts.statements,
      transactionControlPerRequest: getCounts.transactionControl,
    },
  });
  if (noLayers.length) {
    const off = mean(noLayers, (r) => r.perSecond);
    const offCpu = mean(noLayers, (r) => r.cpuMsPerRequest);
    ctx.report({
      id: 'events.getById.noLayers',
      workload: 'GET /events/{id}, same app without API layers (versioning, throttling) (info)',
      value: `${fmtInt(off)} req/s; CPU ${us(offCpu)}/req`,
      reference: `with layers: ${fmtInt(rps)} req/s; CPU ${us(cpu)}/req`,
      ratio: `layers cost ${((cpu / offCpu - 1) * 100).toFixed(0)}% CPU`,
      data: { rps: off, cpuMsPerRequest: offCpu, withLayersRps: rps, withLayersCpuMsPerRequest: cpu },
    });
  }
  ctx.note(
    `GET reference: a second Fastify app in the server child (no hooks, auth or database) whose GET /bare/:id returns the bytes of a real GET /events/{id} response; same client, headers and concurrency, alternating rounds of ${durationMs} ms. The load generator shares the 2 cores, which caps the bare rate; the CPU ratio (bare CPU per request ÷ Strata CPU per request) is the capacity ratio without that cap.`,
  );

  // The same comparison with both apps inside the load generator's process (sharing its event loop).
  const inProcess = await startServers(ctx.dataDir);
  try {
    inProcess.setBarePayload(sample.body.toString('utf8'));
    const shortMs = Math.min(durationMs, 3000);
    await measure(inProcess.bareOrigin, barePath, 500);
    await measure(inProcess.apiOrigin, apiPath, 500);
    const b = await measure(inProcess.bareOrigin, barePath, shortMs);
    const s = await measure(inProcess.apiOrigin, apiPath, shortMs);
    ctx.report({
      id: 'events.getById.inProcess',
      workload: 'GET /events/{id}, server in the load generator process (info)',
      value: `${fmtInt(s.perSecond)} req/s`,
      reference: `bare Fastify route: ${fmtInt(b.perSecond)} req/s`,
      ratio: `${fmtRatio(s.perSecond / b.perSecond)} of bare`,
      data: { rps: s.perSecond, bareRps: b.perSecond, ratio: s.perSecond / b.perSecond },
    });
  } finally {
    await inProcess.close();
  }
}
