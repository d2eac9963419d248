/**
 * A read worker (see read-pool.ts): its own read-only connection to the database file, answering queries
 * posted by the main thread. Rows go back as arrays with the column names once, which copies between
 * threads at about half the cost of objects.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { cachedStatement, configureConnection } from './connection.js';
import { joinColumn, type ReadReply, type ReadRequest } from './read-protocol.js';

const db = new Database((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
configureConnection(db);

/** UTF-8 of `text` in a buffer of its own, which can be moved (not copied) to the main thread. */
function encode(text: string): ArrayBuffer {
  const data = new ArrayBuffer(Buffer.byteLength(text));
  Buffer.from(data).write(text);
  return data;
}

parentPort!.on('message', ({ id, text, params, join }: ReadRequest) => {
  let reply: ReadReply;
  let moved: ArrayBuffer[] = [];
  try {
    const stmt = cachedStatement(db, text).raw(true);
    const rows = stmt.all(...params) as unknown[][];
    const columns = stmt.columns().map((c) => c.name);
    const joined = join ? encode(joinColumn(columns, rows, join)) : undefined;
    if (joined) moved = [joined];
    reply = { id, columns, rows, joined };
  } catch (e) {
    const err = e as Error & { code?: string };
    reply = { id, error: { name: err.name, message: err.message, code: err.code } };
  }
  parentPort!.postMessage(reply, moved);
});
