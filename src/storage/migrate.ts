/**
 * Bringing a database to the schema this build declares, at start (or alone, `strata migrate`).
 *
 * The tables are declarations (schema.ts): whatever is missing of them is created. What a declaration cannot
 * say (data to rewrite when the way rows are stored changes) is a numbered step, run once on databases
 * written before that step's version. A database keeps its version (SQLite: `user_version`; PostgreSQL: the
 * table `strata_schema`), and a database written by a newer build is refused rather than guessed at.
 * Several processes may start at once: the migration runs in one transaction that holds the database's
 * write lock (SQLite) or an advisory lock (PostgreSQL), so the second waits and then finds nothing to do.
 */
import { ensureTables, type TableDef } from './schema.js';
import { holdLock } from './locks.js';
import { Sql, sql } from './sql.js';
import type { Queryable, Store } from './store.js';

export interface DataStep {
  /** The schema version that introduced it: it runs on databases older than this. */
  version: number;
  run(db: Queryable): Promise<void>;
}

export interface Schema {
  tables: readonly TableDef[];
  steps: readonly DataStep[];
}

/**
 * The version of the schema this build writes. Versions 1-9 were SQLite-only numbered scripts; a database
 * of any of them is brought up by the declarations plus the steps after its version.
 */
export const SCHEMA_VERSION = 14;

export class SchemaTooNew extends Error {}

async function readVersion(db: Queryable): Promise<number> {
  if (db.dialect.kind === 'sqlite') return (await db.get<{ user_version: number }>(Sql.raw('PRAGMA user_version')))!.user_version;
  await db.run(Sql.raw('CREATE TABLE IF NOT EXISTS strata_schema (version INTEGER NOT NULL)'));
  return (await db.get<{ version: number }>(Sql.raw('SELECT version FROM strata_schema')))?.version ?? 0;
}

async function writeVersion(db: Queryable, version: number): Promise<void> {
  if (db.dialect.kind === 'sqlite') {
    await db.run(Sql.raw(`PRAGMA user_version = ${version}`));
    return;
  }
  await db.run(Sql.raw('DELETE FROM strata_schema'));
  await db.run(sql`INSERT INTO strata_schema (version) VALUES (${version})`);
}

/** The version a database holds, without changing it. */
export async function schemaVersion(store: Store): Promise<number> {
  return store.transaction(readVersion);
}

export async function migrate(store: Store, schema: Schema): Promise<{ from: number; to: number }> {
  return store.transaction(async (db) => {
    await holdLock(db, 'migration');
    const from = await readVersion(db);
    if (from > SCHEMA_VERSION) {
      throw new SchemaTooNew(
        `The database at ${store.location} was written by a newer Strata (schema version ${from}; this build knows up to ${SCHEMA_VERSION}). Run a Strata at least as new as the one that wrote it.`,
      );
    }
    await ensureTables(db, schema.tables);
    for (const step of [...schema.steps].sort((a, b) => a.version - b.version)) {
      if (step.version > from) await step.run(db);
    }
    if (from !== SCHEMA_VERSION) await writeVersion(db, SCHEMA_VERSION);
    return { from, to: SCHEMA_VERSION };
  });
}
