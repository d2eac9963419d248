/**
 * How container tables are stored on SQLite: keyed by the instance id (the rowid), with the triple
 * `(project_id, space, instance_id)` a unique constraint; and a database whose tables were keyed by the triple
 * alone (WITHOUT ROWID, schema version 12) is rebuilt at start with its rows, indexes and constraints.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/storage/sqlite-store.js';
import { Sql } from '../../src/storage/sql.js';
import { startHarness, type Harness } from '../support/harness.js';
import { testEngine } from '../support/test-store.js';

const SPACE = 'storage';
const container = { type: 'container', space: SPACE, externalId: 'Pump' } as const;
const view = { type: 'view', space: SPACE, externalId: 'Pump', version: 'v1' } as const;

async function schema(h: Harness): Promise<void> {
  const ok = (r: { status: number; body: unknown }) => expect(r.status, JSON.stringify(r.body)).toBe(200);
  ok(await h.post('/models/spaces', { items: [{ space: SPACE }] }));
  ok(
    await h.post('/models/containers', {
      items: [
        {
          space: SPACE,
          externalId: 'Pump',
          properties: { tag: { type: { type: 'text' } }, rank: { type: { type: 'int64' } } },
          indexes: { byRank: { properties: ['rank'], cursorable: true } },
          constraints: { uniqueTag: { constraintType: 'uniqueness', properties: ['tag'] } },
        },
      ],
    }),
  );
  ok(await h.post('/models/views', { items: [{ space: SPACE, externalId: 'Pump', version: 'v1', properties: { tag: { container, containerPropertyIdentifier: 'tag' }, rank: { container, containerPropertyIdentifier: 'rank' } } }] }));
}

const pump = (n: number, tag = `tag-${n}`) => ({ instanceType: 'node', space: SPACE, externalId: `p${n}`, sources: [{ source: view, properties: { tag, rank: 10 - n } }] });

const listed = async (h: Harness) => {
  const res = await h.post('/models/instances/list', { sources: [{ source: view }], filter: { range: { property: [SPACE, 'Pump/v1', 'rank'], gte: 5 } }, sort: [{ property: [SPACE, 'Pump/v1', 'rank'] }] });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items.map((i: any) => [i.externalId, i.properties[SPACE]['Pump/v1'].tag]);
};

async function tableSql(dir: string): Promise<{ table: string; sql: string; indexes: string[] }> {
  const db = new SqliteStore({ dataDir: dir });
  try {
    const layout = JSON.parse((db.connection.prepare("SELECT layout FROM dm_containers WHERE external_id = 'Pump'").get() as { layout: string }).layout) as { table: string };
    const sql = (db.connection.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(layout.table) as { sql: string }).sql;
    const indexes = (db.connection.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? ORDER BY name").all(layout.table) as Array<{ name: string }>).map((r) => r.name);
    return { table: layout.table, sql, indexes };
  } finally {
    await db.close();
  }
}

describe.runIf(testEngine() === 'sqlite')('container tables on SQLite', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'strata-dmc-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keys a new container table by the instance id, the triple a unique index', async () => {
    const h = await startHarness({}, { STRATA_DATA_DIR: dir });
    try {
      await schema(h);
      expect((await h.post('/models/instances', { items: [1, 2, 3, 4, 5, 6].map((n) => pump(n)) })).status).toBe(200);
      expect(await listed(h)).toEqual([['p5', 'tag-5'], ['p4', 'tag-4'], ['p3', 'tag-3'], ['p2', 'tag-2'], ['p1', 'tag-1']]);
    } finally {
      await h.close();
    }
    const { table, sql, indexes } = await tableSql(dir);
    expect(sql).toMatch(/instance_id INTEGER PRIMARY KEY/);
    expect(sql).not.toMatch(/WITHOUT ROWID/);
    expect(indexes).toContain(`${table}_key`);
  });

  it('rebuilds a table keyed by the triple alone (schema version 12) with its rows, indexes and constraints', async () => {
    const before = await tableSql(dir);
    // The table as schema version 12 stored it.
    const old = new SqliteStore({ dataDir: dir });
    try {
      const t = before.table;
      const columns = (old.connection.prepare(`SELECT name, type FROM pragma_table_info('${t}') ORDER BY cid`).all() as Array<{ name: string; type: string }>).filter((c) => !['project_id', 'space', 'instance_id'].includes(c.name));
      const indexSql = (old.connection.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL AND name <> ?`).all(t, `${t}_key`) as Array<{ sql: string }>).map((r) => r.sql);
      old.connection.exec(`ALTER TABLE ${t} RENAME TO ${t}_new`);
      old.connection.exec(
        `CREATE TABLE ${t} (project_id INTEGER NOT NULL, space TEXT NOT NULL, instance_id INTEGER NOT NULL${columns.map((c) => `, ${c.name} ${c.type}`).join('')}, PRIMARY KEY (project_id, space, instance_id)) WITHOUT ROWID`,
      );
      old.connection.exec(`INSERT INTO ${t} SELECT * FROM ${t}_new; DROP TABLE ${t}_new`);
      for (const s of indexSql) old.connection.exec(s);
      old.connection.exec(`CREATE INDEX ${t}_instance ON ${t} (project_id, instance_id)`);
      old.connection.pragma('user_version = 12');
    } finally {
      await old.close();
    }
    expect((await tableSql(dir)).sql).toMatch(/WITHOUT ROWID/);

    const h = await startHarness({}, { STRATA_DATA_DIR: dir });
    try {
      expect(await listed(h)).toEqual([['p5', 'tag-5'], ['p4', 'tag-4'], ['p3', 'tag-3'], ['p2', 'tag-2'], ['p1', 'tag-1']]);
      // Updates find their rows through the unique triple; the uniqueness constraint still holds.
      expect((await h.post('/models/instances', { items: [pump(2, 'renamed')] })).status).toBe(200);
      const clash = await h.post('/models/instances', { items: [pump(3, 'renamed')] });
      expect(clash.status).toBeGreaterThanOrEqual(400);
      expect(clash.status).toBeLessThan(500);
      expect(await listed(h)).toEqual([['p5', 'tag-5'], ['p4', 'tag-4'], ['p3', 'tag-3'], ['p2', 'renamed'], ['p1', 'tag-1']]);
    } finally {
      await h.close();
    }
    const after = await tableSql(dir);
    expect(after.sql).not.toMatch(/WITHOUT ROWID/);
    expect(after.sql).toMatch(/instance_id INTEGER PRIMARY KEY/);
    // The same indexes as a table created now: the declared ones and the constraint's, not the instance index.
    expect(after.indexes).toEqual(before.indexes);
    expect(after.indexes.some((n) => n.endsWith('_instance'))).toBe(false);
    expect(after.indexes.some((n) => n.endsWith('_key'))).toBe(true);
  });

  it("takes the planner's statistics of a table as it doubles, not at every write", async () => {
    const statDir = mkdtempSync(join(tmpdir(), 'strata-stat-'));
    const rows = async () => {
      const db = new SqliteStore({ dataDir: statDir });
      try {
        const stat = (db.connection.prepare("SELECT stat FROM sqlite_stat1 WHERE tbl = 'dm_instances' LIMIT 1").get() as { stat: string } | undefined)?.stat;
        return stat === undefined ? undefined : Number(stat.split(' ')[0]);
      } finally {
        await db.close();
      }
    };
    try {
      const h = await startHarness({}, { STRATA_DATA_DIR: statDir });
      const write = async (from: number, n: number) =>
        expect((await h.post('/models/instances', { items: Array.from({ length: n }, (_, k) => pump(from + k, `t${from + k}`)) })).status).toBe(200);
      try {
        // The project's unit nodes (397) are written at its first data modeling request: analyzed.
        await schema(h);
        const first = (await rows())!;
        expect(first).toBeGreaterThanOrEqual(397);
        await write(0, 100);
        expect(await rows()).toBe(first);
        await write(100, first - 100 + 1);
        expect(await rows()).toBeGreaterThanOrEqual(2 * first);
      } finally {
        await h.close();
      }
    } finally {
      rmSync(statDir, { recursive: true, force: true });
    }
  });

  it('makes the read connections plan with statistics taken after they opened', async () => {
    const statDir = mkdtempSync(join(tmpdir(), 'strata-replan-'));
    const store = new SqliteStore({ dataDir: statDir });
    const reader = new Database(join(statDir, 'strata.db'), { readonly: true });
    try {
      store.connection.exec('CREATE TABLE t (project_id INTEGER, kind INTEGER, start_ref TEXT); CREATE INDEX t_kind ON t (project_id, kind); CREATE INDEX t_start ON t (project_id, start_ref)');
      const insert = store.connection.prepare('INSERT INTO t VALUES (1, 1, ?)');
      store.connection.transaction(() => {
        for (let i = 0; i < 5000; i++) insert.run(`s${i}`);
      })();
      const plan = () => {
        reader.prepare('SELECT count(*) FROM t').get();
        return (reader.prepare('EXPLAIN QUERY PLAN SELECT * FROM t WHERE project_id = 1 AND kind = 1 AND start_ref IN (SELECT value FROM json_each(?))').all('["s1"]') as Array<{ detail: string }>)
          .map((r) => r.detail)
          .join(' | ');
      };
      expect(plan()).toMatch(/t_kind/);
      await store.transaction(async (tx) => {
        for (const statement of tx.dialect.analyze('t')) await tx.run(Sql.raw(statement));
      });
      expect(plan()).toMatch(/t_start/);
    } finally {
      reader.close();
      await store.close();
      rmSync(statDir, { recursive: true, force: true });
    }
  });
});
