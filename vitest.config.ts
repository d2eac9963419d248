import { defineConfig } from 'vitest/config';
import { hasPostgres } from './test/support/postgres.js';

const shared = { pool: 'forks' as const, testTimeout: 60_000, hookTimeout: 60_000 };
/**
 * Tests run once, on the SQLite project: of what touches no database, of what picks its engines itself, and of
 * SQLite's own machinery (read workers on a database file).
 */
const once = [
  'test/evals/**',
  'test/throttle-store.test.ts',
  'test/store.test.ts',
  'test/read-workers.test.ts',
  'test/storage/blob-settings.test.ts',
  'test/storage/blob-memory-file.test.ts',
  'test/storage/blob-memory-s3.test.ts',
  'test/storage/file-memory-file.test.ts',
  'test/storage/file-memory-s3.test.ts',
  'test/console/e2e.test.ts',
  'test/console/e2e-external.test.ts',
];

// The suite runs on SQLite, and again on PostgreSQL where its server programs are installed (each harness then
// gets a new database on one throw-away cluster; see test/support/test-store.ts).
export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'sqlite', include: ['test/**/*.test.ts'] } },
      ...(hasPostgres()
        ? [
            {
              test: {
                ...shared,
                name: 'postgres',
                include: ['test/**/*.test.ts'],
                exclude: once,
                env: { STRATA_TEST_STORE: 'postgres' },
                globalSetup: ['test/support/postgres-setup.ts'],
              },
            },
          ]
        : []),
    ],
  },
});
