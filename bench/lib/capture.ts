/**
 * Records the SQL statements (text and parameters) the server's store executes while recording is on, so
 * the benchmark can run exactly the server's SQL on a raw connection and EXPLAIN it (raw.ts). SQLite: the
 * better-sqlite3 connection's statements, wrapped when prepared. PostgreSQL: every query a pooled
 * node-postgres connection sends, as sent (`$1` placeholders). When recording is off the wrappers only
 * forward (a flag check per call).
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';
import type { Store } from '../../src/storage/store.js';
import { PostgresStore } from '../../src/storage/postgres-store.js';
import { SqliteStore } from '../../src/storage/sqlite-store.js';
import type { Reader } from '../../src/storage/read-pool.js';

export interface RecordedStatement {
  text: string;
  params: unknown[];
}

export interface StatementRecorder {
  start(): void;
  /** Stops recording and returns what was recorded since `start`. */
  stop(): RecordedStatement[];
  /** The reader, recording the queries it is given too (list pages run on read workers, not on `db`). */
  wrapReader(reader: Reader): Reader;
}

const EXECUTING = new Set(['all', 'get', 'run', 'iterate']);

/** What both recorders share: whether recording is on, and what was recorded since `start`. */
function recording() {
  let on = false;
  let recorded: RecordedStatement[] = [];
  return {
    get on() {
      return on;
    },
    push(statement: RecordedStatement) {
      recorded.push(statement);
    },
    start() {
      recorded = [];
      on = true;
    },
    stop() {
      on = false;
      const out = recorded;
      recorded = [];
      return out;
    },
  };
}

/** A recorder for the store's engine. */
export function recordStore(store: Store): StatementRecorder {
  if (store instanceof SqliteStore) return recordStatements(store.connection);
  if (store instanceof PostgresStore) return recordPoolStatements(store.pool);
  throw new Error(`cannot record the statements of a ${store.kind} store`);
}

/**
 * PostgreSQL: wraps `query` of each connection the pool opens (the store opens none before the first
 * statement, so all are seen). Reads go through the same pool, so the reader is recorded as it is.
 */
export function recordPoolStatements(pool: pg.Pool): StatementRecorder {
  const log = recording();
  pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (log.on) {
        const [first, second] = args;
        if (typeof first === 'string') log.push({ text: first, params: Array.isArray(second) ? [...(second as unknown[])] : [] });
        else if (first && typeof first === 'object' && typeof (first as { text?: unknown }).text === 'string') {
          const config = first as { text: string; values?: unknown[] };
          log.push({ text: config.text, params: [...(config.values ?? (Array.isArray(second) ? (second as unknown[]) : []))] });
        }
      }
      return query(...args);
    };
  });
  return {
    start: log.start,
    stop: log.stop,
    wrapReader: (reader) => reader,
  };
}

export function recordStatements(db: Database.Database): StatementRecorder {
  const log = recording();
  // While a reader records a query, the statements it runs in process are that query: not recorded twice.
  let inReader = false;
  const prepare = db.prepare.bind(db);
  (db as unknown as { prepare: (text: string) => unknown }).prepare = (text: string) => {
    const stmt = prepare(text);
    const wrapped = new Map<PropertyKey, unknown>();
    const proxy: Database.Statement = new Proxy(stmt, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        let fn = wrapped.get(prop);
        if (!fn) {
          const f = value as (...a: unknown[]) => unknown;
          fn =
            typeof prop === 'string' && EXECUTING.has(prop)
              ? (...args: unknown[]) => {
                  if (log.on && !inReader) log.push({ text, params: args });
                  return f.apply(target, args);
                }
              : (...args: unknown[]) => {
                  const result = f.apply(target, args);
                  // Chained modifiers (pluck, raw, expand, safeIntegers) return the statement: keep the wrapper.
                  return result === target ? proxy : result;
                };
          wrapped.set(prop, fn);
        }
        return fn;
      },
    });
    return proxy;
  };
  return {
    start: log.start,
    stop: log.stop,
    wrapReader(reader) {
      return {
        all(query, options) {
          if (log.on) log.push({ text: query.text, params: [...query.params] });
          // An in-process reader runs the query before returning its promise.
          inReader = true;
          try {
            return reader.all(query, options);
          } finally {
            inReader = false;
          }
        },
      };
    },
  };
}
