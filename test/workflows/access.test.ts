/**
 * A principal whose `workflowOrchestrationAcl` is scoped to data sets reaches the workflows in those data
 * sets and what belongs to them (versions, executions, their tasks, triggers); anything else answers as if it
 * did not exist, and it writes workflows only into its data sets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, namedClients, namedClientToken } from '../support/auth.js';
import { errorMessage, startHarness, type Harness } from '../support/harness.js';
import { dueJobsDone, nonce, ok } from '../support/workflows.js';

let h: Harness;
let scoped: string;
let dsA: number;
let hiddenExecution: string;

const as = (method: string, path: string, body?: unknown) => h.request(method, path, body, bearer(scoped));
const tasks = [{ externalId: 'a', type: 'cdf', parameters: { cdfRequest: { resourcePath: '/events', method: 'GET' } } }];

beforeAll(async () => {
  h = await startHarness({}, { STRATA_CLIENTS: namedClients('wf-scoped', 'wf-writer') });
  [dsA] = ok(await h.post('/datasets', { items: [{ externalId: 'wf-ds-a' }] }), 200).items.map((d: { id: number }) => d.id);
  scoped = await namedClientToken(h, 'wf-scoped', [
    capability('workflowOrchestrationAcl', ['READ', 'WRITE'], { datasetScope: { ids: [dsA] } }),
    capability('sessionsAcl', ['CREATE', 'LIST']),
  ]);
  ok(await h.post('/workflows', { items: [{ externalId: 'in-a', dataSetId: dsA }] }));
  ok(await h.post('/workflows', { items: [{ externalId: 'hidden' }] }));
  for (const w of ['in-a', 'hidden']) ok(await h.post('/workflows/versions', { items: [{ workflowExternalId: w, version: '1', workflowDefinition: { tasks } }] }));
  hiddenExecution = ok(await h.post('/workflows/hidden/versions/1/run', { authentication: { nonce: await nonce(h) } }), 202).id;
  ok(
    await h.post('/workflows/triggers', {
      items: [{ externalId: 'hidden-trigger', triggerRule: { triggerType: 'schedule', cronExpression: '0 0 * * *' }, workflowExternalId: 'hidden', workflowVersion: '1', authentication: { nonce: await nonce(h) } }],
    }),
  );
  await dueJobsDone(h);
});
afterAll(() => h.close());

describe('a principal scoped to data sets', () => {
  it('sees only the workflows of its data sets and what belongs to them', async () => {
    expect(ok(await as('GET', '/workflows')).items.map((w: any) => w.externalId)).toEqual(['in-a']);
    expect(errorMessage(await as('GET', '/workflows/hidden'), 404)).toBe(errorMessage(await as('GET', '/workflows/absent'), 404).replace('absent', 'hidden'));
    expect(ok(await as('POST', '/workflows/versions/list', {})).items.map((v: any) => v.workflowExternalId)).toEqual(['in-a']);
    expect((await as('GET', '/workflows/hidden/versions/1')).status).toBe(404);
    expect(ok(await as('POST', '/workflows/executions/list', {})).items).toEqual([]);
    expect((await as('GET', `/workflows/executions/${hiddenExecution}`)).status).toBe(404);
    expect((await as('POST', `/workflows/executions/${hiddenExecution}/cancel`, {})).status).toBe(404);
    expect(ok(await as('GET', '/workflows/triggers')).items).toEqual([]);
    expect((await as('GET', '/workflows/triggers/hidden-trigger/history')).status).toBe(404);
    expect((await as('POST', '/workflows/triggers/hidden-trigger/pause')).status).toBe(404);
  });

  it("runs the versions of its workflows, whose tasks have its session's rights, and not the others", async () => {
    const session = ok(await as('POST', '/sessions', { items: [{ tokenExchange: true }] })).items[0].nonce;
    const run = ok(await as('POST', '/workflows/in-a/versions/1/run', { authentication: { nonce: session } }), 202);
    await dueJobsDone(h);
    // The principal may not read events: the task's call is refused, and the task waits for its next attempt.
    const e = ok(await as('GET', `/workflows/executions/${run.id}`));
    expect(e.executedTasks[0]).toMatchObject({ status: 'SCHEDULED', reasonForIncompletion: expect.stringMatching(/GET \/events answered 403/) });
    const other = ok(await as('POST', '/sessions', { items: [{ tokenExchange: true }] })).items[0].nonce;
    expect(errorMessage(await as('POST', '/workflows/hidden/versions/1/run', { authentication: { nonce: other } }), 400)).toMatch(/no version "1" of the workflow "hidden"/);
  });

  it('writes workflows only into its data sets, and changes nothing it does not reach', async () => {
    expect(errorMessage(await as('POST', '/workflows', { items: [{ externalId: 'no-ds' }] }), 403)).toMatch(/^items\[0\]\.dataSetId: workflowOrchestrationAcl:WRITE is granted only in datasetScope \[\d+\], and the new workflow is in no data set/);
    expect((await as('POST', '/workflows', { items: [{ externalId: 'hidden', dataSetId: dsA }] })).status).toBe(403);
    expect((await as('POST', '/workflows/versions', { items: [{ workflowExternalId: 'hidden', version: '2', workflowDefinition: { tasks } }] })).status).toBe(403);
    ok(await as('POST', '/workflows/delete', { items: [{ externalId: 'hidden' }] }));
    expect(ok(await h.get('/workflows/hidden')).externalId).toBe('hidden');
    expect((await h.get('/workflows/hidden/versions/2')).status).toBe(404);
  });
});

describe('a write-protected data set', () => {
  it('takes workflows only from its owners', async () => {
    const [locked] = ok(await h.post('/datasets', { items: [{ externalId: 'wf-locked', writeProtected: true }] })).items;
    const writer = await namedClientToken(h, 'wf-writer', [capability('workflowOrchestrationAcl', ['READ', 'WRITE'])]);
    const res = await h.request('POST', '/workflows', { items: [{ externalId: 'wf-protected', dataSetId: locked.id }] }, bearer(writer));
    expect(errorMessage(res, 403)).toMatch(/^items\[0\]\.dataSetId: .*datasetsAcl:OWNER/);
    expect((await h.get('/workflows/wf-protected')).status).toBe(404);
    ok(await h.post('/workflows', { items: [{ externalId: 'wf-protected', dataSetId: locked.id }] }));
    expect((await h.request('POST', '/workflows/delete', { items: [{ externalId: 'wf-protected' }] }, bearer(writer))).status).toBe(403);
    ok(await h.post('/workflows/versions', { items: [{ workflowExternalId: 'wf-protected', version: '1', workflowDefinition: { tasks } }] }));
    const versions = { items: [{ workflowExternalId: 'wf-protected', version: '1', workflowDefinition: { tasks: [] } }] };
    expect((await h.request('POST', '/workflows/versions', versions, bearer(writer))).status).toBe(403);
    expect((await h.request('POST', '/workflows/versions/delete', { items: [{ workflowExternalId: 'wf-protected', version: '1' }] }, bearer(writer))).status).toBe(403);
    expect(ok(await h.get('/workflows/wf-protected/versions/1')).workflowDefinition.tasks).toHaveLength(1);
    expect(ok(await h.get('/workflows/wf-protected')).dataSetId).toBe(locked.id);
  });
});
