/**
 * Streams and records through the official JavaScript client (`client.streams`, `client.records`), as its
 * integration tests call them: streams from templates, records ingested, filtered, upserted, deleted,
 * followed with sync (by hand and paged automatically), and aggregated; refusals as the client reports them.
 */
import type { CogniteClient } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
const SPACE = 'sdk_records';
const CONTAINER = { type: 'container' as const, space: SPACE, externalId: 'sdk_records_container' };
const SOURCES = [{ source: CONTAINER, properties: ['*'] }];
const prop = (p: string): [string, string, string] => [SPACE, CONTAINER.externalId, p];
const SINCE = () => ({ gte: new Date(Date.now() - 3_600_000).toISOString() });

const record = (externalId: string, name: string, value: number) => ({
  space: SPACE,
  externalId,
  sources: [{ source: CONTAINER, properties: { name, value, timestamp: '2025-01-01T00:00:00.000Z' } }],
});

beforeAll(async () => {
  h = await startSdkHarness({ name: 'records-client' });
  client = h.client;
  await client.spaces.upsert([{ space: SPACE, name: SPACE }]);
  await client.containers.upsert([
    {
      space: SPACE,
      externalId: CONTAINER.externalId,
      usedFor: 'record',
      properties: { name: { type: { type: 'text' } }, value: { type: { type: 'float64' } }, timestamp: { type: { type: 'timestamp' } } },
    } as Parameters<CogniteClient['containers']['upsert']>[0][number],
  ]);
  await client.streams.create({ externalId: 'sdk_test_immutable_stream', settings: { template: { name: 'ImmutableTestStream' } } });
  await client.streams.create({ externalId: 'sdk_test_mutable_stream', settings: { template: { name: 'BasicLiveData' } } });
});
afterAll(() => h?.close());

describe('streams through the client', () => {
  it('lists, retrieves (with statistics) and deletes streams; deleting one that does not exist is no error', async () => {
    const streams = await client.streams.list();
    const immutable = streams.find((s) => s.externalId === 'sdk_test_immutable_stream')!;
    expect(immutable.type).toBe('Immutable');
    expect(immutable.createdTime).toBeInstanceOf(Date);
    expect(streams.find((s) => s.externalId === 'sdk_test_mutable_stream')?.type).toBe('Mutable');
    const plain = await client.streams.retrieve({ externalId: 'sdk_test_immutable_stream' });
    expect(plain.settings.limits.maxRecordsTotal.provisioned).toBeDefined();
    expect(plain.settings.limits.maxRecordsTotal.consumed).toBeUndefined();
    const stats = await client.streams.retrieve({ externalId: 'sdk_test_mutable_stream', includeStatistics: true });
    expect(stats.settings.limits.maxRecordsTotal.consumed).toBe(0);
    await client.streams.create({ externalId: 'sdk_short_lived', settings: { template: { name: 'MutableTestStream' } } });
    await expect(client.streams.delete('sdk_short_lived')).resolves.toBeUndefined();
    await expect(client.streams.delete('non_existent_stream_id')).resolves.toBeUndefined();
    expect((await clientFailure(client.streams.retrieve({ externalId: 'sdk_short_lived' }))).status).toBe(404);
  });
});

describe('records through the client', () => {
  it('ingests records and filters them with equals, range and prefix', async () => {
    await client.records.ingest('sdk_test_immutable_stream', [record('r1', 'alpha_one', 42.5), record('r2', 'alpha_two', 75), record('r3', 'beta', 10)]);
    const [one] = await client.records.filter('sdk_test_immutable_stream', {
      lastUpdatedTime: SINCE(),
      sources: SOURCES,
      filter: { equals: { property: prop('name'), value: 'alpha_one' } },
      limit: 10,
    });
    expect(one.space).toBe(SPACE);
    expect(one.createdTime).toBeInstanceOf(Date);
    expect(one.lastUpdatedTime).toBeInstanceOf(Date);
    expect(one.properties[SPACE][CONTAINER.externalId]).toMatchObject({ name: 'alpha_one', value: 42.5 });
    const ranged = await client.records.filter('sdk_test_immutable_stream', {
      lastUpdatedTime: SINCE(),
      filter: { and: [{ prefix: { property: prop('name'), value: 'alpha' } }, { range: { property: prop('value'), gte: 50, lte: 100 } }] },
    });
    expect(ranged.map((r) => r.externalId)).toEqual(['r2']);
  });

  it('upserts and deletes records of a mutable stream; deleting unknown records is no error', async () => {
    await client.records.upsert('sdk_test_mutable_stream', [record('m1', 'first', 1)]);
    await client.records.upsert('sdk_test_mutable_stream', [record('m1', 'first', 2)]);
    const [updated] = await client.records.filter('sdk_test_mutable_stream', { sources: SOURCES });
    expect(updated.properties[SPACE][CONTAINER.externalId].value).toBe(2);
    await client.records.delete('sdk_test_mutable_stream', [{ space: SPACE, externalId: 'm1' }]);
    expect(await client.records.filter('sdk_test_mutable_stream', {})).toEqual([]);
    await expect(client.records.delete('sdk_test_mutable_stream', [{ space: SPACE, externalId: 'never' }])).resolves.toBeUndefined();
  });

  it('follows a stream with sync, by hand and paged by the client, deletes as tombstones', async () => {
    await client.records.ingest('sdk_test_mutable_stream', [record('s1', 'sync', 10), record('s2', 'sync', 20), record('s3', 'sync', 30)]);
    // On the external id too: the tombstone of m1, deleted above, would otherwise come to a filter on a property.
    const filter = { and: [{ prefix: { property: ['externalId'] as [string], value: 's' } }, { equals: { property: prop('name'), value: 'sync' } }] };
    const first = await client.records.sync('sdk_test_mutable_stream', { initializeCursor: '5m-ago', sources: SOURCES, filter, limit: 2 });
    expect(first.items.map((r) => r.externalId)).toEqual(['s1', 's2']);
    expect(first.items[0].status).toBe('created');
    expect(first.items[0].createdTime).toBeInstanceOf(Date);
    const all = await client.records.sync('sdk_test_mutable_stream', { initializeCursor: '5m-ago', sources: SOURCES, filter, limit: 2 }).autoPagingToArray({ limit: 100 });
    expect(all.map((r) => r.properties?.[SPACE][CONTAINER.externalId].value)).toEqual([10, 20, 30]);
    await client.records.delete('sdk_test_mutable_stream', [{ space: SPACE, externalId: 's2' }]);
    const changes = await client.records.sync('sdk_test_mutable_stream', { initializeCursor: '5m-ago', filter, limit: 10 }).autoPagingToArray({ limit: 100 });
    expect(changes.map((r) => `${r.externalId}:${r.status}`)).toEqual(['s1:created', 's3:created', 's2:deleted']);
  });

  it('aggregates records: metrics and unique values with aggregates inside', async () => {
    await client.records.ingest('sdk_test_immutable_stream', [record('a1', 'cat_a', 100), record('a2', 'cat_a', 200), record('a3', 'cat_b', 30)]);
    const name = prop('name');
    const value = prop('value');
    const aggregates = await client.records.aggregate('sdk_test_immutable_stream', {
      lastUpdatedTime: SINCE(),
      filter: { prefix: { property: name, value: 'cat_' } },
      aggregates: {
        total: { count: {} },
        sum: { sum: { property: value } },
        avg: { avg: { property: value } },
        min: { min: { property: value } },
        byCat: { uniqueValues: { property: name, aggregates: { catSum: { sum: { property: value } } } } },
      },
    });
    expect(aggregates.total).toEqual({ count: 3 });
    expect(aggregates.sum).toEqual({ sum: 330 });
    expect(aggregates.avg).toEqual({ avg: 110 });
    expect(aggregates.min).toEqual({ min: 30 });
    expect(aggregates.byCat).toEqual({
      uniqueValueBuckets: [
        { value: 'cat_a', count: 2, aggregates: { catSum: { sum: 300 } } },
        { value: 'cat_b', count: 1, aggregates: { catSum: { sum: 30 } } },
      ],
    });
  });

  it('reports refusals with their status and message', async () => {
    const noRange = await clientFailure(client.records.filter('sdk_test_immutable_stream', {}));
    expect(noRange).toMatchObject({ status: 400, message: 'lastUpdatedTime: is required for the immutable stream "sdk_test_immutable_stream", with a lower bound (gt or gte)' });
    const immutable = await clientFailure(client.records.upsert('sdk_test_immutable_stream', [record('r1', 'x', 1)]));
    expect(immutable.status).toBe(422);
    const wrongType = await clientFailure(client.records.ingest('sdk_test_mutable_stream', [{ ...record('bad', 'x', 1), sources: [{ source: CONTAINER, properties: { value: 'high' } }] }]));
    expect(wrongType).toMatchObject({ status: 400, message: 'items[0].sources[0].properties.value: expected a number for the float64 property, got the string "high"' });
  });
});
