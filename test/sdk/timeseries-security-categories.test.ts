/**
 * Time series in security categories through the official JavaScript client: a client whose principal is
 * not a member of a series' categories does not list, retrieve or read the data of it (its calls fail as for
 * an unknown id, or leave it out with `ignoreUnknownIds`); a member's client sees it.
 */
import type { CogniteClient } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capability } from '../support/auth.js';
import { clientFailure, startSdkHarness, type SdkHarness } from '../support/sdk.js';

const CLIENTS = [
  { clientId: 'sdk-outsider', clientSecret: 'sdk-outsider-secret', groups: ['sdk-outsiders'] },
  { clientId: 'sdk-member', clientSecret: 'sdk-member-secret', groups: ['sdk-members'] },
];

let h: SdkHarness;
let outsider: CogniteClient;
let member: CogniteClient;
let secret: number;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'timeseries-security-categories', env: { STRATA_CLIENTS: JSON.stringify(CLIENTS) } });
  const [category] = (await h.seed('POST', '/securitycategories', { items: [{ name: 'restricted' }] })).items;
  const series = capability('timeSeriesAcl', ['READ', 'WRITE']);
  await h.seed('POST', '/groups', {
    items: [
      { name: 'SDK outsiders', sourceId: 'sdk-outsiders', capabilities: [series] },
      { name: 'SDK members', sourceId: 'sdk-members', capabilities: [series, capability('securityCategoriesAcl', ['MEMBEROF'], { idscope: { ids: [category.id] } })] },
    ],
  });
  [{ id: secret }] = await h.client.timeseries.create([
    { externalId: 'sdk-sc-secret', name: 'restricted flow', securityCategories: [category.id] },
    { externalId: 'sdk-sc-open', name: 'open flow' },
  ]);
  await h.client.datapoints.insert([{ externalId: 'sdk-sc-secret', datapoints: [{ timestamp: 1000, value: 1 }] }]);
  outsider = await h.clientFor('sdk-outsider', 'sdk-outsider-secret');
  member = await h.clientFor('sdk-member', 'sdk-member-secret');
});
afterAll(() => h?.close());

const xids = (items: Array<{ externalId?: string }>) => items.map((t) => t.externalId).sort();

describe('a time series in a security category', () => {
  it('is listed and retrieved only by members', async () => {
    expect(xids(await outsider.timeseries.list().autoPagingToArray())).toEqual(['sdk-sc-open']);
    expect(xids(await member.timeseries.list().autoPagingToArray())).toEqual(['sdk-sc-open', 'sdk-sc-secret']);
    const err = await clientFailure(outsider.timeseries.retrieve([{ id: secret }]));
    expect(err.status).toBe(400);
    expect(err.missing).toEqual([{ id: secret }]);
    expect(await outsider.timeseries.retrieve([{ id: secret }, { externalId: 'sdk-sc-open' }], { ignoreUnknownIds: true })).toHaveLength(1);
  });

  it('has data points only for members', async () => {
    const [read] = await member.datapoints.retrieve({ items: [{ id: secret }], start: 0, end: 2000 });
    expect(read.datapoints).toHaveLength(1);
    const err = await clientFailure(outsider.datapoints.retrieve({ items: [{ externalId: 'sdk-sc-secret' }], start: 0, end: 2000 }));
    expect(err.missing).toEqual([{ externalId: 'sdk-sc-secret' }]);
    const written = await clientFailure(outsider.datapoints.insert([{ id: secret, datapoints: [{ timestamp: 2000, value: 2 }] }]));
    expect(written.missing).toEqual([{ id: secret }]);
    expect(await outsider.datapoints.retrieveLatest([{ id: secret }], { ignoreUnknownIds: true })).toEqual([]);
  });
});
