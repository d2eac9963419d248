import type { CursorCodec } from '../query/cursor.js';
import type { Db } from '../storage/db.js';

/** What route handlers reach: the store and the shared mechanisms built once per app. */
export interface Services {
  db: Db;
  cursors: CursorCodec;
  /** Milliseconds since the epoch; injectable so tests can control time. */
  now(): number;
}
