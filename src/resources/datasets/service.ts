/**
 * Data set rules shared with other resources: which data sets are write-protected.
 */
import { sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';

/** The write-protected data sets among `ids`. */
export async function writeProtectedDataSets(db: Queryable, projectId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.all<{ id: number }>(sql`SELECT id FROM data_sets WHERE project_id = ${projectId} AND write_protected = 1 AND id IN (${ids})`);
  return new Set(rows.map((r) => r.id));
}
