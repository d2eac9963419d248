/**
 * A read worker (see read-pool.ts): its own read-only connection to the database file, answering queries
 * posted by the main thread. Rows go back as arrays with the column names once, which copies between
 * threads at about half the cost of objects.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { configureConnection } from './connection.js';
import type { ReadReply, ReadRequest } from './read-pool.js';

const db = new Database((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
configureConnection(db);

const MAX_CACHED_STATEMENTS = 500;
const statements = new Map<string, Database.Statement>();

function statement(text: string): Database.Statement {
  let stmt = statements.get(text);
  if (!stmt) {
    if (statements.size >= MAX_CACHED_STATEMENTS) statements.delete(statements.keys().next().value!);
    stmt = db.prepare(text).raw(true);
    statements.set(text, stmt);
  }
  return stmt;
}

/**
 * The values of text column `column` as UTF-8, back to back in one buffer that is moved (not copied) to the
 * main thread; the rows keep a placeholder (null stays null).
 */
function encodeColumn(rows: unknown[][], column: number): NonNullable<Extract<ReadReply, { rows: unknown[][] }>['encoded']> {
  let size = 0;
  const ends = new Int32Array(rows.length);
  for (const row of rows) if (typeof row[column] === 'string') size += Buffer.byteLength(row[column] as string);
  const data = new ArrayBuffer(size);
  const bytes = Buffer.from(data);
  let at = 0;
  rows.forEach((row, i) => {
    const value = row[column];
    if (typeof value === 'string') {
      at += bytes.write(value, at);
      row[column] = true;
    }
    ends[i] = at;
  });
  return { column, data, ends };
}

parentPort!.on('message', ({ id, text, params, bytes }: ReadRequest) => {
  let reply: ReadReply;
  let moved: ArrayBuffer[] = [];
  try {
    const stmt = statement(text);
    const rows = stmt.all(...params) as unknown[][];
    const columns = stmt.columns().map((c) => c.name);
    const column = bytes === undefined ? -1 : columns.indexOf(bytes);
    const encoded = column >= 0 ? encodeColumn(rows, column) : undefined;
    if (encoded) moved = [encoded.data, encoded.ends.buffer as ArrayBuffer];
    reply = { id, columns, rows, encoded };
  } catch (e) {
    const err = e as Error & { code?: string };
    reply = { id, error: { name: err.name, message: err.message, code: err.code } };
  }
  parentPort!.postMessage(reply, moved);
});
