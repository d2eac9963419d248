/**
 * A read worker (see read-pool.ts): its own read-only connection to the database file, answering queries
 * posted by the main thread. Rows go back as arrays with the column names once, which copies between
 * threads at about half the cost of objects.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { cachedStatement, configureConnection } from './connection.js';
import type { ReadReply, ReadRequest } from './read-protocol.js';

const db = new Database((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
configureConnection(db);

/**
 * The buffers of BLOB values (a list page's joined JSON, see PageQuery.join), to be moved to the main
 * thread rather than copied. better-sqlite3 gives each BLOB a buffer of its own; one that shares its memory
 * with others is copied.
 */
function movable(rows: unknown[][]): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const row of rows) {
    for (const v of row) {
      if (v instanceof Uint8Array && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.buffer instanceof ArrayBuffer) out.push(v.buffer);
    }
  }
  return out;
}

parentPort!.on('message', ({ id, text, params }: ReadRequest) => {
  let reply: ReadReply;
  let moved: ArrayBuffer[] = [];
  try {
    const stmt = cachedStatement(db, text).raw(true);
    const rows = stmt.all(...params) as unknown[][];
    const columns = stmt.columns().map((c) => c.name);
    moved = movable(rows);
    reply = { id, columns, rows };
  } catch (e) {
    const err = e as Error & { code?: string };
    reply = { id, error: { name: err.name, message: err.message, code: err.code } };
  }
  parentPort!.postMessage(reply, moved);
});
