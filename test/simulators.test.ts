/**
 * Simulators over HTTP, on both backends: simulators and the integrations connectors report, models and
 * their revisions (at most 200 per model, `deleteOldest` with simulatorsAcl:DELETE), routines and their
 * revisions, runs (`queued` until a connector takes them, `ready` for the routine's integration), the
 * connectors' reports (at most 100 KB per run), logs, and the 50 KB bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, builtInSigner, capability, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { ManualClock } from './support/manual-clock.js';
import { CONFIGURATION, created as createdItem, SCRIPT, SIMULATOR, simulatorChain } from './support/simulators.js';

let h: Harness;
const clock = new ManualClock(Date.now());
let dataSetId: number;
let fileId: number;

/** The chain of `simulatorChain`, in this file's data set, with a heartbeat now. */
const chain = (x: string, routine: { integration?: boolean } = { integration: true }) => simulatorChain(h, x, { dataSetId, fileId, heartbeat: clock.now() }, routine);
const created = (path: string, item: Record<string, unknown>, headers: Record<string, string> = {}) => createdItem(h, path, item, headers);

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
  dataSetId = (await h.post('/datasets', { items: [{ externalId: 'sim-ds' }] })).body.items[0].id;
  fileId = (await h.post('/files', { name: 'ShowerMixer.dwxmz', dataSetId })).body.id;
});
afterAll(() => h.close());

describe('simulators', () => {
  it('serve simulators, integrations, models, routines and their revisions as the clients read them', async () => {
    const { integration } = await chain('a');
    expect(integration).toMatchObject({ externalId: 'int-a', simulatorExternalId: 'sim-a', dataSetId, active: true, logId: expect.any(Number) });
    const sims = (await h.post('/simulators/list', {})).body.items;
    expect(sims.find((s: { externalId: string }) => s.externalId === 'sim-a')).toMatchObject(SIMULATOR);
    const revisions = (await h.post('/simulators/models/revisions/list', { filter: { modelExternalIds: ['model-a'] } })).body.items;
    expect(revisions).toEqual([expect.objectContaining({ externalId: 'model-a-v1', simulatorExternalId: 'sim-a', dataSetId, fileId, status: 'unknown', versionNumber: 1 })]);
    const rr = (await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-a'] } })).body.items;
    expect(rr).toHaveLength(1);
    expect(rr[0]).toMatchObject({ externalId: 'routine-a-v1', simulatorIntegrationExternalId: 'int-a', modelExternalId: 'model-a', versionNumber: 1 });
    expect(rr[0]).not.toHaveProperty('script');
    expect(rr[0]).not.toHaveProperty('lastUpdatedTime');
    const all = (await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-a'] }, includeAllFields: true })).body.items;
    expect(all[0]).toMatchObject({ configuration: CONFIGURATION, script: SCRIPT });
  });

  it('update, read by ids, count and filter models', async () => {
    await chain('m');
    const [model] = (await h.post('/simulators/models/byids', { items: [{ externalId: 'model-m' }] })).body.items;
    expect(model).toMatchObject({ externalId: 'model-m', simulatorExternalId: 'sim-m', name: 'Model', dataSetId, type: 'SteadyState' });
    const updated = await h.post('/simulators/models/update', { items: [{ id: model.id, update: { name: { set: 'Renamed' }, description: { set: 'd' } } }] });
    expect(updated.body.items[0]).toMatchObject({ name: 'Renamed', description: 'd' });
    expect((await h.post('/simulators/models/list', { filter: { externalIdPrefix: 'model-m' } })).body.items.map((m: { externalId: string }) => m.externalId)).toEqual(['model-m']);
    expect((await h.post('/simulators/models/aggregate', { aggregate: 'count', filter: { simulatorExternalIds: ['sim-m'] } })).body).toEqual({ items: [{ count: 1 }] });
    expect((await h.post('/simulators/routines/aggregate', { aggregate: 'count', filter: { modelExternalIds: ['model-m'] } })).body).toEqual({ items: [{ count: 1 }] });
    expect((await h.post('/simulators/routines/list', { filter: { simulatorIntegrationExternalIds: ['int-m'] } })).body.items).toHaveLength(1);
    const rr = await h.post('/simulators/routines/revisions/byids', { items: [{ externalId: 'routine-m-v1' }] });
    expect(rr.body.items[0]).toMatchObject({ externalId: 'routine-m-v1', script: SCRIPT });
    const missing = await h.post('/simulators/models/byids', { items: [{ externalId: 'nope' }] });
    expect(errorMessage(missing, 400)).toBeTruthy();
    expect(missing.body.error.missing).toEqual([{ externalId: 'nope' }]);
  });

  it('refuse what hangs off something that does not exist, naming it, and create nothing', async () => {
    await chain('r');
    const model = { externalId: 'model-x', simulatorExternalId: 'no-sim', name: 'x', dataSetId, type: 't' };
    expect(errorMessage(await h.post('/simulators/models', { items: [model] }), 400)).toMatch(/items\[0\]\.simulatorExternalId: the simulator "no-sim" does not exist/);
    expect(errorMessage(await h.post('/simulators/models', { items: [{ ...model, simulatorExternalId: 'sim-r', dataSetId: 424242 }] }), 400)).toMatch(/424242/);
    expect(errorMessage(await h.post('/simulators/models/revisions', { items: [{ externalId: 'x', modelExternalId: 'no-model', fileId }] }), 400)).toMatch(
      /items\[0\]\.modelExternalId: the simulator model "no-model" does not exist/,
    );
    expect(errorMessage(await h.post('/simulators/models/revisions', { items: [{ externalId: 'x', modelExternalId: 'model-r', fileId: 987654 }] }), 400)).toMatch(/987654/);
    expect(errorMessage(await h.post('/simulators/routines', { items: [{ externalId: 'x', modelExternalId: 'no-model', name: 'x' }] }), 400)).toMatch(/items\[0\]\.modelExternalId/);
    await chain('r2');
    expect(errorMessage(await h.post('/simulators/routines', { items: [{ externalId: 'x', modelExternalId: 'model-r', name: 'x', simulatorIntegrationExternalId: 'int-r2' }] }), 400)).toMatch(
      /items\[0\]\.simulatorIntegrationExternalId: .*"sim-r2", not of the model's "sim-r"/,
    );
    expect(errorMessage(await h.post('/simulators/routines/revisions', { items: [{ externalId: 'x', routineExternalId: 'no-routine', configuration: CONFIGURATION, script: [] }] }), 400)).toMatch(
      /items\[0\]\.routineExternalId: the simulator routine "no-routine" does not exist/,
    );
    const dup = await h.post('/simulators/models', { items: [{ ...model, externalId: 'model-r', simulatorExternalId: 'sim-r' }] });
    expect(dup.status).toBe(409);
    expect(dup.body.error.duplicated).toEqual([{ externalId: 'model-r' }]);
    const bad = await h.post('/simulators/routines/revisions', { items: [{ externalId: 'x', routineExternalId: 'routine-r', configuration: { ...CONFIGURATION, schedule: { enabled: true, cronExpression: 'every day' } }, script: [] }] });
    expect(errorMessage(bad, 400)).toMatch(/cronExpression/);
    const revision = (configuration: Record<string, unknown>) => ({ items: [{ externalId: 'routine-r-v2', routineExternalId: 'routine-r', configuration: { ...CONFIGURATION, ...configuration }, script: [] }] });
    expect(errorMessage(await h.post('/simulators/routines/revisions', revision({ schedule: { enabled: true } })), 400)).toMatch(
      /items\[0\]\.configuration\.schedule\.cronExpression: an enabled schedule needs a cron expression/,
    );
    expect(errorMessage(await h.post('/simulators/routines/revisions', revision({ dataSampling: { enabled: true, granularity: 1 } })), 400)).toMatch(
      /items\[0\]\.configuration\.dataSampling\.samplingWindow: enabled data sampling needs samplingWindow/,
    );
    const scheduled = revision({ schedule: { enabled: true, cronExpression: '*/10 * * * *' }, dataSampling: { enabled: true, samplingWindow: 15, granularity: 1, validationWindow: 5 } });
    expect((await h.post('/simulators/routines/revisions', scheduled)).status).toBe(201);
    expect((await h.post('/simulators/routines/list', { filter: { modelExternalIds: ['model-r'] } })).body.items).toHaveLength(1);
    expect((await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-r'] }, allVersions: true })).status).toBe(400);
    expect((await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-r'], allVersions: true } })).body.items).toHaveLength(2);
  });

  it('list only the newest revision of each model and routine unless asked for all versions', async () => {
    await chain('v');
    await created('/simulators/models/revisions', { externalId: 'model-v-v2', modelExternalId: 'model-v', fileId });
    await created('/simulators/routines/revisions', { externalId: 'routine-v-v2', routineExternalId: 'routine-v', configuration: CONFIGURATION, script: SCRIPT });
    const newest = (await h.post('/simulators/models/revisions/list', { filter: { modelExternalIds: ['model-v'] } })).body.items;
    expect(newest.map((r: { externalId: string; versionNumber: number }) => [r.externalId, r.versionNumber])).toEqual([['model-v-v2', 2]]);
    expect((await h.post('/simulators/models/revisions/list', { filter: { modelExternalIds: ['model-v'], allVersions: true } })).body.items).toHaveLength(2);
    const routines = (await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-v'] } })).body.items;
    expect(routines.map((r: { externalId: string }) => r.externalId)).toEqual(['routine-v-v2']);
    expect((await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-v'], allVersions: true } })).body.items).toHaveLength(2);
    expect((await h.post('/simulators/models/revisions/byids', { items: [{ externalId: 'model-v-v1' }] })).body.items[0].versionNumber).toBe(1);
    const updated = await h.post('/simulators/models/revisions/update', { items: [{ externalId: 'model-v-v2', update: { status: { set: 'success' }, statusMessage: { set: 'parsed' } } }] });
    expect(updated.body.items[0]).toMatchObject({ status: 'success', statusMessage: 'parsed' });
  });
});

describe('simulation runs', () => {
  it('are ready for the routine\'s integration, and report status, data and logs', async () => {
    await chain('run');
    const res = await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-run', runTime: 1234, inputs: [{ referenceId: 'CWT', value: 12 }] }] });
    expect(res.status).toBe(201);
    const run = res.body.items[0];
    expect(run).toMatchObject({
      simulatorExternalId: 'sim-run',
      simulatorIntegrationExternalId: 'int-run',
      modelExternalId: 'model-run',
      modelRevisionExternalId: 'model-run-v1',
      routineExternalId: 'routine-run',
      routineRevisionExternalId: 'routine-run-v1',
      runTime: 1234,
      status: 'ready',
      runType: 'external',
      dataSetId,
      userId: expect.any(String),
      logId: expect.any(Number),
    });
    expect(run).not.toHaveProperty('inputs');
    let data = (await h.post('/simulators/runs/data/list', { items: [{ runId: run.id }] })).body.items;
    expect(data).toEqual([{ runId: run.id, inputs: [{ referenceId: 'CWT', value: 12, valueType: 'DOUBLE', overridden: true }], outputs: [] }]);

    const outputs = [{ referenceId: 'ST', value: 18.5, valueType: 'DOUBLE', unit: { name: 'C' }, simulatorObjectReference: { address: 'out' } }];
    expect((await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'running' }] })).status).toBe(200);
    expect((await h.post('/simulators/runs/list', { filter: { status: 'running', routineExternalIds: ['routine-run'] } })).body.items.map((r: { id: number }) => r.id)).toEqual([run.id]);
    const done = await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'success', statusMessage: 'ok', simulationTime: 5000, outputs }] });
    expect(done.status).toBe(200);
    const [after] = (await h.post('/simulators/runs/byids', { items: [{ id: run.id }] })).body.items;
    expect(after).toMatchObject({ status: 'success', statusMessage: 'ok', simulationTime: 5000 });
    data = (await h.post('/simulators/runs/data/list', { items: [{ runId: run.id }] })).body.items;
    expect(data[0].outputs).toEqual(outputs);
    expect(errorMessage(await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'running' }] }), 400)).toMatch(/is success .* it has ended/);

    const entries = [{ timestamp: 1000, message: 'Solved', severity: 'Information' }];
    const logged = await h.post('/simulators/logs/update', { items: [{ id: run.logId, update: { data: { add: entries } } }] });
    expect(logged.status).toBe(200);
    const [log] = (await h.post('/simulators/logs/byids', { items: [{ id: run.logId }] })).body.items;
    expect(log).toMatchObject({ id: run.logId, dataSetId, data: entries });
    const ranges = await h.post('/simulators/runs/list', { filter: { routineExternalIds: ['routine-run'], simulationTime: { min: 4000, max: 6000 } }, sort: [{ property: 'createdTime', order: 'desc' }] });
    expect(ranges.body.items.map((r: { id: number }) => r.id)).toEqual([run.id]);
  });

  it('are queued until a connector of their simulator takes them', async () => {
    await chain('q', { integration: false });
    const run = (await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-q' }] })).body.items[0];
    expect(run.status).toBe('queued');
    expect(run).not.toHaveProperty('simulatorIntegrationExternalId');
    expect(errorMessage(await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'running' }] }), 400)).toMatch(/is queued .* no connector has taken it/);
    const taken = await h.post('/simulators/runs/claim', { simulatorIntegrationExternalId: 'int-q', limit: 10 });
    expect(taken.body.items).toEqual([expect.objectContaining({ id: run.id, status: 'ready', simulatorIntegrationExternalId: 'int-q' })]);
    expect((await h.post('/simulators/runs/claim', { simulatorIntegrationExternalId: 'int-q' })).body.items).toEqual([]);
    expect((await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'running' }] })).status).toBe(200);

    for (let k = 0; k < 4; k++) expect((await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-q' }] })).body.items[0].status).toBe('queued');
    const claims = await Promise.all([1, 2].map(() => h.post('/simulators/runs/claim', { simulatorIntegrationExternalId: 'int-q', limit: 4 })));
    const ids = claims.flatMap((c) => c.body.items.map((r: { id: number }) => r.id));
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect((await h.post('/simulators/runs/list', { filter: { routineExternalIds: ['routine-q'], status: 'queued' } })).body.items).toEqual([]);
  });

  it('refuse a routine revision or model revision that does not exist, an unknown input, and a connector that is down unless queued', async () => {
    await chain('bad');
    const byRevision = { routineRevisionExternalId: 'routine-bad-v1', modelRevisionExternalId: 'model-bad-v1' };
    expect((await h.post('/simulators/run', { items: [byRevision] })).body.items[0]).toMatchObject({ routineRevisionExternalId: 'routine-bad-v1', status: 'ready' });
    expect(errorMessage(await h.post('/simulators/run', { items: [{ ...byRevision, routineRevisionExternalId: 'nope' }] }), 400)).toMatch(
      /items\[0\]\.routineRevisionExternalId: the simulator routine revision "nope" does not exist/,
    );
    expect(errorMessage(await h.post('/simulators/run', { items: [{ ...byRevision, modelRevisionExternalId: 'nope' }] }), 400)).toMatch(/items\[0\]\.modelRevisionExternalId: .*"nope" does not exist/);
    expect(errorMessage(await h.post('/simulators/run', { items: [{ ...byRevision, modelRevisionExternalId: 'model-a-v1' }] }), 400)).toMatch(/not of the routine's "model-bad"/);
    expect(errorMessage(await h.post('/simulators/run', { items: [{ routineExternalId: 'nope' }] }), 400)).toMatch(/the simulator routine "nope" does not exist/);
    expect(errorMessage(await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-bad', inputs: [{ referenceId: 'XX', value: 1 }] }] }), 400)).toMatch(
      /items\[0\]\.inputs\[0\]\.referenceId: the routine revision "routine-bad-v1" has no input "XX"/,
    );
    const before = (await h.post('/simulators/runs/list', { filter: { routineExternalIds: ['routine-bad'] } })).body.items.length;
    clock.advance(6 * 60 * 1000);
    expect((await h.post('/simulators/integrations/list', { filter: { active: false, simulatorExternalIds: ['sim-bad'] } })).body.items).toHaveLength(1);
    expect(errorMessage(await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-bad' }] }), 400)).toMatch(/"int-bad" .* no heartbeat .*queue: true/);
    expect((await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-bad', queue: true }] })).status).toBe(201);
    const beat = await h.post('/simulators/integrations/update', { items: [{ externalId: 'int-bad', update: { heartbeat: { set: clock.now() } } }] });
    expect(beat.body.items[0].active).toBe(true);
    expect((await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-bad' }] })).status).toBe(201);
    expect((await h.post('/simulators/runs/list', { filter: { routineExternalIds: ['routine-bad'] } })).body.items.length).toBe(before + 2);
  });
});

describe('bad input', () => {
  it('is refused with a 400 naming what and where', async () => {
    const model = { externalId: 'm', simulatorExternalId: 'sim-a', name: 'x', dataSetId, type: 't' };
    expect(errorMessage(await h.post('/simulators/models', { items: [{ ...model, externalId: '' }] }), 400)).toMatch(/items\[0\]\.externalId/);
    expect(errorMessage(await h.post('/simulators/models', { items: [{ ...model, name: 'n'.repeat(51) }] }), 400)).toMatch(/items\[0\]\.name/);
    expect(errorMessage(await h.post('/simulators/runs/byids', { items: [{ id: 0 }] }), 400)).toMatch(/items\[0\]\.id/);
    const many = Array.from({ length: 101 }, (_, k) => ({ id: k + 1 }));
    expect(errorMessage(await h.post('/simulators/models/revisions/byids', { items: many }), 400)).toMatch(/items/);
    expect(errorMessage(await h.post('/simulators/routines/revisions/list', { limit: 21 }), 400)).toMatch(/limit/);
    expect(errorMessage(await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-a' }, { routineExternalId: 'routine-a' }] }), 400)).toMatch(/items/);
    expect(errorMessage(await h.post('/simulators/runs/list', { filter: { status: 'done' } }), 400)).toMatch(/filter\.status/);
    const unknown = await h.post('/simulators/runs/data/list', { items: [{ runId: 123456789 }] });
    expect(unknown.body.error.missing).toEqual([{ id: 123456789 }]);
  });
});

describe('limits', () => {
  const revisions = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, k) => ({ externalId: `model-lim-r${from + k}`, modelExternalId: 'model-lim', fileId }));

  it('keep at most 200 revisions per model: the 201st is refused, or replaces the oldest with deleteOldest and simulatorsAcl:DELETE', async () => {
    await chain('lim');
    expect((await h.post('/simulators/models/revisions', { items: revisions(2, 100) })).status).toBe(201);
    expect((await h.post('/simulators/models/revisions', { items: revisions(101, 200) })).status).toBe(201);
    const count = async () => (await h.post('/simulators/models/revisions/list', { filter: { modelExternalIds: ['model-lim'], allVersions: true } })).body.items.length;
    expect(await count()).toBe(200);
    const over = await h.post('/simulators/models/revisions', { items: revisions(201, 201) });
    expect(errorMessage(over, 400)).toMatch(/items\[0\]: the simulator model "model-lim" holds 200 revisions, the most a model keeps \(200\); send deleteOldest: true/);
    const explicit = await h.post('/simulators/models/revisions', { items: revisions(201, 201), deleteOldest: false });
    expect(errorMessage(explicit, 400)).toMatch(/holds 200 revisions/);

    const signer = await builtInSigner(h);
    const caps = (actions: string[]) => [capability('simulatorsAcl', actions), capability('filesAcl', ['READ']), capability('datasetsAcl', ['READ'])];
    await createGroup(h, { name: 'sim writer', members: ['sim writer'], capabilities: caps(['READ', 'WRITE']) });
    await createGroup(h, { name: 'sim deleter', members: ['sim deleter'], capabilities: caps(['READ', 'WRITE', 'DELETE']) });
    const writer = bearer(await signer.sign({ sub: 'sim writer' }));
    const deleter = bearer(await signer.sign({ sub: 'sim deleter' }));
    const replace = { items: revisions(201, 201), deleteOldest: true };
    expect(errorMessage(await h.request('POST', '/simulators/models/revisions', replace, writer), 403)).toMatch(/items\[0\]: deleteOldest removes revisions, which needs simulatorsAcl:DELETE/);
    expect(await count()).toBe(200);
    const done = await h.request('POST', '/simulators/models/revisions', replace, deleter);
    expect(done.status).toBe(201);
    expect(done.body.items[0]).toMatchObject({ externalId: 'model-lim-r201', versionNumber: 201 });
    expect(await count()).toBe(200);
    const gone = await h.post('/simulators/models/revisions/byids', { items: [{ externalId: 'model-lim-v1' }] });
    expect(gone.body.error.missing).toEqual([{ externalId: 'model-lim-v1' }]);
  });

  it('count the revisions of requests that race for the last place once each: one is created, the other refused', async () => {
    await chain('race');
    const some = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => ({ externalId: `model-race-r${from + k}`, modelExternalId: 'model-race', fileId }));
    expect((await h.post('/simulators/models/revisions', { items: some(2, 199) })).status).toBe(201);
    const raced = await Promise.all([200, 201].map((n) => h.post('/simulators/models/revisions', { items: some(n, n) })));
    expect(raced.map((r) => r.status).sort()).toEqual([201, 400]);
    const all = (await h.post('/simulators/models/revisions/list', { filter: { modelExternalIds: ['model-race'], allVersions: true } })).body.items;
    expect(all).toHaveLength(200);
    expect(new Set(all.map((r: { versionNumber: number }) => r.versionNumber)).size).toBe(200);
  });

  it('take deleteOldest at every version, as the official Python SDK sends it', async () => {
    await chain('old');
    const body = { items: [{ externalId: 'model-old-v2', modelExternalId: 'model-old', fileId }], deleteOldest: false };
    expect((await h.request('POST', '/simulators/models/revisions', body, { 'cdf-version': '20230101' })).status).toBe(201);
    expect(errorMessage(await h.post('/simulators/models/revisions', { ...body, deleteOldest: 'yes' }), 400)).toMatch(/deleteOldest/);
  });

  it('refuse bodies past 50 KB for revision creation and runs, and connector reports past 100 KB per run, changing nothing', async () => {
    await chain('big');
    const long = 'x'.repeat(51 * 1024);
    const model = await h.post('/simulators/models/revisions', { items: [{ externalId: 'model-big-v2', modelExternalId: 'model-big', fileId, description: long }] });
    expect(errorMessage(model, 413)).toMatch(/51200 bytes/);
    const routine = await h.post('/simulators/routines/revisions', { items: [{ externalId: 'routine-big-v2', routineExternalId: 'routine-big', configuration: CONFIGURATION, script: [{ order: 1, description: long, steps: [] }] }] });
    expect(errorMessage(routine, 413)).toMatch(/51200 bytes/);
    const inputs = Array.from({ length: 400 }, () => ({ referenceId: 'CWT', value: 'y'.repeat(150) }));
    expect(errorMessage(await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-big', inputs }] }), 413)).toMatch(/51200 bytes/);
    expect((await h.post('/simulators/routines/revisions/list', { filter: { routineExternalIds: ['routine-big'], allVersions: true } })).body.items).toHaveLength(1);

    const run = (await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-big' }] })).body.items[0];
    const output = (n: number) => Array.from({ length: n }, (_, k) => ({ referenceId: `o${k}`, value: 'z'.repeat(1000), valueType: 'STRING' }));
    expect((await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'running', outputs: output(60) }] })).status).toBe(200);
    const over = await h.post('/simulators/run/callback', { items: [{ id: run.id, status: 'success', outputs: output(45) }] });
    expect(errorMessage(over, 413)).toMatch(/items\[0\]: a connector reports at most 102400 bytes \(100 KB\) per simulation run/);
    const [after] = (await h.post('/simulators/runs/byids', { items: [{ id: run.id }] })).body.items;
    expect(after.status).toBe('running');
    expect((await h.post('/simulators/runs/data/list', { items: [{ runId: run.id }] })).body.items[0].outputs).toHaveLength(60);
  });
});

describe('deleting', () => {
  const count = async (path: string, filter: Record<string, unknown>) => (await h.post(path, { filter })).body.items.length;

  it('a model takes its revisions, routines, routine revisions and runs with it', async () => {
    await chain('del');
    await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-del' }] });
    expect((await h.post('/simulators/models/delete', { items: [{ externalId: 'model-del' }] })).body).toEqual({});
    expect(await count('/simulators/models/revisions/list', { modelExternalIds: ['model-del'], allVersions: true })).toBe(0);
    expect(await count('/simulators/routines/list', { modelExternalIds: ['model-del'] })).toBe(0);
    expect(await count('/simulators/routines/revisions/list', { routineExternalIds: ['routine-del'], allVersions: true })).toBe(0);
    expect(await count('/simulators/runs/list', { modelExternalIds: ['model-del'] })).toBe(0);
    expect(await count('/simulators/integrations/list', { simulatorExternalIds: ['sim-del'] })).toBe(1);
  });

  it('an integration takes its routines with it; a routine its revisions and runs; a simulator everything of it', async () => {
    await chain('del2');
    const run = (await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-del2' }] })).body.items[0];
    expect((await h.post('/simulators/integrations/delete', { items: [{ externalId: 'int-del2' }] })).status).toBe(200);
    expect(await count('/simulators/routines/list', { modelExternalIds: ['model-del2'] })).toBe(0);
    expect((await h.post('/simulators/runs/byids', { items: [{ id: run.id }] })).status).toBe(400);
    expect((await h.post('/simulators/logs/byids', { items: [{ id: run.logId }] })).status).toBe(400);
    expect(await count('/simulators/models/list', { simulatorExternalIds: ['sim-del2'] })).toBe(1);

    await chain('del3');
    expect((await h.post('/simulators/routines/delete', { items: [{ externalId: 'routine-del3' }] })).status).toBe(200);
    expect(await count('/simulators/routines/revisions/list', { routineExternalIds: ['routine-del3'], allVersions: true })).toBe(0);
    expect((await h.post('/simulators/delete', { items: [{ externalId: 'sim-del3' }] })).status).toBe(200);
    expect(await count('/simulators/models/list', { simulatorExternalIds: ['sim-del3'] })).toBe(0);
    expect(await count('/simulators/integrations/list', { simulatorExternalIds: ['sim-del3'] })).toBe(0);
    expect(await count('/simulators/models/revisions/list', { simulatorExternalIds: ['sim-del3'], allVersions: true })).toBe(0);
    expect(errorMessage(await h.post('/simulators/delete', { items: [{ externalId: 'sim-del3' }] }), 400)).toBeTruthy();
  });
});

describe('access', () => {
  it('needs simulatorsAcl with the action of each operation, and a data-set scope hides what is outside it as absent', async () => {
    await chain('acc');
    const other = (await h.post('/datasets', { items: [{ externalId: 'sim-other-ds' }] })).body.items[0].id;
    await created('/simulators/models', { externalId: 'model-acc-other', simulatorExternalId: 'sim-acc', name: 'Other', dataSetId: other, type: 'SteadyState' });
    const signer = await builtInSigner(h);
    await createGroup(h, { name: 'sim reader', members: ['sim reader'], capabilities: [capability('simulatorsAcl', ['READ'], { datasetScope: { ids: [dataSetId] } })] });
    const reader = bearer(await signer.sign({ sub: 'sim reader' }));
    const listed = await h.request('POST', '/simulators/models/list', { filter: { simulatorExternalIds: ['sim-acc'] } }, reader);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.items.map((m: { externalId: string }) => m.externalId)).toEqual(['model-acc']);
    const hidden = await h.request('POST', '/simulators/models/byids', { items: [{ externalId: 'model-acc-other' }] }, reader);
    expect(hidden.body.error.missing).toEqual([{ externalId: 'model-acc-other' }]);
    const simulators = (await h.request('POST', '/simulators/list', {}, reader)).body.items;
    expect(simulators.map((s: { externalId: string }) => s.externalId)).toContain('sim-acc');
    expect(errorMessage(await h.request('POST', '/simulators/models', { items: [{ externalId: 'x', simulatorExternalId: 'sim-acc', name: 'x', dataSetId, type: 't' }] }, reader), 403)).toMatch(
      /simulatorsAcl:WRITE/,
    );
    expect(errorMessage(await h.request('POST', '/simulators/run', { items: [{ routineExternalId: 'routine-acc' }] }, reader), 403)).toMatch(/simulatorsAcl:RUN/);
    expect(errorMessage(await h.request('POST', '/simulators/models/delete', { items: [{ externalId: 'model-acc' }] }, reader), 403)).toMatch(/simulatorsAcl:DELETE/);
    expect(errorMessage(await h.request('POST', '/simulators/run/callback', { items: [{ id: 1, status: 'running' }] }, reader), 403)).toMatch(/simulatorsAcl:MANAGE/);
  });
});

