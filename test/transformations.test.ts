/**
 * Transformations over HTTP, on both backends: create, list, filter, by ids, update and delete; runs that
 * read events and write assets through the embedded engine with the transformation's sessions, their jobs
 * and metrics; conflict modes; previews; queries that do not parse; what a scoped session reads; an engine
 * that cannot read files; notifications and schema endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProjectAuth } from '../src/storage/projects.js';
import { bearer, capability, namedClients, namedClientToken } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';

let h: Harness;
let projectId: number;

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('scoped', 'other') });
  projectId = (await findProjectAuth(h.strata.services.db, 'dev'))!.id;
  const events = [
    { externalId: 'ev-1', description: 'Pump one', type: 'alarm', startTime: 1000, metadata: { site: 'north' } },
    { externalId: 'ev-2', description: 'Pump two', type: 'alarm', startTime: 2000 },
    { externalId: 'ev-3', description: 'Valve', type: 'note', startTime: 3000 },
  ];
  ok(await h.post('/events', { items: events }), 201);
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A session of the caller (the harness's administrator unless a token is given), as the nonce a transformation takes. */
async function nonce(token?: string) {
  const res = ok(await h.request('POST', '/sessions', { items: [{ tokenExchange: true }] }, token ? bearer(token) : {}));
  const { id, nonce } = res.items[0];
  return { sessionId: id, nonce, cdfProjectName: 'dev' };
}

async function create(item: Record<string, unknown>, token?: string) {
  const credentials = { sourceNonce: await nonce(token), destinationNonce: await nonce(token) };
  return ok(await h.request('POST', '/transformations', { items: [{ ignoreNullFields: true, ...credentials, ...item }] }, token ? bearer(token) : {})).items[0];
}

/** Runs a transformation and waits (on the change feed, no sleeping) for its job to finish. */
async function runToEnd(ref: Record<string, unknown>, token?: string): Promise<any> {
  const started = ok(await h.request('POST', '/transformations/run', ref, token ? bearer(token) : {}));
  expect(JSON.stringify(started)).not.toMatch(/sessionKey|Grant/i);
  for (;;) {
    const watch = h.strata.services.changes!.watch({ area: 'jobs', projectId });
    const [job] = ok(await h.post('/transformations/jobs/byids', { items: [{ id: started.id }] })).items;
    if (job.status === 'Completed' || job.status === 'Failed') {
      watch.close();
      return job;
    }
    await watch.wait({ deadline: Infinity });
  }
}

describe('transformations', () => {
  it('are created, listed, filtered, read by ids, updated and deleted, never showing their sessions', async () => {
    const t = await create({ externalId: 'crud', name: 'Crud', query: 'select 1 as x', destination: { type: 'events' }, conflictMode: 'abort', isPublic: false, tags: ['a'] });
    expect(t).toMatchObject({ externalId: 'crud', name: 'Crud', destination: { type: 'events' }, conflictMode: 'abort', isPublic: false, ignoreNullFields: true, ownerIsCurrentUser: true });
    expect(t.sourceSession.sessionId).toBeGreaterThan(0);
    expect(JSON.stringify(t)).not.toMatch(/sessionKey|nonce|Grant/i);

    const dup = await h.post('/transformations', { items: [{ externalId: 'crud', name: 'again', ignoreNullFields: false }] });
    expect(dup.status).toBe(409);

    const listed = ok(await h.get('/transformations'));
    expect(listed.items.map((x: any) => x.externalId)).toContain('crud');
    const read = ok(await h.post('/transformations/byids', { items: [{ externalId: 'crud' }] }));
    for (const answer of [listed, read]) expect(JSON.stringify(answer)).not.toMatch(/sessionKey|nonce|Grant/i);
    const filtered = ok(await h.post('/transformations/filter', { filter: { destinationType: 'events', isPublic: false } })).items;
    expect(filtered.map((x: any) => x.externalId)).toEqual(['crud']);
    // The clients' default: public transformations included, private ones too.
    expect(ok(await h.post('/transformations/filter', { filter: { isPublic: true, destinationType: 'events' } })).items.map((x: any) => x.externalId)).toEqual(['crud']);
    expect(ok(await h.post('/transformations/filter', { filter: { conflictMode: 'upsert', destinationType: 'events' } })).items).toEqual([]);

    const updated = ok(await h.post('/transformations/update', { items: [{ externalId: 'crud', update: { name: { set: 'Renamed' }, destination: { set: { type: 'assets' } }, sourceNonce: { setNull: true } } }] })).items[0];
    expect(updated).toMatchObject({ name: 'Renamed', destination: { type: 'assets' } });
    expect(updated.sourceSession).toBeUndefined();
    expect(ok(await h.post('/transformations/filter', { filter: { destinationType: 'assets' } })).items.map((x: any) => x.externalId)).toContain('crud');

    const [byId] = ok(await h.post('/transformations/byids', { items: [{ id: t.id }] })).items;
    expect(byId.name).toBe('Renamed');
    expect(errorMessage(await h.post('/transformations/run', { externalId: 'crud' }), 400)).toMatch(/no source credentials/);

    ok(await h.post('/transformations/delete', { items: [{ externalId: 'crud' }] }));
    expect((await h.post('/transformations/byids', { items: [{ externalId: 'crud' }] })).status).toBe(400);
  });

  it('keeps a private transformation to its owner: to anyone else it is absent', async () => {
    const mine = await create({ externalId: 'private-admin', name: 'Mine', isPublic: false, destination: { type: 'events' } });
    ok(await h.post('/transformations', { items: [{ externalId: 'public-admin', name: 'Shared', ignoreNullFields: true, destination: { type: 'events' } }] }));
    const other = await namedClientToken(h, 'other', [capability('transformationsAcl', ['READ', 'WRITE']), capability('sessionsAcl', ['CREATE'])]);
    const as = (method: string, path: string, body?: unknown) => h.request(method, path, body, bearer(other));
    const names = (res: Response) => ok(res).items.map((x: any) => x.externalId).sort();

    expect(names(await as('GET', '/transformations'))).toEqual(['public-admin']);
    expect(names(await as('POST', '/transformations/filter', { filter: { destinationType: 'events' } }))).toEqual(['public-admin']);
    expect(names(await as('POST', '/transformations/filter', { filter: { isPublic: false } }))).toEqual([]);
    for (const ref of [{ externalId: 'private-admin' }, { id: mine.id }]) {
      const read = await as('POST', '/transformations/byids', { items: [ref] });
      expect(errorMessage(read, 400)).toMatch(/not found/);
      expect(read.body.error.missing).toEqual([ref]);
      // Named with an unknown one, it is listed as the unknown one is.
      expect((await as('POST', '/transformations/byids', { items: [ref, { externalId: 'no-such' }] })).body.error.missing).toEqual([ref, { externalId: 'no-such' }]);
      expect(ok(await as('POST', '/transformations/byids', { items: [ref, { externalId: 'public-admin' }], ignoreUnknownIds: true })).items.map((x: any) => x.externalId)).toEqual(['public-admin']);
      expect(errorMessage(await as('POST', '/transformations/update', { items: [{ ...ref, update: { name: { set: 'Taken' } } }] }), 400)).toMatch(/not found/);
      expect(errorMessage(await as('POST', '/transformations/delete', { items: [ref] }), 400)).toMatch(/not found/);
      ok(await as('POST', '/transformations/delete', { items: [ref], ignoreUnknownIds: true }));
      expect(errorMessage(await as('POST', '/transformations/run', ref), 400)).toMatch(/not found/);
      expect(errorMessage(await as('POST', '/transformations/cancel', ref), 400)).toMatch(/not found/);
    }
    // Its schedule, notifications and jobs are hidden with it.
    ok(await h.post('/transformations/schedules', { items: [{ externalId: 'private-admin', interval: '0 0 1 1 *', isPaused: true }] }));
    const [note] = ok(await h.post('/transformations/notifications', { items: [{ transformationExternalId: 'private-admin', destination: 'owner@example.com' }] })).items;
    const job = await runToEnd({ externalId: 'private-admin' });
    const ids = (res: Response) => ok(res).items.map((x: any) => x.id);
    expect(ok(await as('GET', '/transformations/schedules')).items.map((x: any) => x.externalId)).not.toContain('private-admin');
    for (const path of ['/transformations/schedules/byids', '/transformations/schedules/delete']) {
      expect(errorMessage(await as('POST', path, { items: [{ externalId: 'private-admin' }] }), 400)).toMatch(/not found/);
    }
    expect(errorMessage(await as('POST', '/transformations/schedules/update', { items: [{ externalId: 'private-admin', update: { isPaused: { set: false } } }] }), 400)).toMatch(/not found/);
    expect(ok(await as('POST', '/transformations/schedules/byids', { items: [{ externalId: 'private-admin' }], ignoreUnknownIds: true })).items).toEqual([]);
    expect(ids(await as('GET', '/transformations/jobs'))).not.toContain(job.id);
    expect(ids(await as('GET', `/transformations/jobs?transformationId=${mine.id}`))).toEqual([]);
    expect(errorMessage(await as('POST', '/transformations/jobs/byids', { items: [{ id: job.id }] }), 400)).toMatch(/not found/);
    expect(errorMessage(await as('GET', `/transformations/jobs/${job.id}/metrics`), 400)).toMatch(/not found/);
    expect(ids(await as('GET', '/transformations/notifications'))).not.toContain(note.id);
    expect(errorMessage(await as('GET', '/transformations/notifications?transformationExternalId=private-admin'), 400)).toMatch(/does not exist/);
    expect(errorMessage(await as('POST', '/transformations/notifications', { items: [{ transformationId: mine.id, destination: 'x@example.com' }] }), 400)).toMatch(/does not exist/);
    expect(errorMessage(await as('POST', '/transformations/notifications/delete', { items: [{ id: note.id }] }), 400)).toMatch(/not found/);
    expect(ids(await h.get(`/transformations/jobs?transformationId=${mine.id}`))).toEqual([job.id]);
    expect(ids(await h.get('/transformations/notifications?transformationExternalId=private-admin'))).toEqual([note.id]);
    expect(ok(await h.post('/transformations/schedules/byids', { items: [{ externalId: 'private-admin' }] })).items).toHaveLength(1);

    // Its owner still sees it, unchanged; and the other principal's own private transformation is its alone.
    const [kept] = ok(await h.post('/transformations/byids', { items: [{ id: mine.id }] })).items;
    expect(kept).toMatchObject({ name: 'Mine', isPublic: false, ownerIsCurrentUser: true });
    await create({ externalId: 'private-other', name: 'Theirs', isPublic: false }, other);
    expect(names(await as('POST', '/transformations/filter', { filter: { isPublic: false } }))).toEqual(['private-other']);
    expect(names(await h.post('/transformations/filter', { filter: { isPublic: false } }))).toEqual(['private-admin']);
    ok(await h.post('/transformations/delete', { items: [{ externalId: 'private-admin' }, { externalId: 'public-admin' }] }));
    ok(await as('POST', '/transformations/delete', { items: [{ externalId: 'private-other' }] }));
  });

  it('filters by name and query regexes, in linear time, and by tags', async () => {
    const items = [
      { externalId: 're-pump', name: 'Pump loader', query: 'select externalId from _cdf.events', tags: ['pump', 'daily'] },
      { externalId: 're-valve', name: 'Valve loader', query: 'select externalId from _cdf.assets', tags: ['valve'] },
      { externalId: 're-long', name: `${'a'.repeat(100)}!`, query: 'select 1 as x' },
    ].map((item) => ({ ...item, ignoreNullFields: true }));
    ok(await h.post('/transformations', { items }));
    const filter = async (f: Record<string, unknown>) => ok(await h.post('/transformations/filter', { filter: f })).items.map((x: any) => x.externalId).sort();

    expect(await filter({ nameRegex: 'loader$' })).toEqual(['re-pump', 're-valve']);
    expect(await filter({ nameRegex: '^Pump' })).toEqual(['re-pump']);
    expect(await filter({ nameRegex: 'pump' })).toEqual([]);
    expect(await filter({ queryRegex: '_cdf\\.assets' })).toEqual(['re-valve']);
    expect(await filter({ queryRegex: 'select', nameRegex: 'Valve|^a' })).toEqual(['re-long', 're-valve']);
    expect(await filter({ tags: { containsAny: ['daily', 'valve'] } })).toEqual(['re-pump', 're-valve']);
    expect(await filter({ tags: { containsAny: ['pump'] }, nameRegex: 'Valve' })).toEqual([]);
    expect(errorMessage(await h.post('/transformations/filter', { filter: { nameRegex: '(' } }), 400)).toMatch(/^filter\.nameRegex: .*Unterminated group/);
    expect(errorMessage(await h.post('/transformations/filter', { filter: { queryRegex: '(a)\\1' } }), 400)).toMatch(/^filter\.queryRegex: .*linear time/);
    // A pattern that backtracks exponentially in a backtracking engine answers at once.
    expect(await filter({ nameRegex: '^(a+)+$' })).toEqual([]);
    expect(await filter({ nameRegex: '^(a|aa)+!$' })).toEqual(['re-long']);
    expect((await h.post('/transformations/filter', { filter: { tags: { containsAll: ['pump'] } } })).status).toBe(400);
    ok(await h.post('/transformations/delete', { items: items.map(({ externalId }) => ({ externalId })) }));
  });

  it('takes one nonce for both sides and for several transformations, as the clients send it', async () => {
    const shared = await nonce();
    const items = ['shared-1', 'shared-2'].map((externalId) => ({ externalId, name: externalId, ignoreNullFields: true, sourceNonce: shared, destinationNonce: shared }));
    const created = ok(await h.post('/transformations', { items })).items;
    expect(created.map((t: any) => [t.sourceSession.sessionId, t.destinationSession.sessionId])).toEqual([
      [shared.sessionId, shared.sessionId],
      [shared.sessionId, shared.sessionId],
    ]);
    expect(errorMessage(await h.post('/transformations', { items: [{ externalId: 'shared-3', name: 'again', ignoreNullFields: true, sourceNonce: shared }] }), 400)).toMatch(/used/);
    ok(await h.post('/transformations/delete', { items: [{ externalId: 'shared-1' }, { externalId: 'shared-2' }] }));
  });

  it('refuses a query that does not parse with its position, raw destinations and OIDC credentials', async () => {
    const bad = await h.post('/transformations', { items: [{ externalId: 'bad', name: 'Bad', ignoreNullFields: false, query: 'select a,\n  from where' }] });
    expect(errorMessage(bad, 400)).toMatch(/items\[0\]\.query does not parse: .*line 2, position/);
    const update = await h.post('/transformations/update', { items: [{ externalId: 'nothing', update: { query: { set: 'selec 1' } } }] });
    expect(errorMessage(update, 400)).toMatch(/line 1, position 1/);
    const raw = await h.post('/transformations', { items: [{ externalId: 'raw', name: 'Raw', ignoreNullFields: false, destination: { type: 'raw', database: 'd', table: 't' } }] });
    expect(errorMessage(raw, 400)).toMatch(/items\[0\]\.destination\.type: .*raw/);
    const oidc = await h.post('/transformations', { items: [{ externalId: 'oidc', name: 'O', ignoreNullFields: false, sourceOidcCredentials: { clientId: 'x' } }] });
    expect(errorMessage(oidc, 400)).toMatch(/sourceNonce/);
    expect(ok(await h.post('/transformations/filter', { filter: {} })).items.map((x: any) => x.externalId)).not.toContain('raw');
  });

  it('runs: reads events, writes assets, with the job and its metrics', async () => {
    await create({ externalId: 'ev-to-assets', name: 'E2A', query: "select concat('asset-', externalId) as externalId, description as name, metadata from _cdf.events where type = 'alarm'", destination: { type: 'assets' } });
    const job = await runToEnd({ externalId: 'ev-to-assets' });
    expect(job).toMatchObject({ status: 'Completed', transformationExternalId: 'ev-to-assets', destination: { type: 'assets' }, conflictMode: 'upsert' });
    const assets = ok(await h.post('/assets/byids', { items: [{ externalId: 'asset-ev-1' }, { externalId: 'asset-ev-2' }] })).items;
    expect(assets.map((a: any) => a.name)).toEqual(['Pump one', 'Pump two']);
    expect(assets[0].metadata).toEqual({ site: 'north' });
    const metrics = ok(await h.get(`/transformations/jobs/${job.id}/metrics`)).items;
    const byName = Object.fromEntries(metrics.map((m: any) => [m.name, m.count]));
    expect(byName).toMatchObject({ 'events.read': 3, 'assets.created': 2 });

    // Upsert again: the same rows update the assets.
    ok(await h.post('/events/update', { items: [{ externalId: 'ev-1', update: { description: { set: 'Pump one, renamed' } } }] }));
    const again = await runToEnd({ externalId: 'ev-to-assets' });
    const m2 = Object.fromEntries(ok(await h.get(`/transformations/jobs/${again.id}/metrics`)).items.map((m: any) => [m.name, m.count]));
    expect(m2).toMatchObject({ 'assets.updated': 2 });
    expect(m2['assets.created']).toBeUndefined();
    expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'asset-ev-1' }] })).items[0].name).toBe('Pump one, renamed');

    // A run given a session of its own uses it for both sides.
    const withNonce = await runToEnd({ externalId: 'ev-to-assets', nonce: await nonce() });
    expect(withNonce.status).toBe('Completed');
    const listed = ok(await h.get('/transformations/jobs?transformationExternalId=ev-to-assets')).items;
    expect(listed.map((j: any) => j.id)).toEqual([withNonce.id, again.id, job.id]);
    expect(JSON.stringify(listed)).not.toMatch(/sessionKey|Grant/i);

    const [detailed] = ok(await h.post('/transformations/byids', { items: [{ externalId: 'ev-to-assets' }], withJobDetails: true })).items;
    expect(detailed.lastFinishedJob).toMatchObject({ id: withNonce.id, status: 'Completed' });
    expect(detailed.runningJob).toBeUndefined();
    const fromList = ok(await h.get('/transformations?withJobDetails=true')).items.find((t: any) => t.externalId === 'ev-to-assets');
    expect(fromList.lastFinishedJob.id).toBe(withNonce.id);
    expect(ok(await h.get('/transformations')).items.find((t: any) => t.externalId === 'ev-to-assets').lastFinishedJob).toBeUndefined();
  });

  it('abort fails the job when an item exists; delete removes the named items', async () => {
    await create({ externalId: 'abort', name: 'Abort', query: "select 'asset-ev-1' as externalId, 'x' as name", destination: { type: 'assets' }, conflictMode: 'abort' });
    const failed = await runToEnd({ externalId: 'abort' });
    expect(failed.status).toBe('Failed');
    expect(failed.error).toMatch(/409/);
    expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'asset-ev-1' }] })).items[0].name).toBe('Pump one, renamed');

    await create({ externalId: 'remove', name: 'Remove', query: "select 'asset-ev-2' as externalId", destination: { type: 'assets' }, conflictMode: 'delete' });
    expect((await runToEnd({ externalId: 'remove' })).status).toBe('Completed');
    expect((await h.post('/assets/byids', { items: [{ externalId: 'asset-ev-2' }] })).status).toBe(400);
  });

  it('ignoreNullFields keeps or clears a field a row leaves null; update writes existing items only', async () => {
    ok(await h.post('/assets', { items: [{ externalId: 'nulls', name: 'Nulls', description: 'kept?' }] }), 201);
    const query = "select 'nulls' as externalId, 'Nulls' as name, cast(null as varchar) as description";
    await create({ externalId: 'keep-nulls', name: 'K', query, destination: { type: 'assets' }, ignoreNullFields: true });
    expect((await runToEnd({ externalId: 'keep-nulls' })).status).toBe('Completed');
    expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'nulls' }] })).items[0].description).toBe('kept?');
    await create({ externalId: 'clear-nulls', name: 'C', query, destination: { type: 'assets' }, ignoreNullFields: false, conflictMode: 'update' });
    expect((await runToEnd({ externalId: 'clear-nulls' })).status).toBe('Completed');
    expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'nulls' }] })).items[0].description).toBeUndefined();

    await create({ externalId: 'update-none', name: 'U', query: "select 'no-such-asset' as externalId, 'x' as name", destination: { type: 'assets' }, conflictMode: 'update' });
    const failed = await runToEnd({ externalId: 'update-none' });
    expect(failed).toMatchObject({ status: 'Failed' });
    expect(failed.error).toMatch(/no-such-asset/);
    expect((await h.post('/assets/byids', { items: [{ externalId: 'no-such-asset' }] })).status).toBe(400);
  });

  it('writes data points', async () => {
    ok(await h.post('/timeseries', { items: [{ externalId: 'ts-tf' }] }), 201);
    const query = "select 'ts-tf' as externalId, startTime as timestamp, 1.5 as value from _cdf.events where type = 'alarm'";
    await create({ externalId: 'points', name: 'P', query, destination: { type: 'datapoints' } });
    const job = await runToEnd({ externalId: 'points' });
    expect(job.error).toBeUndefined();
    expect(job.status).toBe('Completed');
    const points = ok(await h.post('/timeseries/data/list', { items: [{ externalId: 'ts-tf', start: 0, end: 10_000 }] })).items[0].datapoints;
    expect(points).toEqual([
      { timestamp: 1000, value: 1.5 },
      { timestamp: 2000, value: 1.5 },
    ]);
  });

  it('a failing query fails its job with the engine message; the engine reads no file', async () => {
    await create({ externalId: 'file', name: 'File', query: "select * from read_csv('/etc/passwd')", destination: { type: 'assets' } });
    const job = await runToEnd({ externalId: 'file' });
    expect(job.status).toBe('Failed');
    expect(job.error).toMatch(/disabled by configuration/);
    const preview = await h.post('/transformations/query/run', { query: "select * from read_text('/etc/passwd')", convertToString: false });
    expect(preview.status).toBe(400);
    expect(errorMessage(preview, 400)).not.toMatch(/root:/);
    for (const query of ["select * from glob('/*')", "select * from read_parquet('http://127.0.0.1:1/x.parquet')", "select * from 'local.csv'"]) {
      expect(errorMessage(await h.post('/transformations/query/run', { query, convertToString: true }), 400)).toMatch(/disabled by configuration/);
    }
    const settings = ok(await h.post('/transformations/query/run', { query: "select value from duckdb_settings() where name = 'enable_external_access'", convertToString: true }));
    expect(settings.results.items).toEqual([{ value: 'false' }]);
    const off = await h.post('/transformations/query/run', { query: "select set_config('enable_external_access', 'true')", convertToString: true });
    expect(off.status).toBe(400);
  });

  it('previews a query with the schema of its result', async () => {
    const res = ok(await h.post('/transformations/query/run', { query: 'select externalId, startTime, metadata from _cdf.events order by externalId', convertToString: false, limit: 2 }));
    expect(res.schema.items.map((c: any) => [c.name, c.type])).toEqual([
      ['externalId', 'string'],
      ['startTime', 'timestamp'],
      ['metadata', { type: 'map' }],
    ]);
    expect(res.results.items).toEqual([
      { externalId: 'ev-1', startTime: 1000, metadata: { site: 'north' } },
      { externalId: 'ev-2', startTime: 2000, metadata: {} },
    ]);
    const strings = ok(await h.post('/transformations/query/run', { query: 'select 1 as n, to_metadata(n) as m from (select 1 as n)', convertToString: true }));
    expect(strings.results.items).toEqual([{ n: '1', m: '{"n":"1"}' }]);
    const casts = ok(await h.post('/transformations/query/run', { query: "select cast(1700000000 as timestamp) as s, cast('2024-01-02 03:04:05' as timestamp) as t, cast('junk' as timestamp) as j", convertToString: false }));
    expect(casts.results.items).toEqual([{ s: 1_700_000_000_000, t: Date.UTC(2024, 0, 2, 3, 4, 5), j: null }]);
    // The Python SDK's defaults, nulls included.
    const sdk = { query: 'select 1 as x', convertToString: false, limit: null, sourceLimit: 100, inferSchemaLimit: null, timeout: 240 };
    expect(ok(await h.post('/transformations/query/run', sdk)).results.items).toEqual([{ x: 1 }]);
    const limited = ok(await h.post('/transformations/query/run', { query: 'select count(*) as c from _cdf.events', convertToString: false, sourceLimit: 2 }));
    expect(limited.results.items).toEqual([{ c: 2 }]);
    for (const table of ['nothing', 'constructor', '__proto__', 'datasets']) {
      const res = await h.post('/transformations/query/run', { query: `select * from _cdf.${table}`, convertToString: false });
      expect(errorMessage(res, 400)).toMatch(new RegExp(`_cdf.${table}`));
    }
    expect(errorMessage(await h.post('/transformations/query/run', { query: 'select 1; select 2', convertToString: false }), 400)).toMatch(/one SELECT/);
    expect(ok(await h.post('/transformations/query/run', { query: 'select 1 as one -- a comment', convertToString: false })).results.items).toEqual([{ one: 1 }]);
    const endless = await h.post('/transformations/query/run', { query: 'select count(*) from range(1000000000000000)', convertToString: false, timeout: 1 });
    expect(errorMessage(endless, 400)).toMatch(/longer than 1 s/);
    expect(errorMessage(await h.post('/transformations/query/run', { query: 'select from from', convertToString: false }), 400)).toMatch(/line 1, position/);
  });

  it('reads only what the source session may read', async () => {
    const ds = ok(await h.post('/datasets', { items: [{ externalId: 'ds-tf' }] })).items[0];
    ok(await h.post('/events', { items: [{ externalId: 'in-ds', dataSetId: ds.id, description: 'seen' }] }), 201);
    const token = await namedClientToken(h, 'scoped', [
      capability('eventsAcl', ['READ'], { datasetScope: { ids: [ds.id] } }),
      capability('assetsAcl', ['READ', 'WRITE']),
      capability('transformationsAcl', ['READ', 'WRITE']),
      capability('sessionsAcl', ['CREATE']),
    ]);
    const scoped = await create({ externalId: 'scoped', name: 'Scoped', query: "select concat('scoped-', externalId) as externalId, externalId as name from _cdf.events", destination: { type: 'assets' } }, token);
    const job = await runToEnd({ externalId: 'scoped' }, token);
    expect(job.status).toBe('Completed');
    const metrics = Object.fromEntries(ok(await h.get(`/transformations/jobs/${job.id}/metrics`)).items.map((m: any) => [m.name, m.count]));
    expect(metrics).toMatchObject({ 'events.read': 1, 'assets.created': 1 });
    const preview = ok(await h.request('POST', '/transformations/query/run', { query: 'select externalId from _cdf.events', convertToString: true }, bearer(token)));
    expect(preview.results.items).toEqual([{ externalId: 'in-ds' }]);
    const byDataSet = ok(await h.post('/transformations/query/run', { query: "select externalId from _cdf.events where dataSetId = dataset_id('ds-tf')", convertToString: false }));
    expect(byDataSet.results.items).toEqual([{ externalId: 'in-ds' }]);
    const noDataSet = await h.post('/transformations/query/run', { query: "select dataset_id('nowhere') as id", convertToString: false });
    expect(errorMessage(noDataSet, 400)).toMatch(/no data set nowhere/);

    // A revoked session reads nothing more: the run fails saying so.
    ok(await h.post('/sessions/revoke', { items: [{ id: scoped.sourceSession.sessionId }] }));
    const revoked = await runToEnd({ externalId: 'scoped' }, token);
    expect(revoked.status).toBe('Failed');
    expect(revoked.error).toMatch(/Reading _cdf\.events/);
  });

  it('keeps notification addresses and answers destination schemas', async () => {
    await create({ externalId: 'notified', name: 'N', destination: { type: 'events' } });
    const [n] = ok(await h.post('/transformations/notifications', { items: [{ transformationExternalId: 'notified', destination: 'ops@example.com' }] })).items;
    expect(n).toMatchObject({ destination: 'ops@example.com' });
    expect(ok(await h.get('/transformations/notifications?transformationExternalId=notified')).items.map((x: any) => x.id)).toEqual([n.id]);
    ok(await h.post('/transformations/notifications/delete', { items: [{ id: n.id }] }));
    expect(ok(await h.get('/transformations/notifications?transformationExternalId=notified')).items).toEqual([]);
    const schema = ok(await h.get('/transformations/schema/assets?conflictMode=upsert&limit=1000')).items;
    expect(ok(await h.get('/transformations/schema/datapoints')).items.map((c: any) => c.name)).toEqual(['externalId', 'id', 'timestamp', 'value']);
    expect(schema.map((c: any) => c.name)).toEqual(expect.arrayContaining(['externalId', 'name', 'parentExternalId', 'metadata']));
    for (const type of ['raw', 'constructor', '__proto__']) expect((await h.get(`/transformations/schema/${type}`)).status).toBe(400);
  });
});

describe('transformations and data modeling', () => {
  const view = { type: 'view', space: 'plant', externalId: 'Pump', version: '1' };
  beforeAll(async () => {
    ok(await h.post('/models/spaces', { items: [{ space: 'plant' }] }));
    const container = { type: 'container', space: 'plant', externalId: 'Pump' };
    ok(await h.post('/models/containers', { items: [{ space: 'plant', externalId: 'Pump', properties: { name: { type: { type: 'text' } }, power: { type: { type: 'float64' } }, parent: { type: { type: 'direct' } } } }] }));
    const properties = Object.fromEntries(['name', 'power', 'parent'].map((p) => [p, { container, containerPropertyIdentifier: p }]));
    ok(await h.post('/models/views', { items: [{ space: 'plant', externalId: 'Pump', version: '1', properties }] }));
    const nodes = [1, 2].map((n) => ({ instanceType: 'node', space: 'plant', externalId: `pump-${n}`, sources: [{ source: view, properties: { name: `Pump ${n}`, power: n * 1.5 } }] }));
    ok(await h.post('/models/instances', { items: nodes }));
  });

  it('reads the nodes of a view through cdf_nodes and writes nodes through a view', async () => {
    const preview = ok(await h.post('/transformations/query/run', { query: 'select externalId, name, power from cdf_nodes("plant", "Pump", "1") order by externalId', convertToString: false }));
    expect(preview.results.items).toEqual([
      { externalId: 'pump-1', name: 'Pump 1', power: 1.5 },
      { externalId: 'pump-2', name: 'Pump 2', power: 3 },
    ]);
    await create({
      externalId: 'copy-pumps',
      name: 'Copy',
      query: "select concat(externalId, '-copy') as externalId, upper(name) as name, power * 2 as power from cdf_nodes('plant', 'Pump', '1')",
      destination: { type: 'nodes', view: { space: 'plant', externalId: 'Pump', version: '1' }, instanceSpace: 'plant', autoCreate: null },
    });
    const job = await runToEnd({ externalId: 'copy-pumps' });
    expect(job.status).toBe('Completed');
    const metrics = Object.fromEntries(ok(await h.get(`/transformations/jobs/${job.id}/metrics`)).items.map((m: any) => [m.name, m.count]));
    expect(metrics).toMatchObject({ 'nodes:plant/Pump/1.read': 2, 'nodes.created': 2 });
    const [copy] = ok(await h.post('/models/instances/byids', { items: [{ instanceType: 'node', space: 'plant', externalId: 'pump-2-copy' }], sources: [{ source: view }] })).items;
    expect(copy.properties.plant['Pump/1']).toMatchObject({ name: 'PUMP 2', power: 6 });
  });

  it('answers the columns of a view and of a sequence', async () => {
    const nodes = ok(await h.get('/transformations/schema/instances?viewSpace=plant&viewExternalId=Pump&viewVersion=1&instanceType=nodes')).items;
    expect(nodes.map((c: any) => [c.name, c.sqlType])).toEqual([
      ['externalId', 'string'],
      ['name', 'string'],
      ['power', 'double'],
      ['parent', 'struct<space:string,externalId:string>'],
    ]);
    expect((await h.get('/transformations/schema/instances?viewSpace=plant&viewExternalId=Nothing&viewVersion=1')).status).toBe(400);
    ok(await h.post('/sequences', { items: [{ externalId: 'seq', columns: [{ externalId: 'temp', valueType: 'DOUBLE' }] }] }), 201);
    const rows = ok(await h.get('/transformations/schema/sequence_rows?externalId=seq')).items;
    expect(rows.map((c: any) => [c.name, c.type])).toEqual([
      ['externalId', 'string'],
      ['rowNumber', 'long'],
      ['temp', 'double'],
    ]);
  });

  it('writes edges between nodes', async () => {
    await create({
      externalId: 'link-pumps',
      name: 'Link',
      query: "select 'pump-1-to-2' as externalId, node_reference('plant', 'pump-1') as startNode, node_reference('plant', 'pump-2') as endNode",
      destination: { type: 'edges', instanceSpace: 'plant', edgeType: { space: 'plant', externalId: 'feeds' }, view: null },
    });
    const job = await runToEnd({ externalId: 'link-pumps' });
    expect(job.error).toBeUndefined();
    const [edge] = ok(await h.post('/models/instances/byids', { items: [{ instanceType: 'edge', space: 'plant', externalId: 'pump-1-to-2' }] })).items;
    expect(edge).toMatchObject({ startNode: { space: 'plant', externalId: 'pump-1' }, endNode: { space: 'plant', externalId: 'pump-2' }, type: { space: 'plant', externalId: 'feeds' } });
  });

  it('abort fails the job when a node exists', async () => {
    await create({
      externalId: 'abort-nodes',
      name: 'Abort nodes',
      query: "select 'pump-1' as externalId, 'Overwritten' as name",
      destination: { type: 'nodes', view: { space: 'plant', externalId: 'Pump', version: '1' }, instanceSpace: 'plant' },
      conflictMode: 'abort',
    });
    expect((await runToEnd({ externalId: 'abort-nodes' })).status).toBe('Failed');
    const [pump] = ok(await h.post('/models/instances/byids', { items: [{ instanceType: 'node', space: 'plant', externalId: 'pump-1' }], sources: [{ source: view }] })).items;
    expect(pump.properties.plant['Pump/1'].name).toBe('Pump 1');
  });

  it('fails the job naming the missing instances when autoCreate is off', async () => {
    await create({
      externalId: 'dangling',
      name: 'Dangling',
      query: "select 'pump-3' as externalId, 'Pump 3' as name, node_reference('plant', 'nowhere') as parent",
      destination: { type: 'nodes', view: { space: 'plant', externalId: 'Pump', version: '1' }, instanceSpace: 'plant', autoCreate: { directRelations: false } },
    });
    const job = await runToEnd({ externalId: 'dangling' });
    expect(job.status).toBe('Failed');
    expect(job.error).toMatch(/400/);
    expect(job.error).toMatch(/nowhere/);
    expect((await h.post('/models/instances/byids', { items: [{ instanceType: 'node', space: 'plant', externalId: 'pump-3' }] })).body.items).toEqual([]);
  });
});

describe('external data sources', () => {
  const source = (externalId: string) => ({
    externalId,
    format: 'one_lake',
    name: `Lake ${externalId}`,
    settings: { credentials: { clientId: 'app', tenantId: 'tenant', clientSecret: 'secret' }, locationDescription: { workspaceId: 'w', containerId: 'c' } },
  });

  it('are created once: a duplicate external id is a 409 and the request creates nothing', async () => {
    const created = ok(await h.post('/transformations/externaldata', { items: [source('lake-1')] }), 201).items[0];
    expect(created).toMatchObject({ externalId: 'lake-1', format: 'one_lake', settings: { credentials: { clientId: 'app', tenantId: 'tenant' } } });
    expect(JSON.stringify(created)).not.toMatch(/secret/);
    const dup = await h.post('/transformations/externaldata', { items: [source('lake-2'), source('lake-1')] });
    expect(errorMessage(dup, 409)).toBeTruthy();
    expect(dup.body.error.duplicated).toEqual([{ externalId: 'lake-1' }]);
    expect(ok(await h.get('/transformations/externaldata')).items.map((s: any) => s.externalId)).toEqual(['lake-1']);
  });

  it('replace a source of the same external id at versions before 20260828 (create-only from then)', async () => {
    const at = (version: string, body: unknown) => h.request('POST', '/transformations/externaldata', body, { 'svc-version': version });
    ok(await at('20260827', { items: [source('lake-old')] }), 201);
    const renamed = { ...source('lake-old'), name: 'Renamed' };
    expect(ok(await at('20260827', { items: [renamed] }), 201).items[0]).toMatchObject({ externalId: 'lake-old', name: 'Renamed' });
    expect(errorMessage(await at('20260828', { items: [source('lake-old')] }), 409)).toBeTruthy();
    const listed = ok(await h.get('/transformations/externaldata')).items.filter((s: any) => s.externalId === 'lake-old');
    expect(listed.map((s: any) => s.name)).toEqual(['Renamed']);
    ok(await h.post('/transformations/externaldata/delete', { items: [{ externalId: 'lake-old' }] }));
  });

  it('are deleted by external id, verified without being reported usable, and refused without their secret', async () => {
    expect(ok(await h.post('/transformations/externaldata/usability', { externalId: 'lake-1' }))).toEqual({ externalId: { externalId: 'lake-1' } });
    expect((await h.post('/transformations/externaldata/delete', { items: [{ externalId: 'nowhere' }] })).status).toBe(400);
    ok(await h.post('/transformations/externaldata/delete', { items: [{ externalId: 'lake-1' }] }));
    expect(ok(await h.get('/transformations/externaldata')).items).toEqual([]);
    const noSecret = source('lake-3');
    delete (noSecret.settings.credentials as Partial<typeof noSecret.settings.credentials>).clientSecret;
    expect(errorMessage(await h.post('/transformations/externaldata', { items: [noSecret] }), 400)).toMatch(/clientSecret/);
  });
});
