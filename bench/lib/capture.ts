/**
 * Records the SQL statements (text and parameters) a better-sqlite3 connection executes while recording is
 * on, so the benchmark can run exactly the server's SQL on a raw connection and EXPLAIN it. Statements are
 * wrapped when prepared; when recording is off the wrapper only forwards (a flag check per call).
 */
import type Database from 'better-sqlite3';
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

export function recordStatements(db: Database.Database): StatementRecorder {
  let recording = false;
  // While a reader records a query, the statements it runs in process are that query: not recorded twice.
  let inReader = false;
  let recorded: RecordedStatement[] = [];
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
                  if (recording && !inReader) recorded.push({ text, params: args });
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
    start() {
      recorded = [];
      recording = true;
    },
    stop() {
      recording = false;
      const out = recorded;
      recorded = [];
      return out;
    },
    wrapReader(reader) {
      return {
        all(query, options) {
          if (recording) recorded.push({ text: query.text, params: [...query.params] });
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
