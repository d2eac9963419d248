/**
 * Waiting for the work a request left to the app's job runner (container checks, see
 * resources/models/container-checks.ts): without sleeping, by watching the jobs' changes.
 */
import { sql } from '../../src/storage/sql.js';
import type { Harness } from './harness.js';

/** Resolves once no job of the harness's project is queued or running. */
export async function jobsDone(h: Harness): Promise<void> {
  const { db, changes } = h.strata.services;
  const project = h.base.split('/').pop()!;
  const { id } = (await db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = ${project}`))!;
  for (;;) {
    const watch = changes!.watch({ area: 'jobs', projectId: id });
    const open = await db.get<{ n: number }>(sql`SELECT count(*) AS n FROM jobs WHERE project_id = ${id} AND state IN ('queued', 'running')`);
    if (Number(open!.n) === 0) {
      watch.close();
      return;
    }
    await watch.wait({ deadline: Infinity });
  }
}

/** The names of the database's indexes that start with `prefix`, on either engine. */
export async function databaseIndexes(h: Harness, prefix: string): Promise<string[]> {
  const db = h.strata.services.db;
  const rows =
    db.dialect.kind === 'sqlite'
      ? await db.all<{ name: string }>(sql`SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE ${`${prefix}%`}`)
      : await db.all<{ name: string }>(sql`SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE ${`${prefix}%`}`);
  return rows.map((r) => r.name);
}
