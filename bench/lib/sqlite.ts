/**
 * Raw SQLite access for references and diagnostics: a read-only connection to the server's data file,
 * running recorded statements, and EXPLAIN QUERY PLAN.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';

export type RawDb = Database.Database;

/** A statement with its parameters, as recorded in the server (see capture.ts). */
export interface CapturedStatement {
  text: string;
  params: unknown[];
}

export function openReadOnly(dataDir: string): RawDb {
  const db = new Database(join(dataDir, 'strata.db'), { readonly: true, fileMustExist: true });
  db.pragma('cache_size = -262144');
  db.pragma('mmap_size = 1073741824');
  return db;
}

const statementCache = new WeakMap<RawDb, Map<string, Database.Statement>>();

/** A prepared statement, cached per connection (as the server caches them). */
export function prepared(db: RawDb, text: string): Database.Statement {
  let cache = statementCache.get(db);
  if (!cache) statementCache.set(db, (cache = new Map()));
  let stmt = cache.get(text);
  if (!stmt) cache.set(text, (stmt = db.prepare(text)));
  return stmt;
}

/** Runs the statements one after another, as the server would for one request; returns the rows. */
export function runStatements(db: RawDb, statements: readonly CapturedStatement[]): unknown[] {
  const rows: unknown[] = [];
  for (const s of statements) for (const r of prepared(db, s.text).all(...s.params)) rows.push(r);
  return rows;
}

/** EXPLAIN QUERY PLAN as indented lines. */
export function explain(db: RawDb, s: CapturedStatement): string[] {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${s.text}`).all(...s.params) as Array<{ id: number; parent: number; detail: string }>;
  const depth = new Map<number, number>([[0, 0]]);
  return rows.map((r) => {
    const d = (depth.get(r.parent) ?? 0) + 1;
    depth.set(r.id, d);
    return `${'  '.repeat(d - 1)}${r.detail}`;
  });
}

/** SQL text on one line, with long parameter lists shortened, for printing. */
export function oneLine(s: CapturedStatement, max = 600): string {
  const text = s.text.replace(/\s+/g, ' ').trim();
  const params = JSON.stringify(s.params);
  const out = `${text}  -- params ${params.length > 200 ? `${params.slice(0, 200)}…` : params}`;
  return out.length > max ? `${out.slice(0, max)}…` : out;
}
