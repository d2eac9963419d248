/**
 * Extraction pipelines over HTTP, on both backends: pipelines in data sets (create, list, filter, by ids,
 * update, delete), the revisions of their configuration, and the runs reported for them, with every bad
 * input refused by a message naming it and changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let ds: number;
let ds2: number;

async function pipeline(item: Record<string, unknown>) {
  const res = await h.post('/extpipes', { items: [{ dataSetId: ds, name: 'P', ...item }] });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items[0];
}
const byExternalId = async (externalId: string) => (await h.post('/extpipes/byids', { items: [{ externalId }], ignoreUnknownIds: true })).body.items[0];

beforeAll(async () => {
  h = await startHarness();
  const sets = await h.post('/datasets', { items: [{ externalId: 'xp-ds' }, { externalId: 'xp-ds2' }] });
  [ds, ds2] = sets.body.items.map((d: { id: number }) => d.id);
});
afterAll(() => h.close());

describe('extraction pipelines', () => {
  it('are created with the run fields at 0 and read back by id, by external id and in lists', async () => {
    const given = {
      externalId: 'xp-full',
      name: 'Full',
      description: 'd',
      rawTables: [{ dbName: 'db', tableName: 't' }],
      schedule: '0 */2 * * *',
      contacts: [{ name: 'Ada', email: 'ada@example.com', role: 'owner', sendNotification: true }],
      metadata: { Site: 'Oslo' },
      source: 'sap',
      documentation: '# docs',
      notificationConfig: { allowedNotSeenRangeInMinutes: 10 },
      createdBy: 'ada@example.com',
    };
    const created = await pipeline(given);
    expect(created).toEqual({
      id: expect.any(Number),
      ...given,
      dataSetId: ds,
      lastSuccess: 0,
      lastFailure: 0,
      lastSeen: 0,
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
    expect(Object.keys(created)).toEqual(['id', 'externalId', 'name', 'description', 'dataSetId', ...Object.keys(given).slice(3), 'lastSuccess', 'lastFailure', 'lastSeen', 'createdTime', 'lastUpdatedTime']);
    expect((await h.get(`/extpipes/${created.id}`)).body).toEqual(created);
    expect(await byExternalId('xp-full')).toEqual(created);
    const listed = (await h.get('/extpipes?limit=1000')).body.items;
    expect(listed).toContainEqual(created);
    const minimal = await pipeline({ externalId: 'xp-min' });
    expect(minimal).toEqual({
      id: expect.any(Number),
      externalId: 'xp-min',
      name: 'P',
      dataSetId: ds,
      rawTables: [],
      contacts: [],
      lastSuccess: 0,
      lastFailure: 0,
      lastSeen: 0,
      createdTime: expect.any(Number),
      lastUpdatedTime: expect.any(Number),
    });
  });

  it('accept the schedules the reference does and refuse others, naming them', async () => {
    for (const schedule of ['On trigger', 'Continuous', '@hourly', '@every 15m', '*/5 * * * *', '0 0 12 * * *', '1-5 0 * * *']) {
      expect((await h.post('/extpipes', { items: [{ externalId: `xp-s-${schedule}`, name: 'S', dataSetId: ds, schedule }] })).status).toBe(200);
    }
    const bad = await h.post('/extpipes', { items: [{ externalId: 'xp-bad-s', name: 'S', dataSetId: ds, schedule: 'sometimes' }] });
    expect(errorMessage(bad, 400)).toMatch(/^items\[0\]\.schedule: "sometimes" is not a schedule; give "On trigger", "Continuous", a cron expression/);
    const range = await h.post('/extpipes', { items: [{ externalId: 'xp-bad-s', name: 'S', dataSetId: ds, schedule: '99 * * * *' }] });
    expect(errorMessage(range, 400)).toMatch(/^items\[0\]\.schedule: cron: "99 \* \* \* \*" is not a cron expression/);
    const update = await h.post('/extpipes/update', { items: [{ externalId: 'xp-min', update: { schedule: { set: 'On trigger please' } } }] });
    expect(errorMessage(update, 400)).toMatch(/^items\[0\]\.schedule: "On trigger please" is not a schedule/);
    expect(await byExternalId('xp-bad-s')).toBeUndefined();
  });

  it('refuse bad input with a message naming it, creating nothing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ items: [{ externalId: 'xp-x', name: 'n' }] }, /items\/0.*dataSetId|items\[0\].*dataSetId/],
      [{ items: [{ externalId: 'xp-x', dataSetId: 1 }] }, /name/],
      [{ items: [{ name: 'n', dataSetId: 1 }] }, /externalId/],
      [{ items: [{ externalId: '', name: 'n', dataSetId: 1 }] }, /items\[0\]\.externalId/],
      [{ items: [{ externalId: 'xp-x', name: 'n'.repeat(141), dataSetId: 1 }] }, /items\[0\]\.name/],
      [{ items: [{ externalId: 'xp-x', name: 'n', dataSetId: 1, rawTables: [{ dbName: 'db' }] }] }, /items\[0\]\.rawTables\[0\]/],
      [{ items: [{ externalId: 'xp-x', name: 'n', dataSetId: 1, contacts: [{ email: 'not an email' }] }] }, /items\[0\]\.contacts\[0\]\.email/],
      [{ items: [{ externalId: 'xp-x', name: 'n', dataSetId: 1, notificationConfig: { allowedNotSeenRangeInMinutes: -1 } }] }, /items\[0\]\.notificationConfig\.allowedNotSeenRangeInMinutes/],
      [{ items: [{ externalId: 'xp-x', name: 'n', dataSetId: 1, lastSuccess: 5 }] }, /items\[0\].*lastSuccess/],
      [{ items: [{ externalId: 'xp-x', name: 'n', dataSetId: 1, metadata: { k: 'v'.repeat(10_241) } }] }, /items\[0\]\.metadata/],
    ];
    for (const [body, message] of cases) expect(errorMessage(await h.post('/extpipes', body), 400)).toMatch(message);
    const unknownSet = await h.post('/extpipes', { items: [{ externalId: 'xp-x', name: 'n', dataSetId: 987654321 }] });
    expect(errorMessage(unknownSet, 400)).toMatch(/^items\[0\]\.dataSetId: no data set with id 987654321/);
    expect(unknownSet.body.error.missing).toEqual([{ id: 987654321 }]);
    const twice = await h.post('/extpipes', { items: [{ externalId: 'xp-min', name: 'n', dataSetId: ds }] });
    expect(errorMessage(twice, 409)).toMatch(/xp-min/);
    expect(twice.body.error.duplicated).toEqual([{ externalId: 'xp-min' }]);
    expect(await byExternalId('xp-x')).toBeUndefined();
  });

  it('are updated field by field, raw tables and contacts by set, add and remove, metadata emptied to absent', async () => {
    await pipeline({ externalId: 'xp-upd', rawTables: [{ dbName: 'a', tableName: '1' }], metadata: { a: '1' } });
    const res = await h.post('/extpipes/update', {
      items: [
        {
          externalId: 'xp-upd',
          update: {
            name: { set: 'Renamed' },
            description: { set: 'now' },
            dataSetId: { set: ds2 },
            schedule: { set: 'Continuous' },
            rawTables: { add: [{ tableName: '2', dbName: 'a' }], remove: [{ tableName: '1', dbName: 'a' }] },
            contacts: { set: [{ name: 'Bo' }] },
            notificationConfig: { set: { allowedNotSeenRangeInMinutes: 5 } },
            metadata: { set: {} },
          },
        },
      ],
    });
    expect(res.status).toBe(200);
    const item = res.body.items[0];
    expect(item).toMatchObject({ name: 'Renamed', description: 'now', dataSetId: ds2, schedule: 'Continuous', rawTables: [{ tableName: '2', dbName: 'a' }], contacts: [{ name: 'Bo' }] });
    expect(item).not.toHaveProperty('metadata');
    const renamed = await h.post('/extpipes/update', { items: [{ id: item.id, update: { externalId: { set: 'xp-upd2' }, schedule: { setNull: true } } }] });
    expect(renamed.body, JSON.stringify(renamed.body)).toHaveProperty('items');
    expect(renamed.body.items[0]).toMatchObject({ externalId: 'xp-upd2' });
    expect(renamed.body.items[0]).not.toHaveProperty('schedule');
    const runField = await h.post('/extpipes/update', { items: [{ id: item.id, update: { lastSeen: { set: 1 } } }] });
    expect(errorMessage(runField, 400)).toMatch(/^items\[0\]\.update\.lastSeen: lastSeen is kept by the runs reported/);
    const createdBy = await h.post('/extpipes/update', { items: [{ id: item.id, update: { createdBy: { set: 'x' } } }] });
    expect(errorMessage(createdBy, 400)).toMatch(/items\[0\]\.update\.createdBy: createdBy is fixed/);
    const noSet = await h.post('/extpipes/update', { items: [{ id: item.id, update: { dataSetId: { set: 987654321 }, name: { set: 'changed' } } }] });
    expect(errorMessage(noSet, 400)).toMatch(/no data set with id 987654321/);
    expect((await byExternalId('xp-upd2')).name).toBe('Renamed');
  });

  it('are listed with the filter, the data sets resolved among those seen', async () => {
    await pipeline({
      externalId: 'xp-f1', name: 'Filtered', source: 'pi', metadata: { Plant: 'North' }, createdBy: 'me',
      contacts: [{ name: 'Ada', email: 'ada@example.com', sendNotification: true }], rawTables: [{ dbName: 'db', tableName: 't1' }],
    });
    await pipeline({
      externalId: 'xp-f2', name: 'Filtered', source: 'opc', dataSetId: ds2,
      contacts: [{ name: 'Bo', role: 'owner', sendNotification: false }, { name: 'Cy', email: null }],
      rawTables: [{ dbName: 'db', tableName: 't1' }, { dbName: 'db', tableName: 't2' }],
    });
    const list = async (filter: unknown) => {
      const res = await h.post('/extpipes/list', { filter, limit: 1000 });
      expect(res.status).toBe(200);
      return res.body.items.map((p: { externalId: string }) => p.externalId).sort();
    };
    expect(await list({ name: 'Filtered' })).toEqual(['xp-f1', 'xp-f2']);
    expect(await list({ name: 'Filtered', source: 'pi' })).toEqual(['xp-f1']);
    expect(await list({ externalIdPrefix: 'xp-f', dataSetIds: [{ externalId: 'xp-ds2' }] })).toEqual(['xp-f2']);
    expect(await list({ externalIdPrefix: 'xp-f', metadata: { plant: 'north' } })).toEqual(['xp-f1']);
    expect(await list({ externalIdPrefix: 'xp-f', createdBy: 'me' })).toEqual(['xp-f1']);
    expect(await list({ externalIdPrefix: 'xp-f', schedule: 'Null' })).toEqual(['xp-f1', 'xp-f2']);
    expect(await list({ externalIdPrefix: 'xp-s-', schedule: '@hourly' })).toEqual(['xp-s-@hourly']);
    const unknown = await h.post('/extpipes/list', { filter: { dataSetIds: [{ externalId: 'nowhere' }] } });
    expect(errorMessage(unknown, 400)).toMatch(/nowhere/);
    // Contacts and raw tables: each one given is held, a contact matching on the fields given (null: any).
    expect(await list({ name: 'Filtered', contacts: [{ email: 'ada@example.com' }] })).toEqual(['xp-f1']);
    expect(await list({ name: 'Filtered', contacts: [{ sendNotification: true }] })).toEqual(['xp-f1']);
    expect(await list({ name: 'Filtered', contacts: [{ sendNotification: false, email: null }] })).toEqual(['xp-f2']);
    expect(await list({ name: 'Filtered', contacts: [{ name: 'Bo' }, { name: 'Cy' }] })).toEqual(['xp-f2']);
    expect(await list({ name: 'Filtered', contacts: [{ name: 'Ada', role: 'owner' }] })).toEqual([]);
    expect(await list({ name: 'Filtered', contacts: [] })).toEqual(['xp-f1', 'xp-f2']);
    expect(await list({ name: 'Filtered', rawTables: [{ dbName: 'db', tableName: 't1' }] })).toEqual(['xp-f1', 'xp-f2']);
    expect(await list({ name: 'Filtered', rawTables: [{ dbName: 'db', tableName: 't1' }, { dbName: 'db', tableName: 't2' }] })).toEqual(['xp-f2']);
    expect(await list({ name: 'Filtered', rawTables: [{ dbName: 'db', tableName: 't3' }], contacts: [{ name: 'Ada' }] })).toEqual([]);
    expect(errorMessage(await h.post('/extpipes/list', { filter: { rawTables: [{ dbName: 'db' }] } }), 400)).toMatch(/filter\.rawTables\[0\]/);
    const page = await h.get('/extpipes?limit=2');
    expect(page.body.items).toHaveLength(2);
    const next = await h.get(`/extpipes?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(next.body.items[0].id).not.toBe(page.body.items[0].id);
  });

  it('are retrieved by ids, unknown ones missing unless ignored, and deleted with their runs and revisions', async () => {
    const p = await pipeline({ externalId: 'xp-del' });
    await h.post('/extpipes/runs', { items: [{ externalId: 'xp-del', status: 'seen' }] });
    await h.post('/extpipes/config', { externalId: 'xp-del', config: 'a: 1' });
    const missing = await h.post('/extpipes/byids', { items: [{ id: p.id }, { externalId: 'xp-nope' }] });
    expect(errorMessage(missing, 400)).toBeTruthy();
    expect(missing.body.error.missing).toEqual([{ externalId: 'xp-nope' }]);
    expect((await h.post('/extpipes/byids', { items: [{ id: p.id }, { externalId: 'xp-nope' }], ignoreUnknownIds: true })).body.items).toHaveLength(1);
    expect(errorMessage(await h.get('/extpipes/987654321'), 400)).toBeTruthy();
    expect((await h.post('/extpipes/delete', { items: [{ externalId: 'xp-del' }] })).status).toBe(200);
    expect(await byExternalId('xp-del')).toBeUndefined();
    await pipeline({ externalId: 'xp-del' });
    expect((await h.get('/extpipes/runs?externalId=xp-del')).body.items).toEqual([]);
    expect(errorMessage(await h.get('/extpipes/config?externalId=xp-del'), 400)).toMatch(/has no configuration revision/);
    expect(errorMessage(await h.post('/extpipes/delete', { items: [{ externalId: 'xp-nope' }] }), 400)).toBeTruthy();
    expect((await h.post('/extpipes/delete', { items: [{ externalId: 'xp-nope' }], ignoreUnknownIds: true })).status).toBe(200);
  });
});

describe('configuration revisions', () => {
  it('are numbered from 1, read as the newest, a given one or the one active at a time, listed newest first', async () => {
    await pipeline({ externalId: 'xp-cfg' });
    const first = await h.post('/extpipes/config', { externalId: 'xp-cfg', config: 'v: 1', description: 'first' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ externalId: 'xp-cfg', revision: 1, config: 'v: 1', description: 'first', createdTime: expect.any(Number) });
    const second = (await h.post('/extpipes/config', { externalId: 'xp-cfg', config: 'v: 2' })).body;
    expect(second).toMatchObject({ revision: 2, config: 'v: 2' });
    expect((await h.get('/extpipes/config?externalId=xp-cfg')).body).toEqual(second);
    expect((await h.get('/extpipes/config?externalId=xp-cfg&revision=1')).body).toEqual(first.body);
    expect((await h.get(`/extpipes/config?externalId=xp-cfg&activeAtTime=${second.createdTime}`)).body.revision).toBe(2);
    const revisions = (await h.get('/extpipes/config/revisions?externalId=xp-cfg')).body.items;
    expect(revisions).toEqual([
      { externalId: 'xp-cfg', revision: 2, createdTime: second.createdTime },
      { externalId: 'xp-cfg', revision: 1, description: 'first', createdTime: first.body.createdTime },
    ]);
    const page = await h.get('/extpipes/config/revisions?externalId=xp-cfg&limit=1');
    expect(page.body.items.map((r: { revision: number }) => r.revision)).toEqual([2]);
    const rest = await h.get(`/extpipes/config/revisions?externalId=xp-cfg&limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(rest.body.items.map((r: { revision: number }) => r.revision)).toEqual([1]);
  });

  it('revert by making an old revision the newest', async () => {
    const reverted = await h.post('/extpipes/config/revert', { externalId: 'xp-cfg', revision: 1 });
    expect(reverted.body).toMatchObject({ externalId: 'xp-cfg', revision: 3, config: 'v: 1', description: 'first' });
    expect((await h.get('/extpipes/config?externalId=xp-cfg')).body.revision).toBe(3);
  });

  it('refuse unknown pipelines and revisions, naming them', async () => {
    expect(errorMessage(await h.post('/extpipes/config', { externalId: 'xp-none', config: 'x' }), 400)).toMatch(/^externalId: the extraction pipeline \{"externalId":"xp-none"\} does not exist/);
    expect(errorMessage(await h.get('/extpipes/config?externalId=xp-none'), 400)).toMatch(/xp-none.*does not exist/);
    expect(errorMessage(await h.get('/extpipes/config/revisions?externalId=xp-none'), 400)).toMatch(/xp-none.*does not exist/);
    const unknown = await h.get('/extpipes/config?externalId=xp-cfg&revision=99');
    expect(errorMessage(unknown, 400)).toBeTruthy();
    expect(unknown.body.error.missing).toEqual([{ revision: 99 }]);
    expect(errorMessage(await h.post('/extpipes/config/revert', { externalId: 'xp-cfg', revision: 99 }), 400)).toBeTruthy();
    expect(errorMessage(await h.post('/extpipes/config/revert', { externalId: 'xp-cfg' }), 400)).toMatch(/revision/);
    expect(errorMessage(await h.get('/extpipes/config'), 400)).toMatch(/externalId/);
    expect(errorMessage(await h.get('/extpipes/config?externalId=xp-cfg&activeAtTime=1'), 400)).toMatch(/has no configuration revision created at or before 1/);
    expect((await h.get('/extpipes/config/revisions?externalId=xp-cfg')).body.items).toHaveLength(3);
  });
});

describe('runs', () => {
  it('are reported with status success, failure or seen, and move the pipeline last times forward', async () => {
    await pipeline({ externalId: 'xp-run' });
    const seen = await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'seen' }] });
    expect(seen.status).toBe(200);
    expect(seen.body.items[0]).toEqual({ id: expect.any(Number), externalId: 'xp-run', status: 'seen', createdTime: expect.any(Number) });
    let p = await byExternalId('xp-run');
    expect(p).toMatchObject({ lastSeen: seen.body.items[0].createdTime, lastSuccess: 0, lastFailure: 0 });
    expect(p).not.toHaveProperty('lastMessage');
    await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'failure', message: 'Oh no!', createdTime: 2_000_000_000_000 }] });
    await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'success', message: 'fine', createdTime: 1_000 }] });
    p = await byExternalId('xp-run');
    expect(p).toMatchObject({ lastSeen: 2_000_000_000_000, lastFailure: 2_000_000_000_000, lastSuccess: 1_000, lastMessage: 'Oh no!' });
    // An older failure leaves the newest failure's message.
    await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'failure', message: 'old', createdTime: 5 }] });
    expect((await byExternalId('xp-run')).lastMessage).toBe('Oh no!');
  });

  it('refuse a status outside success, failure and seen, and an unknown pipeline, reporting nothing', async () => {
    const bad = await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'seen' }, { externalId: 'xp-run', status: 'done' }] });
    expect(errorMessage(bad, 400)).toBe('items[1].status: must be one of "success", "failure", "seen", got "done"');
    const unknown = await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'seen' }, { externalId: 'xp-none', status: 'seen' }] });
    expect(errorMessage(unknown, 400)).toMatch(/^items\[1\]\.externalId: the extraction pipeline \{"externalId":"xp-none"\} does not exist/);
    expect(errorMessage(await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'seen', message: 'm'.repeat(1001) }] }), 400)).toMatch(/items\[0\]\.message/);
    expect(errorMessage(await h.post('/extpipes/runs', { items: [{ externalId: 'xp-run', status: 'seen', createdTime: -1 }] }), 400)).toMatch(/items\[0\]\.createdTime/);
    expect(errorMessage(await h.post('/extpipes/runs/list', { filter: { externalId: 'xp-run', statuses: ['done'] } }), 400)).toMatch(/filter\.statuses\[0\]/);
    expect(errorMessage(await h.get('/extpipes/runs?externalId=xp-none'), 400)).toMatch(/^externalId: the extraction pipeline/);
    expect((await h.get('/extpipes/runs?externalId=xp-run')).body.items).toHaveLength(4);
  });

  it('are listed newest first and filtered by status, time and message substring ignoring case', async () => {
    await pipeline({ externalId: 'xp-runs' });
    const times = [100, 300, 200, 400];
    const statuses = ['success', 'failure', 'seen', 'failure'] as const;
    const messages = ['All good', 'Disk FULL', undefined, 'Ærlig talt full'];
    await h.post('/extpipes/runs', { items: times.map((createdTime, i) => ({ externalId: 'xp-runs', status: statuses[i], createdTime, message: messages[i] })) });
    const listed = (await h.get('/extpipes/runs?externalId=xp-runs')).body.items;
    expect(listed.map((r: { createdTime: number }) => r.createdTime)).toEqual([400, 300, 200, 100]);
    expect(listed[3]).toEqual({ id: expect.any(Number), status: 'success', message: 'All good', createdTime: 100 });
    const filtered = async (filter: Record<string, unknown>, limit?: number) =>
      (await h.post('/extpipes/runs/list', { filter: { externalId: 'xp-runs', ...filter }, limit })).body.items.map((r: { createdTime: number }) => r.createdTime);
    expect(await filtered({ statuses: ['failure'] })).toEqual([400, 300]);
    expect(await filtered({ statuses: ['failure'] }, 1)).toEqual([400]);
    expect(await filtered({ createdTime: { min: 150, max: 350 } })).toEqual([300, 200]);
    expect(await filtered({ message: { substring: 'full' } })).toEqual([400, 300]);
    expect(await filtered({ message: { substring: 'ÆRLIG' } })).toEqual([400]);
    expect(await filtered({ message: { substring: '%' } })).toEqual([]);
    expect(await filtered({ message: {} })).toEqual([400, 300, 200, 100]);
    const page = await h.post('/extpipes/runs/list', { filter: { externalId: 'xp-runs' }, limit: 3 });
    const rest = await h.post('/extpipes/runs/list', { filter: { externalId: 'xp-runs' }, limit: 3, cursor: page.body.nextCursor });
    expect(rest.body.items.map((r: { createdTime: number }) => r.createdTime)).toEqual([100]);
  });
});
