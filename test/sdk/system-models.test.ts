/**
 * Writing and reading nodes through a system view with the official JavaScript client, as its own
 * integration tests do: `cdf_core:Describable/v1` (title, description, labels), which every project holds.
 */
import type { CogniteClient, ViewReference } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
const view: ViewReference = { type: 'view', space: 'cdf_core', externalId: 'Describable', version: 'v1' };
const describable = (n: number) => ({
  instanceType: 'node' as const,
  space: 'sdk-sys',
  externalId: `describable_${n}`,
  sources: [{ source: view, properties: { title: `title_${n}`, description: `description_${n}`, labels: ['label1', 'label2'] } }],
});
const props = (item: { properties?: Record<string, Record<string, Record<string, unknown>>> }) => item.properties?.cdf_core['Describable/v1'];

beforeAll(async () => {
  h = await startSdkHarness({ name: 'system-models' });
  client = h.client;
  await client.spaces.upsert([{ space: 'sdk-sys' }]);
  await client.instances.upsert({ items: [describable(1), describable(2)] });
});
afterAll(() => h?.close());

describe('a system view through the official JavaScript client', () => {
  it('lists, sorts and filters the nodes written through cdf_core:Describable/v1', async () => {
    const listed = await client.instances.list({
      instanceType: 'node',
      sources: [{ source: view }],
      sort: [{ property: [view.space, `${view.externalId}/${view.version}`, 'title'], direction: 'descending' }],
      limit: 10,
    });
    expect(listed.items.map((n) => n.externalId)).toEqual(['describable_2', 'describable_1']);
    expect(props(listed.items[1])).toEqual({ title: 'title_1', description: 'description_1', labels: ['label1', 'label2'] });
    const retrieved = await client.instances.retrieve({ items: [{ instanceType: 'node', space: 'sdk-sys', externalId: 'describable_2' }], sources: [{ source: view }] });
    expect(props(retrieved.items[0])).toMatchObject({ title: 'title_2' });
  });

  it('searches the view and counts and groups its nodes by externalId', async () => {
    const found = await client.instances.search({ view, query: 'title_1', properties: ['title'] });
    expect(found.items.map((n) => n.externalId)).toEqual(['describable_1']);
    const aggregated = await client.instances.aggregate({
      view,
      groupBy: ['externalId'],
      aggregates: [{ count: { property: 'externalId' } }],
      filter: { prefix: { property: ['title'], value: 'titl' } },
      limit: 1,
    });
    expect(aggregated.items).toHaveLength(1);
    expect(aggregated.items[0].aggregates[0]).toMatchObject({ aggregate: 'count', property: 'externalId', value: 1 });
  });
});
