/**
 * Workflows and versions (upsert, list, read, delete) and the rules of a version's task graph; executions
 * of `cdf` tasks run end to end on the job runner, with dependencies, references, retries, onFailure,
 * timeouts, cancel and retry, on both backends and on a clock moved by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { ManualClock } from '../support/manual-clock.js';
import { simulatorChain } from '../support/simulators.js';
import { dueJobsDone, nonce, ok } from '../support/workflows.js';

const clock = new ManualClock(Date.UTC(2026, 0, 1));
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
});
afterAll(() => h.close());

const cdfTask = (externalId: string, request: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  externalId,
  type: 'cdf',
  parameters: { cdfRequest: request },
  ...extra,
});

async function version(workflowExternalId: string, tasks: unknown[], v = '1') {
  return ok(await h.post('/workflows/versions', { items: [{ workflowExternalId, version: v, workflowDefinition: { tasks } }] }));
}

async function run(workflowExternalId: string, input?: unknown, v = '1') {
  const started = ok(await h.post(`/workflows/${workflowExternalId}/versions/${v}/run`, { authentication: { nonce: await nonce(h) }, ...(input ? { input } : {}) }), 202);
  await dueJobsDone(h);
  return started.id as string;
}

const execution = async (id: string) => ok(await h.get(`/workflows/executions/${id}`));
const task = (e: { executedTasks: Array<{ externalId: string }> }, externalId: string) => e.executedTasks.find((t) => t.externalId === externalId) as any;

describe('workflows and versions', () => {
  it('upserts, lists, reads and deletes workflows', async () => {
    const created = ok(await h.post('/workflows', { items: [{ externalId: 'wf-a', description: 'first', maxConcurrentExecutions: 5 }] }));
    expect(created.items[0]).toMatchObject({ externalId: 'wf-a', description: 'first', maxConcurrentExecutions: 5, createdTime: clock.now() });
    clock.advance(1000);
    const updated = ok(await h.post('/workflows', { items: [{ externalId: 'wf-a', description: 'second' }] }));
    expect(updated.items[0]).toMatchObject({ description: 'second', createdTime: clock.now() - 1000, lastUpdatedTime: clock.now() });
    ok(await h.post('/workflows', { items: [{ externalId: 'wf-b' }] }));
    const page = ok(await h.get('/workflows?limit=1'));
    expect(page.items.map((w: any) => w.externalId)).toEqual(['wf-a']);
    const next = ok(await h.get(`/workflows?limit=1&cursor=${page.nextCursor}`));
    expect(next.items.map((w: any) => w.externalId)).toEqual(['wf-b']);
    expect(ok(await h.get('/workflows/wf-a')).description).toBe('second');
    expect(errorMessage(await h.get('/workflows/none'), 404)).toMatch(/"none"/);

    ok(await h.post('/workflows/delete', { items: [{ externalId: 'wf-b' }, { externalId: 'absent' }] }));
    expect((await h.get('/workflows/wf-b')).status).toBe(404);
    const refused = await h.request('POST', '/workflows/delete?ignoreUnknownIds=false', { items: [{ externalId: 'wf-a' }, { externalId: 'absent' }] });
    errorMessage(refused, 404);
    expect(refused.body.error.missing).toEqual([{ externalId: 'absent' }]);
    expect(ok(await h.get('/workflows/wf-a')).externalId).toBe('wf-a');

    const unknownDataSet = await h.post('/workflows', { items: [{ externalId: 'wf-ds', dataSetId: 123456789 }] });
    expect(errorMessage(unknownDataSet, 400)).toBe('items[0].dataSetId: no data set with id 123456789');
    expect((await h.get('/workflows/wf-ds')).status).toBe(404);
    const [ds] = ok(await h.post('/datasets', { items: [{ externalId: 'wf-ds' }] })).items;
    expect(ok(await h.post('/workflows', { items: [{ externalId: 'wf-ds', dataSetId: ds.id }] })).items[0].dataSetId).toBe(ds.id);
  });

  it('upserts versions with the defaults filled in, lists them by workflow, deletes them', async () => {
    const body = await version('wf-v', [cdfTask('a', { resourcePath: '/events', method: 'GET' })]);
    const v = body.items[0];
    expect(v).toMatchObject({ workflowExternalId: 'wf-v', version: '1' });
    expect(v.workflowDefinition.tasks[0]).toMatchObject({ retries: 3, timeout: 3600, onFailure: 'abortWorkflow', dependsOn: [] });
    expect(v.workflowDefinition.hash).toEqual(expect.any(String));
    expect(ok(await h.get('/workflows/wf-v')).externalId).toBe('wf-v');
    await version('wf-v', [cdfTask('a', { resourcePath: '/events', method: 'GET' })], '2');
    await version('wf-other', [cdfTask('a', { resourcePath: '/events', method: 'GET' })]);
    const listed = ok(await h.post('/workflows/versions/list', { filter: { workflowFilters: [{ externalId: 'wf-v' }] } }));
    expect(listed.items.map((x: any) => x.version).sort()).toEqual(['1', '2']);
    const one = ok(await h.post('/workflows/versions/list', { filter: { workflowFilters: [{ externalId: 'wf-v', version: '2' }] } }));
    expect(one.items.map((x: any) => x.version)).toEqual(['2']);
    expect(ok(await h.get('/workflows/wf-v/versions/2')).version).toBe('2');
    ok(await h.post('/workflows/versions/delete', { items: [{ workflowExternalId: 'wf-v', version: '2' }] }));
    expect(errorMessage(await h.get('/workflows/wf-v/versions/2'), 404)).toMatch(/version "2"/);
  });

  it.each([
    ['an unknown dependency', [cdfTask('a', { resourcePath: '/events', method: 'GET' }, { dependsOn: [{ externalId: 'nope' }] })], /task "a".*dependsOn names "nope"/],
    [
      'a cycle',
      [
        cdfTask('a', { resourcePath: '/events', method: 'GET' }, { dependsOn: [{ externalId: 'c' }] }),
        cdfTask('b', { resourcePath: '/events', method: 'GET' }, { dependsOn: [{ externalId: 'a' }] }),
        cdfTask('c', { resourcePath: '/events', method: 'GET' }, { dependsOn: [{ externalId: 'b' }] }),
      ],
      /cycle: "a" -> "c" -> "b" -> "a"/,
    ],
    ['duplicate task ids', [cdfTask('a', { resourcePath: '/events', method: 'GET' }), cdfTask('a', { resourcePath: '/events', method: 'GET' })], /tasks\[1\] \(task "a"\).*unique/],
    ['a cdf task without a method', [cdfTask('a', { resourcePath: '/events' })], /task "a".*cdfRequest\.method/],
    ['a function task without a function', [{ externalId: 'f', type: 'function', parameters: {} }], /task "f".*parameters\.function/],
    ['a reserved id', [cdfTask('workflow', { resourcePath: '/events', method: 'GET' })], /reserved/],
    ['a dynamic task without a reference', [{ externalId: 'd', type: 'dynamic', parameters: { dynamic: { tasks: [] } } }], /task "d".*reference/],
  ])('refuses a version with %s, naming the task, and stores nothing', async (_, tasks, message) => {
    const res = await h.post('/workflows/versions', { items: [{ workflowExternalId: 'wf-bad', version: '1', workflowDefinition: { tasks } }] });
    expect(errorMessage(res, 400)).toMatch(message);
    expect((await h.get('/workflows/wf-bad/versions/1')).status).toBe(404);
  });
});

describe('executions', () => {
  it('runs cdf tasks in dependency order with references resolved, and answers their inputs and outputs', async () => {
    ok(await h.post('/events', { items: [{ externalId: 'ev-1', description: 'from the workflow' }] }), 201);
    await version('wf-run', [
      cdfTask('read', { resourcePath: '/events/byids', method: 'POST', body: { items: [{ externalId: '${workflow.input.event}' }] } }),
      cdfTask(
        'write',
        { resourcePath: '/events', method: 'POST', body: { items: [{ externalId: 'ev-2', description: 'copy of ${read.output.response.items.0.description}' }] } },
        { dependsOn: [{ externalId: 'read' }] },
      ),
    ]);
    const id = await run('wf-run', { event: 'ev-1' });
    const e = await execution(id);
    expect(e).toMatchObject({ id, workflowExternalId: 'wf-run', version: '1', status: 'COMPLETED', input: { event: 'ev-1' } });
    expect(task(e, 'read')).toMatchObject({ status: 'COMPLETED', taskType: 'cdf', output: { statusCode: 200 } });
    expect(task(e, 'read').input.cdfRequest.body).toEqual({ items: [{ externalId: 'ev-1' }] });
    expect(task(e, 'write').output.statusCode).toBe(201);
    expect(task(e, 'write').startTime).toBeGreaterThanOrEqual(task(e, 'read').endTime);
    const ev2 = ok(await h.post('/events/byids', { items: [{ externalId: 'ev-2' }] }));
    expect(ev2.items[0].description).toBe('copy of from the workflow');

    const listed = ok(await h.post('/workflows/executions/list', { filter: { workflowFilters: [{ externalId: 'wf-run' }], status: ['COMPLETED'] } }));
    expect(listed.items.map((x: any) => x.id)).toEqual([id]);
    expect(listed.items[0]).not.toHaveProperty('executedTasks');
    expect(ok(await h.post('/workflows/executions/list', { filter: { workflowFilters: [{ externalId: 'wf-run', version: '2' }] } })).items).toEqual([]);
    expect(ok(await h.post('/workflows/executions/list', { filter: { workflowFilters: [{ externalId: 'wf-run' }], status: ['FAILED'] } })).items).toEqual([]);
  });

  it('runs independent tasks side by side and a task after all of its dependencies', async () => {
    const get = (externalId: string, dependsOn: string[] = []) => cdfTask(externalId, { resourcePath: '/events', method: 'GET' }, { dependsOn: dependsOn.map((d) => ({ externalId: d })) });
    await version('wf-diamond', [get('start'), get('left', ['start']), get('right', ['start']), get('join', ['left', 'right'])]);
    const e = await execution(await run('wf-diamond'));
    expect(e.status).toBe('COMPLETED');
    expect(e.executedTasks.map((t: any) => t.externalId)).toEqual(['start', 'left', 'right', 'join']);
    expect(task(e, 'join').startTime).toBeGreaterThanOrEqual(Math.max(task(e, 'left').endTime, task(e, 'right').endTime));
  });

  it('lists executions newest first, by pages, within created times', async () => {
    await version('wf-many', [cdfTask('a', { resourcePath: '/events', method: 'GET' })]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      ids.push(await run('wf-many'));
    }
    const filter = { workflowFilters: [{ externalId: 'wf-many' }] };
    const first = ok(await h.post('/workflows/executions/list', { filter, limit: 2 }));
    expect(first.items.map((x: any) => x.id)).toEqual([ids[2], ids[1]]);
    const second = ok(await h.post('/workflows/executions/list', { filter, limit: 2, cursor: first.nextCursor }));
    expect(second.items.map((x: any) => x.id)).toEqual([ids[0]]);
    expect(second).not.toHaveProperty('nextCursor');
    const created = (await execution(ids[1])).createdTime;
    const within = ok(await h.post('/workflows/executions/list', { filter: { ...filter, createdTimeStart: created, createdTimeEnd: created } }));
    expect(within.items.map((x: any) => x.id)).toEqual([ids[1]]);
    expect(errorMessage(await h.post('/workflows/executions/list', { filter: { workflowFilters: [{ externalId: 'other' }] }, cursor: first.nextCursor }), 400)).toMatch(/cursor/);
  });

  it('retries a failing task, then fails the execution (abortWorkflow) or goes on (skipTask)', async () => {
    await version('wf-fail', [
      cdfTask('bad', { resourcePath: '/events/byids', method: 'POST', body: { items: [{ externalId: 'missing-event' }] } }, { retries: 2 }),
      cdfTask('after', { resourcePath: '/events', method: 'GET' }, { dependsOn: [{ externalId: 'bad' }] }),
    ]);
    const id = await run('wf-fail');
    // Attempts are a second apart, then two.
    expect((await execution(id)).status).toBe('RUNNING');
    clock.advance(1000);
    await dueJobsDone(h);
    expect(task(await execution(id), 'bad').status).toBe('SCHEDULED');
    clock.advance(2000);
    await dueJobsDone(h);
    const failed = await execution(id);
    expect(failed.status).toBe('FAILED');
    expect(failed.reasonForIncompletion).toMatch(/Task "bad" failed: POST \/events\/byids answered 400/);
    expect(task(failed, 'bad')).toMatchObject({ status: 'FAILED', output: { statusCode: 400 } });
    expect(task(failed, 'after')).toBeUndefined();
    const attempts = await h.strata.services.db.get<{ n: number }>(
      (await import('../../src/storage/sql.js')).sql`SELECT count(*) AS n FROM jobs WHERE kind = 'workflows.task' AND dedupe_key LIKE ${`${task(failed, 'bad').id}:%`}`,
    );
    expect(Number(attempts!.n)).toBe(3);

    await version('wf-skip', [
      cdfTask('bad', { resourcePath: '/events/byids', method: 'POST', body: { items: [{ externalId: 'missing-event' }] } }, { retries: 0, onFailure: 'skipTask' }),
      cdfTask('after', { resourcePath: '/events', method: 'GET' }, { dependsOn: [{ externalId: 'bad' }] }),
    ]);
    const skipped = await execution(await run('wf-skip'));
    expect(skipped.status).toBe('COMPLETED');
    expect(task(skipped, 'bad').status).toBe('COMPLETED_WITH_ERRORS');
    expect(task(skipped, 'after').status).toBe('COMPLETED');
  });

  it('fails a task whose reference names nothing, saying which', async () => {
    await version('wf-ref', [cdfTask('a', { resourcePath: '/events', method: 'GET', queryParameters: { limit: '${workflow.input.missing}' } })]);
    const e = await execution(await run('wf-ref', { other: 1 }));
    expect(e.status).toBe('FAILED');
    expect(task(e, 'a').reasonForIncompletion).toMatch(/\$\{workflow\.input\.missing\}.*"missing"/);
  });

  it('refuses a run of an unknown version and a nonce that is not one', async () => {
    expect(errorMessage(await h.post('/workflows/nothing/versions/1/run', { authentication: { nonce: await nonce(h) } }), 400)).toMatch(/no version "1" of the workflow "nothing"/);
    await version('wf-nonce', [cdfTask('a', { resourcePath: '/events', method: 'GET' })]);
    expect(errorMessage(await h.post('/workflows/wf-nonce/versions/1/run', { authentication: { nonce: 'not-a-nonce' } }), 400)).toMatch(/authentication\.nonce/);
    expect(errorMessage(await h.post('/workflows/executions/list', { filter: { status: ['DONE'] } }), 400)).toMatch(/status/);
    const large = { blob: 'x'.repeat(100 * 1024) };
    expect(errorMessage(await h.post('/workflows/wf-nonce/versions/1/run', { authentication: { nonce: await nonce(h) }, input: large }), 400)).toMatch(/^input: .*larger than 102400 bytes/);
  });

  it('fails a cdf task whose resourcePath leads out of the project', async () => {
    await version('wf-out', [
      { externalId: 'up', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/../other/events', method: 'GET' } }, onFailure: 'skipTask' },
      { externalId: 'away', type: 'cdf', parameters: { cdfRequest: { resourcePath: 'https://example.com/api/v1/projects/other/events', method: 'GET' } }, onFailure: 'skipTask' },
    ]);
    const e = await execution(await run('wf-out'));
    expect(task(e, 'up').reasonForIncompletion).toMatch(/is not a path of the project "dev"/);
    expect(task(e, 'away').reasonForIncompletion).toMatch(/is not a path of the project "dev"/);
  });

  it('fails a cdf task whose request takes longer than its requestTimeoutInMillis, and refuses a timeout under 100 ms', async () => {
    ok(await h.post('/timeseries/subscriptions', { items: [{ externalId: 'wf-slow', partitionCount: 1, filter: { equals: { property: ['name'], value: 'none' } } }] }), 201);
    // A listing with nothing to give waits for its poll timeout on the clock, which this test does not move.
    const slow = { resourcePath: '/timeseries/subscriptions/data/list', method: 'POST', body: { externalId: 'wf-slow', partitions: [{ index: 0 }], pollTimeoutSeconds: 5 } };
    await version('wf-slow', [cdfTask('wait', { ...slow, requestTimeoutInMillis: 200 }, { retries: 0, onFailure: 'skipTask' })]);
    const e = await execution(await run('wf-slow'));
    expect(task(e, 'wait').reasonForIncompletion).toBe('POST /timeseries/subscriptions/data/list did not answer within requestTimeoutInMillis (200 ms)');
    const refused = await h.post('/workflows/versions', { items: [{ workflowExternalId: 'wf-slow', version: '2', workflowDefinition: { tasks: [cdfTask('t', { ...slow, requestTimeoutInMillis: 99 })] } }] });
    expect(errorMessage(refused, 400)).toMatch(/requestTimeoutInMillis must be a number of at least 100/);
  });

  it('fails function, transformation and simulation tasks that name nothing with the answer of the operation they call', async () => {
    await version('wf-elsewhere', [
      { externalId: 'fn', type: 'function', parameters: { function: { externalId: 'my-function' } }, retries: 0, onFailure: 'skipTask' },
      { externalId: 'tr', type: 'transformation', parameters: { transformation: { externalId: 'my-transformation' } }, retries: 0, onFailure: 'skipTask' },
      { externalId: 'sim', type: 'simulation', parameters: { simulation: { routineExternalId: 'routine' } }, retries: 0, onFailure: 'skipTask' },
    ]);
    const e = await execution(await run('wf-elsewhere'));
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'fn')).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', reasonForIncompletion: 'POST /functions/byids answered 400: An item was not found: {"externalId":"my-function"}' });
    expect(task(e, 'tr')).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', reasonForIncompletion: 'POST /transformations/byids answered 400: An item was not found: {"externalId":"my-transformation"}' });
    expect(task(e, 'sim').reasonForIncompletion).toMatch(/^POST \/simulators\/run answered 400: .*routine/);
  });
});

describe('simulation tasks', () => {
  it('run the routine, queued until a connector takes it, and end as the run ends', async () => {
    const dataSetId = ok(await h.post('/datasets', { items: [{ externalId: 'wf-sim-ds' }] })).items[0].id;
    const fileId = ok(await h.post('/files', { name: 'model.dwxmz', dataSetId }), 201).id;
    await simulatorChain(h, 'wf', { dataSetId, fileId, heartbeat: clock.now() }, { integration: false });
    const inputs = [{ referenceId: 'CWT', value: 12, unit: { name: 'C' } }];
    await version('wf-sim', [{ externalId: 'sim', type: 'simulation', parameters: { simulation: { routineExternalId: 'routine-wf', inputs, runTime: 1234 } }, retries: 0, onFailure: 'skipTask' }]);

    const connector = async (status: 'success' | 'failure', statusMessage: string) => {
      const [claimed] = ok(await h.post('/simulators/runs/claim', { simulatorIntegrationExternalId: 'int-wf' })).items;
      expect(claimed).toMatchObject({ routineExternalId: 'routine-wf', runTime: 1234, status: 'ready' });
      ok(await h.post('/simulators/run/callback', { items: [{ id: claimed.id, status, statusMessage }] }));
      return claimed;
    };
    const done = await run('wf-sim');
    expect(task(await execution(done), 'sim').status).toBe('IN_PROGRESS');
    const taken = await connector('success', 'solved');
    const data = ok(await h.post('/simulators/runs/data/list', { items: [{ runId: taken.id }] })).items[0];
    expect(data.inputs).toEqual([expect.objectContaining({ referenceId: 'CWT', value: 12 })]);
    clock.advance(2000);
    await dueJobsDone(h);
    const e = await execution(done);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'sim')).toMatchObject({ status: 'COMPLETED', output: { runId: taken.id, logId: taken.logId, statusMessage: 'solved' } });

    const failing = await run('wf-sim');
    await connector('failure', 'did not converge');
    clock.advance(2000);
    await dueJobsDone(h);
    expect(task(await execution(failing), 'sim')).toMatchObject({ status: 'COMPLETED_WITH_ERRORS', reasonForIncompletion: expect.stringMatching(/^the simulation run \d+ failed: did not converge$/) });
  });
});
