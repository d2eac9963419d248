/**
 * Store.buildIndex on this run's engine (a SQLite file, whose builds run on a thread of their own, or
 * PostgreSQL's concurrent builds): a unique index over rows that share values is not built and leaves
 * nothing; an index of the name that is there and of the same kind is kept; one of the other kind is
 * replaced.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../../src/storage/open.js';
import { sql } from '../../src/storage/sql.js';
import type { Store } from '../../src/storage/store.js';
import type { TableIndex } from '../../src/storage/table-index.js';
import { newPostgresDatabase, testEngine } from '../support/test-store.js';

const dir = mkdtempSync(join(tmpdir(), 'strata-index-'));
let store: Store;
beforeAll(async () => {
  store = testEngine() === 'postgres' ? openStore({ dataDir: ':memory:', databaseUrl: await newPostgresDatabase() }) : openStore({ dataDir: dir });
  await store.exec(`CREATE TABLE t (id ${store.dialect.types.integer} PRIMARY KEY, v ${store.dialect.types.text})`);
  await store.run(sql`INSERT INTO t (id, v) VALUES (1, 'a'), (2, 'a'), (3, 'b')`);
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether the index is there, and unique. */
async function kind(name: string): Promise<'unique' | 'plain' | 'absent'> {
  const [row] =
    store.dialect.kind === 'sqlite'
      ? await store.all<{ u: number }>(sql`SELECT "unique" AS u FROM pragma_index_list('t') WHERE name = ${name}`)
      : await store.all<{ u: boolean }>(sql`SELECT x.indisunique AS u FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE c.relname = ${name}`);
  return row === undefined ? 'absent' : row.u ? 'unique' : 'plain';
}

it('builds, keeps and replaces an index by its kind; a unique one over shared values is not built', async () => {
  const unique: TableIndex = { table: 't', name: 't_v', columns: ['v'], unique: true };
  const plain: TableIndex = { ...unique, unique: false };
  expect(await store.buildIndex(unique)).toBe('duplicates');
  expect(await kind('t_v')).toBe('absent');
  expect(await store.buildIndex(plain)).toBe('built');
  expect(await kind('t_v')).toBe('plain');
  expect(await store.buildIndex(plain)).toBe('built');
  // Still shared: SQLite's replacement is one transaction, which leaves the plain index; PostgreSQL drops it first.
  expect(await store.buildIndex(unique)).toBe('duplicates');
  expect(await kind('t_v')).toBe(store.dialect.kind === 'sqlite' ? 'plain' : 'absent');
  await store.run(sql`UPDATE t SET v = 'c' WHERE id = 2`);
  expect(await store.buildIndex(unique)).toBe('built');
  expect(await kind('t_v')).toBe('unique');
  await expect(store.run(sql`UPDATE t SET v = 'a' WHERE id = 2`)).rejects.toThrow();
});
