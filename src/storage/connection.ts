/**
 * Settings every connection to a Strata database gets, the writer's and the read workers' alike. Kept free
 * of schema imports so that a read worker loads only this and better-sqlite3.
 */
import type Database from 'better-sqlite3';

export function configureConnection(db: Database.Database): void {
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -262144');
  db.pragma('temp_store = MEMORY');
  db.pragma('mmap_size = 1073741824');
}

const statementCaches = new WeakMap<Database.Database, Map<string, Database.Statement>>();
const MAX_CACHED_STATEMENTS = 500;

/** Prepared statements are cached per connection by their text; generated queries repeat their shapes. */
export function cachedStatement(db: Database.Database, text: string): Database.Statement {
  let cache = statementCaches.get(db);
  if (!cache) statementCaches.set(db, (cache = new Map()));
  let stmt = cache.get(text);
  if (!stmt) {
    if (cache.size >= MAX_CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
    stmt = db.prepare(text);
    cache.set(text, stmt);
  }
  return stmt;
}
