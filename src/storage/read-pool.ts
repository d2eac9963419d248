/**
 * Reads on more than one core. SQLite in WAL mode lets readers on other connections run while the writer
 * writes, so list pages are read by worker threads, each with its own read-only connection to the database
 * file, and the main thread stays free for HTTP, validation and writes. A worker sees every transaction
 * committed before its query starts, so a client reads its own writes.
 *
 * An in-memory database (tests) cannot be shared between connections: it is read in process, through the
 * same interface.
 */
import { Worker } from 'node:worker_threads';
import type { ReadReply, ReadRequest } from './read-protocol.js';
import type { Sql } from './sql.js';
import type { Queryable } from './store.js';
import { workerUrl } from './worker-url.js';

export interface ReadOptions {
  /** The client reads other parts of the same result at the same time (a partition). */
  parallel?: boolean;
  /**
   * The statement's work grows with the data rather than with its answer (an aggregate over everything a
   * filter matches): it runs on a worker even for a lone request, so that it never holds the main thread.
   */
  scan?: boolean;
}

/** Where read-only queries run. */
export interface Reader {
  all<T>(query: Sql, options?: ReadOptions): Promise<T[]>;
}

/** Reads on the store itself: the main thread's SQLite connection, or PostgreSQL's pool. */
export function inProcessReader(db: Queryable): Reader {
  return {
    all<T>(query: Sql) {
      return db.all<T>(query);
    },
  };
}

/** A reader that keeps the statements it runs, in order, each with the label set when it ran. */
export class StatementLog implements Reader {
  readonly statements: Array<{ label: string | undefined; query: Sql }> = [];
  label: string | undefined;

  constructor(private readonly reader: Reader) {}

  all<T>(query: Sql, options?: ReadOptions): Promise<T[]> {
    this.statements.push({ label: this.label, query });
    return this.reader.all<T>(query, options);
  }
}

interface Pending {
  resolve(rows: unknown[]): void;
  reject(error: Error): void;
}

interface Slot {
  worker?: Worker;
  pending: Map<number, Pending>;
  /** After a worker stopped, when the slot may start another (a worker that cannot start must not loop). */
  retryAt: number;
}

/** No worker could take the read (one stopped under it, none can start now, or the pool is closed). */
export class ReadPoolUnavailable extends Error {
  override readonly name = 'ReadPoolUnavailable';
}

const RESTART_DELAY_MS = 1000;

/** Rows from arrays, as better-sqlite3 gives them by default (BLOBs as Buffers). */
function toObjects(columns: readonly string[], rows: unknown[][]): Record<string, unknown>[] {
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const o: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) {
      const v = row[c];
      o[columns[c]] = v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;
    }
    out[i] = o;
  }
  return out;
}

/**
 * Reads on `pool` when reads are known to run side by side: a partition (partitions exist to be read in
 * parallel), a scan (see ReadOptions.scan) or while `busy()` says other requests are in progress; in process
 * otherwise. Handing a read to
 * a worker costs about a millisecond for a page of 1000 (a round trip, a copy of the rows, and SQLite on a
 * core whose cache is cold); that buys nothing for a lone request, which the main thread would only wait
 * for, and a core for each of several. (Requests still in the socket buffers while the main thread reads
 * are invisible to `busy()`, so it alone would rarely see several sequential clients.)
 */
export function sharedReader(pool: ReadPool, local: Reader, busy: () => boolean): Reader {
  return {
    all<T>(query: Sql, options?: ReadOptions) {
      if (!(options?.parallel || options?.scan || busy())) return local.all<T>(query, options);
      // A read the workers cannot take is read here: a failing worker slows reads down, it does not fail them.
      return pool.all<T>(query, options).catch((error: unknown) => {
        if (error instanceof ReadPoolUnavailable) return local.all<T>(query, options);
        throw error;
      });
    },
  };
}

export class ReadPool implements Reader {
  private readonly slots: Slot[];
  private nextId = 1;
  private closed = false;
  /** Queries answered or under way since the start (tests and diagnostics). */
  queries = 0;

  /** `onStopped` hears of every worker that stopped unasked (the server logs it). */
  constructor(
    private readonly file: string,
    size: number,
    private readonly onStopped: (error: Error) => void = () => {},
  ) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`a read pool needs at least one worker, got ${size}`);
    // Workers start with the first read that needs them: starting one costs tens of milliseconds, which a
    // server start should not wait for, and a server that never reads in parallel never needs one.
    this.slots = Array.from({ length: size }, () => ({ pending: new Map(), retryAt: 0 }));
  }

  get size(): number {
    return this.slots.length;
  }

  all<T>(query: Sql, options?: ReadOptions): Promise<T[]> {
    if (this.closed) return Promise.reject(new ReadPoolUnavailable('the read pool is closed'));
    // The least busy worker; one not running yet (or stopped, once its slot's delay is over) is started here.
    const now = Date.now();
    let slot: Slot | undefined;
    for (const s of this.slots) if ((s.worker || s.retryAt <= now) && (!slot || s.pending.size < slot.pending.size)) slot = s;
    if (!slot) return Promise.reject(new ReadPoolUnavailable('no read worker is running'));
    const chosen = slot;
    const worker = chosen.worker ?? this.start(chosen);
    const id = this.nextId++;
    this.queries++;
    return new Promise<T[]>((resolve, reject) => {
      if (chosen.pending.size === 0) worker.ref();
      chosen.pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      worker.postMessage({ id, text: query.text, params: query.params } satisfies ReadRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((slot) => slot.worker?.terminate()));
  }

  private start(slot: Slot): Worker {
    const worker = new Worker(workerUrl('read-worker.js'), { workerData: { file: this.file } });
    worker.unref();
    slot.worker = worker;
    worker.on('message', (reply: ReadReply) => {
      const pending = slot.pending.get(reply.id);
      if (!pending) return;
      slot.pending.delete(reply.id);
      if (slot.pending.size === 0) worker.unref();
      if (reply.error) {
        pending.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name, code: reply.error.code }));
      } else {
        pending.resolve(toObjects(reply.columns, reply.rows));
      }
    });
    const stopped = (cause: Error) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      slot.retryAt = Date.now() + RESTART_DELAY_MS;
      const error = new ReadPoolUnavailable(`a read worker stopped: ${cause.message}`, { cause });
      for (const p of slot.pending.values()) p.reject(error);
      slot.pending.clear();
      if (!this.closed) this.onStopped(error);
    };
    worker.on('error', stopped);
    worker.on('exit', (code) => stopped(new Error(`exit code ${code}`)));
    return worker;
  }
}
