/**
 * One index build on a SQLite file (see SqliteStore.buildIndex), on a thread of its own so that the build
 * never holds the main thread. It opens its own connection and says `ready`; told to `begin`, it takes the
 * write lock and says `begun`; then it builds the index, commits, closes the connection and says how it
 * ended. The main thread tells it to begin in a turn of its own transactions, when this process holds no
 * write lock; its writers then wait for the build.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { configureConnection } from './connection.js';
import { sqliteIndexBuild, sqliteIndexKind, type TableIndex } from './table-index.js';

export type IndexWorkerReply =
  | { step: 'ready' | 'begun' }
  | { step: 'ended'; outcome: 'built' | 'duplicates' }
  | { step: 'failed'; error: { name: string; message: string; code?: string } };

const { file, index } = workerData as { file: string; index: TableIndex };
const port = parentPort!;
const reply = (message: IndexWorkerReply) => port.postMessage(message);

const failed = (e: unknown): IndexWorkerReply => {
  const error = e as Error & { code?: string };
  return { step: 'failed', error: { name: error.name, message: error.message, code: error.code } };
};

let db: Database.Database;
try {
  db = new Database(file, { fileMustExist: true });
  configureConnection(db);
} catch (e) {
  reply(failed(e));
  process.exit(0);
}

port.once('message', () => {
  let ended: IndexWorkerReply;
  try {
    db.exec('BEGIN IMMEDIATE');
    reply({ step: 'begun' });
    try {
      const kind = sqliteIndexKind(index);
      const found = db.prepare(kind.text).get(...kind.params) as { uniq: number } | undefined;
      for (const statement of sqliteIndexBuild(index, found)) db.exec(statement);
      db.exec('COMMIT');
      ended = { step: 'ended', outcome: 'built' };
    } catch (e) {
      db.exec('ROLLBACK');
      ended = (e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ? { step: 'ended', outcome: 'duplicates' } : failed(e);
    }
  } catch (e) {
    ended = failed(e);
  }
  db.close();
  reply(ended);
  port.close();
});
reply({ step: 'ready' });
