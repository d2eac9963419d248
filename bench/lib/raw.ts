/**
 * Raw database access for the references and diagnostics, whatever the backend: the statements the server
 * ran for a request (recorded in the server child, see capture.ts) executed on a plain connection in the
 * benchmark process, the plan the engine chose for them, and a few ad hoc queries. SQLite: a read-only
 * better-sqlite3 connection to the server's file (sqlite.ts). PostgreSQL: one node-postgres client on the
 * server's database (postgres.ts), which runs them the way the server's pool does.
 */
import type { Backend, BackendKind } from './backend.js';
import { cpuNow, fmtMs, now } from './stats.js';
import { openRawPostgres } from './postgres.js';
import { openRawSqlite } from './sqlite.js';

/** A statement with its parameters, as recorded in the server (see capture.ts). */
export interface CapturedStatement {
  text: string;
  params: unknown[];
}

export interface RawDb {
  kind: BackendKind;
  /** How the reference reaches the database, for the table (e.g. "raw better-sqlite3"). */
  label: string;
  /** Runs the statements one after another, as the server did for one request; returns the rows. */
  runStatements(statements: readonly CapturedStatement[]): Promise<unknown[]>;
  /**
   * PostgreSQL only: the same as runStatements, but each statement as a named prepared statement (parsed
   * once per connection, its plan cached after a few runs), to measure what the server's unnamed
   * statements cost.
   */
  runPrepared?(statements: readonly CapturedStatement[]): Promise<unknown[]>;
  /** The engine's plan for a statement, as indented lines. */
  explain(s: CapturedStatement): Promise<string[]>;
  /** An ad hoc query (`?` placeholders on either engine). */
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
  /** CPU ms used so far by the database server's processes (PostgreSQL; undefined on SQLite). */
  databaseCpuMs(): number | undefined;
  /**
   * Bytes on disk of these tables: SQLite the pages of each table's b-tree (dbstat); PostgreSQL its heap,
   * TOAST and indexes (pg_total_relation_size), which is where the same rows live there.
   */
  tableBytes(tables: readonly string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** SQL text on one line, with long parameter lists shortened, for printing. */
export function oneLine(s: CapturedStatement, max = 600): string {
  const text = s.text.replace(/\s+/g, ' ').trim();
  const params = JSON.stringify(s.params);
  const out = `${text}  -- params ${params.length > 200 ? `${params.slice(0, 200)}…` : params}`;
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/** The reference connection for the backend under test: the server's SQLite file, or its PostgreSQL database. */
export async function openRaw(backend: Backend, dataDir: string): Promise<RawDb> {
  if (backend.url) return { ...(await openRawPostgres(backend.url)), databaseCpuMs: () => backend.cpuMs() };
  return openRawSqlite(dataDir);
}

/** Times of `count` runs of a request's statements on the raw connection, after `warmup` untimed runs. */
export interface RawTiming {
  latencies: number[];
  /** CPU ms per run of this process (SQLite: the whole query; PostgreSQL: the client's protocol work). */
  cpuMs: number;
  /** CPU ms per run of the database server's processes (PostgreSQL; undefined on SQLite). */
  databaseCpuMs?: number;
}

export async function timeStatements(raw: RawDb, statements: readonly CapturedStatement[], count: number, warmup = 0, prepared = false): Promise<RawTiming> {
  const run = prepared && raw.runPrepared ? raw.runPrepared : raw.runStatements;
  for (let i = 0; i < warmup; i++) await run(statements);
  const db0 = raw.databaseCpuMs();
  const c0 = cpuNow();
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    await run(statements);
    latencies.push(now() - t0);
  }
  const cpuMs = (cpuNow() - c0) / count;
  const db1 = raw.databaseCpuMs();
  return { latencies, cpuMs, databaseCpuMs: db0 === undefined || db1 === undefined ? undefined : (db1 - db0) / count };
}

/** "CPU 1.20 ms", or on PostgreSQL "CPU 1.20 ms + PostgreSQL 0.80 ms" (this process or the server, then the database). */
export function fmtCpu(cpuMs: number, databaseCpuMs: number | undefined): string {
  return databaseCpuMs === undefined ? `CPU ${fmtMs(cpuMs)}` : `CPU ${fmtMs(cpuMs)} + PostgreSQL ${fmtMs(databaseCpuMs)}`;
}

/** Both CPU figures together (what a request costs the machine). */
export const totalCpu = (cpuMs: number, databaseCpuMs: number | undefined): number => cpuMs + (databaseCpuMs ?? 0);

const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

/**
 * What a request sent to the database: its statements, and (PostgreSQL) the transaction control around
 * them. On PostgreSQL each is one round trip to the server; on SQLite transaction control is not recorded.
 */
export function statementCounts(statements: ReadonlyArray<{ text: string }>): { statements: number; transactionControl: number } {
  const control = statements.filter((s) => TRANSACTION_CONTROL.test(s.text)).length;
  return { statements: statements.length - control, transactionControl: control };
}

export const fmtStatements = (c: { statements: number; transactionControl: number }): string =>
  `${c.statements} statements${c.transactionControl ? ` + ${c.transactionControl} BEGIN/COMMIT` : ''}`;
