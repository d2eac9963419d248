/**
 * The one interface through which everything above `storage/` reaches the database, whatever the engine:
 * asynchronous statements and transactions. Two implementations: embedded SQLite (sqlite-store.ts) and
 * PostgreSQL (postgres-store.ts). SQL that differs between them is asked of `dialect`; resources and services
 * never name an engine.
 *
 * A transaction is a function given a `Queryable` bound to it: everything it runs through that handle is
 * applied together or not at all. Code that may run inside or outside a transaction takes a `Queryable`;
 * `transaction()` on a handle that is already in one joins it, so helpers can open their own without knowing.
 */
import type { Dialect } from './dialect.js';
import type { Sql } from './sql.js';
import type { IndexBuild, TableIndex } from './table-index.js';

export type Row = Record<string, unknown>;

export interface RunResult {
  /** Rows changed by the statement. */
  changes: number;
}

export interface Queryable {
  readonly dialect: Dialect;
  all<T = Row>(query: Sql): Promise<T[]>;
  get<T = Row>(query: Sql): Promise<T | undefined>;
  run(query: Sql): Promise<RunResult>;
  /** Runs `fn` in one transaction (or in the one this handle is in): all of it is applied or none of it. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `fn`'s reads on one snapshot of the store (or in the transaction this handle is in): a read-only
   * transaction, which does not hold up writers.
   */
  snapshot<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Whether this handle is inside a transaction. */
  readonly inTransaction: boolean;
  /**
   * Runs `effect` once the transaction this handle is in has committed, and never if it does not: an
   * attempt that PostgreSQL runs again after a conflict drops the effects it registered. Outside a
   * transaction it runs at once. Effects run in the order registered, before `transaction()` returns; one
   * that throws (or rejects) is reported as a process warning and changes nothing of the commit.
   */
  afterCommit(effect: () => unknown): void;
}

export type StoreKind = 'sqlite' | 'postgres';

export interface Store extends Queryable {
  readonly kind: StoreKind;
  /** Where it is, for messages: a file path or a URL without its password. */
  readonly location: string;
  /** Runs a script of schema statements (no parameters) in one transaction. */
  exec(script: string): Promise<void>;
  /**
   * Builds an index of a table that may hold many rows, outside any transaction and without holding the
   * event loop, and resolves once it is there: SQLite builds it on a thread of its own with its own
   * connection (in an in-memory database, which no other connection can open, in a transaction of its own),
   * PostgreSQL with `CREATE INDEX CONCURRENTLY`. An index of that name that is complete and of the same kind
   * (unique or not) is kept as it is, so a build cut short by a stopped process can be run again; one of the
   * other kind is replaced (a unique build that meets duplicates leaves it on SQLite, drops it on
   * PostgreSQL). Rejects when it cannot build it now (the store unavailable, a key too long for the engine's
   * index); nothing of the index is left then.
   */
  buildIndex(index: TableIndex): Promise<IndexBuild>;
  /** The store's connections now, for metrics: open, idle, and requests waiting for one (or for the writer). */
  connections(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/**
 * The database cannot serve the request now (connection lost, busy, a conflict that retries did not
 * resolve). Nothing of the request was applied; the client may retry. The HTTP layer answers 503.
 */
export class StoreUnavailable extends Error {
  override readonly name = 'StoreUnavailable';
}

/** Runs effects registered for a transaction that committed (see Queryable.afterCommit). */
export function runEffects(effects: ReadonlyArray<() => unknown>): void {
  for (const effect of effects) {
    try {
      const result = effect();
      if (result instanceof Promise) result.catch(warnEffect);
    } catch (error) {
      warnEffect(error);
    }
  }
}

function warnEffect(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'AfterCommitWarning');
}
