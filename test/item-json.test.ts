/**
 * Items rendered as JSON by SQL (`itemJsonSql`) must be byte for byte what serializing the object form
 * (`toItem`) gives, for every resource table, or responses would change with the path that produced them.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetTable } from '../src/resources/assets/model.js';
import { dataSetTable } from '../src/resources/datasets/model.js';
import { eventTable } from '../src/resources/events/model.js';
import { timeSeriesTable } from '../src/resources/timeseries/model.js';
import { insertItems, itemJsonSql, renderItemJsonSql, selectColumns, toItem, updateItem, type ItemTable, type Row, type Values } from '../src/storage/items.js';
import { appSchema } from '../src/app.js';
import { migrate } from '../src/storage/migrate.js';
import { ensureProjects } from '../src/storage/projects.js';
import { SqliteStore } from '../src/storage/sqlite-store.js';
import { Sql, sql } from '../src/storage/sql.js';
import type { Queryable, Store } from '../src/storage/store.js';
import { startHarness, type Harness } from './support/harness.js';
import { openTestStore, testEngine } from './support/test-store.js';

const MAX = Number.MAX_SAFE_INTEGER;
// Every control character but NUL, which no text column can hold on PostgreSQL (requests refuse it).
const ODD = 'quote " backslash \\ newline \n tab \t soh \u0001 ctl \u001f del \u007f ls \u2028 ps \u2029 é ß 日本 😀 </script> \'';

let db: Store;
let projectId: number;
beforeAll(async () => {
  db = await openTestStore();
  await ensureProjects(db, ['p'], 0);
  projectId = (await db.get<{ id: number }>(sql`SELECT id FROM projects WHERE name = 'p'`))!.id;
});
afterAll(() => db.close());

/** Each stored row of `ids` as rendered by SQL next to JSON.stringify of its object form. */
async function renderings(t: ItemTable, ids: number[], omit?: ReadonlySet<string>): Promise<Array<{ sql: string; js: string }>> {
  const query = sql`SELECT ${Sql.raw(selectColumns(t))}, ${Sql.raw(itemJsonSql(db.dialect, t, omit))} AS item_json FROM ${Sql.raw(`${t.table} ${t.alias}`)} WHERE ${Sql.raw(t.alias)}.id IN (${ids})`;
  return (await db.all<Row>(query)).map((row) => ({ sql: row.item_json as string, js: JSON.stringify(toItem(t, row, omit)) }));
}

async function insertAndCompare(t: ItemTable, values: Values[], now = MAX): Promise<void> {
  const full = values.map((v) => Object.fromEntries(t.fields.map((f) => [f.name, v[f.name] ?? null])));
  const ids = await db.transaction((tx) => insertItems(tx, t, projectId, full, now));
  const rows = await renderings(t, ids);
  expect(rows).toHaveLength(values.length);
  for (const r of rows) expect(r.sql).toBe(r.js);
  for (const r of await renderings(t, ids, new Set(['metadata']))) expect(r.sql).toBe(r.js);
}

describe('itemJsonSql', () => {
  it('renders events as JSON.stringify(toItem(row)) does', async () => {
    await insertAndCompare(eventTable, [
      {},
      { externalId: '', type: '', subtype: '', description: '', source: '', metadata: {}, assetIds: [] },
      { externalId: ODD, dataSetId: MAX, startTime: 0, endTime: MAX, type: ODD, description: ODD, metadata: { [ODD]: ODD, '': '', 'a.b': '{"x":1}' }, assetIds: [1, MAX] },
      { startTime: 1, metadata: { k: 'v' } },
    ]);
  });

  it('renders time series, with booleans and instance ids', async () => {
    await insertAndCompare(timeSeriesTable, [
      { type: 'numeric', isString: false, isStep: false },
      { type: 'string', isString: true, isStep: true, instanceId: { space: ODD, externalId: '' }, unit: 'm³/h', securityCategories: [MAX], assetId: 1 },
      { type: 'numeric', isString: false, isStep: true, instanceId: { space: 's', externalId: 'x' }, metadata: { [ODD]: '' }, description: ODD },
    ]);
  });

  it('renders data sets and assets, keeping nulls nested inside JSON fields', async () => {
    await insertAndCompare(dataSetTable, [{ writeProtected: false }, { writeProtected: true, name: ODD, metadata: { a: 'b' } }]);
    await insertAndCompare(assetTable, [
      { name: 'root' },
      {
        name: ODD,
        parentId: MAX,
        rootId: 1,
        labels: [ODD],
        geoLocation: { type: 'Feature', geometry: { type: 'Point', coordinates: [1.5, -0.1, 1e21, 1e-7, 0.30000000000000004] }, properties: { none: null, nested: { deep: [null, true, 'x'] } } },
      },
    ]);
  });

  it('renders arbitrary strings, integers and metadata the same', async () => {
    // Any text a request may carry (no NUL; see ODD).
    const text = fc.option(fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replaceAll('\u0000', '')), { nil: undefined });
    const event = fc.record({
      externalId: text,
      description: text,
      source: text,
      dataSetId: fc.option(fc.integer({ min: 1, max: MAX }), { nil: undefined }),
      startTime: fc.option(fc.maxSafeNat(), { nil: undefined }),
      metadata: fc.option(fc.dictionary(fc.string({ unit: 'binary', maxLength: 12 }).map((s) => s.replaceAll('\u0000', '')), fc.string({ unit: 'binary', maxLength: 20 }).map((s) => s.replaceAll('\u0000', '')), { maxKeys: 5 }), { nil: undefined }),
      assetIds: fc.option(fc.array(fc.integer({ min: 1, max: MAX }), { maxLength: 3 }), { nil: undefined }),
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 5 }), async (events) => {
        // External ids are unique per project; make every generated one distinct.
        await insertAndCompare(eventTable, events.map((e) => (e.externalId === undefined ? e : { ...e, externalId: `${n++}:${e.externalId}` })), n);
      }),
      { numRuns: 200 },
    );
  });
});

/**
 * A database file as an earlier build left it: the current tables at schema version `version`, with project
 * 1 and the rows `seed` writes (columns that version lacked dropped first); `check` sees it opened by this
 * build, which brings it up to date.
 */
async function fromDatabaseAt(version: number, dropped: ReadonlyArray<[table: string, column: string]>, seed: (old: Queryable) => Promise<void>, check: (migrated: Queryable) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-migration-'));
  try {
    const old = new SqliteStore({ dataDir: dir });
    await migrate(old, appSchema());
    for (const [table, column] of dropped) old.connection.exec(`ALTER TABLE ${table} DROP COLUMN ${column}`);
    old.connection.pragma(`user_version = ${version}`);
    await old.run(sql`INSERT INTO projects (id, name, created_time) VALUES (1, 'p', 0)`);
    await seed(old);
    await old.close();
    const migrated = new SqliteStore({ dataDir: dir });
    try {
      await migrate(migrated, appSchema());
      await check(migrated);
    } finally {
      await migrated.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('stored JSON (events)', () => {
  /** Each stored text of `ids` next to the rendering of the row's stored columns. */
  const stored = (d: Queryable, ids: number[]) =>
    d.all<{ stored: string | null; rendered: string }>(
      sql`SELECT e.item_json AS stored, ${Sql.raw(renderItemJsonSql(d.dialect, eventTable))} AS rendered FROM events e WHERE e.id IN (${ids}) ORDER BY e.id`,
    );

  it('is written with every insert and update', async () => {
    const full = (v: Values) => Object.fromEntries(eventTable.fields.map((f) => [f.name, v[f.name] ?? null]));
    const ids = await db.transaction(async (tx) => {
      const ids = await insertItems(tx, eventTable, projectId, [full({ externalId: 'stored-1', description: ODD }), full({ startTime: 7, metadata: { a: 'b' } })], 1000);
      await updateItem(tx, eventTable, projectId, ids[0], full({ externalId: 'stored-1b', type: ODD, metadata: { [ODD]: 'x' }, assetIds: [3] }), 2000, 1000);
      await updateItem(tx, eventTable, projectId, ids[1], full({}), 3000, 1000);
      return ids;
    });
    const rows = await stored(db, ids);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.stored).toBe(r.rendered);
    expect(JSON.parse(rows[0].stored!)).toEqual({ id: ids[0], externalId: 'stored-1b', type: ODD, metadata: { [ODD]: 'x' }, assetIds: [3], createdTime: 1000, lastUpdatedTime: 2000 });
    expect(JSON.parse(rows[1].stored!)).toEqual({ id: ids[1], metadata: {}, createdTime: 1000, lastUpdatedTime: 3000 });
  });

  it.runIf(testEngine() === 'sqlite')('is filled for the events a database had before it kept it', async () => {
    await fromDatabaseAt(
      6,
      [['events', 'item_json']],
      (old) => old.run(sql`INSERT INTO events (id, project_id, external_id, start_time, metadata, created_time, last_updated_time) VALUES (1, 1, 'old', 5, '{"k":"v"}', 10, 20), (2, 1, NULL, NULL, NULL, 30, 40)`).then(() => {}),
      async (migrated) =>
        expect((await stored(migrated, [1, 2])).map((r) => r.stored)).toEqual([
          '{"id":1,"externalId":"old","startTime":5,"metadata":{"k":"v"},"createdTime":10,"lastUpdatedTime":20}',
          '{"id":2,"metadata":{},"createdTime":30,"lastUpdatedTime":40}',
        ]),
    );
  });
});

describe('empty lists and maps', () => {
  it('are stored as absent, so no response shows them, but for metadata, which is {}', async () => {
    const full = (v: Values) => Object.fromEntries(eventTable.fields.map((f) => [f.name, v[f.name] ?? null]));
    const [id] = await db.transaction((tx) => insertItems(tx, eventTable, projectId, [full({ externalId: 'empty-1', metadata: {}, assetIds: [] })], 1000));
    const [row] = await db.all<Row>(sql`SELECT ${Sql.raw(selectColumns(eventTable))}, e.item_json FROM events e WHERE e.id = ${id}`);
    expect(row.metadata).toBeNull();
    expect(row.asset_ids).toBeNull();
    expect(JSON.parse(row.item_json as string)).toEqual({ id, externalId: 'empty-1', metadata: {}, createdTime: 1000, lastUpdatedTime: 1000 });
  });

  it.runIf(testEngine() === 'sqlite')("that a database holds are made absent by a migration, with the events' stored JSON", async () => {
    await fromDatabaseAt(
      8,
      [],
      async (old) => {
        await old.run(sql`INSERT INTO events (id, project_id, external_id, metadata, asset_ids, item_json, created_time, last_updated_time)
           VALUES (1, 1, 'old', '{}', '[]', '{"id":1,"externalId":"old","metadata":{},"assetIds":[],"createdTime":10,"lastUpdatedTime":20}', 10, 20),
                  (2, 1, NULL, '{"k":"v"}', '[]', 'stale', 30, 40)`);
        await old.run(sql`INSERT INTO assets (id, project_id, name, labels, metadata, root_id, depth, path, created_time, last_updated_time) VALUES (1, 1, 'a', '[]', '{"k":"v"}', 1, 0, '/1/', 0, 0)`);
      },
      async (migrated) => {
        expect(await migrated.all(sql`SELECT metadata, asset_ids, item_json FROM events ORDER BY id`)).toEqual([
          { metadata: null, asset_ids: null, item_json: '{"id":1,"externalId":"old","metadata":{},"createdTime":10,"lastUpdatedTime":20}' },
          { metadata: '{"k":"v"}', asset_ids: null, item_json: '{"id":2,"metadata":{"k":"v"},"createdTime":30,"lastUpdatedTime":40}' },
        ]);
        expect(await migrated.all(sql`SELECT labels, metadata FROM assets`)).toEqual([{ labels: null, metadata: '{"k":"v"}' }]);
      },
    );
  });

  it.runIf(testEngine() === 'sqlite')("give metadata as {} in the events' stored JSON of a database written before", async () => {
    await fromDatabaseAt(
      13,
      [],
      (old) =>
        old
          .run(sql`INSERT INTO events (id, project_id, external_id, metadata, item_json, created_time, last_updated_time)
             VALUES (1, 1, 'old', NULL, '{"id":1,"externalId":"old","createdTime":10,"lastUpdatedTime":20}', 10, 20),
                    (2, 1, NULL, '{"k":"v"}', '{"id":2,"metadata":{"k":"v"},"createdTime":30,"lastUpdatedTime":40}', 30, 40)`)
          .then(() => {}),
      async (migrated) =>
        expect((await migrated.all<{ item_json: string }>(sql`SELECT item_json FROM events ORDER BY id`)).map((r) => r.item_json)).toEqual([
          '{"id":1,"externalId":"old","metadata":{},"createdTime":10,"lastUpdatedTime":20}',
          '{"id":2,"metadata":{"k":"v"},"createdTime":30,"lastUpdatedTime":40}',
        ]),
    );
  });
});

describe('responses rendered by SQL', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('are sent as JSON with the same body as the object form', async () => {
    const created = await h.post('/events', { items: [{ externalId: 'json-1', metadata: { k: ODD } }, { externalId: 'json-2', startTime: 5 }] });
    expect(created.status).toBe(201);
    const [a, b] = created.body.items;
    const one = await h.get(`/events/${a.id}`);
    expect(one.status).toBe(200);
    expect(one.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(one.body).toEqual(a);
    const page = await h.post('/events/list', { limit: 1, sort: [{ property: ['externalId'] }], filter: { externalIdPrefix: 'json-' } });
    expect(page.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(page.body.items).toEqual([a]);
    const next = await h.post('/events/list', { limit: 1, sort: [{ property: ['externalId'] }], filter: { externalIdPrefix: 'json-' }, cursor: page.body.nextCursor });
    expect(next.body).toEqual({ items: [b] });
    expect((await h.post('/events/byids', { items: [{ id: b.id }, { externalId: 'json-1' }] })).body).toEqual({ items: [b, a] });
  });

  it('send a large page whole, with its length, over a socket that stays usable', async () => {
    // 600 events of ~400 bytes: a page of 500 is streamed in pieces (over 64 KiB), the rest is one small buffer.
    const items = Array.from({ length: 600 }, (_, i) => ({ externalId: `big-${String(i).padStart(3, '0')}`, description: `${ODD} ${'x'.repeat(300)} ${i}` }));
    expect((await h.post('/events', { items })).status).toBe(201);
    const url = await h.strata.app.listen({ host: '127.0.0.1', port: 0 });
    const post = async (body: object) => {
      const res = await fetch(`${url}${h.base}/events/list`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      return { status: res.status, length: res.headers.get('content-length'), type: res.headers.get('content-type'), bytes, json: JSON.parse(bytes.toString('utf8')) };
    };
    const query = { filter: { externalIdPrefix: 'big-' }, sort: [{ property: ['externalId'] }], limit: 500 };
    const first = await post(query);
    expect(first.status).toBe(200);
    expect(first.bytes.length).toBeGreaterThan(64 * 1024);
    expect(first.length).toBe(String(first.bytes.length));
    expect(first.type).toBe('application/json; charset=utf-8');
    expect(first.json.items.map((e: { externalId: string }) => e.externalId)).toEqual(items.slice(0, 500).map((e) => e.externalId));
    expect(first.json.items[499].description).toBe(items[499].description);
    const rest = await post({ ...query, cursor: first.json.nextCursor });
    expect(rest.bytes.length).toBeLessThan(64 * 1024);
    expect(rest.length).toBe(String(rest.bytes.length));
    expect(rest.json).toEqual({ items: expect.any(Array) });
    expect(rest.json.items.map((e: { externalId: string }) => e.externalId)).toEqual(items.slice(500).map((e) => e.externalId));
    // The same through inject, which the other tests use.
    const injected = await h.post('/events/list', query);
    expect(injected.body).toEqual(first.json);
  });
});
