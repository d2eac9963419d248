/**
 * Every data sets operation through the official JavaScript client, called as its users call it: create,
 * retrieve, list with its filter and cursors, aggregate, update.
 */
import type { CogniteClient, DataSet } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'datasets' });
  client = h.client;
});
afterAll(() => h?.close());

const xids = (sets: readonly DataSet[]) => sets.map((d) => d.externalId).sort();

describe('data sets through the official JavaScript client', () => {
  let created: DataSet[];
  beforeAll(async () => {
    created = await client.datasets.create([
      { externalId: 'ds-1', name: 'Production', description: 'Production data', metadata: { owner: 'ops' } },
      { externalId: 'ds-2', name: 'Archive', writeProtected: true },
      { externalId: 'ds-3' },
    ]);
  });

  it('creates data sets, write protection off unless asked', () => {
    expect(created.map((d) => [d.externalId, d.writeProtected])).toEqual([
      ['ds-1', false],
      ['ds-2', true],
      ['ds-3', false],
    ]);
    expect(created[0]).toMatchObject({ name: 'Production', description: 'Production data', metadata: { owner: 'ops' } });
    expect(created[0].createdTime).toBeInstanceOf(Date);
    expect(Object.keys(created[2]).sort()).toEqual(['createdTime', 'externalId', 'id', 'lastUpdatedTime', 'metadata', 'writeProtected']);
    expect(created[2].metadata).toEqual({});
  });

  it('retrieves by id and external id, and says which are missing', async () => {
    expect((await client.datasets.retrieve([{ externalId: 'ds-2' }, { id: created[0].id }])).map((d) => d.externalId)).toEqual(['ds-2', 'ds-1']);
    expect(await client.datasets.retrieve([{ externalId: 'ds-none' }], { ignoreUnknownIds: true })).toEqual([]);
    await expect(client.datasets.retrieve([{ externalId: 'ds-none' }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'ds-none' }] });
  });

  it('lists with its filter, following cursors', async () => {
    const list = async (filter: object) => xids(await client.datasets.list({ filter }).autoPagingToArray({ limit: Infinity }));
    expect(await list({ writeProtected: true })).toEqual(['ds-2']);
    expect(await list({ metadata: { OWNER: 'Ops' } })).toEqual(['ds-1']);
    expect(await list({ externalIdPrefix: 'ds-', createdTime: { max: new Date(Date.now() + 60_000) } })).toEqual(['ds-1', 'ds-2', 'ds-3']);
    const first = await client.datasets.list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    const rest = await first.next!();
    expect(xids([...first.items, ...rest.items])).toEqual(['ds-1', 'ds-2', 'ds-3']);
    const seen: string[] = [];
    await client.datasets.list({ limit: 1 }).autoPagingEach((d) => void seen.push(d.externalId!));
    expect(seen.sort()).toEqual(['ds-1', 'ds-2', 'ds-3']);
  });

  it('counts with its filter', async () => {
    expect(await client.datasets.aggregate({ filter: { writeProtected: false } })).toEqual([{ count: 2 }]);
    expect(await client.datasets.aggregate({})).toEqual([{ count: 3 }]);
  });

  it('updates names, descriptions, metadata and write protection', async () => {
    const [updated] = await client.datasets.update([
      { externalId: 'ds-3', update: { name: { set: 'Scratch' }, metadata: { set: { purpose: 'tests' } }, writeProtected: { set: true } } },
      { id: created[0].id, update: { description: { setNull: true }, metadata: { add: {}, remove: ['owner'] } } },
    ]);
    expect(updated).toMatchObject({ externalId: 'ds-3', name: 'Scratch', metadata: { purpose: 'tests' }, writeProtected: true });
    const [first] = await client.datasets.retrieve([{ id: created[0].id }]);
    expect(first).not.toHaveProperty('description');
    expect(first.metadata).toEqual({});
    await expect(client.datasets.update([{ externalId: 'ds-none', update: { name: { set: 'x' } } }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: 'ds-none' }] });
  });
});
