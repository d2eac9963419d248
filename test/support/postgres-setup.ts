/**
 * Global setup of the `postgres` test project: one throw-away PostgreSQL cluster for the whole run; each test
 * harness creates a database of its own on it (test/support/test-store.ts).
 */
import type { TestProject } from 'vitest/node';
import { startPostgres, type PostgresServer } from './postgres.js';

let server: PostgresServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  server = await startPostgres();
  project.provide('postgresAdminUrl', server.adminUrl);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
  }
}
