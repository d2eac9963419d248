/**
 * Several Strata processes on one PostgreSQL database (and Redis, where installed) serve the same projects:
 * a write through one is read through the other, cursors and tokens of one are accepted by the other, a
 * group change through one applies in the other, concurrent creates of one externalId through both leave
 * exactly one, and killing a process in the middle of writes loses nothing acknowledged and leaves nothing
 * half written.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedis, startRedisServer, type RedisServer } from './support/redis-server.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { newPostgresDatabase, testEngine } from './support/test-store.js';

type Server = ServerProcess;

const SECRET = 'multi-process-secret';
const children: ChildProcess[] = [];
let redis: RedisServer | undefined;
let databaseUrl: string;
let a: Server;
let b: Server;

function start(extra: Record<string, string> = {}): Promise<Server> {
  return startServerProcess(
    {
      STRATA_DATABASE_URL: databaseUrl,
      STRATA_PROJECTS: 'dev',
      STRATA_DEV_CLIENT_SECRET: SECRET,
      // Both processes are one service: one issuer, whichever process issues a token.
      STRATA_PUBLIC_URL: 'http://strata.test',
      ...(redis ? { STRATA_REDIS_URL: redis.url } : {}),
      ...extra,
    },
    children,
  );
}

async function token(s: Server, clientId = 'strata-admin', secret = SECRET): Promise<string> {
  const res = await fetch(`${s.base}/oauth2/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function call(s: Server, bearer: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.base}/api/v1/projects/dev${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe.runIf(testEngine() === 'postgres')('several processes on one PostgreSQL database', () => {
  let admin: string;
  beforeAll(async () => {
    databaseUrl = await newPostgresDatabase();
    if (hasRedis()) redis = await startRedisServer();
    // Extra built-in clients (the same in both): a reader whose groups claim is "readers".
    const clients = JSON.stringify([{ clientId: 'reader', clientSecret: 'reader-secret-1', groups: ['readers'] }]);
    [a, b] = await Promise.all([start({ STRATA_CLIENTS: clients }), start({ STRATA_CLIENTS: clients })]);
    admin = await token(a);
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await redis?.stop();
  });

  it('reads through one process what was written through the other, with its cursors and tokens', async () => {
    const items = Array.from({ length: 5 }, (_, i) => ({ externalId: `mp-${i}`, startTime: 1000 + i }));
    expect((await call(a, admin, 'POST', '/events', { items })).status).toBe(201);
    const fromB = await call(b, admin, 'POST', '/events/byids', { items: [{ externalId: 'mp-3' }] });
    expect(fromB.status).toBe(200);
    expect(fromB.body.items[0].startTime).toBe(1003);
    const query = { filter: { externalIdPrefix: 'mp-' }, sort: [{ property: ['startTime'], order: 'desc' }], limit: 2 };
    const first = await call(a, admin, 'POST', '/events/list', query);
    const second = await call(b, admin, 'POST', '/events/list', { ...query, cursor: first.body.nextCursor });
    expect(second.status).toBe(200);
    expect(second.body.items.map((e: { externalId: string }) => e.externalId)).toEqual(['mp-2', 'mp-1']);
    // A token issued by b is accepted by a (one signing key, kept in the database).
    expect((await call(a, await token(b), 'GET', '/events?limit=1')).status).toBe(200);
  });

  it('applies a group change made through one process in the other', async () => {
    const reader = await token(a, 'reader', 'reader-secret-1');
    expect((await call(b, reader, 'GET', '/events?limit=1')).status).toBe(403);
    const group = await call(a, admin, 'POST', '/groups', {
      items: [{ name: 'readers', sourceId: 'readers', capabilities: [{ eventsAcl: { actions: ['READ'], scope: { all: {} } } }] }],
    });
    expect(group.status).toBe(201);
    // Another process sees the change once its copy of the project's authentication version is read again
    // (within PROJECT_AUTH_FRESH_MS, a quarter of a second): ask until it does, for at most five seconds.
    const deadline = Date.now() + 5000;
    let status = 403;
    while (status === 403 && Date.now() < deadline) status = (await call(b, reader, 'GET', '/events?limit=1')).status;
    expect(status).toBe(200);
  });

  it('reads data modeling instances through the schema as the other process last changed it', async () => {
    const C = { type: 'container', space: 'mp', externalId: 'Thing' };
    const V = (version: string) => ({ type: 'view', space: 'mp', externalId: 'Thing', version });
    const ok = async (s: Server, path: string, body: unknown) => {
      const res = await call(s, admin, 'POST', path, body);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body;
    };
    await ok(a, '/models/spaces', { items: [{ space: 'mp' }] });
    await ok(a, '/models/containers', { items: [{ space: 'mp', externalId: 'Thing', properties: { n: { type: { type: 'int32' } } } }] });
    await ok(a, '/models/views', { items: [{ space: 'mp', externalId: 'Thing', version: '1', properties: { n: { container: C, containerPropertyIdentifier: 'n' } } }] });
    // b reads (and keeps) the schema as it is now.
    await ok(b, '/models/instances', { items: [{ instanceType: 'node', space: 'mp', externalId: 'one', sources: [{ source: V('1'), properties: { n: 1 } }] }] });
    // a adds a property and a view version that maps it; b writes and reads through them at once.
    await ok(a, '/models/containers', { items: [{ space: 'mp', externalId: 'Thing', properties: { label: { type: { type: 'text' } } } }] });
    await ok(a, '/models/views', {
      items: [{ space: 'mp', externalId: 'Thing', version: '2', properties: { n: { container: C, containerPropertyIdentifier: 'n' }, label: { container: C, containerPropertyIdentifier: 'label' } } }],
    });
    await ok(b, '/models/instances', { items: [{ instanceType: 'node', space: 'mp', externalId: 'two', sources: [{ source: V('2'), properties: { n: 2, label: 'second' } }] }] });
    const read = await ok(b, '/models/instances/byids', { items: [{ instanceType: 'node', space: 'mp', externalId: 'two' }], sources: [{ source: V('2') }] });
    expect(read.items[0].properties.mp['Thing/2']).toEqual({ n: 2, label: 'second' });
    // a deletes the views and the container; b no longer writes to it.
    await ok(a, '/models/views/delete', { items: [{ space: 'mp', externalId: 'Thing', version: '1' }, { space: 'mp', externalId: 'Thing', version: '2' }] });
    await ok(a, '/models/containers/delete', { items: [{ space: 'mp', externalId: 'Thing' }] });
    const gone = await call(b, admin, 'POST', '/models/instances', { items: [{ instanceType: 'node', space: 'mp', externalId: 'three', sources: [{ source: C, properties: { n: 3 } }] }] });
    expect(gone.status).toBe(400);
  });

  it('creates one externalId once when both processes are asked for it at the same time', async () => {
    for (let round = 0; round < 10; round++) {
      const item = { items: [{ externalId: `race-${round}` }] };
      const answers = await Promise.all([call(a, admin, 'POST', '/events', item), call(b, admin, 'POST', '/events', item)]);
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
      expect(answers.find((r) => r.status === 409)!.body.error.duplicated).toEqual([{ externalId: `race-${round}` }]);
    }
    const stored = await call(b, admin, 'POST', '/events/list', { filter: { externalIdPrefix: 'race-' }, limit: 100 });
    expect(stored.body.items).toHaveLength(10);
  });

  it('keeps every one of concurrent updates of one item through both processes', async () => {
    expect((await call(a, admin, 'POST', '/events', { items: [{ externalId: 'contended' }] })).status).toBe(201);
    // Each request adds its own metadata key: an update computed from a stale read would drop another's key.
    const keys = Array.from({ length: 24 }, (_, i) => `k${i}`);
    const answers = await Promise.all(
      keys.map((k, i) => call(i % 2 ? a : b, admin, 'POST', '/events/update', { items: [{ externalId: 'contended', update: { metadata: { add: { [k]: 'v' } } } }] })),
    );
    expect(answers.map((r) => r.status)).toEqual(keys.map(() => 200));
    const stored = await call(a, admin, 'POST', '/events/byids', { items: [{ externalId: 'contended' }] });
    expect(Object.keys(stored.body.items[0].metadata).sort()).toEqual([...keys].sort());
  });

  it('leaves no data points of a deleted series when points are inserted through the other process meanwhile', async () => {
    for (let round = 0; round < 5; round++) {
      const xid = `doomed-${round}`;
      expect((await call(a, admin, 'POST', '/timeseries', { items: [{ externalId: xid }] })).status).toBe(201);
      const inserts = Array.from({ length: 6 }, (_, i) =>
        call(b, admin, 'POST', '/timeseries/data', { items: [{ externalId: xid, datapoints: [{ timestamp: 1000 + i, value: i }] }] }),
      );
      const deletion = call(a, admin, 'POST', '/timeseries/delete', { items: [{ externalId: xid }] });
      const answers = await Promise.all([...inserts, deletion]);
      expect((await deletion).status).toBe(200);
      // An insert after the delete names a missing series; none may leave points behind.
      for (const r of answers.slice(0, -1)) expect([200, 400]).toContain(r.status);
    }
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const orphans = await db.query(
        'SELECT count(*)::int AS n FROM datapoint_chunks c WHERE NOT EXISTS (SELECT 1 FROM timeseries t WHERE t.project_id = c.project_id AND t.id = c.series_id)',
      );
      expect(orphans.rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  });

  it('keeps the asset hierarchy whole when both processes change it at the same time', async () => {
    for (let round = 0; round < 8; round++) {
      const [r, x, y, z] = ['r', 'x', 'y', 'z'].map((n) => `h${round}-${n}`);
      expect((await call(a, admin, 'POST', '/assets', { items: [{ externalId: r, name: r }] })).status).toBe(201);
      const children = [x, y, z].map((c) => ({ externalId: c, name: c, parentExternalId: r }));
      expect((await call(a, admin, 'POST', '/assets', { items: children })).status).toBe(201);
      // Two moves that would each be fine alone and together make a cycle; a child created under an asset
      // that is deleted meanwhile.
      const [m1, m2, created, deleted] = await Promise.all([
        call(a, admin, 'POST', '/assets/update', { items: [{ externalId: x, update: { parentExternalId: { set: y } } }] }),
        call(b, admin, 'POST', '/assets/update', { items: [{ externalId: y, update: { parentExternalId: { set: x } } }] }),
        call(a, admin, 'POST', '/assets', { items: [{ externalId: `h${round}-child`, name: 'child', parentExternalId: z }] }),
        call(b, admin, 'POST', '/assets/delete', { items: [{ externalId: z }] }),
      ]);
      expect([m1.status, m2.status].sort(), JSON.stringify([m1.body, m2.body])).toEqual([200, 400]);
      // Either the child was created first (and the delete is refused) or the parent was deleted first.
      expect([[201, 400], [400, 200]].map(String)).toContain(String([created.status, deleted.status]));
      const all = await call(a, admin, 'POST', '/assets/list', { filter: { externalIdPrefix: `h${round}-` }, limit: 10 });
      const byId = new Map<number, { parentId?: number }>(all.body.items.map((i: { id: number; parentId?: number }) => [i.id, i]));
      for (const item of byId.values()) if (item.parentId !== undefined) expect(byId.has(item.parentId), 'a parent that exists').toBe(true);
      // Every asset reaches the root by its parents.
      for (const start of byId.keys()) {
        let at: number | undefined = start;
        for (let hops = 0; at !== undefined; hops++) {
          expect(hops, 'a path to the root without a cycle').toBeLessThan(byId.size);
          at = byId.get(at)!.parentId;
        }
      }
    }
  });

  it('loses nothing acknowledged and leaves no request half applied when a process is killed mid-write', async () => {
    const victim = await start();
    const bearer = await token(victim);
    const batches = Array.from({ length: 40 }, (_, n) => ({ items: Array.from({ length: 50 }, (_, i) => ({ externalId: `kill-${n}-${i}`, metadata: { batch: String(n) } })) }));
    const acknowledged: number[] = [];
    let third!: () => void;
    const someAcknowledged = new Promise<void>((resolve) => (third = resolve));
    const writes = batches.map((batch, n) =>
      call(victim, bearer, 'POST', '/events', batch).then(
        (res) => {
          if (res.status === 201 && acknowledged.push(n) === 3) third();
        },
        () => undefined,
      ),
    );
    // Kill it once some writes are acknowledged and others are still under way.
    await Promise.race([someAcknowledged, Promise.allSettled(writes)]);
    victim.child.kill('SIGKILL');
    await Promise.allSettled(writes);
    for (let n = 0; n < batches.length; n++) {
      const stored = await call(a, admin, 'POST', '/events/aggregate', { filter: { externalIdPrefix: `kill-${n}-` } });
      const count = stored.body.items[0].count;
      if (acknowledged.includes(n)) expect(count, `batch ${n} was acknowledged`).toBe(50);
      else expect([0, 50], `batch ${n} is whole or absent`).toContain(count);
    }
  });
});
