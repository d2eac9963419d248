/**
 * Limits on how many of something a project holds, as checks: each write that adds to a count checks it in
 * its own transaction, after its changes, so a request that would pass a limit applies nothing.
 */
import { badRequest } from '../http/errors.js';
import { Sql, sql } from '../storage/sql.js';
import type { Queryable } from '../storage/store.js';

/**
 * A 400 when the project holds more rows of `table` (those matching `where`) than `limit`. Counts at most
 * `limit + 1` rows, so the check costs what the limit allows, not what the table holds.
 */
export async function requireWithinLimit(db: Queryable, projectId: number, table: string, limit: number, noun: string, where?: Sql): Promise<void> {
  const row = await db.get<{ n: number }>(
    sql`SELECT count(*) AS n FROM (SELECT 1 FROM ${Sql.raw(table)} WHERE project_id = ${projectId}${where ? sql` AND ${where}` : Sql.raw('')} LIMIT ${limit + 1}) x`,
  );
  if (Number(row!.n) > limit) throw limitReached(limit, noun);
}

export const limitReached = (limit: number, noun: string) =>
  badRequest(`A project holds at most ${limit} ${noun}, and this request would pass that limit (nothing was applied)`);
