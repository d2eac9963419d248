/**
 * Simulators over HTTP, on both backends: simulators and the integrations connectors report, models and
 * their revisions (at most 200 per model, `deleteOldest` with simulatorsAcl:DELETE), routines and their
 * revisions, runs (`queued` until a connector takes them, `ready` for the routine's integration), the
 * connectors' reports (at most 100 KB per run), logs, and the 50 KB bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, builtInSigner, capability, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness, type Response } from './support/harness.js';
import { ManualClock } from './support/manual-clock.js';

let h: Harness;
const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
let dataSetId: number;
let fileId: number;

async function created(path: string, item: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await h.request('POST', path, { items: [item] }, headers);
  if (res.status !== 201) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items[0];
}

const SIMULATOR = {
  name: 'DWSIM',
  fileExtensionTypes: ['dwxmz'],
  modelTypes: [{ name: 'Steady state', key: 'SteadyState' }],
  stepFields: [{ stepType: 'get/set', fields: [{ name: 'objectName', label: 'Object', info: 'the object' }] }],
  unitQuantities: [{ name: 'temperature', label: 'Temperature', units: [{ label: 'C', name: 'C' }] }],
};
const CONFIGURATION = {
  schedule: { enabled: false },
  dataSampling: { enabled: false },
  logicalCheck: [],
  steadyStateDetection: [],
  inputs: [{ name: 'Cold water temperature', referenceId: 'CWT', value: 10, valueType: 'DOUBLE', unit: { name: 'C', quantity: 'temperature' } }],
  outputs: [{ name: 'Shower temperature', referenceId: 'ST', valueType: 'DOUBLE', unit: { name: 'C', quantity: 'temperature' } }],
};
const SCRIPT = [{ order: 1, steps: [{ order: 1, stepType: 'Set', arguments: { referenceId: 'CWT', objectName: 'cold' } }, { order: 2, stepType: 'Command', arguments: { command: 'Solve' } }] }];

/** A simulator, an integration with a fresh heartbeat, a model with one revision, a routine on the integration with one revision. */
async function chain(x: string, routine: { integration?: boolean } = { integration: true }) {
  await created('/simulators', { externalId: `sim-${x}`, ...SIMULATOR });
  const integration = await created('/simulators/integrations', {
    externalId: `int-${x}`,
    simulatorExternalId: `sim-${x}`,
    heartbeat: clock.now(),
    dataSetId,
    connectorVersion: '1.0.0',
  });
  await created('/simulators/models', { externalId: `model-${x}`, simulatorExternalId: `sim-${x}`, name: 'Model', dataSetId, type: 'SteadyState' });
  await created('/simulators/models/revisions', { externalId: `model-${x}-v1`, modelExternalId: `model-${x}`, fileId });
  await created('/simulators/routines', {
    externalId: `routine-${x}`,
    modelExternalId: `model-${x}`,
    name: 'Routine',
    ...(routine.integration ? { simulatorIntegrationExternalId: `int-${x}` } : {}),
  });
  await created('/simulators/routines/revisions', { externalId: `routine-${x}-v1`, routineExternalId: `routine-${x}`, configuration: CONFIGURATION, script: SCRIPT });
  return { integration };
}

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
});
