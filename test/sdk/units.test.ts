/**
 * The units catalog and unit conversion through the official JavaScript client, as its users call them:
 * `client.units`, time series with a catalog unit, and data points read in a target unit or unit system.
 */
import type { DatapointAggregates, DoubleDatapoints, LatestDataBeforeRequest, TimeseriesFilter } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'units' });
});
afterAll(() => h?.close());

const T0 = Date.UTC(2024, 0, 1);
const values = (item: DoubleDatapoints | DatapointAggregates) => item.datapoints.map((p) => ('value' in p ? (p.value as number) : NaN));

describe('units through the official JavaScript client', () => {
  it('lists units and unit systems, and retrieves units by externalId', async () => {
    const units = await h.client.units.list();
    expect(units.items.length).toBeGreaterThan(300);
    expect(units.items.find((u) => u.externalId === 'temperature:deg_c')).toMatchObject({ quantity: 'Temperature', symbol: '°C', conversion: { multiplier: 1, offset: 273.15 } });
    const [bar, celsius] = await h.client.units.retrieve([{ externalId: 'pressure:bar' }, { externalId: 'temperature:deg_c' }]);
    expect(bar).toMatchObject({ externalId: 'pressure:bar', quantity: 'Pressure' });
    expect(celsius.externalId).toBe('temperature:deg_c');
    await expect(h.client.units.retrieve([{ externalId: 'pressure:nope' }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'pressure:nope' }] });
    const systems = await h.client.units.listUnitSystems();
    expect(systems.items.map((s) => s.name)).toEqual(['Default', 'SI', 'Imperial']);
    expect(systems.items[2].quantities).toContainEqual({ name: 'Temperature', unitExternalId: 'temperature:deg_f' });
  });

  it('creates series with a catalog unit, refuses unknown units, and filters by unit quantity', async () => {
    const [oven] = await h.client.timeseries.create([{ externalId: 'sdk-oven', unit: '°C', unitExternalId: 'temperature:deg_c' }]);
    expect(oven.unitExternalId).toBe('temperature:deg_c');
    await h.client.timeseries.create([{ externalId: 'sdk-line', unitExternalId: 'pressure:bar' }]);
    await expect(h.client.timeseries.create([{ externalId: 'sdk-bad', unitExternalId: 'temperature:nope' }])).rejects.toMatchObject({ status: 400 });
    // unitQuantity is a filter of the API that the client's filter type does not declare; JavaScript users pass it as is.
    const filter = { unitQuantity: 'Temperature' } as TimeseriesFilter;
    const listed = await h.client.timeseries.list({ filter }).autoPagingToArray();
    expect(listed.map((t) => t.externalId)).toEqual(['sdk-oven']);

    await h.client.datapoints.insert([
      {
        externalId: 'sdk-oven',
        datapoints: [
          { timestamp: new Date(T0), value: -40 },
          { timestamp: new Date(T0 + 1000), value: 0 },
          { timestamp: new Date(T0 + 2000), value: 100 },
        ],
      },
    ]);
    const [fahrenheit, kelvin] = (await h.client.datapoints.retrieve({
      start: T0,
      end: T0 + 10_000,
      items: [
        { externalId: 'sdk-oven', targetUnit: 'temperature:deg_f' },
        { externalId: 'sdk-oven', targetUnitSystem: 'SI' },
      ],
    })) as DoubleDatapoints[];
    expect(fahrenheit.unitExternalId).toBe('temperature:deg_f');
    values(fahrenheit).forEach((v, i) => expect(v).toBeCloseTo([-40, 32, 212][i], 9));
    expect(kelvin.unitExternalId).toBe('temperature:k');
    values(kelvin).forEach((v, i) => expect(v).toBeCloseTo([233.15, 273.15, 373.15][i], 9));

    const [hourly] = (await h.client.datapoints.retrieve({
      start: T0,
      end: T0 + 3_600_000,
      granularity: '1h',
      aggregates: ['max', 'min'],
      items: [{ externalId: 'sdk-oven', targetUnit: 'temperature:deg_f' }],
    })) as DatapointAggregates[];
    expect(hourly.datapoints[0].max).toBeCloseTo(212, 9);
    expect(hourly.datapoints[0].min).toBeCloseTo(-40, 9);

    // The client sends these as given; its request type for latest does not declare them.
    const latest: Array<LatestDataBeforeRequest & { targetUnit?: string; targetUnitSystem?: string }> = [
      { externalId: 'sdk-oven', targetUnit: 'temperature:deg_f' },
      { externalId: 'sdk-oven', targetUnitSystem: 'SI' },
    ];
    const [latestF, latestSi] = (await h.client.datapoints.retrieveLatest(latest)) as DoubleDatapoints[];
    expect(latestF.unitExternalId).toBe('temperature:deg_f');
    expect(values(latestF)[0]).toBeCloseTo(212, 9);
    expect(latestSi.unitExternalId).toBe('temperature:k');
    expect(values(latestSi)[0]).toBeCloseTo(373.15, 9);

    await expect(
      h.client.datapoints.retrieve({ items: [{ externalId: 'sdk-oven', targetUnit: 'pressure:bar' }] }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/pressure:bar measures Pressure/) });
  });
});
