/**
 * What the main thread and a read worker (read-pool.ts, read-worker.ts) say to each other; free of other
 * imports so that a worker loads only this, its connection settings and better-sqlite3.
 */
import type { SqlValue } from './sql.js';

export interface ReadRequest {
  id: number;
  text: string;
  params: readonly SqlValue[];
}

/** Rows as arrays with the column names once; BLOB values arrive as Uint8Array (moved, not copied). */
export type ReadReply =
  | { id: number; columns: string[]; rows: unknown[][]; error?: undefined }
  | { id: number; error: { name: string; message: string; code?: string } };
