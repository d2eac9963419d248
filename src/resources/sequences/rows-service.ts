/**
 * The rows of sequences: insert (by row number, replacing the values of the columns given), list a range in
 * row order by pages, the last row before a row number, delete. A sequence the request cannot see is
 * unknown here as everywhere (400 with `missing`); one it sees but may not write is refused with 403.
 *
 * A row is given with at least one value (a row of nulls is refused), and keeps one: an insert writes its
 * values, non-null among them, into the row. Reads leave out the rows that have no value in the columns
 * they ask for (their values may all be in other columns, or in columns since removed).
 */
import { badRequest, formatPath } from '../../http/errors.js';
import { JsonText } from '../../http/json-text.js';
import type { Services } from '../../http/services.js';
import { rowsByIds, toValues, type Item } from '../../storage/items.js';
import { inWrite, retrieveItems, writableIds } from '../crud.js';
import { SEQUENCE_LIMITS as L, type Column } from './model.js';
import {
  decodeValues,
  deleteRowNumbers,
  encodeValues,
  readRows,
  rowsByNumber,
  storedValue,
  valueJson,
  writeRows,
  type StoredRow,
  type StoredValue,
} from './rows.js';
import type { DeleteRowsBody, InsertRowsBody, LatestRowBody, ListRowsBody } from './schema.js';
import { anySequenceSpec as spec } from './service.js';

type Path = Array<string | number>;

/** The columns a request names, in its order (`path` names its list); a column the sequence lacks, or one named twice, is a 400. */
function namedColumns(columns: readonly Column[], names: readonly string[], path: Path): Column[] {
  const byExternalId = new Map(columns.map((c) => [c.externalId, c]));
  const seen = new Set<string>();
  return names.map((name, i) => {
    const column = byExternalId.get(name);
    if (!column) throw badRequest(`${formatPath([...path, i])}: the sequence has no column ${JSON.stringify(name)}`);
    if (seen.has(name)) throw badRequest(`${formatPath([...path, i])}: the column ${JSON.stringify(name)} is named more than once`);
    seen.add(name);
    return column;
  });
}

/** Refuses a request beyond the rows or values (nulls included) one insert may hold. */
function checkInsertSize(body: InsertRowsBody): void {
  let rows = 0;
  let values = 0;
  for (const item of body.items) {
    rows += item.rows.length;
    for (const row of item.rows) values += row.values.length;
  }
  if (rows > L.insertRows) throw badRequest(`items: ${rows} rows in one request; at most ${L.insertRows} are allowed`);
  if (values > L.insertValues) throw badRequest(`items: ${values} values (nulls included) in one request; at most ${L.insertValues} are allowed`);
}

/** An item's rows as stored values by row number, each checked against its column (a row given twice: the later one's values win). */
function givenRows(item: InsertRowsBody['items'][number], columns: readonly Column[], path: Path): Map<number, StoredValue[]> {
  const rows = new Map<number, StoredValue[]>();
  for (const [j, row] of item.rows.entries()) {
    const at = [...path, 'rows', j, 'values'];
    if (row.values.length !== columns.length) {
      throw badRequest(`${formatPath(at)}: ${row.values.length} values for ${columns.length} columns; give one value (or null) for each column in "columns", in its order`);
    }
    const values = row.values.map((v, k) => storedValue(v, columns[k], [...at, k]));
    if (values.every((v) => v === null)) throw badRequest(`${formatPath(at)}: every value is null; a row needs at least one value`);
    rows.set(row.rowNumber, values);
  }
  return rows;
}

export async function insertRows(services: Services, projectId: number, body: InsertRowsBody): Promise<void> {
  checkInsertSize(body);
  await inWrite(services, async (services) => {
    const { db } = services;
    const ids = await writableIds(spec, services, projectId, body.items);
    const sequences = await rowsByIds(db, spec.table, projectId, ids);
    for (const [i, item] of body.items.entries()) {
      const all = toValues(spec.table, sequences.get(ids[i])!).columns as Column[];
      const columns = namedColumns(all, item.columns, ['items', i, 'columns']);
      const given = givenRows(item, columns, ['items', i]);
      const numbers = [...given.keys()];
      // Rows given for every column replace the stored ones; otherwise the other columns keep their values.
      const existing = columns.length === all.length ? new Map<number, StoredValue[]>() : await rowsByNumber(db, projectId, ids[i], numbers);
      const writes = [...given].map(([n, values]): [number, string] => {
        const row = [...(existing.get(n) ?? [])];
        columns.forEach((c, k) => (row[c.id - 1] = values[k]));
        return [n, encodeValues(row)];
      });
      await writeRows(db, projectId, ids[i], writes);
    }
  });
}

export async function deleteRows(services: Services, projectId: number, body: DeleteRowsBody): Promise<void> {
  await inWrite(services, async (services) => {
    const ids = await writableIds(spec, services, projectId, body.items);
    for (const [i, item] of body.items.entries()) await deleteRowNumbers(services.db, projectId, ids[i], item.rows);
  });
}

/** The sequence a read of rows names, as the request sees it, and the columns it asks for (all of them unless it names some). */
async function readTarget(services: Services, projectId: number, body: { id?: number; externalId?: string; columns?: string[] | null }) {
  if ((body.id === undefined) === (body.externalId === undefined)) throw badRequest('Give exactly one of "id" and "externalId": the sequence to read');
  const [sequence] = await retrieveItems(spec, services, projectId, [{ id: body.id, externalId: body.externalId }]);
  const all = sequence.columns as Column[];
  const columns = body.columns ? namedColumns(all, body.columns, ['columns']) : all;
  // Every row has a value in a column of the sequence, unless its values are all in columns removed since.
  const everyRow = columns.length === all.length && all.every((c, i) => c.id === i + 1);
  return { sequence, columns, ...(everyRow ? {} : { valueIn: columns }) };
}

/**
 * The rows of a page: at most `limit`, and at most as many as hold 100,000 values, a STRING value counting
 * as two (a page of 200 STRING columns holds 250 rows; one of a single DOUBLE column 10,000).
 */
function pageRows(limit: number, columns: readonly Column[]): number {
  const weight = columns.reduce((sum, c) => sum + (c.valueType === 'STRING' ? 2 : 1), 0);
  return Math.max(1, Math.min(limit, L.pageRows, Math.floor(L.pageValues / weight)));
}

/** The answer of a rows read: the sequence, the columns read (their external id, name and type), the rows. */
function rowsAnswer(sequence: Item, columns: readonly Column[], rows: readonly StoredRow[], nextCursor?: string): JsonText {
  const head = JSON.stringify({
    id: sequence.id,
    ...(sequence.externalId !== undefined ? { externalId: sequence.externalId } : {}),
    columns: columns.map((c) => ({ externalId: c.externalId, ...(c.name !== undefined ? { name: c.name } : {}), valueType: c.valueType })),
  });
  const out = rows.map((r) => {
    const values = decodeValues(r.row_values);
    return `{"rowNumber":${r.row_number},"values":[${columns.map((c) => valueJson(values[c.id - 1], c)).join(',')}]}`;
  });
  const tail = nextCursor ? `,"nextCursor":${JSON.stringify(nextCursor)}` : '';
  return new JsonText(`${head.slice(0, -1)},"rows":[${out.join(',')}]${tail}}`);
}

/** Where the page a cursor asks for starts. */
function cursorStart(services: Services, cursor: string, binding: unknown): number {
  const state = services.cursors.decode(cursor, binding) as { from?: unknown } | null;
  const from = state?.from;
  if (typeof from !== 'number' || !Number.isSafeInteger(from)) throw badRequest('cursor: not a cursor issued by this server');
  return from;
}

export async function listRows(services: Services, projectId: number, body: ListRowsBody): Promise<JsonText> {
  const { sequence, columns, valueIn } = await readTarget(services, projectId, body);
  const start = Math.max(body.start ?? 0, 0);
  const end = body.end ?? undefined;
  // The page size may differ from page to page (the official Python SDK asks for what it still needs), so it is no part of the query.
  const binding = { resource: 'sequence rows', sequence: sequence.id, start, end: end ?? null, columns: body.columns ?? null };
  const from = body.cursor ? cursorStart(services, body.cursor, binding) : start;
  const size = pageRows(body.limit ?? L.defaultPageRows, columns);
  const rows = end !== undefined && from >= end ? [] : await readRows(services.db, projectId, sequence.id, { from, to: end, limit: size + 1, valueIn });
  const nextCursor = rows.length > size ? services.cursors.encode({ from: rows[size].row_number }, binding) : undefined;
  return rowsAnswer(sequence, columns, rows.slice(0, size), nextCursor);
}

export async function latestRow(services: Services, projectId: number, body: LatestRowBody): Promise<JsonText> {
  const { sequence, columns, valueIn } = await readTarget(services, projectId, body);
  const rows = await readRows(services.db, projectId, sequence.id, { to: body.before ?? undefined, limit: 1, descending: true, valueIn });
  return rowsAnswer(sequence, columns, rows);
}
