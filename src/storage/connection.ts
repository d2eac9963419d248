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
  // Full Unicode lower-casing for case-insensitive matching (SQLite's lower() folds ASCII only).
  db.function('unicode_lower', { deterministic: true }, (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : s));
}
