/**
 * The Postgres gateway over HTTP, on both backends: users created from a session (create, list, filter, by
 * ids, update, delete) and their tables (create, list with and without the built-in ones, by ids, delete),
 * with the refusals of bad input, of views the caller or the user's session cannot see, and of a revoked
 * session. On PostgreSQL, `psql` connects as a gateway user and reads its tables: the rows in its session's
 * scope and nothing else (another project's rows, another user's tables, Strata's own tables, a write: the
 * database itself refuses); a database where the gateway cannot confine its roles is refused with a 503.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { hasProgram } from './support/external.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import pg from 'pg';
import { newPostgresDatabase, testEngine } from './support/test-store.js';

let h: Harness;
/** A property name longer than the 63 bytes PostgreSQL keeps of a column's name. */
const LONG = `p${'x'.repeat(69)}`;
const postgres = testEngine() === 'postgres';

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('scoped', 'psql', 'noinstances') });
  // A view of pumps, with a node in a space every test's session may read and one in a space some may not.
  ok(await h.post('/models/spaces', { items: [{ space: 'gw_space' }, { space: 'gw_hidden' }] }));
  ok(
    await h.post('/models/containers', {
      items: [{ space: 'gw_space', externalId: 'Pump', properties: { name: { type: { type: 'text' } }, rating: { type: { type: 'float64' } } } }],
    }),
  );
  ok(
    await h.post('/models/views', {
      items: [
        {
          space: 'gw_space',
          externalId: 'Pump',
          version: 'v1',
          properties: {
            name: { container: { space: 'gw_space', externalId: 'Pump', type: 'container' }, containerPropertyIdentifier: 'name' },
            rating: { container: { space: 'gw_space', externalId: 'Pump', type: 'container' }, containerPropertyIdentifier: 'rating' },
          },
        },
      ],
    }),
  );
  // A view whose property name does not fit a column's name.
  const odd = { space: 'gw_space', externalId: 'Odd', type: 'container' };
  ok(await h.post('/models/containers', { items: [{ space: 'gw_space', externalId: 'Odd', properties: { [LONG]: { type: { type: 'text' } } } }] }));
  ok(
    await h.post('/models/views', {
      items: [
        { space: 'gw_space', externalId: 'Long', version: 'v1', properties: { [LONG]: { container: odd, containerPropertyIdentifier: LONG } } },
      ],
    }),
  );
  const source = { source: { type: 'container', space: 'gw_space', externalId: 'Pump' } };
  ok(
    await h.post('/models/instances', {
      items: [
        { instanceType: 'node', space: 'gw_space', externalId: 'p1', sources: [{ ...source, properties: { name: 'Pump one', rating: 1.5 } }] },
        { instanceType: 'node', space: 'gw_hidden', externalId: 'p2', sources: [{ ...source, properties: { name: 'Pump two', rating: 2 } }] },
      ],
    }),
  );
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A new session's nonce, of the harness's administrator unless a token is given. */
async function nonce(token?: string): Promise<string> {
  return ok(await h.request('POST', '/sessions', { items: [{ tokenExchange: true }] }, token ? bearer(token) : {})).items[0].nonce;
}

async function createUser(token?: string): Promise<any> {
  return ok(await h.post('/postgresgateway', { items: [{ credentials: { nonce: await nonce(token) } }] })).items[0];
}

/** Runs one SQL statement with psql as the gateway user; its rows (tab-separated), or its error. */
function psql(user: any, statement: string): { rows: string[]; error?: string } {
  const url = `postgres://${user.username}:${encodeURIComponent(user.password)}@${user.host}:${user.port}/${user.database}`;
  const run = spawnSync('psql', [url, '-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', statement], { encoding: 'utf8' });
  return run.status === 0 ? { rows: run.stdout.split('\n').filter(Boolean) } : { rows: [], error: run.stderr };
}

describe('postgres gateway users', () => {
  it('are created from a session, listed, filtered, read by username, updated and deleted', async () => {
    const user = await createUser();
    expect(user.username).toMatch(/^gw_dev_[a-z0-9]{16}$/);
    expect(user).toMatchObject({ createdTime: expect.any(Number), lastUpdatedTime: expect.any(Number), sessionId: expect.any(Number) });
    expect(JSON.stringify(user)).not.toMatch(/sessionKey|sessionGrant/);
    if (postgres) {
      expect(user).toMatchObject({ connectable: true, host: expect.any(String), port: expect.any(Number), database: expect.any(String) });
      expect(user.password).toMatch(/^[A-Za-z0-9]{32}$/);
    } else {
      expect(user).toMatchObject({ connectable: false, host: '', password: '' });
      expect(user.message).toMatch(/PostgreSQL/);
    }
    const other = await createUser();
    const { password, host, port, database, connectable, message, ...stored } = user;
    void [password, host, port, database, connectable, message];

    const listed = ok(await h.get('/postgresgateway')).items;
    expect(listed.map((u: any) => u.username)).toEqual(expect.arrayContaining([user.username, other.username]));
    expect(listed.find((u: any) => u.username === user.username)).toEqual(stored);
    const page = ok(await h.post('/postgresgateway/list', { limit: 1 }));
    expect(page.items).toHaveLength(1);
    const next = ok(await h.post('/postgresgateway/list', { limit: 1, cursor: page.nextCursor }));
    expect(next.items[0].username).not.toBe(page.items[0].username);
    expect(ok(await h.post('/postgresgateway/byids', { items: [{ username: user.username }] })).items).toEqual([stored]);

    const updated = ok(await h.post('/postgresgateway/update', { items: [{ username: user.username, update: { credentials: { set: { nonce: await nonce() } } } }] })).items[0];
    expect(updated.username).toBe(user.username);
    expect(updated.sessionId).not.toBe(user.sessionId);

    ok(await h.post('/postgresgateway/delete', { items: [{ username: user.username }] }));
    const gone = await h.post('/postgresgateway/byids', { items: [{ username: user.username }] });
    expect(errorMessage(gone, 400)).toBeTruthy();
    expect(gone.body.error.missing).toEqual([{ username: user.username }]);
    expect(ok(await h.post('/postgresgateway/byids', { items: [{ username: user.username }], ignoreUnknownIds: true })).items).toEqual([]);
    ok(await h.post('/postgresgateway/delete', { items: [{ username: user.username }], ignoreUnknownIds: true }));
    // As the Python SDK sends it.
    ok(await h.post('/postgresgateway/delete', { items: [{ username: user.username }], ignore_unknown_ids: true }));
    expect(errorMessage(await h.post('/postgresgateway/delete', { items: [{ username: user.username }] }), 400)).toBeTruthy();
    ok(await h.post('/postgresgateway/delete', { items: [{ username: other.username }] }));
  });

  it('refuses bad input, naming it, and changes nothing', async () => {
    const before = ok(await h.get('/postgresgateway')).items;
    expect(errorMessage(await h.post('/postgresgateway', { items: [] }), 400)).toMatch(/items/);
    expect(errorMessage(await h.post('/postgresgateway', { items: [{ credentials: { nonce: 'not-a-nonce' } }] }), 401)).toMatch(/nonce/);
    const two = { items: [{ credentials: { nonce: 'a' } }, { credentials: { nonce: 'b' } }] };
    expect(errorMessage(await h.post('/postgresgateway', two), 400)).toMatch(/items/);
    // A username that is not a plain identifier never reaches the database.
    for (const username of ['x"; DROP ROLE strata; --', 'Robert', 'a b', 'x'.repeat(64)]) {
      expect(errorMessage(await h.post('/postgresgateway/byids', { items: [{ username }] }), 400)).toMatch(/items\/0\/username|items\[0\]\.username/);
      expect(errorMessage(await h.post('/postgresgateway/delete', { items: [{ username }] }), 400)).toMatch(/username/);
    }
    expect(errorMessage(await h.get(`/postgresgateway/tables/${encodeURIComponent('bad"name')}`), 400)).toMatch(/username/);
    expect(errorMessage(await h.post('/postgresgateway/list', { limit: 11 }), 400)).toMatch(/limit/);
    expect(errorMessage(await h.request('GET', '/postgresgateway?limit=101'), 400)).toMatch(/limit/);
    expect(ok(await h.get('/postgresgateway')).items).toEqual(before);
  });
});

describe('postgres gateway tables', () => {
  let user: any;
  beforeAll(async () => {
    user = await createUser();
  });

  const view = { space: 'gw_space', externalId: 'Pump', version: 'v1' };

  it('are created, listed (with the built-in ones when asked), read by name and deleted', async () => {
    const path = `/postgresgateway/tables/${user.username}`;
    const [created] = ok(await h.post(path, { items: [{ type: 'view', tablename: 'pumps', options: view }] })).items;
    expect(created).toMatchObject({ tablename: 'pumps', type: 'view', options: view, createdTime: expect.any(Number) });
    expect(created.columns).toMatchObject({ space: { type: 'TEXT' }, externalId: { type: 'TEXT' }, name: { type: 'TEXT' }, rating: { type: 'DOUBLE PRECISION' } });
    // Without a version, the view's latest.
    const [latest] = ok(await h.post(path, { items: [{ type: 'view', tablename: 'pumps-latest', options: { space: 'gw_space', externalId: 'Pump' } }] })).items;
    expect(latest.options).toEqual(view);

    expect(ok(await h.get(path)).items.map((t: any) => t.tablename).sort()).toEqual(['pumps', 'pumps-latest']);
    expect(ok(await h.get(`${path}?limit=1`)).items).toHaveLength(1);
    const all = ok(await h.get(`${path}?includeBuiltIns=true`)).items;
    expect(all.map((t: any) => t.tablename).sort()).toEqual(['assets', 'events', 'pumps', 'pumps-latest', 'sequences', 'timeseries']);
    expect(all.find((t: any) => t.tablename === 'events')).toMatchObject({ type: 'built_in', columns: { id: { type: 'BIGINT' }, external_id: { type: 'TEXT' }, data_set_id: { type: 'BIGINT' } } });
    expect(ok(await h.get(`${path}?includeBuiltIns=no`)).items).toHaveLength(2);

    expect(ok(await h.post(`${path}/byids`, { items: [{ tablename: 'pumps' }] })).items).toEqual([created]);
    ok(await h.post(`${path}/delete`, { items: [{ tablename: 'pumps-latest' }] }));
    const missing = await h.post(`${path}/byids`, { items: [{ tablename: 'pumps-latest' }] });
    expect(missing.body.error.missing).toEqual([{ tablename: 'pumps-latest' }]);
    expect(ok(await h.post(`${path}/byids`, { items: [{ tablename: 'pumps-latest' }], ignoreUnknownIds: true })).items).toEqual([]);
    expect(errorMessage(await h.post(`${path}/delete`, { items: [{ tablename: 'pumps-latest' }] }), 400)).toBeTruthy();
    ok(await h.post(`${path}/delete`, { items: [{ tablename: 'pumps-latest' }], ignore_unknown_ids: true }));
  });

  it('refuses raw tables, unknown views, built-in deletes, names taken and unknown users, changing nothing', async () => {
    const path = `/postgresgateway/tables/${user.username}`;
    const before = ok(await h.get(`${path}?includeBuiltIns=true`)).items;
    const raw = { type: 'raw_rows', tablename: 'rows', options: { database: 'db', table: 't' }, columns: { id: { type: 'BIGINT' } } };
    expect(errorMessage(await h.post(path, { items: [raw] }), 400)).toMatch(/items\[0\]\.type: .*Raw/);
    const unknown = { type: 'view', tablename: 'nothing', options: { space: 'gw_space', externalId: 'Nope', version: 'v1' } };
    expect(errorMessage(await h.post(path, { items: [{ type: 'view', tablename: 'fine', options: view }, unknown] }), 400)).toMatch(/items\[1\]\.options: the view gw_space:Nope\/v1 does not exist/);
    expect(errorMessage(await h.post(path, { items: [{ type: 'view', tablename: 'bad name', options: view }] }), 400)).toMatch(/tablename/);
    const long = { type: 'view', tablename: 'long', options: { space: 'gw_space', externalId: 'Long', version: 'v1' } };
    expect(errorMessage(await h.post(path, { items: [long] }), 400)).toMatch(new RegExp(`items\\[0\\]\\.options: the property "${LONG}" .* longer than the 63 bytes`));
    expect(errorMessage(await h.post(path, { items: [{ type: 'view', tablename: 'events', options: view }] }), 409)).toBeTruthy();
    expect(errorMessage(await h.post(`${path}/delete`, { items: [{ tablename: 'events' }] }), 400)).toMatch(/items\[0\]\.tablename: events is a built-in table/);
    expect(errorMessage(await h.post('/postgresgateway/tables/gw_dev_nobody', { items: [{ type: 'view', tablename: 'x', options: view }] }), 400)).toMatch(/gw_dev_nobody/);
    expect(errorMessage(await h.get('/postgresgateway/tables/gw_dev_nobody'), 400)).toMatch(/does not exist/);
    expect(ok(await h.get(`${path}?includeBuiltIns=true`)).items).toEqual(before);
  });

  it('refuses a table while the user\'s session is revoked, until new credentials are set', async () => {
    const revoked = await createUser();
    ok(await h.post('/sessions/revoke', { items: [{ id: revoked.sessionId }] }));
    const path = `/postgresgateway/tables/${revoked.username}`;
    const table = { type: 'view', tablename: 'pumps', options: view };
    expect(errorMessage(await h.post(path, { items: [table] }), 400)).toMatch(new RegExp(`session ${revoked.sessionId} .*update the user's credentials`));
    expect(ok(await h.get(path)).items).toEqual([]);
    ok(await h.post('/postgresgateway/update', { items: [{ username: revoked.username, update: { credentials: { set: { nonce: await nonce() } } } }] }));
    expect(ok(await h.post(path, { items: [table] })).items[0].tablename).toBe('pumps');
    ok(await h.post('/postgresgateway/delete', { items: [{ username: revoked.username }] }));
  });

  it("lets a container under a view table be deleted: the table's view goes with it", async () => {
    const gone = { space: 'gw_space', externalId: 'Gone' };
    ok(await h.post('/models/containers', { items: [{ ...gone, properties: { name: { type: { type: 'text' } } } }] }));
    const properties = { name: { container: { ...gone, type: 'container' }, containerPropertyIdentifier: 'name' } };
    ok(await h.post('/models/views', { items: [{ ...gone, version: 'v1', properties }] }));
    const path = `/postgresgateway/tables/${user.username}`;
    ok(await h.post(path, { items: [{ type: 'view', tablename: 'gone', options: { ...gone, version: 'v1' } }] }));
    ok(await h.post('/models/containers/delete', { items: [gone] }));
    expect(ok(await h.post(`${path}/byids`, { items: [{ tablename: 'gone' }] })).items).toHaveLength(1);
    ok(await h.post(`${path}/delete`, { items: [{ tablename: 'gone' }] }));
  });

  it('refuses a view table to a user whose session may read no instances', async () => {
    const token = await namedClientToken(h, 'noinstances', [capability('sessionsAcl', ['CREATE']), capability('dataModelsAcl', ['READ'])]);
    const user = await createUser(token);
    const res = await h.post(`/postgresgateway/tables/${user.username}`, { items: [{ type: 'view', tablename: 'pumps', options: view }] });
    expect(errorMessage(res, 400)).toMatch(/items\[0\]\.type: the user's session may read no data modeling instances/);
    ok(await h.post('/postgresgateway/delete', { items: [{ username: user.username }] }));
  });

  it("refuses a table of a view the user's session cannot see", async () => {
    const token = await namedClientToken(h, 'scoped', [
      capability('sessionsAcl', ['CREATE']),
      capability('dataModelsAcl', ['READ'], { spaceIdScope: { spaceIds: ['gw_hidden'] } }),
      capability('dataModelInstancesAcl', ['READ'], { spaceIdScope: { spaceIds: ['gw_space'] } }),
    ]);
    const scoped = await createUser(token);
    const res = await h.post(`/postgresgateway/tables/${scoped.username}`, { items: [{ type: 'view', tablename: 'pumps', options: view }] });
    expect(errorMessage(res, 400)).toMatch(/items\[0\]\.options: the view gw_space:Pump\/v1 does not exist/);
    ok(await h.post('/postgresgateway/delete', { items: [{ username: scoped.username }] }));
  });
});

describe.runIf(postgres && hasProgram('psql', 'postgresql-client'))('a gateway user, connected with psql', () => {
  it('reads its tables in its scope and nothing else; the database refuses the rest', async () => {
    const [inScope, outOfScope] = ok(await h.post('/datasets', { items: [{ externalId: 'gw-ds-in' }, { externalId: 'gw-ds-out' }] })).items;
    ok(
      await h.post('/events', {
        items: [
          { externalId: 'gw-in', dataSetId: inScope.id, description: 'seen' },
          { externalId: 'gw-out', dataSetId: outOfScope.id },
          { externalId: 'gw-none' },
        ],
      }),
      201,
    );
    ok(await h.request('POST', '/api/v1/projects/other/events', { items: [{ externalId: 'gw-other-project' }] }), 201);
    const token = await namedClientToken(h, 'psql', [
      capability('sessionsAcl', ['CREATE']),
      capability('eventsAcl', ['READ'], { datasetScope: { ids: [inScope.id] } }),
      capability('dataModelsAcl', ['READ']),
      capability('dataModelInstancesAcl', ['READ'], { spaceIdScope: { spaceIds: ['gw_space'] } }),
    ]);
    const user = await createUser(token);
    ok(await h.post(`/postgresgateway/tables/${user.username}`, { items: [{ type: 'view', tablename: 'pumps', options: { space: 'gw_space', externalId: 'Pump', version: 'v1' } }] }));
    // A user of the administrator's, whose tables this one may not read.
    const admin = await createUser();

    expect(psql(user, 'SELECT external_id, description FROM events ORDER BY 1')).toEqual({ rows: ['gw-in|seen'] });
    expect(psql(user, 'SELECT "externalId", name, rating FROM pumps')).toEqual({ rows: ['p1|Pump one|1.5'] });
    expect(psql(admin, 'SELECT count(*) FROM events WHERE external_id LIKE \'gw-%\'')).toEqual({ rows: ['3'] });
    // Every built-in table reads, with each of its columns.
    ok(await h.post('/assets', { items: [{ externalId: 'gw-a', name: 'A', metadata: { k: 'v' }, labels: [] }] }), 201);
    ok(await h.post('/timeseries', { items: [{ externalId: 'gw-t', metadata: { k: 'v' } }] }), 201);
    ok(await h.post('/sequences', { items: [{ externalId: 'gw-s', columns: [{ externalId: 'c' }] }] }), 201);
    expect(psql(admin, "SELECT name, metadata->>'k' FROM assets WHERE external_id = 'gw-a'")).toEqual({ rows: ['A|v'] });
    expect(psql(admin, "SELECT is_string, is_step FROM timeseries WHERE external_id = 'gw-t'")).toEqual({ rows: ['f|f'] });
    for (const table of ['assets', 'timeseries', 'sequences']) expect(psql(admin, `SELECT * FROM ${table}`).error).toBeUndefined();

    expect(psql(user, `SELECT * FROM ${admin.username}.events`).error).toMatch(/permission denied/);
    expect(psql(user, 'SELECT * FROM public.events').error).toMatch(/permission denied/);
    expect(psql(user, 'SELECT * FROM public.gateway_scopes').error).toMatch(/permission denied/);
    expect(psql(user, "INSERT INTO events (id, external_id) VALUES (1, 'x')").error).toMatch(/read-only|permission denied|cannot insert/);
    expect(psql(user, "BEGIN READ WRITE; INSERT INTO events (id, external_id) VALUES (1, 'x'); COMMIT").error).toMatch(/permission denied/);
    expect(psql(user, 'BEGIN READ WRITE; CREATE TABLE mine (x int); COMMIT').error).toMatch(/permission denied/);
    expect(psql(user, 'BEGIN READ WRITE; CREATE TABLE public.mine (x int); COMMIT').error).toMatch(/permission denied/);

    // Revoking the user's session leaves it reading nothing; new credentials bring its scope back.
    const [session] = ok(await h.post('/postgresgateway/byids', { items: [{ username: user.username }] })).items;
    ok(await h.post('/sessions/revoke', { items: [{ id: session.sessionId }] }));
    expect(psql(user, 'SELECT count(*) FROM events')).toEqual({ rows: ['0'] });
    expect(psql(user, 'SELECT count(*) FROM pumps')).toEqual({ rows: ['0'] });
    ok(await h.post('/postgresgateway/update', { items: [{ username: user.username, update: { credentials: { set: { nonce: await nonce(token) } } } }] }));
    expect(psql(user, 'SELECT external_id FROM events')).toEqual({ rows: ['gw-in'] });

    // Deleting a table drops its view; deleting the user drops its role.
    ok(await h.post(`/postgresgateway/tables/${user.username}/delete`, { items: [{ tablename: 'pumps' }] }));
    expect(psql(user, 'SELECT * FROM pumps').error).toMatch(/does not exist/);
    ok(await h.post('/postgresgateway/delete', { items: [{ username: user.username }] }));
    expect(psql(user, 'SELECT 1').error).toMatch(/role .* does not exist|authentication failed/);
    ok(await h.post('/postgresgateway/delete', { items: [{ username: admin.username }] }));
  });
});

/** A new database of the run's cluster, prepared by `statements` (run as the cluster's administrator); its URL. */
async function preparedDatabase(statements: (database: string) => string[]): Promise<URL> {
  const url = new URL(await newPostgresDatabase());
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    for (const statement of statements(url.pathname.slice(1))) await admin.query(statement);
  } finally {
    await admin.end();
  }
  return url;
}

/** Starts a server with these settings and asks it for a gateway user with a new session; `check` gets the session, the answer and the server. */
async function createOn(env: Record<string, string>, check: (session: any, res: Response, server: Harness) => Promise<void>): Promise<void> {
  const server = await startHarness({}, env);
  try {
    const [session] = (await server.post('/sessions', { items: [{ tokenExchange: true }] })).body.items;
    await check(session, await server.post('/postgresgateway', { items: [{ credentials: { nonce: session.nonce } }] }), server);
  } finally {
    await server.close();
  }
}

describe.runIf(postgres)('a database role that may not create roles', () => {
  it('makes a create answer 503 naming CREATEROLE, creating nothing and keeping the nonce', async () => {
    const url = await preparedDatabase((database) => [
      `CREATE ROLE ${database}_owner LOGIN NOCREATEROLE`,
      `ALTER DATABASE ${database} OWNER TO ${database}_owner`,
      `ALTER SCHEMA public OWNER TO ${database}_owner`,
    ]);
    url.username = `${url.pathname.slice(1)}_owner`;
    await createOn({ STRATA_DATABASE_URL: url.toString() }, async (session, res, server) => {
      expect(errorMessage(res, 503)).toMatch(/CREATEROLE/);
      expect((await server.get('/postgresgateway')).body.items).toEqual([]);
      // The nonce is not used up by the refusal.
      expect((await server.post('/sessions/byids', { items: [{ id: session.id }] })).body.items[0].status).toBe('READY');
    });
  });
});

describe.runIf(postgres)('a database where every role may create objects in a schema', () => {
  it('makes a create answer 503 naming the schema and the REVOKE that closes it', async () => {
    const url = await preparedDatabase(() => ['GRANT CREATE ON SCHEMA public TO PUBLIC']);
    await createOn({ STRATA_DATABASE_URL: url.toString() }, async (_session, res, server) => {
      expect(errorMessage(res, 503)).toMatch(/schema public, .*REVOKE CREATE ON SCHEMA "public" FROM PUBLIC/);
      expect((await server.get('/postgresgateway')).body.items).toEqual([]);
    });
  });
});

describe('STRATA_GATEWAY_HOST', () => {
  it('is the host a create answers on PostgreSQL; the embedded store answers none', async () => {
    await createOn({ STRATA_GATEWAY_HOST: 'db.example.com' }, async (_session, res) => {
      expect(ok(res).items[0].host).toBe(postgres ? 'db.example.com' : '');
    });
  });
});
