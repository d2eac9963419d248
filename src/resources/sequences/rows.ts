/**
 * The rows of sequences as stored: one row of `sequence_rows` per row number, its values a JSON array in
 * which the value of the column numbered `n` (model.ts) is at position n − 1. Values keep their type exactly:
 * a DOUBLE as the JSON number of its double (the shortest text that reads back as the same double), a
 * STRING as its JSON string, a LONG as its JSON number when a double holds it exactly (within ±(2^53 − 1))
 * and as the string of its digits beyond, since JSON.parse would round such a number; answers write it back
 * as a number (`valueJson`).
 */
import { badRequest, formatPath } from '../../http/errors.js';
import { floatJson } from '../../http/json-text.js';
import { insertRows } from '../../storage/items.js';
import { Sql, sql } from '../../storage/sql.js';
import type { Queryable } from '../../storage/store.js';
import { describeValue } from '../models/values.js';
import { SEQUENCE_LIMITS, sequenceRowsTable, type Column } from './model.js';

type Path = Array<string | number>;

/** A value as stored; absent (null) where a row has none. */
export type StoredValue = number | string | null;

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const DIGITS = /^-?\d+$/;
/** A number as JSON writes it, which a numeric column also takes as a string (the official JavaScript client's tests send "1"). */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function wrongType(v: unknown, column: Column, expected: string, path: Path): never {
  throw badRequest(`${formatPath(path)}: expected ${expected} for the ${column.valueType} column ${JSON.stringify(column.externalId)}, got ${describeValue(v)}`);
}

function longValue(v: unknown, column: Column, path: Path): StoredValue {
  let n: bigint;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number' && Number.isInteger(v)) {
    if (Number.isSafeInteger(v)) return v;
    n = BigInt(v);
  } else if (typeof v === 'string' && DIGITS.test(v)) n = BigInt(v);
  else wrongType(v, column, 'an integer', path);
  if (n < LONG_MIN || n > LONG_MAX) throw badRequest(`${formatPath(path)}: ${n} is outside the range of a LONG column (-2^63 to 2^63 - 1)`);
  const safe = Number(n);
  return Number.isSafeInteger(safe) ? safe : n.toString();
}

function doubleValue(v: unknown, column: Column, path: Path): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'bigint') n = Number(v);
  else if (typeof v === 'string' && JSON_NUMBER.test(v)) n = Number(v);
  else wrongType(v, column, 'a number', path);
  if (!(Math.abs(n) <= SEQUENCE_LIMITS.doubleMagnitude)) throw badRequest(`${formatPath(path)}: ${v} is outside the range of a DOUBLE column (-1e100 to 1e100)`);
  return n;
}

/** A request's value for `column`, as stored, or a 400 naming `path` and what the column takes. */
export function storedValue(v: unknown, column: Column, path: Path): StoredValue {
  if (v === null) return null;
  switch (column.valueType) {
    case 'LONG':
      return longValue(v, column, path);
    case 'DOUBLE':
      return doubleValue(v, column, path);
    case 'STRING':
      if (typeof v !== 'string') wrongType(v, column, 'a string', path);
      if (v.length > SEQUENCE_LIMITS.stringValue && [...v].length > SEQUENCE_LIMITS.stringValue) {
        throw badRequest(`${formatPath(path)}: a STRING value has at most ${SEQUENCE_LIMITS.stringValue} characters, got ${[...v].length}`);
      }
      return v;
  }
}

/** A stored value's JSON text in an answer: a DOUBLE always as a float (`2.0`), a LONG as an integer however large. */
export function valueJson(v: StoredValue | undefined, column: Column): string {
  if (v === null || v === undefined) return 'null';
  if (column.valueType === 'STRING') return JSON.stringify(v);
  if (column.valueType === 'LONG') return String(v);
  return floatJson(v as number);
}

/** Values by position (column number − 1), without the trailing nulls. */
export function encodeValues(values: readonly StoredValue[]): string {
  let end = values.length;
  while (end > 0 && (values[end - 1] === null || values[end - 1] === undefined)) end--;
  return JSON.stringify(values.slice(0, end).map((v) => v ?? null));
}

export function decodeValues(text: string): StoredValue[] {
  return JSON.parse(text) as StoredValue[];
}

export interface StoredRow {
  row_number: number;
  row_values: string;
}

const T = sequenceRowsTable.name;
const IN_CHUNK = 500;

/**
 * Rows of a sequence from `from` (included) to `to` (excluded, or every row after), at most `limit`, in row
 * order, or in reverse order (`descending`: from `to` down); with `valueIn`, only those with a value in one
 * of these columns.
 */
export function readRows(
  db: Queryable,
  projectId: number,
  sequenceId: number,
  range: { from?: number; to?: number; limit: number; descending?: boolean; valueIn?: readonly Column[] },
): Promise<StoredRow[]> {
  const conditions = [sql`project_id = ${projectId}`, sql`sequence_id = ${sequenceId}`];
  if (range.from !== undefined) conditions.push(sql`row_number >= ${range.from}`);
  if (range.to !== undefined) conditions.push(sql`row_number < ${range.to}`);
  if (range.valueIn) conditions.push(Sql.raw(`(${range.valueIn.map((c) => db.dialect.jsonArrayHasValue('row_values', c.id - 1)).join(' OR ')})`));
  const order = Sql.raw(range.descending ? 'DESC' : 'ASC');
  return db.all<StoredRow>(sql`SELECT row_number, row_values FROM ${Sql.raw(T)} WHERE ${Sql.and(conditions)} ORDER BY row_number ${order} LIMIT ${range.limit}`);
}

/** The stored values of the given rows of a sequence that exist, by row number. */
export async function rowsByNumber(db: Queryable, projectId: number, sequenceId: number, rowNumbers: readonly number[]): Promise<Map<number, StoredValue[]>> {
  const out = new Map<number, StoredValue[]>();
  for (let i = 0; i < rowNumbers.length; i += IN_CHUNK) {
    const part = rowNumbers.slice(i, i + IN_CHUNK);
    const rows = await db.all<StoredRow>(
      sql`SELECT row_number, row_values FROM ${Sql.raw(T)} WHERE project_id = ${projectId} AND sequence_id = ${sequenceId} AND row_number IN (${part})`,
    );
    for (const r of rows) out.set(r.row_number, decodeValues(r.row_values));
  }
  return out;
}

/** Writes rows (each row number once), replacing the values of rows that exist. */
export async function writeRows(db: Queryable, projectId: number, sequenceId: number, rows: ReadonlyArray<[number, string]>): Promise<void> {
  await insertRows(
    db,
    T,
    ['project_id', 'sequence_id', 'row_number', 'row_values'],
    rows.map(([n, text]) => [projectId, sequenceId, n, text]),
    ' ON CONFLICT (project_id, sequence_id, row_number) DO UPDATE SET row_values = excluded.row_values',
  );
}

export async function deleteRowNumbers(db: Queryable, projectId: number, sequenceId: number, rowNumbers: readonly number[]): Promise<void> {
  for (let i = 0; i < rowNumbers.length; i += IN_CHUNK) {
    const part = rowNumbers.slice(i, i + IN_CHUNK);
    await db.run(sql`DELETE FROM ${Sql.raw(T)} WHERE project_id = ${projectId} AND sequence_id = ${sequenceId} AND row_number IN (${part})`);
  }
}

/** Deletes every row of the given sequences (with the sequences themselves). */
export async function deleteRowsOf(db: Queryable, projectId: number, sequenceIds: readonly number[]): Promise<void> {
  for (let i = 0; i < sequenceIds.length; i += IN_CHUNK) {
    await db.run(sql`DELETE FROM ${Sql.raw(T)} WHERE project_id = ${projectId} AND sequence_id IN (${sequenceIds.slice(i, i + IN_CHUNK)})`);
  }
}
