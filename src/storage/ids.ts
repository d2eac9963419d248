/**
 * Service-generated ids: positive integers below 2^53, never reused, and never small: a client that takes
 * 1, 42 or 1337 for an id that does not exist is right, as it is with the reference service, whose ids are
 * large and look random.
 *
 * An id is `ID_FLOOR + n * ID_SLOT + r`: `n` counts the table's ids (consecutive in creation order) and `r`
 * is random within the slot. Ids therefore grow with creation order, as the table's B-tree appends them
 * (inserts cost what consecutive ids cost), and `n` is what partitions deal out (query/partition.ts).
 * Databases written when ids were consecutive from 1 keep those ids; every id given since lies above them.
 *
 * SQLite: `n` follows the highest id ever given (the table is AUTOINCREMENT, so SQLite remembers it in
 * sqlite_sequence); the write transaction holds the database's single write lock, so no other process can
 * take the same ones. PostgreSQL: `n` comes from the table's sequence, which is shared by every process and
 * needs no lock; the ids of one request need not be consecutive slots.
 */
import { idSequence } from './schema.js';
import { Sql, sql } from './sql.js';
import type { Queryable } from './store.js';

/** The least id given; ids below it are those of databases written before (consecutive from 1). */
export const ID_FLOOR = 2 ** 44;
/** Ids per slot: one id is given in each. */
export const ID_SLOT = 2 ** 16;

/** The count `n` of an id given at or above ID_FLOOR. */
function idCount(id: number): number {
  return Math.floor((id - ID_FLOOR) / ID_SLOT);
}

function idsFrom(counts: readonly number[]): number[] {
  return counts.map((n) => ID_FLOOR + n * ID_SLOT + Math.floor(Math.random() * ID_SLOT));
}

export async function allocateIds(db: Queryable, table: string, count: number): Promise<number[]> {
  if (count === 0) return [];
  if (db.dialect.kind === 'postgres') {
    const rows = await db.all<{ n: number }>(sql`SELECT nextval(${idSequence(table)}) AS n FROM generate_series(1, ${count})`);
    return idsFrom(rows.map((r) => r.n));
  }
  const highest = await db.get<{ id: number }>(
    Sql.raw(`SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '${table}'), 0), coalesce((SELECT max(id) FROM ${table}), 0)) AS id`),
  );
  const next = highest!.id < ID_FLOOR ? 0 : idCount(highest!.id) + 1;
  return idsFrom(Array.from({ length: count }, (_, i) => next + i));
}
