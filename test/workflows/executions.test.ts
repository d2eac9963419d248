/**
 * How executions run beyond `cdf` tasks, on both backends and a clock moved by hand, against the real
 * functions and transformations: a function task calls the function with a session of its own and follows
 * the call until it ends (the handlers wait on an HTTP server the test answers when it chooses); a task that
 * completes asynchronously waits for `POST /workflows/tasks/{id}/update`; a transformation task runs the
 * transformation and follows its job; timeouts; cancel and retry; dynamic tasks and subworkflows; a second
 * app on the same store resuming an execution.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_JOB } from '../../src/resources/functions/service.js';
import { recordRun, RUN_KIND } from '../../src/resources/transformations/service.js';
import { findProjectAuth } from '../../src/storage/projects.js';
import { canRun, deployed, hasPython } from '../functions/support.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { ManualClock } from '../support/manual-clock.js';
import { openTestStore } from '../support/test-store.js';
import { dueJobsDone, nonce, ok, transformationNonce } from '../support/workflows.js';

const clock = new ManualClock(Date.UTC(2026, 1, 1));
let h: Harness;

// The handlers that are given `gate` wait on this server, which answers only when the test releases them.
const held: ServerResponse[] = [];
let arrived = () => {};
const gate = createServer((_req, res) => {
  held.push(res);
  arrived();
});
const gateUrl = () => `http://127.0.0.1:${(gate.address() as AddressInfo).port}/`;

/** Resolves once `n` calls have reached the gate since the test began. */
let reached = 0;
function atGate(n: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (reached + held.length >= n ? resolve() : (arrived = check));
    check();
  });
}
function release(text = 'released') {
  for (const res of held.splice(0)) {
    reached++;
    res.end(text);
  }
}

/** Echoes its data and, when given a gate, what the gate answered once it lets the call go. */
const ECHO = { 'handler.js': 'exports.handle = async (data) => ({ echo: data, gate: data.gate ? await (await fetch(data.gate)).text() : null });' };
let echo: Record<string, any>;
let thrower: Record<string, any>;

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  // Deployed before any execution runs: waiting for a deployment waits for every queued job, timeouts included.
  echo = await deployed(h, ECHO, { externalId: 'echo', functionPath: 'handler.js' });
  thrower = await deployed(h, { 'handler.js': "exports.handle = () => { throw new Error('no pump here'); };" }, { externalId: 'thrower', functionPath: 'handler.js' });
  await deployed(h, { 'handler.py': 'def handle(data):\n    return {"taskId": data["cogniteOrchestrationTaskId"]}\n' }, { externalId: 'py-async' });
  ok(await h.post('/events', { items: [{ externalId: 'ev-1', description: 'Pump', type: 'alarm', startTime: 1000 }] }), 201);
});
afterAll(async () => {
  release();
  await h.close();
  gate.close();
});

async function version(workflowExternalId: string, tasks: unknown[]) {
  ok(await h.post('/workflows/versions', { items: [{ workflowExternalId, version: '1', workflowDefinition: { tasks } }] }));
}

/** Starts a run and waits for the work due now, function calls left running on the gate. */
async function run(workflowExternalId: string, input?: unknown) {
  const started = ok(await h.post(`/workflows/${workflowExternalId}/versions/1/run`, { authentication: { nonce: await nonce(h) }, ...(input ? { input } : {}) }), 202);
  await dueJobsDone(h, [CALL_JOB]);
  return started.id as string;
}

const execution = async (id: string) => ok(await h.get(`/workflows/executions/${id}`));
const task = (e: { executedTasks: Array<{ externalId: string }> }, externalId: string) => e.executedTasks.find((t) => t.externalId === externalId) as any;
/** Moves the clock on in steps shorter than a job's lease renewal, so that calls held on the gate keep theirs. */
async function advance(ms: number) {
  for (let left = ms; left > 0; left -= 2000) {
    clock.advance(Math.min(2000, left));
    await dueJobsDone(h, [CALL_JOB]);
  }
}
/** Lets the calls on the gate end, and waits for them to be recorded. */
async function releaseCalls() {
  release();
  await dueJobsDone(h);
}
const get = (externalId: string) => ({ externalId, type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } });
const fnTask = (externalId: string, data?: unknown, extra: Record<string, unknown> = {}) => ({
  externalId,
  type: 'function',
  parameters: { function: { externalId: 'echo', ...(data ? { data } : {}) } },
  ...extra,
});

describe('function tasks', () => {
  it.runIf(canRun)('call the function with a session of their own and follow the call until it completes', async () => {
    await version('wf-fn', [fnTask('fn', { x: '${workflow.input.x}', gate: '${workflow.input.gate}' }), { ...get('after'), dependsOn: [{ externalId: 'fn' }] }]);
    const id = await run('wf-fn', { x: 42, gate: gateUrl() });
    await atGate(1);
    const running = task(await execution(id), 'fn');
    expect(running).toMatchObject({ status: 'IN_PROGRESS', output: { functionId: echo.id, callId: expect.any(Number) } });
    const { callId } = running.output;
    expect(ok(await h.get(`/functions/${echo.id}/calls/${callId}`))).toMatchObject({ id: callId, functionId: echo.id, status: 'Running' });
    await advance(4000);
    expect((await execution(id)).status).toBe('RUNNING');

    await releaseCalls();
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'fn')).toMatchObject({ status: 'COMPLETED', output: { functionId: echo.id, callId, response: { echo: { x: 42, gate: gateUrl() }, gate: 'released' } } });
    expect(task(e, 'after').status).toBe('COMPLETED');
  });

  it.runIf(canRun)('fail with how the call ended when the handler throws', async () => {
    await version('wf-throws', [{ externalId: 'fn', type: 'function', parameters: { function: { externalId: 'thrower' } }, retries: 0 }]);
    const id = await run('wf-throws');
    await dueJobsDone(h);
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('FAILED');
    expect(task(e, 'fn')).toMatchObject({ status: 'FAILED', output: { functionId: thrower.id }, reasonForIncompletion: expect.stringMatching(/^the function call ended Failed: .*no pump here/) });
  });

  it('fail, without a call, when their data resolves to something other than an object', async () => {
    await version('wf-data', [fnTask('fn', '${workflow.input.data}', { retries: 2 })]);
    const callsBefore = ok(await h.get(`/functions/${echo.id}/calls?limit=1000`)).items.length;
    for (const data of [[1, 2], 'text', 7]) {
      const e = await execution(await run('wf-data', { data }));
      expect(e.status).toBe('FAILED');
      expect(task(e, 'fn').reasonForIncompletion).toBe(`parameters.function.data is ${JSON.stringify(data)}, not an object: a function is called with an object`);
    }
    expect(ok(await h.get(`/functions/${echo.id}/calls?limit=1000`)).items).toHaveLength(callsBefore);
  });

  it.runIf(hasPython)('with isAsyncComplete, give the call the task id and wait for POST /workflows/tasks/{id}/update, which merges its output', async () => {
    await version('wf-async', [
      { externalId: 'fn', type: 'function', parameters: { function: { externalId: 'py-async' }, isAsyncComplete: true } },
      { ...get('after'), dependsOn: [{ externalId: 'fn' }] },
    ]);
    const id = await run('wf-async');
    await dueJobsDone(h);
    const taskId = task(await execution(id), 'fn').id;
    await advance(2000);
    const waiting = task(await execution(id), 'fn');
    expect(waiting).toMatchObject({ status: 'IN_PROGRESS', output: { response: { taskId } } });

    expect(errorMessage(await h.post('/workflows/tasks/00000000-0000-4000-8000-000000000000/update', { status: 'COMPLETED' }), 404)).toMatch(/no workflow task/);
    const updated = ok(await h.post(`/workflows/tasks/${taskId}/update`, { status: 'COMPLETED', output: { extra: true } }));
    expect(updated).toMatchObject({ id: taskId, status: 'COMPLETED', output: { callId: waiting.output.callId, response: { taskId }, extra: true } });
    await dueJobsDone(h);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(errorMessage(await h.post(`/workflows/tasks/${task(e, 'after').id}/update`, { status: 'COMPLETED' }), 400)).toMatch(/not completed asynchronously/);
    expect(errorMessage(await h.post(`/workflows/tasks/${taskId}/update`, { status: 'FAILED' }), 400)).toMatch(/COMPLETED: only a task IN_PROGRESS/);
  });

  it.runIf(canRun)('time out: under abortWorkflow the task is TIMED_OUT and the execution FAILED', async () => {
    await version('wf-timeout', [fnTask('fn', { gate: gateUrl() }, { timeout: 100 })]);
    const before = reached;
    const id = await run('wf-timeout');
    await atGate(before + 1);
    await advance(100_000);
    const e = await execution(id);
    expect(e.status).toBe('FAILED');
    expect(task(e, 'fn')).toMatchObject({ status: 'TIMED_OUT', reasonForIncompletion: expect.stringMatching(/timeout of 100 seconds/) });
    expect(e.reasonForIncompletion).toMatch(/Task "fn" timed out/);
    await releaseCalls();
  });
});

describe('transformation tasks', () => {
  async function transformation(externalId: string, query: string, conflictMode = 'upsert') {
    const item = { externalId, name: externalId, query, destination: { type: 'assets' }, conflictMode, ignoreNullFields: true, sourceNonce: await transformationNonce(h), destinationNonce: await transformationNonce(h) };
    ok(await h.post('/transformations', { items: [item] }));
  }

  it('run the transformation with a session of their own and follow its job until it completes or fails', async () => {
    await transformation('tr-assets', "select concat('asset-', externalId) as externalId, description as name from _cdf.events where type = 'alarm'");
    await version('wf-tr', [
      { externalId: 'tr', type: 'transformation', parameters: { transformation: { externalId: 'tr-assets' } }, retries: 0 },
      { ...get('after'), dependsOn: [{ externalId: 'tr' }] },
    ]);
    const id = await run('wf-tr');
    const { jobId } = task(await execution(id), 'tr').output;
    const [job] = ok(await h.post('/transformations/jobs/byids', { items: [{ id: jobId }] })).items;
    expect(job).toMatchObject({ transformationExternalId: 'tr-assets', status: 'Completed' });
    expect(task(await execution(id), 'tr').status).toBe('IN_PROGRESS');
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'tr')).toMatchObject({ status: 'COMPLETED', output: { jobId } });
    expect(task(e, 'after').status).toBe('COMPLETED');
    expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'asset-ev-1' }] })).items[0].name).toBe('Pump');

    await transformation('tr-abort', "select 'asset-ev-1' as externalId, 'again' as name", 'abort');
    await version('wf-tr-abort', [{ externalId: 'tr', type: 'transformation', parameters: { transformation: { externalId: 'tr-abort' } }, retries: 0 }]);
    const failing = await run('wf-tr-abort');
    await advance(2000);
    const failed = await execution(failing);
    expect(failed.status).toBe('FAILED');
    expect(task(failed, 'tr').reasonForIncompletion).toMatch(/^the transformation job failed: .*409/);
  });

  it('with useTransformationCredentials, run on the sessions kept on the transformation rather than one of their own', async () => {
    ok(await h.post('/transformations', { items: [{ externalId: 'tr-bare', name: 'Bare', query: "select 'asset-bare' as externalId, 'Bare' as name", destination: { type: 'assets' }, ignoreNullFields: true }] }));
    const tr = (useTransformationCredentials: boolean) => ({ externalId: 'tr', type: 'transformation', parameters: { transformation: { externalId: 'tr-bare', useTransformationCredentials } }, retries: 0 });
    await version('wf-tr-own', [tr(true)]);
    const own = await execution(await run('wf-tr-own'));
    expect(task(own, 'tr').reasonForIncompletion).toMatch(/^POST \/transformations\/run answered 400: .*has no source credentials/);
    await version('wf-tr-session', [tr(false)]);
    const id = await run('wf-tr-session');
    await advance(2000);
    expect(task(await execution(id), 'tr').status).toBe('COMPLETED');
    expect(ok(await h.post('/assets/byids', { items: [{ externalId: 'asset-bare' }] })).items[0].name).toBe('Bare');
  });

  describe('when the transformation is already running', () => {
    // A run queued for later stands for one under way: the job runner leaves it until the clock reaches it.
    let held: number;
    const LATER = 600_000;
    beforeAll(async () => {
      await transformation('tr-busy', "select 'asset-busy' as externalId, 'Busy' as name");
      const [tf] = ok(await h.post('/transformations/byids', { items: [{ externalId: 'tr-busy' }] })).items;
      const { db, jobs, now } = h.strata.services;
      const project = (await findProjectAuth(db, 'dev'))!;
      const runner = await jobs!.start(db, { projectId: project.id, kind: RUN_KIND, payload: {}, runAfter: now() + LATER });
      held = (await recordRun(db, { id: project.id, name: 'dev' }, tf, runner, undefined, now())).id as number;
    });
    const busy = (concurrencyPolicy: string) => [{ externalId: 'tr', type: 'transformation', parameters: { transformation: { externalId: 'tr-busy', concurrencyPolicy } }, retries: 0 }];
    const jobsOfBusy = async () => ok(await h.get('/transformations/jobs?transformationExternalId=tr-busy')).items.map((j: any) => j.id);

    it('fail under concurrencyPolicy fail, follow the job under way under waitForCurrent, run again after it under restartAfterCurrent', async () => {
      await version('wf-busy-fail', busy('fail'));
      const failed = await execution(await run('wf-busy-fail'));
      expect(task(failed, 'tr').reasonForIncompletion).toBe(`the transformation "tr-busy" is already running (job ${held}), and the task's concurrencyPolicy is fail`);

      await version('wf-busy-wait', busy('waitForCurrent'));
      const waiting = await run('wf-busy-wait');
      await version('wf-busy-restart', busy('restartAfterCurrent'));
      const restarting = await run('wf-busy-restart');
      expect(task(await execution(waiting), 'tr')).toMatchObject({ status: 'IN_PROGRESS', output: { jobId: held } });
      await advance(4000);
      expect(task(await execution(restarting), 'tr')).toMatchObject({ status: 'IN_PROGRESS', output: {} });
      expect(await jobsOfBusy()).toEqual([held]);

      clock.advance(LATER);
      await dueJobsDone(h);
      await advance(4000);
      const waited = await execution(waiting);
      expect(waited.status).toBe('COMPLETED');
      expect(task(waited, 'tr').output).toEqual({ jobId: held });
      const restarted = await execution(restarting);
      expect(restarted.status).toBe('COMPLETED');
      const [latest] = await jobsOfBusy();
      expect(latest).not.toBe(held);
      expect(task(restarted, 'tr').output).toEqual({ jobId: latest });
    });
  });
});

describe('cancel and retry', () => {
  it.runIf(canRun)('cancels a running execution, leaving the work its tasks started, and retries its cancelled task', async () => {
    await version('wf-cancel', [fnTask('fn', { gate: gateUrl() }), { ...get('after'), dependsOn: [{ externalId: 'fn' }] }]);
    const before = reached;
    const id = await run('wf-cancel');
    await atGate(before + 1);
    const { callId } = task(await execution(id), 'fn').output;
    const cancelled = ok(await h.post(`/workflows/executions/${id}/cancel`, { reason: 'not now' }));
    expect(cancelled).toMatchObject({ status: 'TERMINATED', reasonForIncompletion: 'not now' });
    expect(task(await execution(id), 'fn').status).toBe('CANCELED');
    // As the reference has it, the call the task made is not stopped: it runs on and ends as it would have.
    expect(ok(await h.get(`/functions/${echo.id}/calls/${callId}`))).toMatchObject({ status: 'Running' });
    await releaseCalls();
    await advance(2000);
    expect(ok(await h.get(`/functions/${echo.id}/calls/${callId}`))).toMatchObject({ status: 'Completed' });
    const after = await execution(id);
    expect(after).toMatchObject({ status: 'TERMINATED', reasonForIncompletion: 'not now' });
    expect(task(after, 'fn').status).toBe('CANCELED');
    expect(task(after, 'after')).toBeUndefined();
    expect(errorMessage(await h.post(`/workflows/executions/${id}/cancel`, {}), 400)).toMatch(/TERMINATED/);

    const callsBefore = ok(await h.get(`/functions/${echo.id}/calls?limit=1000`)).items.length;
    const retried = ok(await h.post(`/workflows/executions/${id}/retry`, { authentication: { nonce: await nonce(h) } }));
    expect(retried.status).toBe('RUNNING');
    await dueJobsDone(h, [CALL_JOB]);
    await atGate(before + 2);
    expect(ok(await h.get(`/functions/${echo.id}/calls?limit=1000`)).items).toHaveLength(callsBefore + 1);
    await releaseCalls();
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'fn').output.response.gate).toBe('released');
    expect(task(e, 'after').status).toBe('COMPLETED');
    expect(errorMessage(await h.post(`/workflows/executions/${id}/retry`, { authentication: { nonce: await nonce(h) } }), 400)).toMatch(/COMPLETED/);
  });

  it('answers 404 for an execution that does not exist', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect(errorMessage(await h.get(`/workflows/executions/${id}`), 404)).toMatch(id);
    expect(errorMessage(await h.post(`/workflows/executions/${id}/cancel`, {}), 404)).toMatch(id);
  });
});

describe('maxConcurrentExecutions', () => {
  it.runIf(canRun)('refuses a run, a retry and a trigger firing beyond the workflow\'s running executions, until one ends', async () => {
    ok(await h.post('/workflows', { items: [{ externalId: 'wf-max', maxConcurrentExecutions: 1 }] }));
    await version('wf-max', [fnTask('fn', { gate: '${workflow.input.gate}' })]);
    const before = reached;
    const first = await run('wf-max', { gate: gateUrl() });
    await atGate(before + 1);
    const refused = await h.post('/workflows/wf-max/versions/1/run', { authentication: { nonce: await nonce(h) } });
    expect(errorMessage(refused, 429)).toMatch(/"wf-max" already has 1 executions running, its maxConcurrentExecutions/);
    expect(refused.headers['retry-after']).toBeDefined();
    const listed = async () => ok(await h.post('/workflows/executions/list', { filter: { workflowFilters: [{ externalId: 'wf-max' }] } })).items;
    expect(await listed()).toHaveLength(1);

    ok(await h.post('/workflows/triggers', {
      items: [{ externalId: 'wf-max-minutely', triggerRule: { triggerType: 'schedule', cronExpression: '* * * * *' }, workflowExternalId: 'wf-max', workflowVersion: '1', authentication: { nonce: await nonce(h) } }],
    }));
    await advance(60_000);
    const [firing] = ok(await h.get('/workflows/triggers/wf-max-minutely/history')).items;
    expect(firing).toMatchObject({ status: 'failed', reasonForFailure: expect.stringMatching(/already has 1 executions running/) });
    ok(await h.post('/workflows/triggers/delete', { items: [{ externalId: 'wf-max-minutely' }] }));
    expect(await listed()).toHaveLength(1);

    // An execution that ends frees its place; a retry takes one.
    ok(await h.post(`/workflows/executions/${first}/cancel`, {}));
    const second = await run('wf-max', { gate: null });
    expect(errorMessage(await h.post(`/workflows/executions/${first}/retry`, { authentication: { nonce: await nonce(h) } }), 429)).toMatch(/maxConcurrentExecutions/);
    await releaseCalls();
    await advance(2000);
    expect((await execution(second)).status).toBe('COMPLETED');
    expect(ok(await h.post(`/workflows/executions/${first}/retry`, { authentication: { nonce: await nonce(h) } })).status).toBe('RUNNING');
    await dueJobsDone(h, [CALL_JOB]);
    await atGate(before + 2);
    await releaseCalls();
    await advance(2000);
    expect((await execution(first)).status).toBe('COMPLETED');
  });
});

describe('dynamic tasks and subworkflows', () => {
  it('run the tasks an earlier task produced, under the dynamic task', async () => {
    await version('wf-dynamic', [
      { externalId: 'plan', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } },
      { externalId: 'fan', type: 'dynamic', parameters: { dynamic: { tasks: '${workflow.input.tasks}' } }, dependsOn: [{ externalId: 'plan' }] },
      { ...get('end'), dependsOn: [{ externalId: 'fan' }] },
    ]);
    const id = await run('wf-dynamic', { tasks: [get('d1'), { ...get('d2'), dependsOn: [{ externalId: 'd1' }] }] });
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'fan')).toMatchObject({ status: 'COMPLETED', output: { dynamicTasks: [expect.objectContaining({ externalId: 'd1' }), expect.objectContaining({ externalId: 'd2' })] } });
    expect(task(e, 'd1')).toMatchObject({ status: 'COMPLETED', parentTaskExternalId: 'fan' });
    expect(task(e, 'd2').startTime).toBeGreaterThanOrEqual(task(e, 'd1').endTime);
    expect(task(e, 'end').status).toBe('COMPLETED');

    const bad = await execution(await run('wf-dynamic', { tasks: [{ ...get('x'), dependsOn: [{ externalId: 'nope' }] }] }));
    expect(bad.status).toBe('FAILED');
    expect(task(bad, 'fan').reasonForIncompletion).toMatch(/task "x".*"nope"/);
  });

  it.runIf(canRun)('run function tasks a dynamic task produced', async () => {
    await version('wf-dynamic-fn', [{ externalId: 'fan', type: 'dynamic', parameters: { dynamic: { tasks: '${workflow.input.tasks}' } } }]);
    const id = await run('wf-dynamic-fn', { tasks: [fnTask('f1', { n: 1 }), fnTask('f2', { n: 2 })] });
    await dueJobsDone(h);
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect([task(e, 'f1'), task(e, 'f2')].map((t) => [t.parentTaskExternalId, t.output.response.echo])).toEqual([
      ['fan', { n: 1 }],
      ['fan', { n: 2 }],
    ]);
  });

  it('run a subworkflow, inline or by reference to another version', async () => {
    await version('wf-inner', [get('i1'), { ...get('i2'), dependsOn: [{ externalId: 'i1' }] }]);
    await version('wf-outer', [
      { externalId: 'inline', type: 'subworkflow', parameters: { subworkflow: { tasks: [get('s1')] } } },
      { externalId: 'ref', type: 'subworkflow', parameters: { subworkflow: { workflowExternalId: 'wf-inner', version: '1' } }, dependsOn: [{ externalId: 'inline' }] },
    ]);
    const e = await execution(await run('wf-outer'));
    expect(e.status).toBe('COMPLETED');
    expect(e.executedTasks.map((t: any) => [t.externalId, t.parentTaskExternalId ?? null, t.status])).toEqual([
      ['inline', null, 'COMPLETED'],
      ['s1', 'inline', 'COMPLETED'],
      ['ref', null, 'COMPLETED'],
      ['i1', 'ref', 'COMPLETED'],
      ['i2', 'ref', 'COMPLETED'],
    ]);
    const res = await h.post('/workflows/versions', {
      items: [{ workflowExternalId: 'wf-nested', version: '1', workflowDefinition: { tasks: [{ externalId: 'sub', type: 'subworkflow', parameters: { subworkflow: { tasks: [{ externalId: 'd', type: 'dynamic', parameters: { dynamic: { tasks: '${a.output}' } } }] } } }] } }],
    });
    expect(errorMessage(res, 400)).toMatch(/task "sub".*dynamic task cannot be run by a dynamic task or a subworkflow/);
  });
});

describe('a restart', () => {
  it.runIf(canRun)('resumes a running execution where it was: another app on the same store follows the call and runs the rest', async () => {
    const store = await openTestStore();
    try {
      const first = await startHarness({}, {}, { store, clock });
      const fn = await deployed(first, ECHO, { externalId: 'echo', functionPath: 'handler.js' });
      ok(await first.post('/workflows/versions', { items: [{ workflowExternalId: 'wf-restart', version: '1', workflowDefinition: { tasks: [fnTask('fn', { n: 1 }), { ...get('after'), dependsOn: [{ externalId: 'fn' }] }] } }] }));
      const id = ok(await first.post('/workflows/wf-restart/versions/1/run', { authentication: { nonce: await nonce(first) } }), 202).id;
      // The call ends in the first app; the task looks at it again only later, in the second.
      await dueJobsDone(first);
      const { callId } = task(ok(await first.get(`/workflows/executions/${id}`)), 'fn').output;
      expect(ok(await first.get(`/functions/${fn.id}/calls/${callId}`)).status).toBe('Completed');
      await first.close();

      const second = await startHarness({}, {}, { store, clock });
      try {
        clock.advance(2000);
        await dueJobsDone(second);
        const e = ok(await second.get(`/workflows/executions/${id}`));
        expect(e.status).toBe('COMPLETED');
        expect(task(e, 'fn').output).toMatchObject({ callId, response: { echo: { n: 1 } } });
        expect(task(e, 'after').status).toBe('COMPLETED');
      } finally {
        await second.close();
      }
    } finally {
      await store.close();
    }
  });
});
