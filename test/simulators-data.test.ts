/**
 * Simulator model revision data over HTTP, on both backends: what a connector read from a revision's file
 * (flowsheets, information), written by the connector (`set` of each field, at most 1 MB per request), read
 * by model revision external id within the reader's data sets, and deleted with its revision; and the
 * deletion of model revisions, which the JavaScript SDK's alpha client calls.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, builtInSigner, capability, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';
import { ManualClock } from './support/manual-clock.js';
import { created, simulatorChain } from './support/simulators.js';

let h: Harness;
const clock = new ManualClock(Date.now());
let dataSetId: number;
let otherDataSetId: number;
let fileId: number;

const chain = (x: string) => simulatorChain(h, x, { dataSetId, fileId, heartbeat: clock.now() });

/** A flowsheet as the official Python SDK's integration tests write it. */
const FLOWSHEET = {
  thermodynamics: { propertyPackages: ['Peng-Robinson', 'NRTL'], components: ['Water', 'Methane'] },
  simulatorObjectEdges: [{ id: 'edge-1', name: 'Stream', sourceId: 'node-1', targetId: 'node-2', connectionType: 'Energy' }],
  simulatorObjectNodes: [
    {
      id: 'node-1',
      name: 'Mixer',
      type: 'input',
      properties: [
        { name: 'Temperature', referenceObject: { objectName: 'Mixer' }, valueType: 'DOUBLE', value: 25.5, unit: { name: 'C', quantity: 'temperature' }, readOnly: true },
        { name: 'Label', referenceObject: { objectName: 'Mixer' }, valueType: 'STRING', value: 'hot' },
      ],
      graphicalObject: { height: 50, width: 100, scaleX: 10, scaleY: 8.73, active: true, angle: 90, position: { x: 100, y: 100 } },
    },
  ],
};

/** Requests as the official Python SDK sends them: gzipped, with `cdf-version: alpha`. */
const sdkPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  h.request('POST', path, gzipSync(JSON.stringify(body)), { 'content-type': 'application/json', 'content-encoding': 'gzip', 'cdf-version': 'alpha', ...headers });
const update = (items: unknown[], headers: Record<string, string> = {}) => h.request('POST', '/simulators/models/revisions/data/update', { items }, headers);
const list = (ids: string[], headers: Record<string, string> = {}) =>
  h.request('POST', '/simulators/models/revisions/data/list', { items: ids.map((modelRevisionExternalId) => ({ modelRevisionExternalId })) }, headers);
const setFlowsheets = (modelRevisionExternalId: string, flowsheets: unknown) => ({ modelRevisionExternalId, update: { flowsheets: { set: flowsheets } } });

let signer: Awaited<ReturnType<typeof builtInSigner>>;
async function principal(name: string, actions: string[], scope?: Record<string, unknown>) {
  await createGroup(h, { name, members: [name], capabilities: [capability('simulatorsAcl', actions, scope)] });
  return bearer(await signer.sign({ sub: name }));
}

beforeAll(async () => {
  h = await startHarness({}, {}, { clock });
  [dataSetId, otherDataSetId] = (await h.post('/datasets', { items: [{ externalId: 'simdata-ds' }, { externalId: 'simdata-other' }] })).body.items.map((d: { id: number }) => d.id);
  fileId = (await h.post('/files', { name: 'ShowerMixer.dwxmz', dataSetId })).body.id;
  signer = await builtInSigner(h);
});
afterAll(() => h.close());

describe('model revision data', () => {
  it('is absent until the connector writes it, then read as the Python SDK reads it; each set replaces its field', async () => {
    await chain('d');
    expect((await sdkPost('/simulators/models/revisions/data/list', { items: [{ modelRevisionExternalId: 'model-d-v1' }] })).body).toEqual({ items: [] });

    const written = await sdkPost('/simulators/models/revisions/data/update', { items: [setFlowsheets('model-d-v1', [FLOWSHEET])] });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    const first = clock.now();
    expect(written.body.items).toEqual([{ modelRevisionExternalId: 'model-d-v1', dataSetId, flowsheets: [FLOWSHEET], createdTime: first, lastUpdatedTime: first }]);
    const read = await sdkPost('/simulators/models/revisions/data/list', { items: [{ modelRevisionExternalId: 'model-d-v1' }] });
    expect(read.body.items).toEqual(written.body.items);

    clock.advance(1000);
    const info = { simulatorVersion: '8.6', unitSystem: 'SI' };
    expect((await update([{ modelRevisionExternalId: 'model-d-v1', update: { info: { set: info } } }])).status).toBe(200);
    const replaced = { ...FLOWSHEET, simulatorObjectEdges: [] };
    expect((await update([setFlowsheets('model-d-v1', [replaced])])).status).toBe(200);
    const [data] = (await list(['model-d-v1'])).body.items;
    expect(data).toEqual({ modelRevisionExternalId: 'model-d-v1', dataSetId, flowsheets: [replaced], info, createdTime: first, lastUpdatedTime: first + 1000 });
    expect(data).not.toHaveProperty('id');
  });

  it('is written for several revisions at once, and read in the order asked, leaving out revisions without data', async () => {
    await chain('d2');
    await created(h, '/simulators/models/revisions', { externalId: 'model-d2-v2', modelExternalId: 'model-d2', fileId });
    await created(h, '/simulators/models/revisions', { externalId: 'model-d2-v3', modelExternalId: 'model-d2', fileId });
    expect((await update([setFlowsheets('model-d2-v3', []), setFlowsheets('model-d2-v1', [FLOWSHEET])])).status).toBe(200);
    const items = (await list(['model-d2-v1', 'model-d2-v2', 'model-d2-v3'])).body.items;
    expect(items.map((d: { modelRevisionExternalId: string }) => d.modelRevisionExternalId)).toEqual(['model-d2-v1', 'model-d2-v3']);
  });

  it('is created once when connectors race to write a revision\'s first data', async () => {
    await chain('race');
    const raced = await Promise.all([1, 2, 3].map((k) => update([{ modelRevisionExternalId: 'model-race-v1', update: { info: { set: { writer: String(k) } } } }])));
    expect(raced.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await list(['model-race-v1'])).body.items).toEqual([expect.objectContaining({ modelRevisionExternalId: 'model-race-v1', info: { writer: expect.any(String) } })]);
  });

  it('refuses bad input with a 400 naming what and where, and writes nothing', async () => {
    await chain('bad');
    const edge = { ...FLOWSHEET.simulatorObjectEdges[0], connectionType: 'Water' };
    expect(errorMessage(await update([setFlowsheets('model-bad-v1', [{ ...FLOWSHEET, simulatorObjectEdges: [edge] }])]), 400)).toMatch(
      /items\[0\]\.update\.flowsheets\.set\[0\]\.simulatorObjectEdges\[0\]\.connectionType/,
    );
    const node = { ...FLOWSHEET.simulatorObjectNodes[0], properties: [{ name: 'T', referenceObject: {}, valueType: 'DOUBLE' }] };
    expect(errorMessage(await update([setFlowsheets('model-bad-v1', [{ ...FLOWSHEET, simulatorObjectNodes: [node] }])]), 400)).toMatch(
      /items\[0\]\.update\.flowsheets\.set\[0\]\.simulatorObjectNodes\[0\]\.properties\[0\]/,
    );
    expect(errorMessage(await update([{ modelRevisionExternalId: 'model-bad-v1', update: { flowsheets: { add: [FLOWSHEET] } } }]), 400)).toMatch(/items\[0\]\.update\.flowsheets/);
    expect(errorMessage(await update([{ modelRevisionExternalId: 'model-bad-v1', update: { info: { set: { k: 1 } } } }]), 400)).toMatch(/items\[0\]\.update\.info\.set/);
    expect(errorMessage(await update([{ modelRevisionExternalId: 'model-bad-v1', update: { dataSetId: { set: otherDataSetId } } }]), 400)).toMatch(
      /items\[0\]\.update\.dataSetId: dataSetId is fixed/,
    );
    expect(errorMessage(await update([{ externalId: 'model-bad-v1', update: {} }]), 400)).toMatch(/items\[0\]/);
    expect(errorMessage(await update([setFlowsheets('model-bad-v1', [FLOWSHEET]), setFlowsheets('nope', [])]), 400)).toMatch(
      /items\[1\]\.modelRevisionExternalId: the simulator model revision "nope" does not exist/,
    );
    expect(errorMessage(await update([setFlowsheets('model-bad-v1', [FLOWSHEET]), setFlowsheets('model-bad-v1', [])]), 400)).toMatch(/names the same item more than once/);
    expect((await list(['model-bad-v1'])).body.items).toEqual([]);

    const unknown = await list(['model-bad-v1', 'nope']);
    expect(errorMessage(unknown, 400)).toBeTruthy();
    expect(unknown.body.error.missing).toEqual([{ modelRevisionExternalId: 'nope' }]);
    expect(errorMessage(await list([]), 400)).toMatch(/items/);
    expect(errorMessage(await list(Array.from({ length: 101 }, (_, k) => `r${k}`)), 400)).toMatch(/items/);
  });

  it('takes update bodies of at most 1 MB (1048576 bytes): a larger one is refused with 413, changing nothing', async () => {
    await chain('big');
    const properties = (n: number) => Array.from({ length: n }, (_, k) => ({ name: `p${k}`, referenceObject: { objectName: 'Mixer' }, valueType: 'STRING', value: 'v'.repeat(1000) }));
    const sheet = (n: number) => [{ ...FLOWSHEET, simulatorObjectNodes: [{ ...FLOWSHEET.simulatorObjectNodes[0], properties: properties(n) }] }];
    expect((await update([setFlowsheets('model-big-v1', sheet(900))])).status).toBe(200);
    const over = await update([setFlowsheets('model-big-v1', sheet(1100))]);
    expect(errorMessage(over, 413)).toMatch(/larger than the limit of 1048576 bytes/);
    expect((await list(['model-big-v1'])).body.items[0].flowsheets[0].simulatorObjectNodes[0].properties).toHaveLength(900);
  });

  it('is deleted with its revision, its model and its simulator', async () => {
    await chain('gone');
    const run = (await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-gone' }] })).body.items[0];
    expect((await update([setFlowsheets('model-gone-v1', [FLOWSHEET])])).status).toBe(200);
    expect((await h.post('/simulators/models/revisions/delete', { items: [{ externalId: 'model-gone-v1' }] })).body).toEqual({});
    expect((await list(['model-gone-v1'])).body.error.missing).toEqual([{ modelRevisionExternalId: 'model-gone-v1' }]);
    await created(h, '/simulators/models/revisions', { externalId: 'model-gone-v1', modelExternalId: 'model-gone', fileId });
    expect((await list(['model-gone-v1'])).body.items).toEqual([]);

    await chain('gone-m');
    expect((await update([setFlowsheets('model-gone-m-v1', [FLOWSHEET])])).status).toBe(200);
    expect((await h.post('/simulators/models/delete', { items: [{ externalId: 'model-gone-m' }] })).status).toBe(200);
    await created(h, '/simulators/models', { externalId: 'model-gone-m', simulatorExternalId: 'sim-gone-m', name: 'Model', dataSetId, type: 'SteadyState' });
    await created(h, '/simulators/models/revisions', { externalId: 'model-gone-m-v1', modelExternalId: 'model-gone-m', fileId });
    expect((await list(['model-gone-m-v1'])).body.items).toEqual([]);

    await chain('gone-s');
    expect((await update([setFlowsheets('model-gone-s-v1', [FLOWSHEET])])).status).toBe(200);
    expect((await h.post('/simulators/delete', { items: [{ externalId: 'sim-gone-s' }] })).status).toBe(200);
    await chain('gone-s');
    expect((await list(['model-gone-s-v1'])).body.items).toEqual([]);
    expect((await h.post('/simulators/runs/byids', { items: [{ id: run.id }] })).body.error.missing).toEqual([{ id: run.id }]);
  });

  it('is deleted with the oldest revision that deleteOldest replaces', async () => {
    await chain('old');
    expect((await update([setFlowsheets('model-old-v1', [FLOWSHEET])])).status).toBe(200);
    const more = Array.from({ length: 199 }, (_, k) => ({ externalId: `model-old-r${k + 2}`, modelExternalId: 'model-old', fileId }));
    expect((await h.post('/simulators/models/revisions', { items: more })).status).toBe(201);
    expect((await h.post('/simulators/models/revisions', { items: [{ externalId: 'model-old-r201', modelExternalId: 'model-old', fileId }], deleteOldest: true })).status).toBe(201);
    const again = await h.post('/simulators/models/revisions', { items: [{ externalId: 'model-old-v1', modelExternalId: 'model-old', fileId }], deleteOldest: true });
    expect(again.status).toBe(201);
    expect((await list(['model-old-v1'])).body.items).toEqual([]);
  });

  it('is read with simulatorsAcl:READ and written with simulatorsAcl:MANAGE, within the data sets of a scope; outside it, as absent', async () => {
    await chain('acc');
    await created(h, '/simulators/models', { externalId: 'model-acc-other', simulatorExternalId: 'sim-acc', name: 'Other', dataSetId: otherDataSetId, type: 'SteadyState' });
    await created(h, '/simulators/models/revisions', { externalId: 'model-acc-other-v1', modelExternalId: 'model-acc-other', fileId });
    expect((await update([setFlowsheets('model-acc-v1', [FLOWSHEET]), setFlowsheets('model-acc-other-v1', [FLOWSHEET])])).status).toBe(200);

    const scope = { datasetScope: { ids: [dataSetId] } };
    const reader = await principal('simdata reader', ['READ'], scope);
    const connector = await principal('simdata connector', ['READ', 'MANAGE'], scope);
    const writer = await principal('simdata writer', ['READ', 'WRITE']);

    expect((await list(['model-acc-v1'], reader)).body.items).toEqual([expect.objectContaining({ modelRevisionExternalId: 'model-acc-v1', dataSetId })]);
    const hidden = await list(['model-acc-other-v1'], reader);
    const absent = await list(['model-acc-none-v1'], reader);
    expect(hidden.body.error.missing).toEqual([{ modelRevisionExternalId: 'model-acc-other-v1' }]);
    expect(hidden.body.error.message).toBe(absent.body.error.message.replace('model-acc-none-v1', 'model-acc-other-v1'));

    expect(errorMessage(await update([setFlowsheets('model-acc-v1', [])], reader), 403)).toMatch(/simulatorsAcl:MANAGE/);
    expect(errorMessage(await update([setFlowsheets('model-acc-v1', [])], writer), 403)).toMatch(/simulatorsAcl:MANAGE/);
    expect(errorMessage(await update([setFlowsheets('model-acc-other-v1', [])], connector), 400)).toBe(
      'items[0].modelRevisionExternalId: the simulator model revision "model-acc-other-v1" does not exist',
    );
    expect((await update([setFlowsheets('model-acc-v1', [])], connector)).status).toBe(200);
    const [emptied, other] = (await list(['model-acc-v1', 'model-acc-other-v1'])).body.items;
    expect(emptied).not.toHaveProperty('flowsheets');
    expect(other.flowsheets).toEqual([FLOWSHEET]);
  });
});

describe('model revision deletion', () => {
  it('needs simulatorsAcl:DELETE over the revision, and deletes its log and the runs made on it', async () => {
    await chain('rdel');
    await created(h, '/simulators/models/revisions', { externalId: 'model-rdel-v2', modelExternalId: 'model-rdel', fileId });
    const [revision] = (await h.post('/simulators/models/revisions/byids', { items: [{ externalId: 'model-rdel-v2' }] })).body.items;
    const run = (await h.post('/simulators/run', { items: [{ routineExternalId: 'routine-rdel' }] })).body.items[0];
    expect(run.modelRevisionExternalId).toBe('model-rdel-v2');
    const older = (await h.post('/simulators/run', { items: [{ routineRevisionExternalId: 'routine-rdel-v1', modelRevisionExternalId: 'model-rdel-v1' }] })).body.items[0];

    const writer = await principal('simdata rdel writer', ['READ', 'WRITE']);
    const scopedDeleter = await principal('simdata rdel deleter', ['READ', 'DELETE'], { datasetScope: { ids: [otherDataSetId] } });
    expect(errorMessage(await h.request('POST', '/simulators/models/revisions/delete', { items: [{ externalId: 'model-rdel-v2' }] }, writer), 403)).toMatch(/simulatorsAcl:DELETE/);
    const hidden = await h.request('POST', '/simulators/models/revisions/delete', { items: [{ externalId: 'model-rdel-v2' }] }, scopedDeleter);
    expect(hidden.body.error.missing).toEqual([{ externalId: 'model-rdel-v2' }]);
    expect((await h.post('/simulators/models/revisions/byids', { items: [{ externalId: 'model-rdel-v2' }] })).status).toBe(200);

    expect((await sdkPost('/simulators/models/revisions/delete', { items: [{ id: revision.id }] })).status).toBe(200);
    expect((await h.post('/simulators/models/revisions/byids', { items: [{ externalId: 'model-rdel-v2' }] })).body.error.missing).toEqual([{ externalId: 'model-rdel-v2' }]);
    expect((await h.post('/simulators/logs/byids', { items: [{ id: revision.logId }] })).status).toBe(400);
    expect((await h.post('/simulators/runs/byids', { items: [{ id: run.id }] })).status).toBe(400);
    expect((await h.post('/simulators/runs/byids', { items: [{ id: older.id }] })).status).toBe(200);
    const newest = (await h.post('/simulators/models/revisions/list', { filter: { modelExternalIds: ['model-rdel'] } })).body.items;
    expect(newest.map((r: { externalId: string }) => r.externalId)).toEqual(['model-rdel-v1']);
    expect(errorMessage(await h.post('/simulators/models/revisions/delete', { items: [{ externalId: 'model-rdel-v2' }] }), 400)).toBeTruthy();
  });
});
