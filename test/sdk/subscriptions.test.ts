/**
 * Data point subscriptions through the official JavaScript client, following the client's own integration
 * test of them: create one listing a series and one with a filter, list, retrieve, update, list members,
 * start the data at "now", insert a point with the client and poll until it arrives, delete. The client
 * installed here (10.5) predates its `timeseries.subscriptions` methods, so the calls are made with its
 * `get` and `post`, with the paths, parameters and bodies those methods send; its data point calls are its own.
 */
import type { CogniteClient } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
const base = '/api/v1/projects/dev/timeseries/subscriptions';

interface Subscription {
  externalId: string;
  name?: string;
  partitionCount: number;
  filter?: unknown;
  timeSeriesCount?: number;
  createdTime: number;
}

const create = async (items: unknown[]) => (await client.post<{ items: Subscription[] }>(base, { data: { items } })).data.items;

beforeAll(async () => {
  h = await startSdkHarness({ name: 'subscriptions' });
  client = h.client;
});
afterAll(() => h?.close());

describe('data point subscriptions', () => {
  it('create, list, retrieve, filter create, update, members, data, delete', async () => {
    const [ts] = await client.timeseries.create([{ name: 'sdk_datapoint_subscription_ts', externalId: 'sdk_dp_sub_ts', isString: false }]);

    const [explicit] = await create([{ externalId: 'sdk_dp_sub_explicit', partitionCount: 1, timeSeriesIds: ['sdk_dp_sub_ts'] }]);
    expect(explicit).toMatchObject({ externalId: 'sdk_dp_sub_explicit', partitionCount: 1, timeSeriesCount: 1 });
    expect(typeof explicit.createdTime).toBe('number');

    const listed = await client.get<{ items: Subscription[] }>(base, { params: { limit: 100 } });
    expect(listed.data.items.some((s) => s.externalId === 'sdk_dp_sub_explicit')).toBe(true);

    const retrieved = await client.post<{ items: Subscription[] }>(`${base}/byids`, { data: { items: [{ externalId: 'sdk_dp_sub_explicit' }] } });
    expect(retrieved.data.items[0].externalId).toBe('sdk_dp_sub_explicit');

    const [filtered] = await create([{ externalId: 'sdk_dp_sub_filter', partitionCount: 1, filter: { equals: { property: ['externalId'], value: 'sdk_dp_sub_ts' } } }]);
    expect(filtered.filter).toEqual({ equals: { property: ['externalId'], value: 'sdk_dp_sub_ts' } });

    const updated = await client.post<{ items: Subscription[] }>(`${base}/update`, {
      data: { items: [{ externalId: 'sdk_dp_sub_explicit', update: { name: { set: 'updated' } } }] },
    });
    expect(updated.data.items[0].name).toBe('updated');

    const members = await client.get<{ items: Array<{ id?: number; externalId?: string }> }>(`${base}/members`, { params: { externalId: 'sdk_dp_sub_explicit', limit: 100 } });
    expect(members.data.items).toEqual([{ externalId: 'sdk_dp_sub_ts', id: ts.id }]);

    type Page = { updates: Array<{ upserts: Array<{ timestamp: number; value: number }> }>; partitions: Array<{ index: number; nextCursor: string }>; hasNext: boolean };
    const listData = async (body: Record<string, unknown>) => (await client.post<Page>(`${base}/data/list`, { data: { externalId: 'sdk_dp_sub_explicit', ...body } })).data;
    const initial = await listData({ partitions: [{ index: 0 }], limit: 10, initializeCursors: 'now', pollTimeoutSeconds: 0 });
    expect(initial.hasNext).toBe(false);
    expect(initial.updates).toEqual([]);
    expect(initial.partitions[0].nextCursor).toEqual(expect.any(String));

    const timestamp = Date.now();
    await client.datapoints.insert([{ externalId: 'sdk_dp_sub_ts', datapoints: [{ timestamp, value: 42 }] }]);
    const next = await listData({ partitions: initial.partitions.map((p) => ({ index: p.index, cursor: p.nextCursor })), limit: 100, pollTimeoutSeconds: 5 });
    expect(next.updates.flatMap((u) => u.upserts)).toEqual([{ timestamp, value: 42 }]);

    await client.post(`${base}/delete`, { data: { items: [{ externalId: 'sdk_dp_sub_explicit' }] } });
    await client.post(`${base}/delete`, { data: { items: [{ externalId: 'sdk_dp_sub_filter' }], ignoreUnknownIds: true } });
    const gone = await client.post<{ items: Subscription[] }>(`${base}/byids`, { data: { items: [{ externalId: 'sdk_dp_sub_explicit' }], ignoreUnknownIds: true } });
    expect(gone.data.items).toEqual([]);
    await expect(client.post(`${base}/byids`, { data: { items: [{ externalId: 'sdk_dp_sub_filter' }] } })).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'sdk_dp_sub_filter' }] });
  });
});
