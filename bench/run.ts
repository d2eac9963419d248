/**
 * Benchmark driver: `npm run bench`.
 *
 * Starts the real server in a child process on 127.0.0.1 with a throw-away data directory, runs every suite,
 * and prints a table of absolute figures with a reference measured in the same run, the same as Markdown, and
 * writes `bench/results/latest.json`.
 *
 * Environment:
 *   BENCH_BACKEND          sqlite (default) | postgres: the store under test. postgres starts a throw-away
 *                          PostgreSQL cluster for the run (PostgreSQL 15 or newer installed; see bench/lib/backend.ts
 *                          for its settings), runs Strata on it, and runs the raw-SQL references against it
 *   BENCH_SQLITE_SYNC      normal (default) | full: STRATA_SYNC of the SQLite store (full fsyncs every commit)
 *   BENCH_STRATA_ENV       further settings of the apps under test, e.g. STRATA_METRICS=off (comma-separated)
 *   BENCH_EVENTS           events to seed (default 1000000; e.g. 100000 for a quick run)
 *   BENCH_REFERENCE_EVENTS rows the raw-database create reference inserts (default 200000)
 *   BENCH_LIST_REQUESTS    sequential requests per list query after warm-up (default 200)
 *   BENCH_DURATION_MS      duration of each request-rate round (default 5000)
 *   BENCH_CONCURRENCY      workers for request-rate rounds (default 32)
 *   BENCH_CLIENT           node:http | undici (default: whichever is faster against the bare route)
 *   BENCH_PROFILE=1        record a CPU profile of the server per workload (bench/results/profiles) and print
 *                          its hot spots; the profiler slows the server, so do not report those figures
 *   BENCH_TIMEOUT_MINUTES  abort the run after this long (default 20)
 *   BENCH_DATA_DIR         keep the server's data here instead of a temporary directory; a later run with
 *                          the same BENCH_EVENTS reuses the seeded events (create is then not measured)
 *   BENCH_SUITES           comma-separated suites to run (default: all), e.g. BENCH_SUITES=events
 *   BENCH_CAPTURE=0        do not record the server's SQL (the list references then fail)
 *   BENCH_CATALOG_SERIES, BENCH_CATALOG_ASSETS, BENCH_CATALOG_EVENTS   catalog suite sizes (see bench/catalog.ts)
 *   BENCH_THROTTLE_CLIENTS, BENCH_THROTTLE_RATE, BENCH_THROTTLE_ROUNDS  throttle suite (see bench/throttle.ts)
 *   BENCH_MODELS_NODES, BENCH_MODELS_REQUESTS   data modeling suite sizes (see bench/models.ts)
 *   BENCH_FILES_BYTES, BENCH_FILES_SMALL   files suite sizes (see bench/files.ts)
 *   BENCH_SUBSCRIPTION_ROUNDS, BENCH_SYNTHETIC_POINTS   subscriptions suite sizes (see bench/subscriptions.ts)
 *   BENCH_RECORDS, BENCH_RECORDS_REQUESTS       streams and records suite sizes (see bench/records.ts)
 */
import './lib/assets.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { backendKind, DATABASE_URL_ENV, startBackend, type Backend } from './lib/backend.js';
import { startServerChild, type ServerHandle } from './lib/child.js';
import type { BenchContext, BenchSettings, Suite } from './lib/context.js';
import { CLIENT_KINDS, createClient, expectStatus, type ClientKind, type HttpClient } from './lib/http.js';
import { closedLoop } from './lib/load.js';
import { formatProfile, summarizeProfile } from './lib/profile.js';
import { describeMachine, machine, markdownTable, stolenMs, textTable, type ResultRow } from './lib/report.js';
import { fmtInt, fmtMs, now, summarize } from './lib/stats.js';
import { PROJECT } from './lib/servers.js';
import { benchEvent } from './events-data.js';
import { eventsSuite } from './events.js';
import { datapointsSuite } from './datapoints.js';
import { authSuite } from './auth.js';
import { catalogSuite } from './catalog.js';
import { throttleSuite } from './throttle.js';
import { modelsSuite } from './models.js';
import { filesSuite } from './files.js';
import { subscriptionsSuite } from './subscriptions.js';
import { recordsSuite } from './records.js';
import { intEnv } from './lib/env.js';

/** Every suite, in order. A new resource adds its module here. */
const SUITES: Suite[] = [eventsSuite, authSuite, datapointsSuite, catalogSuite, throttleSuite, modelsSuite, filesSuite, subscriptionsSuite, recordsSuite];

const here = dirname(fileURLToPath(import.meta.url));
/** bench/ in the source tree (this file runs from .bench-build/bench/). */
const benchDir = resolve(here, '..', '..', 'bench');

function readSettings(): BenchSettings {
  return {
    events: intEnv('BENCH_EVENTS', 1_000_000, 1000, 20_000_000),
    referenceEvents: intEnv('BENCH_REFERENCE_EVENTS', 200_000, 1000, 20_000_000),
    listRequests: intEnv('BENCH_LIST_REQUESTS', 200, 10, 100_000),
    durationMs: intEnv('BENCH_DURATION_MS', 5000, 500, 600_000),
    concurrency: intEnv('BENCH_CONCURRENCY', 32, 1, 1024),
    profile: process.env.BENCH_PROFILE === '1',
    resultsDir: join(benchDir, 'results'),
  };
}

async function getToken(server: ServerHandle, client: HttpClient): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: server.clientId, client_secret: server.clientSecret });
  const res = await client.request('POST', `${server.apiOrigin}/oauth2/token`, form.toString(), {
    'content-type': 'application/x-www-form-urlencoded',
  });
  expectStatus(res, 200, 'POST /oauth2/token');
  return (JSON.parse(res.body.toString('utf8')) as { access_token: string }).access_token;
}

const describeRates = (rates: Record<string, number>) => CLIENT_KINDS.map((k) => `${k} ${fmtInt(rates[k])} req/s`).join(', ');

/** Measures both HTTP clients against the bare route and returns the faster one (or BENCH_CLIENT). */
async function chooseClient(server: ServerHandle, settings: BenchSettings, log: (m: string) => void) {
  // A representative event response while calibrating; the GET workload later sets the exact bytes.
  const e = benchEvent(0);
  await server.command({ type: 'bare', payload: JSON.stringify({ id: 123456, ...e, createdTime: Date.now(), lastUpdatedTime: Date.now() }) });
  const rates: Record<string, number> = {};
  for (const kind of CLIENT_KINDS) {
    const client = createClient(kind, settings.concurrency * 2);
    const run = (ms: number) =>
      closedLoop({
        concurrency: settings.concurrency,
        durationMs: ms,
        fn: async (i) => {
          const res = await client.request('GET', `${server.bareOrigin}/bare/${i}`, undefined, { authorization: 'Bearer x' });
          if (res.status !== 200) throw new Error(`bare route: HTTP ${res.status}`);
        },
      });
    await run(500);
    rates[kind] = (await run(2000)).perSecond;
    client.close();
  }
  const forced = process.env.BENCH_CLIENT;
  if (forced !== undefined && !(CLIENT_KINDS as readonly string[]).includes(forced)) throw new Error(`BENCH_CLIENT must be ${CLIENT_KINDS.join(' or ')}, got "${forced}"`);
  const kind = (forced as ClientKind | undefined) ?? (rates['node:http'] >= rates.undici ? 'node:http' : 'undici');
  log(`client calibration on the bare route: ${describeRates(rates)} -> ${kind}`);
  return { kind, rates };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const started = now();
  const log = (m: string) => console.error(`[${((now() - started) / 1000).toFixed(1).padStart(6)} s] ${m}`);
  const timeoutMinutes = intEnv('BENCH_TIMEOUT_MINUTES', 20, 1, 24 * 60);
  setTimeout(() => {
    console.error(`benchmark: aborted after ${timeoutMinutes} minutes (BENCH_TIMEOUT_MINUTES)`);
    process.exit(3);
  }, timeoutMinutes * 60_000).unref();

  const m = machine();
  const date = new Date().toISOString();
  console.log(`Strata benchmark, ${date}`);
  console.log(`Machine: ${describeMachine(m)}`);
  console.log(`Data: ${fmtInt(settings.events)} events${settings.profile ? '; CPU PROFILING ON (figures are slowed by the profiler)' : ''}`);
  const loadBefore = os.loadavg()[0];
  const stolenAtStart = stolenMs();
  console.log(`Load average (1 min) before the run: ${loadBefore.toFixed(2)}${loadBefore > 0.5 ? ' - the machine is busy; absolute figures will be low, ratios less affected' : ''}\n`);

  const tmpDir = mkdtempSync(join(os.tmpdir(), 'strata-bench-'));
  process.on('exit', () => rmSync(tmpDir, { recursive: true, force: true }));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  // BENCH_DATA_DIR keeps the seeded data between runs (for profiling iterations); it is not removed.
  const dataDir = process.env.BENCH_DATA_DIR ? resolve(process.env.BENCH_DATA_DIR) : join(tmpDir, 'data');
  mkdirSync(settings.resultsDir, { recursive: true });
  const profileDir = join(settings.resultsDir, 'profiles');
  if (settings.profile) mkdirSync(profileDir, { recursive: true });

  const rows: ResultRow[] = [];
  const notes: string[] = [];
  const diagnostics: Record<string, unknown> = {};
  const profiles: string[] = [];

  const kind = backendKind();
  if (kind === 'postgres' && process.env.BENCH_DATA_DIR) throw new Error('BENCH_DATA_DIR keeps SQLite data only; the PostgreSQL cluster lasts one run');
  log(`starting the backend: ${kind}`);
  const backend: Backend = await startBackend(kind);
  // The server child, the other apps and the references all find the database here (backend.ts storeEnv).
  if (backend.url) process.env[DATABASE_URL_ENV] = backend.url;
  else delete process.env[DATABASE_URL_ENV];
  notes.push(`Store: ${backend.description}.`);
  if (process.env.BENCH_STRATA_ENV) notes.push(`Apps under test with ${process.env.BENCH_STRATA_ENV} (BENCH_STRATA_ENV).`);
  console.log(`Store: ${backend.description}\n`);
  let server: ServerHandle | undefined;
  let client: HttpClient | undefined;
  try {
    log(`starting the server child (data in ${backend.url ? backend.url : dataDir})`);
    server = await startServerChild(dataDir);
    const s = server;
    const calibration = await chooseClient(s, settings, log);
    client = createClient(calibration.kind, Math.max(64, settings.concurrency * 2));
    notes.push(
      `Load generator: ${calibration.kind} keep-alive client (bare route, ${settings.concurrency} concurrent: ${describeRates(calibration.rates)}). Server in a child process; everything on 127.0.0.1.`,
    );
    diagnostics.client = calibration;
    const token = await getToken(s, client);
    if (backend.url) rows.push(await roundTrip(backend.url, log));
    const c = client;
    const base = `${s.apiOrigin}/api/v1/projects/${PROJECT}`;
    const auth = { authorization: `Bearer ${token}` };
    const ctx: BenchContext = {
      settings,
      server: s,
      client: c,
      token,
      api: (path) => `${base}${path}`,
      call: (method, path, body) => c.request(method, `${base}${path}`, body === undefined || typeof body === 'string' ? body : JSON.stringify(body), auth),
      dataDir,
      tmpDir,
      report: (row) => rows.push(row),
      rows: () => rows,
      note: (text) => notes.push(text),
      diagnose: (key, value) => {
        diagnostics[key] = value;
      },
      backend,
      async serverCpu(fn) {
        const before = await s.command<number>({ type: 'cpu' });
        const dbBefore = backend.cpuMs();
        const value = await fn();
        const after = await s.command<number>({ type: 'cpu' });
        const dbAfter = backend.cpuMs();
        return { value, cpuMs: after - before, databaseCpuMs: dbBefore === undefined || dbAfter === undefined ? undefined : dbAfter - dbBefore };
      },
      async statementsOf(fn) {
        if (process.env.BENCH_CAPTURE === '0') {
          await fn();
          return [];
        }
        await s.command({ type: 'capture-start' });
        try {
          await fn();
        } catch (error) {
          await s.command({ type: 'capture-stop' });
          throw error;
        }
        return s.command<Array<{ text: string; params: unknown[] }>>({ type: 'capture-stop' });
      },
      async profiled(name, fn) {
        if (!settings.profile) return fn();
        await s.command({ type: 'profile-start' });
        const result = await fn();
        const file = join(profileDir, `${name}.cpuprofile`);
        await s.command({ type: 'profile-stop', file }, 120_000);
        const summary = summarizeProfile(file, 25);
        diagnostics[`profile.${name}`] = summary;
        profiles.push(formatProfile(name, summary));
        return result;
      },
      profileFiles: (names) => (settings.profile ? names.map((name) => join(profileDir, `${name}.cpuprofile`)) : []),
      log,
    };
    const only = (process.env.BENCH_SUITES ?? '').split(',').map((x) => x.trim()).filter(Boolean);
    const unknown = only.filter((name) => !SUITES.some((suite) => suite.name === name));
    if (unknown.length) throw new Error(`BENCH_SUITES: unknown suite ${unknown.join(', ')} (known: ${SUITES.map((suite) => suite.name).join(', ')})`);
    for (const suite of SUITES.filter((x) => only.length === 0 || only.includes(x.name))) {
      freshHeap(log);
      log(`suite ${suite.name}`);
      await suite.run(ctx);
    }
  } finally {
    client?.close();
    log('stopping the server child');
    await server?.stop();
    await backend.stop();
    rmSync(tmpDir, { recursive: true, force: true });
  }

  const totalSeconds = (now() - started) / 1000;
  const loadAfter = os.loadavg()[0];
  notes.push(`Load average (1 min): ${loadBefore.toFixed(2)} before the run, ${loadAfter.toFixed(2)} at its end (the benchmark itself keeps about 2 busy).`);
  const stolenAtEnd = stolenMs();
  const stolen = stolenAtStart === undefined || stolenAtEnd === undefined ? undefined : (stolenAtEnd - stolenAtStart) / 1000;
  if (stolen !== undefined) {
    notes.push(
      `Host steal (CPU time the hypervisor gave elsewhere while this machine wanted it, /proc/stat): ${stolen.toFixed(1)} s over the run's ${totalSeconds.toFixed(0)} s on ${m.cores} cores (${((stolen / (totalSeconds * m.cores)) * 100).toFixed(1)}%).`,
    );
  }
  console.log(textTable(rows));
  console.log('\nNotes:');
  for (const n of notes) console.log(`- ${n}`);
  console.log('\nDiagnostics (where the p50 goes, the SQL the server ran, and its plan):');
  for (const [key, value] of Object.entries(diagnostics)) {
    const d = value as { sql?: string[]; plans?: string[][] } & Record<string, unknown>;
    if (!d || typeof d !== 'object' || !Array.isArray(d.sql) || !Array.isArray(d.plans)) continue;
    console.log(`\n${key}`);
    if (typeof d.serverCpuMsPerRequest !== 'number') {
      for (const [k, v] of Object.entries(d)) if (typeof v === 'number') console.log(`  ${k}: ${Number.isInteger(v) ? v : v.toFixed(2)}`);
    }
    if (typeof d.serverCpuMsPerRequest === 'number') {
      const n = (k: string) => (d[k] as number).toFixed(2);
      console.log(
        `  server CPU per request ${n('serverCpuMsPerRequest')} ms = SQL ${n('sqlCpuMs')} + JSON.stringify of the response ${n('stringifyCpuMs')} + the rest ${n('otherServerCpuMs')} (row mapping, HTTP, validation, auth)`,
      );
    }
    const plans = d.plans;
    d.sql.forEach((s, i) => {
      console.log(`  SQL ${i + 1}: ${s}`);
      for (const line of plans[i] ?? []) console.log(`    ${line}`);
    });
  }
  if (profiles.length) console.log(`\n${profiles.join('\n\n')}`);
  console.log(`\nMarkdown (${fmtInt(settings.events)} events; ${backend.kind}; ${describeMachine(m)}):\n`);
  console.log(markdownTable(rows));
  const missed = rows.filter((r) => r.met === false).length;
  console.log(`\n${rows.filter((r) => r.met !== undefined).length - missed} targets met, ${missed} missed; run took ${totalSeconds.toFixed(0)} s`);

  const file = join(settings.resultsDir, settings.profile ? 'latest-profiled.json' : 'latest.json');
  writeFileSync(
    file,
    `${JSON.stringify({ date, machine: m, backend: { kind: backend.kind, description: backend.description }, settings: { ...settings, resultsDir: undefined }, loadAverage: { before: loadBefore, after: loadAfter }, stolenSeconds: stolen, totalSeconds, rows, notes, diagnostics }, null, 2)}\n`,
  );
  console.log(`Results written to ${file}`);
}

/**
 * PostgreSQL: the time of one round trip to the database from a Node.js client, `SELECT 1` sequentially
 * on one connection, the floor under every statement the server sends.
 */
async function roundTrip(url: string, log: (line: string) => void): Promise<ResultRow> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url, application_name: 'strata-bench' });
  await client.connect();
  try {
    const times: number[] = [];
    for (let i = 0; i < 2200; i++) {
      const t0 = now();
      await client.query('SELECT 1');
      if (i >= 200) times.push(now() - t0);
    }
    const s = summarize(times);
    log(`PostgreSQL round trip (SELECT 1): p50 ${fmtMs(s.p50)}, p99 ${fmtMs(s.p99)}`);
    return {
      id: 'postgres.roundTrip',
      workload: 'One round trip to PostgreSQL from Node.js (SELECT 1, one connection, 2,000 sequential) (info)',
      value: `p50 ${fmtMs(s.p50)} / p99 ${fmtMs(s.p99)}`,
      data: { latency: s },
    };
  } finally {
    await client.end();
  }
}

/**
 * The load generator's heap before a suite: what earlier suites left (their garbage, V8's heap limit grown by
 * their data) would otherwise slow this suite's measurements with the generator's own collections. A full
 * collection needs --expose-gc, which `npm run bench` passes.
 */
function freshHeap(log: (line: string) => void): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return;
  const before = process.memoryUsage().heapUsed;
  gc();
  const after = process.memoryUsage().heapUsed;
  log(`load generator heap ${(before / 2 ** 20).toFixed(0)} MB -> ${(after / 2 ** 20).toFixed(0)} MB after a full collection`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
