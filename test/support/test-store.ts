/**
 * Which engine a test's app stores its data in: SQLite unless the test runs in the `postgres` project of
 * vitest.config.ts (STRATA_TEST_STORE=postgres), which gives every harness a new, empty database on the run's
 * PostgreSQL cluster. Tests stay engine-neutral: they get the settings to pass to the app.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { appSchema } from '../../src/app.js';
import { migrate } from '../../src/storage/migrate.js';
import { openStore } from '../../src/storage/open.js';
import type { Store } from '../../src/storage/store.js';

export const testEngine = (): 'sqlite' | 'postgres' => (process.env.STRATA_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite');

/** A new empty PostgreSQL database on the run's cluster; its URL. */
export async function newPostgresDatabase(): Promise<string> {
  const admin = inject('postgresAdminUrl');
  const name = `t_${randomBytes(8).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Environment settings that put a test app's data in this run's engine (none for SQLite). */
export async function storeEnv(): Promise<Record<string, string>> {
  return testEngine() === 'postgres' ? { STRATA_DATABASE_URL: await newPostgresDatabase() } : {};
}

/**
 * A store of this run's engine with the app's schema, for tests that prepare data before an app is built on it
 * (pass it as `build: { store }`; close it after the app).
 */
export async function openTestStore(): Promise<Store> {
  const url = testEngine() === 'postgres' ? await newPostgresDatabase() : undefined;
  const store = openStore({ dataDir: ':memory:', databaseUrl: url });
  await migrate(store, appSchema());
  return store;
}
