/**
 * The storage engine under test (BENCH_BACKEND): the embedded SQLite file in the data directory (default),
 * or a throw-away PostgreSQL cluster that the runner starts for the run and removes after it.
 *
 * The PostgreSQL cluster runs with production durability: fsync and full-page writes on, and
 * synchronous_commit on, so a 200 or 201 from Strata means the write is on disk (SQLite at Strata's default
 * STRATA_SYNC=normal survives a killed process, not a power loss; see docs/benchmarks.md). Its memory and
 * checkpoint settings are what a dedicated database host would be given (POSTGRES_SETTINGS); everything else
 * is PostgreSQL's default.
 */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { startPostgres, type PostgresServer } from '../../test/support/postgres.js';

export type BackendKind = 'sqlite' | 'postgres';

/** The database the runner hands to the server child, its apps and the references. */
export const DATABASE_URL_ENV = 'BENCH_DATABASE_URL';

export const POSTGRES_SETTINGS: Record<string, string> = {
  shared_buffers: '512MB',
  effective_cache_size: '4GB',
  work_mem: '16MB',
  maintenance_work_mem: '256MB',
  // Durable commits: each COMMIT waits for its WAL flush (the default, stated so it is not mistaken).
  synchronous_commit: 'on',
  // Checkpoints by time rather than every 1 GB of WAL, so a seeding burst does not run several.
  max_wal_size: '8GB',
  checkpoint_timeout: '15min',
  // JIT compilation pays off for long analytical queries; for requests of milliseconds it costs more than
  // it saves (a list with a large estimate compiles for tens of ms). Off, as OLTP deployments set it.
  jit: 'off',
};

export function backendKind(): BackendKind {
  const raw = process.env.BENCH_BACKEND ?? 'sqlite';
  if (raw !== 'sqlite' && raw !== 'postgres') throw new Error(`BENCH_BACKEND must be sqlite or postgres, got "${raw}"`);
  return raw;
}

/** The PostgreSQL URL the runner set for this run, if the backend is PostgreSQL. */
export function databaseUrl(): string | undefined {
  return process.env[DATABASE_URL_ENV] || undefined;
}

/**
 * SQLite's commit durability for the run (BENCH_SQLITE_SYNC=normal|full, Strata's STRATA_SYNC; default
 * normal, Strata's default). `full` fsyncs every commit, as PostgreSQL's synchronous_commit does.
 */
export function sqliteSync(): 'normal' | 'full' {
  const raw = process.env.BENCH_SQLITE_SYNC ?? 'normal';
  if (raw !== 'normal' && raw !== 'full') throw new Error(`BENCH_SQLITE_SYNC must be normal or full, got "${raw}"`);
  return raw;
}

/**
 * Further Strata settings for the apps under test (BENCH_STRATA_ENV, e.g. `STRATA_METRICS=off` or
 * `STRATA_DATABASE_POOL_SIZE=20,STRATA_READ_WORKERS=1`), to measure what one setting costs.
 */
export function extraStrataEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of (process.env.BENCH_STRATA_ENV ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const eq = kv.indexOf('=');
    if (eq < 1 || !kv.startsWith('STRATA_')) throw new Error(`BENCH_STRATA_ENV: expected STRATA_NAME=value, got "${kv}"`);
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/** Strata's configuration for the backend under test, on top of a data directory. */
export function storeEnv(dataDir: string): Record<string, string> {
  const url = databaseUrl();
  return { STRATA_DATA_DIR: dataDir, STRATA_SYNC: sqliteSync(), ...(url ? { STRATA_DATABASE_URL: url } : {}), ...extraStrataEnv() };
}

export interface Backend {
  kind: BackendKind;
  /** What the table's notes say about it. */
  description: string;
  /** The database Strata runs on (PostgreSQL only). */
  url?: string;
  /** A URL of another, empty database on the same cluster (PostgreSQL only). */
  createDatabase?(name: string): Promise<string>;
  /**
   * CPU time (ms, user + system) used so far by the database server's processes: PostgreSQL's postmaster and
   * all its children (backends, WAL writer, checkpointer). Undefined for SQLite, which runs inside the
   * process that calls it.
   */
  cpuMs(): number | undefined;
  /**
   * After seeding: on PostgreSQL, VACUUM (ANALYZE) of the database, which autovacuum does within a minute or
   * so of a bulk load: planner statistics (until then the planner sees a freshly filled table as nearly
   * empty), the visibility map (index-only scans), and no autovacuum worker running during the measurements
   * that follow. Nothing on SQLite, whose plans here do not depend on statistics.
   */
  analyze(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the backend: for PostgreSQL a cluster and an empty `strata` database. */
export async function startBackend(kind: BackendKind): Promise<Backend> {
  if (kind === 'sqlite') {
    return { kind, description: `SQLite (embedded, WAL, STRATA_SYNC=${sqliteSync()})`, cpuMs: () => undefined, analyze: async () => {}, stop: async () => {} };
  }
  const server: PostgresServer = await startPostgres({ durable: true, settings: POSTGRES_SETTINGS });
  // An aborted run (timeout, Ctrl-C) must not leave the cluster running.
  const kill = () => {
    try {
      process.kill(server.pid, 'SIGQUIT');
    } catch {
      // already stopped
    }
  };
  process.once('exit', kill);
  try {
    const url = await server.createDatabase('strata');
    const version = await serverVersion(url);
    return {
      kind,
      url,
      description: `PostgreSQL ${version} (throw-away cluster on 127.0.0.1, same machine; fsync, full_page_writes and synchronous_commit on; ${Object.entries(POSTGRES_SETTINGS)
        .filter(([k]) => k !== 'synchronous_commit')
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')})`,
      createDatabase: (name) => server.createDatabase(name),
      cpuMs: () => treeCpuMs(server.pid),
      analyze: () => withClient(url, async (client) => void (await client.query('VACUUM (ANALYZE)'))),
      async stop() {
        process.off('exit', kill);
        await server.stop();
      },
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'strata-bench' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const serverVersion = (url: string) =>
  withClient(url, async (client) => ((await client.query('SHOW server_version')).rows[0] as { server_version: string }).server_version);

const TICKS_PER_SECOND = 100;

/**
 * CPU ms of a process and its children so far, from /proc/<pid>/stat in clock ticks of 10 ms: the live
 * children's own time, and the root's own time plus that of its children that exited (cutime, cstime: the
 * kernel adds a child's time there when the root reaps it). The sum only grows, also when a pool closes an
 * idle connection and its backend exits.
 */
export function treeCpuMs(root: number): number | undefined {
  let ticks = 0;
  let found = false;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the command (which may hold spaces) start after the last ')': fields[k - 3] is field k.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(name);
    if (pid === root) {
      found = true;
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } else if (Number(fields[1]) === root) {
      ticks += Number(fields[11]) + Number(fields[12]);
    }
  }
  return found ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
}
