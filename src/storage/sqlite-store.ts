/**
 * The embedded store: one SQLite database file (WAL mode) through better-sqlite3, behind the asynchronous
 * `Store` interface.
 *
 * better-sqlite3 runs each statement synchronously, so a statement never interleaves with another; what can
 * interleave is the code between the statements of a transaction, which awaits. Transactions therefore take
 * turns (a queue), and a statement outside a transaction cannot run on this connection while one is open: it
 * would see writes that are not committed yet. It reads on the read workers instead, when the database is a
 * file they share (`readAside`), and waits for the transaction otherwise. A transaction's own statements go
 * through the handle it is given, which never waits for others. SQLite has one writer per database anyway, so
 * the queue costs no concurrency.
 *
 * Every statement first asks the event loop's turn (event-loop.ts): a transaction of thousands of statements
 * (a large container apply) or a long run of reads yields every few milliseconds, so the server keeps
 * accepting and answering other requests meanwhile; a single statement still runs to its end. The one kind
 * of statement that runs long by nature in a write, building an index over a table that holds many rows,
 * runs on a thread of its own (`buildIndex`).
 */
import Database from 'better-sqlite3';
import { on } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { cachedStatement, configureConnection } from './connection.js';
import { sqliteDialect, type Dialect } from './dialect.js';
import { pause } from './event-loop.js';
import type { IndexWorkerReply } from './index-worker.js';
import { ReadPoolUnavailable, type Reader } from './read-pool.js';
import { Sql } from './sql.js';
import { runEffects, StoreUnavailable, type Queryable, type Row, type RunResult, type Store } from './store.js';
import { sqliteIndexBuild, sqliteIndexKind, type IndexBuild, type TableIndex } from './table-index.js';
import { workerUrl } from './worker-url.js';

export interface SqliteOptions {
  /** Directory holding `strata.db`; `:memory:` opens a private in-memory database. */
  dataDir: string;
  /** `full` fsyncs every commit (survives power loss); `normal` survives a killed process. */
  synchronous?: 'normal' | 'full';
}

/** SQLite's "database is locked/busy" codes: another connection holds the write lock. */
const BUSY = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED']);

/**
 * How long a transaction waits for another connection's write lock before the request is refused (503); an
 * index build of this process (see buildIndex) holds the lock as long as it runs, and is waited for whole.
 */
const LOCK_WAIT_MS = 5000;

function unavailable(error: unknown): never {
  const code = (error as { code?: string }).code;
  if (code && BUSY.has(code)) throw new StoreUnavailable('the database is busy with another process\'s write; retry shortly', { cause: error });
  throw error;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly dialect: Dialect = sqliteDialect;
  readonly inTransaction = false;
  readonly location: string;
  /** The better-sqlite3 connection, for the read workers' file name and for storage internals. */
  readonly connection: Database.Database;
  /** The end of the last queued transaction: the next one starts after it. */
  private tail: Promise<void> = Promise.resolve();
  private open = 0;
  private readonly tx: Queryable;
  /** The effects of the transaction now open (transactions take turns, so there is one at a time). */
  private effects: Array<() => unknown> = [];
  /** Where reads outside a transaction go while one is open, instead of waiting for it to end. */
  private aside?: Reader;
  /** Index builds under way on their threads (buildIndex), which hold the write lock while they run. */
  private readonly builds = new Set<Promise<IndexBuild>>();
  /** When the last of them ended (performance.now()). */
  private buildEnded = -Infinity;

  constructor({ dataDir, synchronous = 'normal' }: SqliteOptions) {
    let file = ':memory:';
    if (dataDir !== ':memory:') {
      // Readable by Strata's user alone: function calls run as other users on the same host.
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      file = join(dataDir, 'strata.db');
    }
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    // Checkpoint in larger batches: each WAL page is written back once per checkpoint, and the default
    // (1000 pages) runs one inside almost every bulk write.
    db.pragma('wal_autocheckpoint = 16384');
    configureConnection(db);
    // SQLite waits for another connection's write lock by sleeping in the statement, which would hold the
    // event loop (and, when the other connection is in this process and yielding, never end): this
    // connection waits for the lock between attempts to begin (`begin`), with the event loop running.
    db.pragma('busy_timeout = 0');
    // The table of the planner's statistics, so that reading them (dialect.tableStatistics) needs no test.
    if (!db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").get()) db.exec('ANALYZE sqlite_schema');
    this.connection = db;
    this.location = file;
    const run = (q: Sql) => this.runNow(q);
    const all = <T>(q: Sql) => this.allNow<T>(q);
    const tx: Queryable = {
      dialect: this.dialect,
      inTransaction: true,
      all: async <T>(q: Sql) => {
        await pause();
        return all<T>(q);
      },
      get: async <T>(q: Sql) => {
        await pause();
        return all<T>(q)[0];
      },
      run: async (q: Sql) => {
        await pause();
        return run(q);
      },
      transaction: (fn) => fn(tx),
      snapshot: (fn) => fn(tx),
      afterCommit: (effect) => void this.effects.push(effect),
    };
    this.tx = tx;
  }

  /** Whether the database lives in memory (private to this connection, so no read workers can share it). */
  get memory(): boolean {
    return this.connection.memory;
  }

  private allNow<T>(q: Sql): T[] {
    try {
      return cachedStatement(this.connection, q.text).all(...q.params) as T[];
    } catch (error) {
      return unavailable(error);
    }
  }

  private runNow(q: Sql): RunResult {
    try {
      return { changes: cachedStatement(this.connection, q.text).run(...q.params).changes };
    } catch (error) {
      return unavailable(error);
    }
  }

  /**
   * Reads outside a transaction go to `reader` (read workers on this database's file) while a transaction is
   * open: they see what is committed, as they would on PostgreSQL, instead of waiting for the transaction.
   */
  readAside(reader: Reader): void {
    this.aside = reader;
  }

  async all<T = Row>(q: Sql): Promise<T[]> {
    await pause();
    if (this.open > 0) {
      // Statements that only read; a write outside a transaction waits for the transaction to end.
      if (this.aside && cachedStatement(this.connection, q.text).readonly) {
        try {
          return await this.aside.all<T>(q);
        } catch (error) {
          if (!(error instanceof ReadPoolUnavailable)) throw error;
        }
      }
      // Statements outside a transaction must not see its uncommitted writes.
      if (this.open > 0) await this.tail;
    }
    return this.allNow<T>(q);
  }

  async get<T = Row>(q: Sql): Promise<T | undefined> {
    return (await this.all<T>(q))[0];
  }

  run(q: Sql): Promise<RunResult> {
    return this.transaction((tx) => tx.run(q));
  }

  afterCommit(effect: () => unknown): void {
    runEffects([effect]);
  }

  async exec(script: string): Promise<void> {
    await this.transaction(async () => {
      this.connection.exec(script);
    });
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.inTurn('BEGIN IMMEDIATE', fn);
  }

  // A deferred transaction takes the database's read lock only: other processes' writers go on (WAL).
  snapshot<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.inTurn('BEGIN', fn);
  }

  /** Runs `fn` in a transaction begun with `begin`, after the transactions queued before it. */
  private inTurn<T>(begin: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const db = this.connection;
    return this.turn(async () => {
      await this.begin(begin);
      this.effects = [];
      try {
        const result = await fn(this.tx);
        db.exec('COMMIT');
        runEffects(this.effects);
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      } finally {
        this.effects = [];
      }
    });
  }

  /** Runs `fn` after the transactions queued before it, and the transactions queued after it once it ends. */
  private turn<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((resolve) => (done = resolve));
    this.open++;
    return previous.then(fn).finally(() => {
      this.open--;
      done();
    });
  }

  /** Begins a transaction, waiting (as `busy_timeout` would, but asynchronously) while another connection writes. */
  private async begin(statement: string): Promise<void> {
    const deadline = performance.now() + LOCK_WAIT_MS;
    for (let wait = 1; ; wait = Math.min(2 * wait, 50)) {
      try {
        this.connection.exec(statement);
        return;
      } catch (error) {
        const waited = performance.now() >= Math.max(deadline, this.buildEnded + LOCK_WAIT_MS);
        if (!BUSY.has((error as { code?: string }).code ?? '') || (waited && this.builds.size === 0)) unavailable(error);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  buildIndex(index: TableIndex): Promise<IndexBuild> {
    if (this.memory) {
      return this.transaction(async (tx) => {
        const found = await tx.get<{ uniq: number }>(sqliteIndexKind(index));
        for (const statement of sqliteIndexBuild(index, found)) await tx.run(Sql.raw(statement));
      }).then(
        () => 'built',
        (error: unknown) => {
          if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return 'duplicates';
          throw error;
        },
      );
    }
    const build = this.buildOnThread(index).finally(() => {
      this.builds.delete(build);
      this.buildEnded = performance.now();
    });
    this.builds.add(build);
    return build;
  }

  /** Index builds under way on their threads: while there are any, this process's writers wait. */
  get indexBuilds(): number {
    return this.builds.size;
  }

  /**
   * Builds an index on a thread with its own connection (index-worker.ts). The thread takes the write lock
   * in a turn of this connection's transactions, when none is open, so that it need not wait for a gap
   * between them; the turn ends as soon as it holds the lock, and this connection's writers then wait for
   * the lock (`begin`) as long as the build runs, while reads go on (WAL).
   */
  private async buildOnThread(index: TableIndex): Promise<IndexBuild> {
    const worker = new Worker(workerUrl('index-worker.js'), { workerData: { file: this.location, index } });
    const replies = on(worker, 'message', { close: ['exit'] })[Symbol.asyncIterator]();
    const next = async (): Promise<IndexWorkerReply> => {
      const { value, done } = await replies.next();
      if (done) throw new Error('the thread building an index stopped before it ended the build');
      const reply = (value as [IndexWorkerReply])[0];
      if (reply.step === 'failed') throw Object.assign(new Error(reply.error.message), { name: reply.error.name, code: reply.error.code });
      return reply;
    };
    try {
      await next();
      await this.turn(async () => {
        worker.postMessage('begin');
        await next();
      });
      const ended = await next();
      if (ended.step !== 'ended') throw new Error(`the thread building an index answered ${ended.step} out of turn`);
      return ended.outcome;
    } catch (error) {
      return unavailable(error);
    } finally {
      await replies.return?.();
      // Ended, or stopped early: its connection is closed (it closes it before it answers), or goes with it.
      await worker.terminate();
    }
  }

  connections(): { total: number; idle: number; waiting: number } {
    return { total: 1, idle: this.open === 0 ? 1 : 0, waiting: Math.max(0, this.open - 1) };
  }

  async close(): Promise<void> {
    // A build cannot be stopped part-way: its thread ends it, and the file is closed after.
    await Promise.allSettled([...this.builds]);
    await this.tail;
    this.connection.close();
  }

  /** The schema version stored in the file (`user_version`). */
  schemaVersion(): number {
    return this.connection.pragma('user_version', { simple: true }) as number;
  }
}
