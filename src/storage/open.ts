/**
 * Opening the store the configuration names: PostgreSQL when a database URL is given, otherwise the embedded
 * SQLite database in the data directory.
 */
import { PostgresStore } from './postgres-store.js';
import { SqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

export interface StoreOptions {
  /** The embedded store's directory (`:memory:` for a private in-memory database). */
  dataDir: string;
  /** `full` fsyncs every commit on SQLite (survives power loss); `normal` survives a killed process. */
  synchronous?: 'normal' | 'full';
  /** A PostgreSQL URL: the store is that database instead. */
  databaseUrl?: string;
  /** Connections in the PostgreSQL pool. */
  poolSize?: number;
}

export function openStore(o: StoreOptions): Store {
  if (o.databaseUrl) return new PostgresStore({ url: o.databaseUrl, poolSize: o.poolSize });
  return new SqliteStore({ dataDir: o.dataDir, synchronous: o.synchronous });
}
