/**
 * A simulator and what a run needs, made over HTTP as a connector and a user would: shared by the simulators
 * tests and the workflow tests of simulation tasks.
 */
import type { Harness } from './harness.js';

export const SIMULATOR = {
  name: 'DWSIM',
  fileExtensionTypes: ['dwxmz'],
  modelTypes: [{ name: 'Steady state', key: 'SteadyState' }],
  stepFields: [{ stepType: 'get/set', fields: [{ name: 'objectName', label: 'Object', info: 'the object' }] }],
  unitQuantities: [{ name: 'temperature', label: 'Temperature', units: [{ label: 'C', name: 'C' }] }],
};
export const CONFIGURATION = {
  schedule: { enabled: false },
  dataSampling: { enabled: false },
  logicalCheck: [],
  steadyStateDetection: [],
  inputs: [{ name: 'Cold water temperature', referenceId: 'CWT', value: 10, valueType: 'DOUBLE', unit: { name: 'C', quantity: 'temperature' } }],
  outputs: [{ name: 'Shower temperature', referenceId: 'ST', valueType: 'DOUBLE', unit: { name: 'C', quantity: 'temperature' } }],
};
export const SCRIPT = [{ order: 1, steps: [{ order: 1, stepType: 'Set', arguments: { referenceId: 'CWT', objectName: 'cold' } }, { order: 2, stepType: 'Command', arguments: { command: 'Solve' } }] }];

/** The item the create answered with (201), or an error showing the answer. */
export async function created(h: Harness, path: string, item: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await h.request('POST', path, { items: [item] }, headers);
  if (res.status !== 201) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.items[0];
}

/**
 * A simulator, an integration whose heartbeat is `heartbeat`, a model with one revision of the file `fileId`, a
 * routine (on the integration unless told otherwise) with one revision, all named after `x`.
 */
export async function simulatorChain(h: Harness, x: string, at: { dataSetId: number; fileId: number; heartbeat: number }, routine: { integration?: boolean } = { integration: true }) {
  const { dataSetId, fileId, heartbeat } = at;
  await created(h, '/simulators', { externalId: `sim-${x}`, ...SIMULATOR });
  const integration = await created(h, '/simulators/integrations', { externalId: `int-${x}`, simulatorExternalId: `sim-${x}`, heartbeat, dataSetId, connectorVersion: '1.0.0' });
  await created(h, '/simulators/models', { externalId: `model-${x}`, simulatorExternalId: `sim-${x}`, name: 'Model', dataSetId, type: 'SteadyState' });
  await created(h, '/simulators/models/revisions', { externalId: `model-${x}-v1`, modelExternalId: `model-${x}`, fileId });
  await created(h, '/simulators/routines', {
    externalId: `routine-${x}`,
    modelExternalId: `model-${x}`,
    name: 'Routine',
    ...(routine.integration ? { simulatorIntegrationExternalId: `int-${x}` } : {}),
  });
  await created(h, '/simulators/routines/revisions', { externalId: `routine-${x}-v1`, routineExternalId: `routine-${x}`, configuration: CONFIGURATION, script: SCRIPT });
  return { integration };
}
