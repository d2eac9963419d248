/**
 * Synthetic time series through the official JavaScript client, as its users call it
 * (`client.timeseries.syntheticQuery`): several expressions in one call, answered in order with the
 * client's dates; an aggregate inside a reference; an error point; and a refusal naming the position.
 */
import type { CogniteClient, SyntheticDataError, SyntheticDataValue } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
const T0 = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

beforeAll(async () => {
  h = await startSdkHarness({ name: 'synthetic' });
  client = h.client;
  await client.timeseries.create([{ externalId: 'sdk-syn-production' }, { externalId: 'sdk-syn-zero' }]);
  await client.datapoints.insert([
    { externalId: 'sdk-syn-production', datapoints: Array.from({ length: 48 }, (_, k) => ({ timestamp: new Date(T0 + k * HOUR), value: k })) },
    { externalId: 'sdk-syn-zero', datapoints: [{ timestamp: new Date(T0), value: 0 }, { timestamp: new Date(T0 + HOUR), value: 2 }] },
  ]);
});
afterAll(() => h?.close());

describe('synthetic queries', () => {
  it('answer each expression in order, with dates', async () => {
    const [daily, ratio] = await client.timeseries.syntheticQuery([
      { expression: "24 * TS{externalId='sdk-syn-production', aggregate='average', granularity='1d'}", start: T0, end: T0 + 2 * 24 * HOUR, limit: 100 },
      { expression: "ts{externalId='sdk-syn-production'} / ts{externalId='sdk-syn-zero'}", start: T0, end: T0 + 2 * HOUR },
    ]);
    expect(daily.isString).toBe(false);
    expect(daily.datapoints.map((p) => p.timestamp)).toEqual([new Date(T0), new Date(T0 + 24 * HOUR)]);
    expect((daily.datapoints[0] as SyntheticDataValue).value).toBeCloseTo(24 * 11.5, 6);
    expect((ratio.datapoints[0] as SyntheticDataError).error).toMatch(/BAD_DOMAIN: Division by zero/);
    expect(ratio.datapoints[1]).toEqual({ timestamp: new Date(T0 + HOUR), value: 0.5 });
  });

  it('a malformed expression is refused, naming where', async () => {
    const failure = await clientFailure(client.timeseries.syntheticQuery([{ expression: "ts{externalId='sdk-syn-production'} +* 2" }]));
    expect(failure.status).toBe(400);
    expect(failure.message).toMatch(/items\[0\]\.expression at position 38: expected a number/);
  });
});
