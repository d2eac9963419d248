/**
 * Service-generated ids: positive integers below 2^53, never reused.
 *
 * SQLite: consecutive ids after the highest ever given (the table is AUTOINCREMENT, so SQLite remembers it
 * in sqlite_sequence); the write transaction holds the database's single write lock, so no other process
 * can take the same ones. PostgreSQL: from the table's sequence, which is shared by every process and
 * needs no lock; ids of one request need not be consecutive.
 */
import { idSequence } from './schema.js';
import { Sql, sql } from './sql.js';
import type { Queryable } from './store.js';

export async function allocateIds(db: Queryable, table: string, count: number): Promise<number[]> {
  if (count === 0) return [];
  if (db.dialect.kind === 'postgres') {
    const rows = await db.all<{ id: number }>(sql`SELECT nextval(${idSequence(table)}) AS id FROM generate_series(1, ${count})`);
    return rows.map((r) => r.id);
  }
  const next = await db.get<{ next: number }>(
    Sql.raw(`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '${table}'), 0), coalesce((SELECT max(id) FROM ${table}), 0)) + 1 AS next`),
  );
  return Array.from({ length: count }, (_, i) => next!.next + i);
}
