/**
 * Effects after commit, on this run's engine: an effect runs once when its transaction commits, never when
 * it rolls back, and once when PostgreSQL runs the transaction function again after a serialization failure
 * (the failed attempt's effects are dropped). Outside a transaction an effect runs at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sql, sql } from '../../src/storage/sql.js';
import type { Store } from '../../src/storage/store.js';
import { openTestStore } from '../support/test-store.js';

let store: Store;
beforeAll(async () => {
  store = await openTestStore();
  await store.exec(`CREATE TABLE effects_t (v ${store.dialect.types.text} NOT NULL)`);
});
afterAll(() => store.close());

describe('afterCommit', () => {
  it('runs an effect once the transaction commits, after its statements, in the order registered', async () => {
    const seen: string[] = [];
    const result = await store.transaction(async (tx) => {
      await tx.run(sql`INSERT INTO effects_t (v) VALUES (${'a'})`);
      tx.afterCommit(() => seen.push('first'));
      // A transaction opened inside joins this one, and so do its effects.
      await tx.transaction(async (inner) => inner.afterCommit(() => seen.push('second')));
      expect(seen).toEqual([]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual(['first', 'second']);
  });

  it('never runs the effects of a transaction that rolls back', async () => {
    const seen: string[] = [];
    await expect(
      store.transaction(async (tx) => {
        tx.afterCommit(() => seen.push('rolled back'));
        await tx.run(sql`INSERT INTO effects_t (v) VALUES (${'b'})`);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(seen).toEqual([]);
    expect(await store.all(sql`SELECT v FROM effects_t WHERE v = ${'b'}`)).toEqual([]);
  });

  it('runs an effect at once outside a transaction', () => {
    const seen: string[] = [];
    store.afterCommit(() => seen.push('now'));
    expect(seen).toEqual(['now']);
  });

  it('keeps the commit when an effect throws, and reports it as a warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const seen: string[] = [];
      await store.transaction(async (tx) => {
        await tx.run(sql`INSERT INTO effects_t (v) VALUES (${'c'})`);
        tx.afterCommit(() => {
          throw new Error('effect failed');
        });
        tx.afterCommit(() => seen.push('next'));
      });
      expect(seen).toEqual(['next']);
      expect(await store.all(sql`SELECT v FROM effects_t WHERE v = ${'c'}`)).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.message)).toContain('effect failed');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it.runIf(process.env.STRATA_TEST_STORE === 'postgres')('runs an effect once when PostgreSQL runs the transaction again after a serialization failure', async () => {
    const seen: number[] = [];
    let attempts = 0;
    await store.transaction(async (tx) => {
      const attempt = ++attempts;
      await tx.run(sql`INSERT INTO effects_t (v) VALUES (${`attempt-${attempt}`})`);
      tx.afterCommit(() => seen.push(attempt));
      // The database itself fails the first attempt as a serialization failure (SQLSTATE 40001).
      if (attempt === 1) await tx.run(Sql.raw(`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$`));
    });
    expect(attempts).toBe(2);
    expect(seen).toEqual([2]);
    expect((await store.all<{ v: string }>(sql`SELECT v FROM effects_t WHERE v LIKE ${'attempt-%'}`)).map((r) => r.v)).toEqual(['attempt-2']);
  });
});
