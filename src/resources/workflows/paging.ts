/** Keyset pages of the workflow lists: a cursor holds the key of the last row answered, bound to its query. */
import type { Services } from '../../http/services.js';

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** `rows` were read with `limit + 1`; the extra row, if any, says there is a next page. */
export function pageOf<R, T>(services: Services, rows: readonly R[], limit: number, query: unknown, keyOf: (row: R) => unknown, toJson: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { items: page.map(toJson), ...(more ? { nextCursor: services.cursors.encode(keyOf(page[page.length - 1]), query) } : {}) };
}
