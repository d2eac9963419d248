/**
 * How executions run beyond `cdf` tasks, on both backends and a clock moved by hand: a function task calls
 * the function through the API with a session of its own and follows the call until it ends (here the
 * functions operations are stand-ins declared by the test); a task that completes asynchronously waits for
 * `POST /workflows/tasks/{id}/update`; timeouts; cancel and retry; dynamic tasks and subworkflows.
 */
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route } from '../../src/http/route.js';
import { errorMessage, startHarness, type Harness, type Response } from '../support/harness.js';
import { ManualClock } from '../support/manual-clock.js';
import { openTestStore } from '../support/test-store.js';
import { dueJobsDone, nonce } from '../support/workflows.js';

const clock = new ManualClock(Date.UTC(2026, 1, 1));
let h: Harness;

/** The stand-in functions service: one function, whose calls run until the test ends them. */
const calls = new Map<number, { status: string; data: unknown; nonce: string; response?: unknown }>();
const functionRoutes = [
  route({
    method: 'POST',
    path: '/functions/byids',
    capability: null,
    body: Type.Object({ items: Type.Array(Type.Object({ externalId: Type.String() })) }),
    handler: ({ body }) => ({ items: body.items.map((i) => ({ id: 7, externalId: i.externalId })) }),
  }),
  route({
    method: 'POST',
    path: '/functions/:id/call',
    capability: null,
    body: Type.Object({ data: Type.Unknown(), nonce: Type.String() }),
    handler: ({ body }) => {
      const id = calls.size + 100;
      calls.set(id, { status: 'Running', data: body.data, nonce: body.nonce });
      return { id, status: 'Running' };
    },
  }),
  route({
    method: 'GET',
    path: '/functions/:id/calls/:callId',
    capability: null,
    params: Type.Object({ project: Type.String(), id: Type.String(), callId: Type.String() }),
    handler: ({ params }) => ({ id: Number(params.callId), status: calls.get(Number(params.callId))!.status }),
  }),
  route({
    method: 'GET',
    path: '/functions/:id/calls/:callId/response',
    capability: null,
    params: Type.Object({ project: Type.String(), id: Type.String(), callId: Type.String() }),
    handler: ({ params }) => ({ response: calls.get(Number(params.callId))!.response }),
  }),
];

/** The stand-in transformations service: runs whose jobs the test ends. */
const transformationJobs = new Map<number, { status: string; externalId: string; nonce: unknown }>();
const transformationRoutes = [
  route({
    method: 'POST',
    path: '/transformations/run',
    capability: null,
    body: Type.Object({ externalId: Type.String(), nonce: Type.Unknown() }),
    handler: ({ body }) => {
      const id = transformationJobs.size + 1;
      transformationJobs.set(id, { status: 'Running', externalId: body.externalId, nonce: body.nonce });
      return { id, status: 'Running' };
    },
  }),
  route({
    method: 'POST',
    path: '/transformations/jobs/byids',
    capability: null,
    body: Type.Object({ items: Type.Array(Type.Object({ id: Type.Integer() })) }),
    handler: ({ body }) => ({ items: body.items.map((i) => ({ id: i.id, status: transformationJobs.get(i.id)!.status, error: 'bad SQL' })) }),
  }),
];

beforeAll(async () => {
  h = await startHarness({}, {}, { clock, extraRoutes: [...functionRoutes, ...transformationRoutes] });
});
afterAll(() => h.close());

function ok(res: Response, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function version(workflowExternalId: string, tasks: unknown[]) {
  ok(await h.post('/workflows/versions', { items: [{ workflowExternalId, version: '1', workflowDefinition: { tasks } }] }));
}

async function run(workflowExternalId: string, input?: unknown) {
  const started = ok(await h.post(`/workflows/${workflowExternalId}/versions/1/run`, { authentication: { nonce: await nonce(h) }, ...(input ? { input } : {}) }), 202);
  await dueJobsDone(h);
  return started.id as string;
}

const execution = async (id: string) => ok(await h.get(`/workflows/executions/${id}`));
const task = (e: { executedTasks: Array<{ externalId: string }> }, externalId: string) => e.executedTasks.find((t) => t.externalId === externalId) as any;
async function advance(ms: number) {
  clock.advance(ms);
  await dueJobsDone(h);
}
const get = (externalId: string) => ({ externalId, type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } });

describe('function tasks', () => {
  it('call the function with a session of their own and follow the call until it completes', async () => {
    await version('wf-fn', [
      { externalId: 'fn', type: 'function', parameters: { function: { externalId: 'my-fn', data: { x: '${workflow.input.x}' } } } },
      { ...get('after'), dependsOn: [{ externalId: 'fn' }] },
    ]);
    const id = await run('wf-fn', { x: 42 });
    const callId = Math.max(...calls.keys());
    expect(calls.get(callId)).toMatchObject({ data: { x: 42 }, nonce: expect.any(String) });
    expect(task(await execution(id), 'fn')).toMatchObject({ status: 'IN_PROGRESS', output: { functionId: 7, callId } });
    await advance(2000);
    expect((await execution(id)).status).toBe('RUNNING');
    calls.get(callId)!.status = 'Completed';
    calls.get(callId)!.response = { answer: 1 };
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'fn')).toMatchObject({ status: 'COMPLETED', output: { functionId: 7, callId, response: { answer: 1 } } });
    expect(task(e, 'after').status).toBe('COMPLETED');
  });

  it('with isAsyncComplete, wait for POST /workflows/tasks/{id}/update, which merges its output', async () => {
    await version('wf-async', [
      { externalId: 'fn', type: 'function', parameters: { function: { externalId: 'my-fn' }, isAsyncComplete: true } },
      { ...get('after'), dependsOn: [{ externalId: 'fn' }] },
    ]);
    const id = await run('wf-async');
    const callId = Math.max(...calls.keys());
    const taskId = task(await execution(id), 'fn').id;
    expect(calls.get(callId)!.data).toEqual({ cogniteOrchestrationTaskId: taskId });
    calls.get(callId)!.status = 'Completed';
    await advance(2000);
    expect(task(await execution(id), 'fn').status).toBe('IN_PROGRESS');

    expect(errorMessage(await h.post('/workflows/tasks/00000000-0000-4000-8000-000000000000/update', { status: 'COMPLETED' }), 404)).toMatch(/no workflow task/);
    const updated = ok(await h.post(`/workflows/tasks/${taskId}/update`, { status: 'COMPLETED', output: { extra: true } }));
    expect(updated).toMatchObject({ id: taskId, status: 'COMPLETED', output: { callId, extra: true } });
    await dueJobsDone(h);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(errorMessage(await h.post(`/workflows/tasks/${task(e, 'after').id}/update`, { status: 'COMPLETED' }), 400)).toMatch(/not completed asynchronously/);
    expect(errorMessage(await h.post(`/workflows/tasks/${taskId}/update`, { status: 'FAILED' }), 400)).toMatch(/COMPLETED: only a task IN_PROGRESS/);
  });

  it('time out: under abortWorkflow the task is TIMED_OUT and the execution FAILED', async () => {
    await version('wf-timeout', [{ externalId: 'fn', type: 'function', timeout: 100, parameters: { function: { externalId: 'my-fn' } } }]);
    const id = await run('wf-timeout');
    await advance(100_000);
    const e = await execution(id);
    expect(e.status).toBe('FAILED');
    expect(task(e, 'fn')).toMatchObject({ status: 'TIMED_OUT', reasonForIncompletion: expect.stringMatching(/timeout of 100 seconds/) });
    expect(e.reasonForIncompletion).toMatch(/Task "fn" timed out/);
  });
});

describe('transformation tasks', () => {
  it('run the transformation with a session of their own and follow its job until it completes or fails', async () => {
    await version('wf-tr', [
      { externalId: 'tr', type: 'transformation', parameters: { transformation: { externalId: 'my-tr' } }, retries: 0 },
      { ...get('after'), dependsOn: [{ externalId: 'tr' }] },
    ]);
    const id = await run('wf-tr');
    const jobId = transformationJobs.size;
    expect(transformationJobs.get(jobId)).toMatchObject({ externalId: 'my-tr', nonce: { sessionId: expect.any(Number), nonce: expect.any(String), cdfProjectName: 'dev' } });
    expect(task(await execution(id), 'tr')).toMatchObject({ status: 'IN_PROGRESS', output: { jobId } });
    transformationJobs.get(jobId)!.status = 'Completed';
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'after').status).toBe('COMPLETED');

    const failing = await run('wf-tr');
    transformationJobs.get(transformationJobs.size)!.status = 'Failed';
    await advance(2000);
    const failed = await execution(failing);
    expect(failed.status).toBe('FAILED');
    expect(task(failed, 'tr').reasonForIncompletion).toBe('the transformation job failed: bad SQL');
  });
});

describe('cancel and retry', () => {
  it('cancels a running execution and retries its cancelled task', async () => {
    await version('wf-cancel', [
      { externalId: 'fn', type: 'function', parameters: { function: { externalId: 'my-fn' } } },
      { ...get('after'), dependsOn: [{ externalId: 'fn' }] },
    ]);
    const id = await run('wf-cancel');
    const cancelled = ok(await h.post(`/workflows/executions/${id}/cancel`, { reason: 'not now' }));
    expect(cancelled).toMatchObject({ status: 'TERMINATED', reasonForIncompletion: 'not now' });
    await advance(2000);
    expect(task(await execution(id), 'fn').status).toBe('CANCELED');
    expect(errorMessage(await h.post(`/workflows/executions/${id}/cancel`, {}), 400)).toMatch(/TERMINATED/);

    const callsBefore = calls.size;
    const retried = ok(await h.post(`/workflows/executions/${id}/retry`, { authentication: { nonce: await nonce(h) } }));
    expect(retried.status).toBe('RUNNING');
    await dueJobsDone(h);
    expect(calls.size).toBe(callsBefore + 1);
    calls.get(Math.max(...calls.keys()))!.status = 'Completed';
    await advance(2000);
    const e = await execution(id);
    expect(e.status).toBe('COMPLETED');
    expect(task(e, 'after').status).toBe('COMPLETED');
    expect(errorMessage(await h.post(`/workflows/executions/${id}/retry`, { authentication: { nonce: await nonce(h) } }), 400)).toMatch(/COMPLETED/);
  });

  it('answers 404 for an execution that does not exist', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect(errorMessage(await h.get(`/workflows/executions/${id}`), 404)).toMatch(id);
    expect(errorMessage(await h.post(`/workflows/executions/${id}/cancel`, {}), 404)).toMatch(id);
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
  it('resumes a running execution where it was: another app on the same store follows the call and runs the rest', async () => {
    const store = await openTestStore();
    try {
      const first = await startHarness({}, {}, { store, clock, extraRoutes: functionRoutes });
      ok(
        await first.post('/workflows/versions', {
          items: [
            {
              workflowExternalId: 'wf-restart',
              version: '1',
              workflowDefinition: { tasks: [{ externalId: 'fn', type: 'function', parameters: { function: { externalId: 'my-fn' } } }, { ...get('after'), dependsOn: [{ externalId: 'fn' }] }] },
            },
          ],
        }),
      );
      const id = ok(await first.post('/workflows/wf-restart/versions/1/run', { authentication: { nonce: await nonce(first) } }), 202).id;
      await dueJobsDone(first);
      const callId = Math.max(...calls.keys());
      await first.close();

      calls.get(callId)!.status = 'Completed';
      const second = await startHarness({}, {}, { store, clock, extraRoutes: functionRoutes });
      try {
        clock.advance(2000);
        await dueJobsDone(second);
        const e = ok(await second.get(`/workflows/executions/${id}`));
        expect(e.status).toBe('COMPLETED');
        expect(task(e, 'fn').output.callId).toBe(callId);
        expect(task(e, 'after').status).toBe('COMPLETED');
      } finally {
        await second.close();
      }
    } finally {
      await store.close();
    }
  });
});
