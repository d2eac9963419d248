/**
 * Triggers: a schedule trigger fires at the times of its cron expression in its time zone, on a clock moved
 * by hand, and its history names each execution it started; pause and resume; a data modeling trigger
 * passes the instances that changed on to an execution, in batches; bad rules are refused, naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { ManualClock } from '../support/manual-clock.js';
import { dueJobsDone, nonce, ok } from '../support/workflows.js';

// 2026-03-02 00:00 UTC, a Monday.
const clock = new ManualClock(Date.UTC(2026, 2, 2));
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
  ok(
    await h.post('/workflows/versions', {
      items: [{ workflowExternalId: 'wf-t', version: '1', workflowDefinition: { tasks: [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } }] } }],
    }),
  );
});
afterAll(() => h.close());

/** Moves the clock, lets the due work run, and takes a token that is valid at the new time (a token lasts an hour). */
async function advanceTo(time: number) {
  clock.set(time);
  await dueJobsDone(h);
  const res = await h.strata.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: h.strata.idp.devClient.clientId, client_secret: h.strata.idp.devClient.secret }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const token = res.json().access_token as string;
  const request = h.request;
  h = { ...h, request: (method, path, body, headers = {}) => request(method, path, body, { authorization: `Bearer ${token}`, ...headers }) };
  h = { ...h, post: (path, body) => h.request('POST', path, body ?? {}), get: (path) => h.request('GET', path) };
}

const schedule = async (externalId: string, triggerRule: unknown, extra: Record<string, unknown> = {}) =>
  h.post('/workflows/triggers', {
    items: [{ externalId, triggerRule, workflowExternalId: 'wf-t', workflowVersion: '1', authentication: { nonce: await nonce(h) }, ...extra }],
  });

describe('schedule triggers', () => {
  it('fire at the cron times in their time zone, with their input and metadata, and keep a history', async () => {
    const created = ok(await schedule('daily-oslo', { triggerType: 'schedule', cronExpression: '0 6 * * *', timezone: 'Europe/Oslo' }, { input: { a: 1 }, metadata: { origin: 'cron' } }));
    expect(created.items[0]).toMatchObject({ externalId: 'daily-oslo', isPaused: false, workflowExternalId: 'wf-t', workflowVersion: '1', input: { a: 1 } });
    expect(created.items[0]).not.toHaveProperty('authentication');

    // 06:00 in Oslo is 05:00 UTC in March (before summer time).
    await advanceTo(Date.UTC(2026, 2, 2, 4, 59));
    expect(ok(await h.get('/workflows/triggers/daily-oslo/history')).items).toEqual([]);
    await advanceTo(Date.UTC(2026, 2, 2, 5, 0, 1));
    const history = ok(await h.get('/workflows/triggers/daily-oslo/history')).items;
    expect(history).toEqual([
      expect.objectContaining({ fireTime: Date.UTC(2026, 2, 2, 5), externalId: 'daily-oslo', workflowExternalId: 'wf-t', workflowVersion: '1', status: 'success' }),
    ]);
    const execution = ok(await h.get(`/workflows/executions/${history[0].workflowExecutionId}`));
    expect(execution).toMatchObject({ status: 'COMPLETED', input: { a: 1, version: '1' }, metadata: { origin: 'cron' } });

    await advanceTo(Date.UTC(2026, 2, 3, 5, 0, 1));
    expect(ok(await h.get('/workflows/triggers/daily-oslo/history')).items.map((r: any) => r.fireTime)).toEqual([Date.UTC(2026, 2, 3, 5), Date.UTC(2026, 2, 2, 5)]);
  });

  it('do not fire while paused, and fire again once resumed', async () => {
    ok(await schedule('hourly', { triggerType: 'schedule', cronExpression: '0 * * * *' }));
    ok(await h.post('/workflows/triggers/hourly/pause'));
    expect(ok(await h.get('/workflows/triggers')).items.find((t: any) => t.externalId === 'hourly').isPaused).toBe(true);
    await advanceTo(clock.now() + 3 * 3600_000);
    expect(ok(await h.get('/workflows/triggers/hourly/history')).items).toEqual([]);
    ok(await h.post('/workflows/triggers/hourly/resume'));
    await advanceTo(clock.now() + 3600_000);
    expect(ok(await h.get('/workflows/triggers/hourly/history')).items).toHaveLength(1);
  });

  it('are listed, and deleted with their history', async () => {
    ok(await schedule('to-delete', { triggerType: 'schedule', cronExpression: '*/5 * * * *' }));
    const listed = ok(await h.get('/workflows/triggers?limit=1'));
    expect(listed.items).toHaveLength(1);
    expect(listed.nextCursor).toEqual(expect.any(String));
    ok(await h.post('/workflows/triggers/delete', { items: [{ externalId: 'to-delete' }] }));
    expect(errorMessage(await h.get('/workflows/triggers/to-delete/history'), 404)).toMatch(/to-delete/);
    expect(errorMessage(await h.post('/workflows/triggers/to-delete/pause'), 404)).toMatch(/to-delete/);
    const before = clock.now();
    await advanceTo(before + 600_000);
    expect(ok(await h.get('/workflows/triggers')).items.map((t: any) => t.externalId)).not.toContain('to-delete');
  });

  it.each([
    ['a cron expression that does not parse', { triggerType: 'schedule', cronExpression: 'every day' }, /triggerRule\.cronExpression: "every day" is not a cron expression/],
    ['a time zone that is not one', { triggerType: 'schedule', cronExpression: '0 * * * *', timezone: 'Mars/Olympus' }, /triggerRule\.timezone: "Mars\/Olympus"/],
    ['an unknown trigger type', { triggerType: 'often', cronExpression: '0 * * * *' }, /triggerRule/],
  ])('refuse %s, and nothing is created', async (_, rule, message) => {
    expect(errorMessage(await schedule('bad', rule), 400)).toMatch(message);
    expect((await h.get('/workflows/triggers/bad/history')).status).toBe(404);
  });

  it('keep a failed firing in the history when their version no longer exists', async () => {
    ok(
      await h.post('/workflows/versions', {
        items: [{ workflowExternalId: 'wf-gone', version: '1', workflowDefinition: { tasks: [] } }],
      }),
    );
    ok(
      await h.post('/workflows/triggers', {
        items: [{ externalId: 'orphan', triggerRule: { triggerType: 'schedule', cronExpression: '0 * * * *' }, workflowExternalId: 'wf-gone', workflowVersion: '1', authentication: { nonce: await nonce(h) } }],
      }),
    );
    ok(await h.post('/workflows/versions/delete', { items: [{ workflowExternalId: 'wf-gone', version: '1' }] }));
    await advanceTo(clock.now() + 3600_000);
    const [run] = ok(await h.get('/workflows/triggers/orphan/history')).items;
    expect(run).toMatchObject({ status: 'failed', workflowExecutionId: null, reasonForFailure: 'there is no version "1" of the workflow "wf-gone"' });
  });

  it('refuse an unknown workflow version', async () => {
    const res = await h.post('/workflows/triggers', {
      items: [{ externalId: 'bad', triggerRule: { triggerType: 'schedule', cronExpression: '0 * * * *' }, workflowExternalId: 'wf-t', workflowVersion: '9', authentication: { nonce: await nonce(h) } }],
    });
    expect(errorMessage(res, 400)).toMatch(/no version "9" of the workflow "wf-t"/);
  });
});

describe('data modeling triggers', () => {
  const query = (batchSize: number) => ({
    with: { changed: { nodes: { filter: { equals: { property: ['node', 'space'], value: 'wf-space' } } }, limit: batchSize } },
    select: { changed: {} },
  });

  it('pass the instances that changed on, a full batch at once and a partial one after batchTimeout', async () => {
    ok(await h.post('/models/spaces', { items: [{ space: 'wf-space' }] }));
    const rule = { triggerType: 'dataModeling', dataModelingQuery: query(2), batchSize: 2, batchTimeout: 60 };
    ok(await schedule('on-nodes', rule, { input: { from: 'trigger' } }));
    ok(await h.post('/models/instances', { items: ['n1', 'n2', 'n3'].map((externalId) => ({ instanceType: 'node', space: 'wf-space', externalId })) }));
    await advanceTo(clock.now() + 10_000);
    let history = ok(await h.get('/workflows/triggers/on-nodes/history')).items;
    expect(history).toHaveLength(1);
    const first = ok(await h.get(`/workflows/executions/${history[0].workflowExecutionId}`));
    expect(first.input).toMatchObject({ from: 'trigger', version: '1' });
    expect(first.input.items.map((i: any) => i.externalId)).toEqual(['n1', 'n2']);

    await advanceTo(clock.now() + 70_000);
    history = ok(await h.get('/workflows/triggers/on-nodes/history')).items;
    expect(history).toHaveLength(2);
    const second = ok(await h.get(`/workflows/executions/${history[0].workflowExecutionId}`));
    expect(second.input.items.map((i: any) => i.externalId)).toEqual(['n3']);

    await advanceTo(clock.now() + 120_000);
    expect(ok(await h.get('/workflows/triggers/on-nodes/history')).items).toHaveLength(2);
    ok(await h.post('/models/instances', { items: ['n4', 'n5'].map((externalId) => ({ instanceType: 'node', space: 'wf-space', externalId })) }));
    await advanceTo(clock.now() + 10_000);
    history = ok(await h.get('/workflows/triggers/on-nodes/history')).items;
    expect(history).toHaveLength(3);
    const third = ok(await h.get(`/workflows/executions/${history[0].workflowExecutionId}`));
    expect(third.input.items.map((i: any) => i.externalId).sort()).toEqual(['n4', 'n5']);
  });

  it('refuse a query whose limit is not the batch size', async () => {
    const res = await schedule('bad-dm', { triggerType: 'dataModeling', dataModelingQuery: query(5), batchSize: 2, batchTimeout: 60 });
    expect(errorMessage(res, 400)).toMatch(/with\.changed\.limit: must be the trigger's batchSize \(2\)/);
  });
});
