/**
 * One workflow through the areas it drives, on both backends and a clock moved by hand: a function (real
 * JavaScript) makes events, a `cdf` task writes what the function answered, a transformation turns those
 * events into assets, and a last `cdf` task reads the asset the function named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canRun, deployed } from '../functions/support.js';
import { startHarness, type Harness } from '../support/harness.js';
import { ManualClock } from '../support/manual-clock.js';
import { dueJobsDone, nonce, ok, transformationNonce } from '../support/workflows.js';

const clock = new ManualClock(Date.UTC(2026, 2, 1));
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
});
afterAll(() => h.close());

const HANDLER = `exports.handle = (data) => ({
  events: [{ externalId: data.site + '-start', type: 'e2e', description: 'Start at ' + data.site, startTime: 1000 }],
  asset: 'asset-' + data.site + '-start',
});`;

describe('a workflow of a function, cdf requests and a transformation', () => {
  it.runIf(canRun)('runs each task on what the earlier ones gave, and the assets are written', async () => {
    const fn = await deployed(h, { 'handler.js': HANDLER }, { externalId: 'make-events', functionPath: 'handler.js' });
    const query = "select concat('asset-', externalId) as externalId, description as name from _cdf.events where type = 'e2e'";
    const transformation = { externalId: 'e2e-assets', name: 'E2E', query, destination: { type: 'assets' }, ignoreNullFields: true, sourceNonce: await transformationNonce(h), destinationNonce: await transformationNonce(h) };
    ok(await h.post('/transformations', { items: [transformation] }));
    const tasks = [
      { externalId: 'make', type: 'function', parameters: { function: { externalId: 'make-events', data: { site: '${workflow.input.site}' } } } },
      {
        externalId: 'write',
        type: 'cdf',
        parameters: { cdfRequest: { resourcePath: '/events', method: 'POST', body: { items: '${make.output.response.events}' } } },
        dependsOn: [{ externalId: 'make' }],
      },
      { externalId: 'copy', type: 'transformation', parameters: { transformation: { externalId: 'e2e-assets' } }, dependsOn: [{ externalId: 'write' }] },
      {
        externalId: 'read',
        type: 'cdf',
        parameters: { cdfRequest: { resourcePath: '/assets/byids', method: 'POST', body: { items: [{ externalId: '${make.output.response.asset}' }] } } },
        dependsOn: [{ externalId: 'copy' }],
      },
    ];
    ok(await h.post('/workflows/versions', { items: [{ workflowExternalId: 'wf-e2e', version: '1', workflowDefinition: { tasks } }] }));

    const { id } = ok(await h.post('/workflows/wf-e2e/versions/1/run', { authentication: { nonce: await nonce(h) }, input: { site: 'north' } }), 202);
    // The call ends now; the task sees it at its next look, two seconds on; the transformation's job likewise.
    await dueJobsDone(h);
    for (let step = 0; step < 2; step++) {
      clock.advance(2000);
      await dueJobsDone(h);
    }

    const e = ok(await h.get(`/workflows/executions/${id}`));
    expect(e.status).toBe('COMPLETED');
    expect(e.executedTasks.map((t: any) => [t.externalId, t.status])).toEqual([
      ['make', 'COMPLETED'],
      ['write', 'COMPLETED'],
      ['copy', 'COMPLETED'],
      ['read', 'COMPLETED'],
    ]);
    const [make, write, copy, read] = e.executedTasks;
    expect(make.output).toMatchObject({ functionId: fn.id, response: { asset: 'asset-north-start' } });
    expect(write.input.cdfRequest.body.items).toEqual(make.output.response.events);
    expect(write.output).toMatchObject({ statusCode: 201, response: { items: [{ externalId: 'north-start', type: 'e2e' }] } });
    const [job] = ok(await h.post('/transformations/jobs/byids', { items: [{ id: copy.output.jobId }] })).items;
    expect(job).toMatchObject({ transformationExternalId: 'e2e-assets', status: 'Completed' });
    expect(read.output).toMatchObject({ statusCode: 200, response: { items: [{ externalId: 'asset-north-start', name: 'Start at north' }] } });
    expect(JSON.stringify(e)).not.toMatch(/sessionKey/);

    const assets = ok(await h.post('/assets/list', { filter: {}, limit: 100 })).items;
    expect(assets.map((a: any) => [a.externalId, a.name])).toEqual([['asset-north-start', 'Start at north']]);
  });
});
