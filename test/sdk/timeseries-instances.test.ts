/**
 * Time series managed as instances through the official JavaScript client: a CogniteTimeSeries node written
 * with `instances.upsert`, its series retrieved by instance id, data points inserted, retrieved (also the
 * latest) and deleted by instance id, and the series gone with the node.
 */
import type { Datapoints } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'timeseries-instances' });
});
afterAll(() => h?.close());

const view = { type: 'view' as const, space: 'cdf_cdm', externalId: 'CogniteTimeSeries', version: 'v1' };
const instanceId = { space: 'sdk-dm', externalId: 'flow-1' };

describe('time series as instances through the official client', () => {
  it('finds the core data model among the global views', async () => {
    const views = await h.client.views.list({ includeGlobal: true, space: 'cdf_cdm', limit: 1000 } as never);
    expect(views.items.map((v) => v.externalId)).toContain('CogniteTimeSeries');
  });

  it('retrieves the series of a node by instance id, and reads and writes its data points by it', async () => {
    const { client } = h;
    await client.spaces.upsert([{ space: 'sdk-dm' }]);
    await client.instances.upsert({
      items: [{ instanceType: 'node', ...instanceId, sources: [{ source: view, properties: { name: 'Flow', type: 'numeric', sourceUnit: 'm3/h' } }] }],
    });
    const [series] = await client.timeseries.retrieve([{ instanceId }]);
    expect(series).toMatchObject({ instanceId, name: 'Flow', unit: 'm3/h', isString: false });

    await client.datapoints.insert([{ instanceId, datapoints: [{ timestamp: new Date(1000), value: 1 }, { timestamp: new Date(2000), value: 2 }] }]);
    const [points] = (await client.datapoints.retrieve({ items: [{ instanceId, start: 0, end: 10_000 }] })) as Datapoints[];
    expect(points).toMatchObject({ id: series.id, instanceId });
    expect(points.datapoints.map((p) => [p.timestamp.getTime(), p.value])).toEqual([
      [1000, 1],
      [2000, 2],
    ]);
    const [latest] = await client.datapoints.retrieveLatest([{ instanceId }]);
    expect(latest).toMatchObject({ instanceId });
    expect(latest.datapoints.map((p) => p.value)).toEqual([2]);
    await client.datapoints.delete([{ instanceId, inclusiveBegin: 0, exclusiveEnd: 1500 }]);
    const [left] = (await client.datapoints.retrieve({ items: [{ instanceId, start: 0, end: 10_000 }] })) as Datapoints[];
    expect(left.datapoints.map((p) => p.value)).toEqual([2]);

    await client.timeseries.update([{ instanceId, update: { metadata: { set: { line: 'A' } } } } as never]);
    const failure = await clientFailure(client.timeseries.update([{ instanceId, update: { name: { set: 'Renamed' } } } as never]));
    expect(failure.status).toBe(400);

    await client.instances.delete([{ instanceType: 'node', ...instanceId }]);
    expect((await clientFailure(client.timeseries.retrieve([{ instanceId }]))).status).toBe(400);
  });
});
