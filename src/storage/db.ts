import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cachedStatement, configureConnection } from './connection.js';
import { migrations } from './migrations.js';
import type { Sql } from './sql.js';

export type Db = Database.Database;

export interface OpenOptions {
  /** Directory holding `strata.db`; `:memory:` opens a private in-memory database (tests). */
  dataDir: string;
  /** `full` fsyncs every commit (survives power loss); `normal` survives a killed process. */
  synchronous?: 'normal' | 'full';
}

export function openDatabase({ dataDir, synchronous = 'normal' }: OpenOptions): Db {
  let file = ':memory:';
  if (dataDir !== ':memory:') {
    mkdirSync(dataDir, { recursive: true });
    file = join(dataDir, 'strata.db');
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // Checkpoint in larger batches: each WAL page is written back once per checkpoint, and the default
  // (1000 pages) runs one inside almost every bulk write.
  db.pragma('wal_autocheckpoint = 16384');
  configureConnection(db);
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `The database was written by a newer Strata (schema version ${current}; this build knows ${migrations.length}).`,
    );
  }
  for (let v = current; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

/** Runs `fn` in one transaction: all of a write is applied or none of it. Nested calls join the outer one. */
export function inTransaction<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  return db.transaction(fn).immediate();
}

/** Prepared statements are cached per database by their text; generated queries repeat their shapes. */
export function prepare(db: Db, text: string): Database.Statement {
  return cachedStatement(db, text);
}

export function all<T>(db: Db, query: Sql): T[] {
  return prepare(db, query.text).all(...query.params) as T[];
}

export function get<T>(db: Db, query: Sql): T | undefined {
  return prepare(db, query.text).get(...query.params) as T | undefined;
}

export function run(db: Db, query: Sql): Database.RunResult {
  return prepare(db, query.text).run(...query.params);
}

const indexCaches = new WeakMap<Db, Map<string, boolean>>();

/** Whether some index of `table` starts with exactly `columns`, in order (a condition on them is then one index range). */
export function hasIndexOn(db: Db, table: string, columns: readonly string[]): boolean {
  let cache = indexCaches.get(db);
  if (!cache) indexCaches.set(db, (cache = new Map()));
  const key = `${table}(${columns.join(',')})`;
  let found = cache.get(key);
  if (found === undefined) {
    const indexes = db.pragma(`index_list(${JSON.stringify(table)})`) as Array<{ name: string }>;
    found = indexes.some(({ name }) => {
      const leading = (db.pragma(`index_info(${JSON.stringify(name)})`) as Array<{ seqno: number; name: string | null }>)
        .sort((a, b) => a.seqno - b.seqno)
        .map((c) => c.name);
      return columns.every((c, i) => leading[i] === c);
    });
    cache.set(key, found);
  }
  return found;
}
