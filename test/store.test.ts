/**
 * The store interface, on each engine: a transaction is applied completely or not at all, statements outside
 * a transaction never see its uncommitted writes, nested transactions join the outer one, concurrent
 * transactions do not lose each other's writes, and a lost connection is "unavailable", not a crash. On
 * SQLite, waiting for another connection's write lock leaves the event loop running, and reads outside an
 * open transaction go to the readers given for that.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore, numberedPlaceholders } from '../src/storage/postgres-store.js';
import { SqliteStore } from '../src/storage/sqlite-store.js';
import { appSchema } from '../src/app.js';
import { migrate } from '../src/storage/migrate.js';
import { Sql, sql } from '../src/storage/sql.js';
import { StoreUnavailable, type Store } from '../src/storage/store.js';
import { hasPostgres, startPostgres, type PostgresServer } from './support/postgres.js';

const engines: Array<{ name: string; open(): Promise<Store> }> = [{ name: 'sqlite', open: async () => new SqliteStore({ dataDir: ':memory:' }) }];
let server: PostgresServer | undefined;
if (hasPostgres()) {
  engines.push({
    name: 'postgres',
    async open() {
      server ??= await startPostgres();
      return new PostgresStore({ url: await server.createDatabase(`store_${Math.random().toString(36).slice(2)}`) });
    },
  });
}
afterAll(() => server?.stop());

describe.each(engines)('$name store', ({ open }) => {
  let store: Store;
  beforeAll(async () => {
    store = await open();
    await store.exec(`CREATE TABLE t (id ${store.dialect.types.integer} PRIMARY KEY, v ${store.dialect.types.text} NOT NULL UNIQUE)`);
  });
  afterAll(() => store?.close());

  const values = async () => (await store.all<{ v: string }>(sql`SELECT v FROM t ORDER BY id`)).map((r) => r.v);

  it('applies a transaction completely or not at all', async () => {
    await store.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO t (id, v) VALUES (${1}, ${'a'})`);
      await tx.run(sql`INSERT INTO t (id, v) VALUES (${2}, ${'b'})`);
    });
    await expect(
      store.transaction(async (tx) => {
        await tx.run(sql`INSERT INTO t (id, v) VALUES (${3}, ${'c'})`);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await values()).toEqual(['a', 'b']);
  });

  it('keeps uncommitted writes from statements outside the transaction', async () => {
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const tx = store.transaction(async (t) => {
      await t.run(sql`INSERT INTO t (id, v) VALUES (${4}, ${'d'})`);
      inside();
      await held;
    });
    await entered;
    const outside = store.all<{ v: string }>(sql`SELECT v FROM t WHERE id = ${4}`);
    finish();
    await tx;
    // Read after the commit (SQLite waits for it) or before it (PostgreSQL reads the committed state): never a dirty read.
    const seen = await outside;
    expect(seen.length === 0 || seen[0].v === 'd').toBe(true);
    expect(await values()).toContain('d');
  });

  it('joins an outer transaction when one is opened inside it', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.transaction(async (inner) => inner.run(sql`INSERT INTO t (id, v) VALUES (${5}, ${'e'})`));
        expect(tx.inTransaction).toBe(true);
        throw new Error('outer refused');
      }),
    ).rejects.toThrow('outer refused');
    expect(await values()).not.toContain('e');
  });

  it('runs concurrent transactions without losing writes', async () => {
    await store.run(sql`INSERT INTO t (id, v) VALUES (${100}, ${'0'})`);
    await Promise.all(
      Array.from({ length: 20 }, () =>
        store.transaction(async (tx) => {
          const row = await tx.get<{ v: string }>(sql`SELECT v FROM t WHERE id = ${100}${Sql.raw(tx.dialect.forUpdate)}`);
          await tx.run(sql`UPDATE t SET v = ${String(Number(row!.v) + 1)} WHERE id = ${100}`);
        }),
      ),
    );
    expect((await store.get<{ v: string }>(sql`SELECT v FROM t WHERE id = ${100}`))!.v).toBe('20');
  });
});

describe('PostgreSQL specifics', () => {
  it('numbers placeholders outside quoted text', () => {
    expect(numberedPlaceholders(`SELECT '?' AS q, "a?" FROM t WHERE a = ? AND b IN (?, ?)`)).toBe(`SELECT '?' AS q, "a?" FROM t WHERE a = $1 AND b IN ($2, $3)`);
  });

  it.runIf(hasPostgres())('answers unavailable, not a crash, when the database cannot be reached', async () => {
    const dead = new PostgresStore({ url: 'postgres://strata@127.0.0.1:1/none' });
    await expect(dead.all(sql`SELECT 1`)).rejects.toBeInstanceOf(StoreUnavailable);
    await expect(dead.transaction(async (tx) => tx.all(sql`SELECT 1`))).rejects.toBeInstanceOf(StoreUnavailable);
    await dead.close();
  });

  it.runIf(hasPostgres())('prepares a statement from its second use, once per connection, unless it carries a long list of values', async () => {
    server ??= await startPostgres();
    const store = new PostgresStore({ url: await server.createDatabase(`prep_${Math.random().toString(36).slice(2)}`), poolSize: 1 });
    try {
      const text = `SELECT ${Math.random()} AS x WHERE 1 = ?`;
      const prepared = async () => (await store.all<{ n: number }>(sql`SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE ${'%' + text.slice(7, 25) + '%'}`))[0].n;
      await store.all(sql`SELECT ${Sql.raw(text.slice(7, text.indexOf(" WHERE")))} WHERE 1 = ${1}`);
      expect(await prepared()).toBe(0);
      for (let i = 0; i < 3; i++) expect(await store.all(sql`SELECT ${Sql.raw(text.slice(7, text.indexOf(" WHERE")))} WHERE 1 = ${1}`)).toHaveLength(1);
      expect(await prepared()).toBe(1);
      // A statement with a long list of values is planned for its values each time: never prepared.
      const marker = `${Math.random()}`;
      const long = () => store.all(sql`SELECT ${Sql.raw(marker)} AS x WHERE 1 IN (${Array.from({ length: 17 }, (_, i) => i + 1)})`);
      for (let i = 0; i < 3; i++) expect(await long()).toHaveLength(1);
      expect((await store.all<{ n: number }>(sql`SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE ${'%' + marker + '%'}`))[0].n).toBe(0);
    } finally {
      await store.close();
    }
  });

  it.runIf(hasPostgres())('ends each non-unique index with the id, also on a database migrated from before', async () => {
    server ??= await startPostgres();
    const store = new PostgresStore({ url: await server.createDatabase(`idx_${Math.random().toString(36).slice(2)}`) });
    const definition = async () => (await store.all<{ d: string }>(sql`SELECT indexdef AS d FROM pg_indexes WHERE indexname = 'events_created_time'`))[0].d;
    try {
      await migrate(store, appSchema());
      expect(await definition()).toMatch(/\(project_id, created_time, id\)$/);
      // A database written before: the index without the id, and schema version 11.
      await store.transaction(async (tx) => {
        await tx.run(Sql.raw('DROP INDEX events_created_time'));
        await tx.run(Sql.raw('CREATE INDEX events_created_time ON events (project_id, created_time)'));
        await tx.run(Sql.raw('UPDATE strata_schema SET version = 11'));
      });
      await migrate(store, appSchema());
      expect(await definition()).toMatch(/\(project_id, created_time, id\)$/);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite specifics', () => {
  /** Two connections to one database file, as two processes would hold them, and a transaction held open on the first. */
  async function held() {
    const dir = mkdtempSync(join(tmpdir(), 'strata-store-'));
    const first = new SqliteStore({ dataDir: dir });
    const second = new SqliteStore({ dataDir: dir });
    await first.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    await first.run(sql`INSERT INTO t (id, v) VALUES (${1}, ${'committed'})`);
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const open = first.transaction(async (tx) => {
      await tx.run(sql`UPDATE t SET v = ${'uncommitted'} WHERE id = ${1}`);
      entered();
      await released;
    });
    await inside;
    const close = async () => {
      await first.close();
      await second.close();
      rmSync(dir, { recursive: true, force: true });
    };
    return { first, second, open, release, close };
  }

  it("waits for another connection's write lock with the event loop running, and writes once it is free", async () => {
    const { second, open, release, close } = await held();
    try {
      const order: string[] = [];
      const write = second.transaction((tx) => tx.run(sql`UPDATE t SET v = ${'second'} WHERE id = ${1}`)).then(() => order.push('written'));
      // A turn of the event loop while the second connection waits: a wait inside SQLite would allow none.
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('turned');
      release();
      await open;
      await write;
      expect(order).toEqual(['turned', 'written']);
      expect(await second.get<{ v: string }>(sql`SELECT v FROM t WHERE id = ${1}`)).toEqual({ v: 'second' });
    } finally {
      await close();
    }
  });

  it('reads what is committed on the readers given, while a transaction is open, instead of waiting for it', async () => {
    const { first, second, open, release, close } = await held();
    try {
      first.readAside({ all: (q) => second.all(q) });
      expect(await first.all(sql`SELECT v FROM t WHERE id = ${1}`)).toEqual([{ v: 'committed' }]);
      release();
      await open;
      expect(await first.all(sql`SELECT v FROM t WHERE id = ${1}`)).toEqual([{ v: 'uncommitted' }]);
    } finally {
      await close();
    }
  });
});
