/**
 * The PostgreSQL store (15 or newer) through node-postgres, behind the asynchronous `Store` interface.
 * Statements outside a transaction take any pooled connection; a transaction holds one connection from
 * BEGIN to COMMIT.
 *
 * Transactions run at READ COMMITTED. A transaction that fails on a serialization failure, a deadlock or a
 * unique-index conflict with a concurrent writer is run again from the start (the function is re-run, so it
 * must do nothing outside the database before it returns): the second run sees the other writer's commit,
 * and answers as if the requests had come one after the other (an external id taken by the other request is
 * then a 409 from the service's own check, not a database error). Losing the connection is a
 * `StoreUnavailable` (503), with nothing applied.
 */
import pg from 'pg';
import { postgresDialect, type Dialect } from './dialect.js';
import type { Sql } from './sql.js';
import { runEffects, StoreUnavailable, type Queryable, type Row, type RunResult, type Store } from './store.js';
import { createIndexSql, type IndexBuild, type TableIndex } from './table-index.js';

export interface PostgresOptions {
  url: string;
  /** Connections in the pool. */
  poolSize?: number;
  /** Name of this process in pg_stat_activity. */
  applicationName?: string;
}

/** Conflicts that a re-run resolves: serialization failure, deadlock, unique violation. */
const RETRY = new Set(['40001', '40P01', '23505']);
const ATTEMPTS = 5;

/** Connection classes (08: connection exception, 57P: operator intervention, 53: insufficient resources). */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return /^(08|57P|53)/.test(code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code) || /Connection terminated|connection timeout/i.test((error as Error).message ?? '');
}

function mapError(error: unknown): never {
  if (isConnectionError(error)) throw new StoreUnavailable('the database cannot be reached; retry shortly', { cause: error });
  throw error;
}

/** int8 and numeric arrive as text by default; ids stay below 2^53 and counts and sums fit a double. */
const toNumber = (v: string) => Number(v);
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return toNumber;
    return pg.types.getTypeParser(oid, format);
  },
};

/** `?` placeholders (what `sql` writes) as `$1, $2, ...`, outside quoted text. */
export function numberedPlaceholders(text: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = undefined;
      out += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      out += c;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

interface Statement {
  text: string;
  /** The prepared statement's name, once the text has run often enough to be worth preparing. */
  name?: string;
  uses: number;
}

const statements = new Map<string, Statement>();
const MAX_STATEMENTS = 2000;
/**
 * Statements run as named prepared statements from their second use: PostgreSQL then parses a text once
 * per connection and, after five executions, may keep one generic plan for it (a by-id read: 69 µs against
 * 266 µs parsed and planned each time). Only statements of at most MAX_NAMED_PARAMS values are named: one
 * with a long list of values (the external ids of a 1000-event create) is planned for its values each time,
 * since a generic plan made while a table was young was measured to scan a project's events for them (985 ms
 * instead of a few). Each name stays bound to one text for the life of the process (node-postgres keeps
 * what each connection has prepared), and names are capped, since every connection keeps its prepared
 * statements: texts past the cap, or very long ones, run unnamed.
 */
const MAX_NAMED = 500;
const MAX_NAMED_LENGTH = 16_384;
const MAX_NAMED_PARAMS = 16;
let named = 0;

function statement(text: string, params: number): Statement {
  let s = statements.get(text);
  if (s === undefined) {
    if (statements.size >= MAX_STATEMENTS) {
      for (const [key, value] of statements) if (value.name === undefined) statements.delete(key);
    }
    statements.set(text, (s = { text: numberedPlaceholders(text), uses: 0 }));
  }
  if (s.name === undefined && ++s.uses >= 2 && named < MAX_NAMED && text.length <= MAX_NAMED_LENGTH && params <= MAX_NAMED_PARAMS) s.name = `strata_${++named}`;
  return s;
}

type Client = pg.Pool | pg.PoolClient;

async function query<T>(client: Client, q: Sql): Promise<pg.QueryResult<T & pg.QueryResultRow>> {
  const s = statement(q.text, q.params.length);
  try {
    return await client.query<T & pg.QueryResultRow>({ text: s.text, name: s.name, values: q.params as unknown[] });
  } catch (error) {
    return mapError(error);
  }
}

function handle(
  client: Client,
  dialect: Dialect,
  inTransaction: boolean,
  transaction: Queryable['transaction'],
  snapshot: Queryable['snapshot'],
  afterCommit: Queryable['afterCommit'],
): Queryable {
  return {
    dialect,
    inTransaction,
    afterCommit,
    all: async <T>(q: Sql) => (await query<T>(client, q)).rows as T[],
    get: async <T>(q: Sql) => (await query<T>(client, q)).rows[0] as T | undefined,
    run: async (q: Sql): Promise<RunResult> => ({ changes: (await query(client, q)).rowCount ?? 0 }),
    transaction,
    snapshot,
  };
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  readonly dialect: Dialect = postgresDialect;
  readonly inTransaction = false;
  readonly location: string;
  readonly pool: pg.Pool;
  private readonly outside: Queryable;

  constructor({ url, poolSize = 10, applicationName = 'strata' }: PostgresOptions) {
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, application_name: applicationName, types, connectionTimeoutMillis: 10_000 });
    // An idle connection that breaks (server restart) is dropped from the pool; it must not crash the process.
    this.pool.on('error', () => {});
    const parsed = new URL(url);
    parsed.password = '';
    this.location = parsed.toString();
    this.outside = handle(
      this.pool,
      this.dialect,
      false,
      (fn) => this.transaction(fn),
      (fn) => this.snapshot(fn),
      (effect) => runEffects([effect]),
    );
  }

  afterCommit(effect: () => unknown): void {
    this.outside.afterCommit(effect);
  }

  all<T = Row>(q: Sql): Promise<T[]> {
    return this.outside.all<T>(q);
  }

  get<T = Row>(q: Sql): Promise<T | undefined> {
    return this.outside.get<T>(q);
  }

  run(q: Sql): Promise<RunResult> {
    return this.outside.run(q);
  }

  async exec(script: string): Promise<void> {
    await this.transaction(async (tx) => {
      const client = (tx as unknown as { client: pg.PoolClient }).client;
      await client.query(script);
    });
  }

  snapshot<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.run_('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.run_('BEGIN', fn);
  }

  /** Runs `fn` in a transaction begun with `begin`, again from the start after a conflict that a re-run resolves. */
  private async run_<T>(begin: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        return mapError(error);
      }
      let broken = false;
      try {
        await client.query(begin);
        // This attempt's effects: a retried attempt's are dropped with it.
        const effects: Array<() => unknown> = [];
        const tx: Queryable & { client: pg.PoolClient } = {
          ...handle(client, this.dialect, true, (inner) => inner(tx), (inner) => inner(tx), (effect) => void effects.push(effect)),
          client,
        };
        const result = await fn(tx);
        await client.query('COMMIT');
        runEffects(effects);
        return result;
      } catch (error) {
        broken = isConnectionError(error) || (error instanceof StoreUnavailable);
        if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
        const code = (error as { code?: string }).code ?? ((error as { cause?: { code?: string } }).cause?.code);
        if (!broken && code && RETRY.has(code)) {
          if (attempt < ATTEMPTS) continue;
          throw new StoreUnavailable('the request kept conflicting with concurrent writes; retry it', { cause: error });
        }
        if (broken) return mapError(error instanceof StoreUnavailable ? error.cause : error);
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * `CREATE INDEX CONCURRENTLY`: writes to the table go on while it builds (an index built in a transaction
   * would hold them until it commits). A concurrent build that fails or is cut short leaves an invalid
   * index of its name, which is dropped: before building (a build resumed after a stopped process, or an
   * index of the name of the other kind), and after a failure.
   */
  async buildIndex(index: TableIndex): Promise<IndexBuild> {
    const drop = () => this.pool.query(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
    try {
      const found = await this.pool.query<{ valid: boolean; unique: boolean }>(
        'SELECT x.indisvalid AS valid, x.indisunique AS unique FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace',
        [index.name],
      );
      if (found.rows[0]?.valid && found.rows[0].unique === index.unique) return 'built';
      if (found.rows.length > 0) await drop();
      try {
        await this.pool.query(createIndexSql(index, true));
        return 'built';
      } catch (error) {
        await drop();
        if ((error as { code?: string }).code === '23505') return 'duplicates';
        throw error;
      }
    } catch (error) {
      return mapError(error);
    }
  }

  connections(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
