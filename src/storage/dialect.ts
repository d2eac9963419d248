/**
 * The SQL that differs between SQLite and PostgreSQL, in one place. Everything else is written once, in the
 * subset both engines read the same way (standard SQL, `?` placeholders, row-value comparisons, CTEs,
 * `ON CONFLICT ... DO NOTHING`, integers for booleans).
 */
import type { StoreKind } from './store.js';

export interface ColumnTypes {
  /** A service-generated id, the table's primary key. */
  id: string;
  /** A 64-bit integer (ids, timestamps, counts). */
  integer: string;
  /** A double. */
  real: string;
  text: string;
  blob: string;
}

export interface Dialect {
  readonly kind: StoreKind;
  readonly types: ColumnTypes;
  /** Trailing table option for tables keyed by their primary key alone (SQLite's WITHOUT ROWID). */
  readonly withoutRowid: string;
  /** SQL of the JSON text of a text expression (a JSON string literal, escaped as JSON.stringify does). */
  jsonQuote(expr: string): string;
  /** The larger / smaller of two values (scalar). */
  greatest(a: string, b: string): string;
  least(a: string, b: string): string;
  /** An aggregate joining a text expression's values with `separator`, as bytes (a BLOB / bytea), in `order`. */
  joinBytes(expr: string, separator: string, order?: string): string;
  /** A planner hint after a table name that keeps it from using its indexes to pick rows (empty where unknown). */
  readonly notIndexed: string;
  /** Suffix of a SELECT that locks the rows read until the transaction ends (SQLite's writer holds them all). */
  readonly forUpdate: string;
}

export const sqliteDialect: Dialect = {
  kind: 'sqlite',
  types: { id: 'INTEGER PRIMARY KEY AUTOINCREMENT', integer: 'INTEGER', real: 'REAL', text: 'TEXT', blob: 'BLOB' },
  withoutRowid: ' WITHOUT ROWID',
  jsonQuote: (e) => `json_quote(${e})`,
  greatest: (a, b) => `max(${a}, ${b})`,
  least: (a, b) => `min(${a}, ${b})`,
  // group_concat appends in the order rows reach it, which the caller's subquery fixes.
  joinBytes: (e, s) => `CAST(group_concat(${e}, '${s}') AS BLOB)`,
  notIndexed: ' NOT INDEXED',
  forUpdate: '',
};

export const postgresDialect: Dialect = {
  kind: 'postgres',
  types: { id: 'BIGINT PRIMARY KEY', integer: 'BIGINT', real: 'DOUBLE PRECISION', text: 'TEXT', blob: 'BYTEA' },
  withoutRowid: '',
  jsonQuote: (e) => `to_json(${e}::text)::text`,
  greatest: (a, b) => `greatest(${a}, ${b})`,
  least: (a, b) => `least(${a}, ${b})`,
  joinBytes: (e, s, order) => `convert_to(string_agg(${e}, '${s}'${order ? ` ORDER BY ${order}` : ''}), 'UTF8')`,
  notIndexed: '',
  forUpdate: ' FOR UPDATE',
};
