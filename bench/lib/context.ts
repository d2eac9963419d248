/**
 * What a workload module gets from the runner. A later resource adds its workloads as a new module exporting
 * a `Suite` and lists it in `bench/run.ts`.
 */
import type { Backend } from './backend.js';
import type { ServerHandle } from './child.js';
import type { HttpClient, HttpResponse } from './http.js';
import type { ResultRow } from './report.js';

export interface BenchSettings {
  /** Events seeded (BENCH_EVENTS, default 1,000,000). */
  events: number;
  /** Events inserted by the raw-database create reference (BENCH_REFERENCE_EVENTS, default 200,000). */
  referenceEvents: number;
  /** Sequential requests per list query after warm-up (BENCH_LIST_REQUESTS). */
  listRequests: number;
  /** Duration of each throughput measurement in ms (BENCH_DURATION_MS). */
  durationMs: number;
  /** Workers for request-rate measurements (BENCH_CONCURRENCY). */
  concurrency: number;
  /** Write and summarize server CPU profiles per workload (BENCH_PROFILE=1). */
  profile: boolean;
  /** Directory for results (bench/results). */
  resultsDir: string;
}

export interface BenchContext {
  settings: BenchSettings;
  server: ServerHandle;
  client: HttpClient;
  /** Bearer token of the dev client. */
  token: string;
  /** Absolute URL of a path under the project root, e.g. `api('/events/list')`. */
  api(path: string): string;
  /** Authenticated JSON request against the project API. */
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpResponse>;
  /** The store under test (BENCH_BACKEND). */
  backend: Backend;
  /** The server's data directory (on SQLite the database file is `strata.db` in it). */
  dataDir: string;
  /** Scratch directory, removed after the run. */
  tmpDir: string;
  report(row: ResultRow): void;
  /** Rows reported so far (a later step may fill in a row's reference). */
  rows(): ResultRow[];
  /** A line printed under the table (what a reference measured, caveats). */
  note(text: string): void;
  /** Structured findings (query plans, profiles) kept in the JSON results. */
  diagnose(key: string, value: unknown): void;
  /**
   * Runs `fn` and returns its result with the CPU time (user + system, ms) the server child used meanwhile.
   * CPU time per request is much less disturbed by other load on the machine than wall-clock latency.
   * On PostgreSQL also the database server's CPU time meanwhile (all its processes; undefined on SQLite,
   * whose work is in the server child's figure).
   */
  serverCpu<T>(fn: () => Promise<T>): Promise<{ value: T; cpuMs: number; databaseCpuMs?: number }>;
  /**
   * The SQL statements the server ran while `fn` ran (transaction control included on PostgreSQL, where each
   * is a round trip to the database); empty when capture is off (BENCH_CAPTURE=0).
   */
  statementsOf(fn: () => Promise<unknown>): Promise<Array<{ text: string; params: unknown[] }>>;
  /** Runs `fn` and, when profiling is on, records the server's CPU profile for it under `name`. */
  profiled<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** The profile files `profiled` wrote under these names; none when profiling is off. */
  profileFiles(names: readonly string[]): string[];
  log(message: string): void;
}

export interface Suite {
  name: string;
  run(ctx: BenchContext): Promise<void>;
}
