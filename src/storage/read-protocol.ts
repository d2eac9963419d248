/**
 * What the main thread and a read worker (read-pool.ts, read-worker.ts) say to each other; free of other
 * imports so that a worker loads only this, its connection settings and better-sqlite3.
 */
import type { SqlValue } from './sql.js';

/**
 * The values of text column `column` in the first `count` rows, separated by commas, as one UTF-8 buffer
 * (`Rows.joined`): JSON items rendered by SQL become the inside of a JSON array, encoded by the thread that
 * read them, and the main thread only copies bytes to the socket. The rows may then leave the column out.
 */
export interface JoinColumn {
  column: string;
  count: number;
}

export interface ReadRequest {
  id: number;
  text: string;
  params: readonly SqlValue[];
  join?: JoinColumn;
}

export type ReadReply =
  | { id: number; columns: string[]; rows: unknown[][]; joined?: ArrayBuffer; error?: undefined }
  | { id: number; error: { name: string; message: string; code?: string } };

/** The joined text of `join` over `rows` (see JoinColumn), and the rows without that column. */
export function joinColumn(columns: readonly string[], rows: unknown[][], join: JoinColumn): string {
  const at = columns.indexOf(join.column);
  if (at < 0) throw new Error(`no column ${join.column} to join`);
  const parts = new Array<string>(Math.min(join.count, rows.length));
  for (let i = 0; i < rows.length; i++) {
    if (i < parts.length) parts[i] = rows[i][at] as string;
    rows[i][at] = null;
  }
  return parts.join(',');
}

