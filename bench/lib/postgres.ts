/**
 * The raw-database reference on PostgreSQL (see raw.ts): one node-postgres client on the server's database,
 * in the benchmark process. It sends the server's recorded statements as the server's pool does (the
 * extended protocol with an unnamed statement: parse, bind, execute per statement, one round trip), and
 * parses 64-bit integers and numerics into numbers as the server does, so the difference to Strata is
 * Strata's own work: HTTP, validation, the pool, row mapping and JSON.
 */
import pg from 'pg';
import { numberedPlaceholders } from '../../src/storage/postgres-store.js';
import type { CapturedStatement, RawDb } from './raw.js';

const toNumber = (v: string) => Number(v);
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return toNumber;
    return pg.types.getTypeParser(oid, format);
  },
};

export async function openRawPostgres(url: string): Promise<Omit<RawDb, 'databaseCpuMs'> & { client: pg.Client }> {
  const client = new pg.Client({ connectionString: url, types, application_name: 'strata-bench-reference' });
  await client.connect();
  // The reference only reads; a mistaken write fails instead of changing the data under measurement.
  await client.query('SET default_transaction_read_only = on');
  const names = new Map<string, string>();
  return {
    kind: 'postgres',
    label: 'raw node-postgres',
    client,
    async runStatements(statements) {
      const rows: unknown[] = [];
      for (const s of statements) for (const r of (await client.query(s.text, s.params)).rows) rows.push(r);
      return rows;
    },
    async runPrepared(statements) {
      const rows: unknown[] = [];
      for (const s of statements) {
        let name = names.get(s.text);
        if (!name) names.set(s.text, (name = `bench_${names.size + 1}`));
        for (const r of (await client.query({ name, text: s.text, values: s.params })).rows) rows.push(r);
      }
      return rows;
    },
    async explain(s: CapturedStatement) {
      // ANALYZE runs the statement (reads only here): the plan with actual rows, time and buffers.
      const analyze = /^\s*(SELECT|WITH)\b/i.test(s.text) ? '(ANALYZE, BUFFERS) ' : '';
      const rows = (await client.query(`EXPLAIN ${analyze}${s.text}`, s.params)).rows as Array<{ 'QUERY PLAN': string }>;
      return rows.map((r) => r['QUERY PLAN']);
    },
    async query<T>(text: string, params: unknown[] = []) {
      return (await client.query(numberedPlaceholders(text), params)).rows as T[];
    },
    async tableBytes(tables) {
      const rows = (await client.query('SELECT relname AS name, pg_total_relation_size(oid) AS bytes FROM pg_class WHERE relname = ANY($1)', [tables])).rows as Array<{
        name: string;
        bytes: number;
      }>;
      return Object.fromEntries(tables.map((t) => [t, rows.find((r) => r.name === t)?.bytes ?? 0]));
    },
    async close() {
      await client.end();
    },
  };
}
