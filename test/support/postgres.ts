/**
 * A throw-away PostgreSQL cluster (Debian package `postgresql`; `.ci/run` installs it) in a temporary
 * directory, on a free loopback port, trusting local connections. PostgreSQL refuses to run as root, so
 * under root the cluster runs as the `postgres` user the package creates.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { hasProgram } from './external.js';
import { freePort } from './net.js';

export interface PostgresServer {
  /** The postmaster's process id (the backends serving connections are its children). */
  pid: number;
  /** A URL of the cluster's `postgres` database, for administration. */
  adminUrl: string;
  /** A URL of a database with this name on the cluster. */
  urlOf(database: string): string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The directory of the server programs: on PATH, or Debian's versioned directory. */
function binDir(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return undefined;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(base, versions[0], 'bin') : undefined;
}

function program(name: string): string {
  const dir = binDir();
  return dir ? join(dir, name) : name;
}

/** Whether PostgreSQL's server programs are installed (see external.ts for what happens when they are not). */
export const hasPostgres = (): boolean => hasProgram(program('initdb'), 'postgresql');

/** The uid and gid to run the server as: this process's own, or the `postgres` user's under root. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  const gid = id('-g');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error('PostgreSQL cannot run as root, and there is no postgres user to run it as');
  return { uid, gid };
}

const USER = 'strata';

export interface PostgresOptions {
  /**
   * Keep PostgreSQL's durability settings (fsync, full-page writes): a committed transaction survives power
   * loss, as in production. Off by default: a test cluster lives for one run.
   */
  durable?: boolean;
  /** Further server settings (`-c name=value`), e.g. shared_buffers for a benchmark. */
  settings?: Record<string, string>;
}

export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-pg-'));
  const data = join(dir, 'data');
  const user = runAs();
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);
  const init = spawnSync(program('initdb'), ['-D', data, '-U', USER, '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], {
    ...user,
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  // Durability settings off unless asked for: a test cluster lives for one run, and a killed test server is
  // not a crash of this one.
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    max_connections: '300',
    ...(options.durable ? {} : { fsync: 'off', full_page_writes: 'off' }),
    ...options.settings,
  };
  const child: ChildProcess = spawn(
    program('postgres'),
    ['-D', data, '-p', String(port), '-k', dir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])],
    { ...user, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const urlOf = (database: string) => `postgres://${USER}@127.0.0.1:${port}/${database}`;
  await waitUntilReady(child, exited, () => output);

  return {
    pid: child.pid!,
    adminUrl: urlOf('postgres'),
    urlOf,
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: urlOf('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
      } finally {
        await admin.end();
      }
      return urlOf(name);
    },
    async stop() {
      if (child.exitCode === null) {
        // SIGQUIT: immediate shutdown; nothing in a test cluster needs keeping.
        child.kill('SIGQUIT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits for the server's own word that it accepts connections (its log line), or its exit. */
function waitUntilReady(child: ChildProcess, exited: Promise<number | null>, output: () => string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = () => output().includes('database system is ready to accept connections') && resolve();
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then((code) => reject(new Error(`postgres exited with ${code} before accepting connections: ${output()}`)));
  });
}
