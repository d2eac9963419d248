/**
 * Time series managed as instances: a node with data in `cdf_cdm:CogniteTimeSeries` (through that view or one
 * that implements it) has a time series bound to it by `instanceId`, whose managed fields follow the node;
 * the series is addressed by instance id in the time series and data point operations, refuses updates of
 * its managed fields, and goes with its data points when the node is deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, capability, clientToken, createGroup } from './support/auth.js';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // The unit node a series points at, temperature:deg_c, is one of the unit nodes every project has.
  await ok('/models/spaces', { items: [{ space: 'plant' }] });
});
afterAll(() => h?.close());

function view(externalId: string) {
  return { type: 'view', space: 'cdf_cdm', externalId, version: 'v1' };
}

async function ok(path: string, body: unknown) {
  const res = await h.post(path, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

const node = (externalId: string, properties: Record<string, unknown>, source = view('CogniteTimeSeries')) => ({
  instanceType: 'node',
  space: 'plant',
  externalId,
  sources: [{ source, properties }],
});
const apply = (...items: unknown[]) => ok('/models/instances', { items });
const byInstanceId = async (...externalIds: string[]) => (await ok('/timeseries/byids', { items: externalIds.map((externalId) => ({ instanceId: { space: 'plant', externalId } })) })).items;

describe('a node with CogniteTimeSeries data', () => {
  it('has a time series bound to it, with the fields its properties give', async () => {
    await apply(
      node('temp-1', { name: 'Inlet temperature', description: 'at the inlet', type: 'numeric', isStep: true, sourceUnit: 'degC', unit: { space: 'cdf_cdm_units', externalId: 'temperature:deg_c' } }),
      node('log-1', { type: 'string' }),
    );
    const [temp, log] = await byInstanceId('temp-1', 'log-1');
    expect(temp).toMatchObject({
      instanceId: { space: 'plant', externalId: 'temp-1' },
      name: 'Inlet temperature',
      description: 'at the inlet',
      isStep: true,
      isString: false,
      type: 'numeric',
      unit: 'degC',
      unitExternalId: 'temperature:deg_c',
    });
    expect(temp).not.toHaveProperty('externalId');
    expect(log).toMatchObject({ instanceId: { space: 'plant', externalId: 'log-1' }, isString: true, type: 'string', isStep: false });
    expect(log).not.toHaveProperty('name');
  });

  it('through a user view that implements CogniteTimeSeries as well', async () => {
    await ok('/models/views', {
      items: [{ space: 'plant', externalId: 'Sensor', version: '1', implements: [view('CogniteTimeSeries')], properties: {} }],
    });
    await apply(node('sensor-1', { name: 'Vibration', type: 'numeric' }, { type: 'view', space: 'plant', externalId: 'Sensor', version: '1' }));
    expect(await byInstanceId('sensor-1')).toMatchObject([{ name: 'Vibration', isString: false }]);
  });

  it('is listed and counted like any other series, and found by an instanceId filter', async () => {
    const list = await ok('/timeseries/list', { limit: 1000 });
    expect(list.items.map((s: any) => s.instanceId?.externalId)).toEqual(expect.arrayContaining(['temp-1', 'log-1', 'sensor-1']));
    const found = await ok('/timeseries/list', { advancedFilter: { equals: { property: ['instanceId', 'externalId'], value: 'temp-1' } } });
    expect(found.items.map((s: any) => s.name)).toEqual(['Inlet temperature']);
    const searched = await ok('/timeseries/search', { search: { query: 'inlet' } });
    expect(searched.items.map((s: any) => s.instanceId)).toEqual([{ space: 'plant', externalId: 'temp-1' }]);
    const count = await ok('/timeseries/aggregate', { filter: {} });
    expect(count.items[0].count).toBe(list.items.length);
  });

  it('follows the node: an update changes the managed fields, a write that changes nothing changes nothing', async () => {
    const [before] = await byInstanceId('temp-1');
    await apply(node('temp-1', { name: 'Inlet temperature' }));
    expect((await byInstanceId('temp-1'))[0].lastUpdatedTime).toBe(before.lastUpdatedTime);
    await apply(node('temp-1', { description: null, isStep: false, sourceUnit: 'K' }, view('CogniteTimeSeries')), node('temp-1b', { type: 'numeric' }));
    const [after] = await byInstanceId('temp-1');
    expect(after).toMatchObject({ name: 'Inlet temperature', isStep: false, unit: 'K', unitExternalId: 'temperature:deg_c' });
    expect(after).not.toHaveProperty('description');
    expect(after.id).toBe(before.id);
    // The type is fixed when the series is created.
    expect(errorMessage(await h.post('/models/instances', { items: [node('temp-1', { type: 'string' })] }), 400)).toMatch(/immutable/);
  });

  it('refuses updates of the fields data modeling manages, naming them, and takes the others', async () => {
    const ref = { instanceId: { space: 'plant', externalId: 'temp-1' } };
    for (const field of ['name', 'description', 'unit', 'unitExternalId', 'isStep'] as const) {
      const set = field === 'isStep' ? true : field === 'unitExternalId' ? 'temperature:k' : 'x';
      const res = await h.post('/timeseries/update', { items: [{ ...ref, update: { [field]: { set } } }] });
      expect(errorMessage(res, 400)).toMatch(new RegExp(`items\\[0\\]\\.update: ${field} is managed by data modeling`));
    }
    expect(errorMessage(await h.post('/timeseries/update', { items: [{ ...ref, update: { isString: { set: true } } }] }), 400)).toMatch(/isString/);
    const [updated] = (await ok('/timeseries/update', { items: [{ ...ref, update: { metadata: { set: { site: 'north' } }, securityCategories: { set: [3] }, externalId: { set: 'temp-1-legacy' } } }] })).items;
    expect(updated).toMatchObject({ metadata: { site: 'north' }, securityCategories: [3], externalId: 'temp-1-legacy', name: 'Inlet temperature' });
    // The node's next write keeps what the time series API owns.
    await apply(node('temp-1', { name: 'Inlet temp' }));
    expect((await byInstanceId('temp-1'))[0]).toMatchObject({ name: 'Inlet temp', metadata: { site: 'north' }, externalId: 'temp-1-legacy' });
  });
});

describe('data points by instance id', () => {
  const temp = { instanceId: { space: 'plant', externalId: 'temp-1' } };
  const log = { instanceId: { space: 'plant', externalId: 'log-1' } };

  it('inserts, retrieves, gives the latest and deletes, answering with the instance id', async () => {
    await ok('/timeseries/data', {
      items: [
        { ...temp, datapoints: [{ timestamp: 1000, value: 1.5 }, { timestamp: 2000, value: 2.5 }, { timestamp: 3000, value: 3.5 }] },
        { ...log, datapoints: [{ timestamp: 1000, value: 'started' }] },
      ],
    });
    const listed = await ok('/timeseries/data/list', { items: [{ ...temp, start: 0, end: 10_000 }, { ...log, start: 0, end: 10_000 }] });
    expect(listed.items[0]).toMatchObject({ ...temp, isString: false, datapoints: [{ timestamp: 1000, value: 1.5 }, { timestamp: 2000, value: 2.5 }, { timestamp: 3000, value: 3.5 }] });
    expect(listed.items[1]).toMatchObject({ ...log, isString: true, datapoints: [{ timestamp: 1000, value: 'started' }] });
    const latest = await ok('/timeseries/data/latest', { items: [temp] });
    expect(latest.items).toMatchObject([{ ...temp, datapoints: [{ timestamp: 3000, value: 3.5 }] }]);
    await ok('/timeseries/data/delete', { items: [{ ...temp, inclusiveBegin: 2000, exclusiveEnd: 3000 }] });
    const left = await ok('/timeseries/data/list', { items: [{ ...temp, start: 0, end: 10_000 }] });
    expect(left.items[0].datapoints.map((p: any) => p.timestamp)).toEqual([1000, 3000]);
    const unknown = await h.post('/timeseries/data/list', { items: [{ instanceId: { space: 'plant', externalId: 'nope' } }] });
    expect(errorMessage(unknown, 400)).toBeTruthy();
    expect(unknown.body.error.missing).toEqual([{ instanceId: { space: 'plant', externalId: 'nope' } }]);
  });

  it('go with the node: deleting it deletes its series and their data points', async () => {
    const [series] = await byInstanceId('log-1');
    await ok('/models/instances/delete', { items: [{ instanceType: 'node', space: 'plant', externalId: 'log-1' }] });
    const gone = await h.post('/timeseries/byids', { items: [log] });
    expect(errorMessage(gone, 400)).toBeTruthy();
    expect(gone.body.error.missing).toEqual([log]);
    expect(errorMessage(await h.post('/timeseries/byids', { items: [{ id: series.id }] }), 400)).toBeTruthy();
    // Written again, the node has a new, empty series.
    await apply(node('log-1', { type: 'string' }));
    const again = await ok('/timeseries/data/list', { items: [{ ...log, start: 0, end: 10_000 }] });
    expect(again.items[0].id).not.toBe(series.id);
    expect(again.items[0].datapoints).toEqual([]);
    // Deleted in an apply request's `delete`, too.
    await ok('/models/instances', { items: [], delete: [{ instanceType: 'node', space: 'plant', externalId: 'log-1' }] });
    expect(errorMessage(await h.post('/timeseries/byids', { items: [log] }), 400)).toBeTruthy();
  });
});

describe('access', () => {
  let a: Harness;
  const tokens: Record<string, string> = {};
  const CLIENTS = [
    { clientId: 'dm-only', clientSecret: 'dm-only-secret', groups: ['dm-only'] },
    { clientId: 'ts-only', clientSecret: 'ts-only-secret', groups: ['ts-only'] },
  ];
  const as = (who: string, path: string, body: unknown) => a.request('POST', path, body, bearer(tokens[who]));
  const sensor = { instanceId: { space: 'plant', externalId: 'acl-1' } };

  beforeAll(async () => {
    a = await startHarness({}, { STRATA_CLIENTS: JSON.stringify(CLIENTS) });
    await createGroup(a, { name: 'Instances', sourceId: 'dm-only', capabilities: [capability('dataModelInstancesAcl', ['READ', 'WRITE'])] });
    await createGroup(a, { name: 'Time series', sourceId: 'ts-only', capabilities: [capability('timeSeriesAcl', ['READ', 'WRITE'])] });
    for (const c of CLIENTS) tokens[c.clientId] = await clientToken(a, c.clientId, c.clientSecret);
    expect((await a.post('/models/spaces', { items: [{ space: 'plant' }] })).status).toBe(200);
  });
  afterAll(() => a?.close());

  it('applying the node needs dataModelInstancesAcl; its series and data points need timeSeriesAcl', async () => {
    const write = { items: [node('acl-1', { name: 'Level', type: 'numeric' })] };
    expect(errorMessage(await as('ts-only', '/models/instances', write), 403)).toMatch(/dataModelInstancesAcl/);
    expect((await as('dm-only', '/models/instances', write)).status).toBe(200);
    expect(errorMessage(await as('dm-only', '/timeseries/byids', { items: [sensor] }), 403)).toMatch(/timeSeriesAcl/);
    expect(errorMessage(await as('dm-only', '/timeseries/data', { items: [{ ...sensor, datapoints: [{ timestamp: 1, value: 1 }] }] }), 403)).toMatch(/timeSeriesAcl/);
    expect((await as('ts-only', '/timeseries/byids', { items: [sensor] })).body.items).toMatchObject([{ ...sensor, name: 'Level' }]);
    expect((await as('ts-only', '/timeseries/data', { items: [{ ...sensor, datapoints: [{ timestamp: 1, value: 1 }] }] })).status).toBe(200);
    // Deleting the node takes the series with it, without timeSeriesAcl.
    expect((await as('dm-only', '/models/instances/delete', { items: [{ instanceType: 'node', space: 'plant', externalId: 'acl-1' }] })).status).toBe(200);
    expect(errorMessage(await as('ts-only', '/timeseries/byids', { items: [sensor] }), 400)).toBeTruthy();
  });
});
