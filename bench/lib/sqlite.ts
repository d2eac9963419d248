/**
 * The raw-database reference on SQLite: a read-only better-sqlite3 connection to the server's data file
 * (see raw.ts). better-sqlite3 runs statements synchronously; the promises only fit the common interface.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { CapturedStatement, RawDb } from './raw.js';

export function openReadOnly(dataDir: string): Database.Database {
  const db = new Database(join(dataDir, 'strata.db'), { readonly: true, fileMustExist: true });
  db.pragma('cache_size = -262144');
  db.pragma('mmap_size = 1073741824');
  return db;
}

export function openRawSqlite(dataDir: string): RawDb {
  const db = openReadOnly(dataDir);
  // Prepared statements, cached per text (as the server caches them).
  const cache = new Map<string, Database.Statement>();
  const prepared = (text: string) => {
    let stmt = cache.get(text);
    if (!stmt) cache.set(text, (stmt = db.prepare(text)));
    return stmt;
  };
  return {
    kind: 'sqlite',
    label: 'raw better-sqlite3',
    databaseCpuMs: () => undefined,
    async runStatements(statements) {
      const rows: unknown[] = [];
      for (const s of statements) for (const r of prepared(s.text).all(...s.params)) rows.push(r);
      return rows;
    },
    async explain(s: CapturedStatement) {
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${s.text}`).all(...s.params) as Array<{ id: number; parent: number; detail: string }>;
      const depth = new Map<number, number>([[0, 0]]);
      return rows.map((r) => {
        const d = (depth.get(r.parent) ?? 0) + 1;
        depth.set(r.id, d);
        return `${'  '.repeat(d - 1)}${r.detail}`;
      });
    },
    async query<T>(text: string, params: unknown[] = []) {
      return prepared(text).all(...params) as T[];
    },
    async tableBytes(tables) {
      const rows = db
        .prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name IN (SELECT value FROM json_each(?)) GROUP BY name')
        .all(JSON.stringify(tables)) as Array<{ name: string; bytes: number }>;
      return Object.fromEntries(tables.map((t) => [t, rows.find((r) => r.name === t)?.bytes ?? 0]));
    },
    async close() {
      db.close();
    },
  };
}
