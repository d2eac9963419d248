/**
 * Sequences through the official JavaScript client's `client.sequences`, called as its users call it:
 * create, list (filters, paging), retrieve, aggregate, update (columns too), search, delete, and the rows
 * (insert, retrieve with paging, delete).
 */
import { SequenceValueType, type CogniteClient, type Sequence } from '@cognite/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkHarness, type SdkHarness } from '../support/sdk.js';

let h: SdkHarness;
let client: CogniteClient;
beforeAll(async () => {
  h = await startSdkHarness({ name: 'sequences' });
  client = h.client;
});
afterAll(() => h?.close());

describe('sequences through the official JavaScript client', () => {
  let asset: number;
  let root: number;
  let sequences: Sequence[];

  beforeAll(async () => {
    const assets = await client.assets.create([
      { externalId: 'sdk-seq-root', name: 'root' },
      { externalId: 'sdk-seq-asset', name: 'asset', parentExternalId: 'sdk-seq-root' },
    ]);
    root = assets.find((a) => a.externalId === 'sdk-seq-root')!.id;
    asset = assets.find((a) => a.externalId === 'sdk-seq-asset')!.id;
    sequences = await client.sequences.create([
      { name: 'sequence1', description: 'description', assetId: asset, columns: [{ externalId: 'column' }] },
      {
        externalId: 'sdk-seq-2',
        name: 'second',
        metadata: { kind: 'log' },
        columns: [
          { externalId: 'one', valueType: SequenceValueType.LONG },
          { externalId: 'one_and_a_half', valueType: SequenceValueType.DOUBLE },
          { externalId: 'two', valueType: SequenceValueType.STRING },
        ],
      },
    ]);
  });

  it('creates sequences, with dates for the sequence and its columns', () => {
    const [first, second] = sequences;
    expect(first.columns.map((c) => ({ externalId: c.externalId }))).toEqual([{ externalId: 'column' }]);
    expect(first.columns[0].valueType).toBe('DOUBLE');
    expect(first.lastUpdatedTime).toBeInstanceOf(Date);
    expect(first.columns[0].createdTime).toBeInstanceOf(Date);
    expect(second.columns.map((c) => c.valueType)).toEqual(['LONG', 'DOUBLE', 'STRING']);
  });

  it('lists by name, assets, roots and subtrees, and pages through all', async () => {
    const [byName] = await client.sequences.list({ filter: { name: 'sequence1' } }).autoPagingToArray({ limit: 1 });
    expect(byName.id).toBe(sequences[0].id);
    for (const filter of [{ assetIds: [asset] }, { rootAssetIds: [root] }, { assetSubtreeIds: [{ id: root }] }]) {
      const { items } = await client.sequences.list({ filter, limit: 1 });
      expect(items.map((s) => s.name)).toEqual(['sequence1']);
    }
    await client.sequences.create(Array.from({ length: 5 }, (_, i) => ({ externalId: `sdk-seq-many-${i}`, columns: [{ externalId: 'c' }] })));
    const all = await client.sequences.list({ filter: { externalIdPrefix: 'sdk-seq-many-' }, limit: 2 }).autoPagingToArray({ limit: Infinity });
    expect(all.map((s) => s.externalId).sort()).toEqual(['sdk-seq-many-0', 'sdk-seq-many-1', 'sdk-seq-many-2', 'sdk-seq-many-3', 'sdk-seq-many-4']);
  });

  it('retrieves by id and external id, ignoring unknown ones when asked', async () => {
    const got = await client.sequences.retrieve([{ id: sequences[0].id }, { externalId: 'sdk-seq-2' }]);
    expect(got.map((s) => s.name)).toEqual(['sequence1', 'second']);
    expect(got[0].createdTime).toBeInstanceOf(Date);
    expect(await client.sequences.retrieve([{ externalId: '_n/a_' }], { ignoreUnknownIds: true })).toEqual([]);
    await expect(client.sequences.retrieve([{ externalId: '_n/a_' }])).rejects.toMatchObject({ status: 400, missing: [{ externalId: '_n/a_' }] });
  });

  it('aggregates, searches and updates, columns included', async () => {
    const [count] = await client.sequences.aggregate({ filter: { name: 'sequence1' } });
    expect(count.count).toBe(1);
    expect((await client.sequences.search({ search: { query: 'sequence1 description' } })).map((s) => s.id)).toContain(sequences[0].id);
    const [updated] = await client.sequences.update([{ id: sequences[0].id, update: { name: { setNull: true }, description: { set: 'hey' } } }]);
    expect(updated.name).toBeUndefined();
    expect(updated.description).toBe('hey');
    const columns = { add: [{ externalId: 'added', valueType: 'STRING' }], modify: [{ externalId: 'column', update: { description: { set: 'first' } } }] };
    const [withColumns] = await client.sequences.update([{ id: sequences[0].id, update: { columns } as never }]);
    expect(withColumns.columns.map((c) => [c.externalId, c.description])).toEqual([
      ['column', 'first'],
      ['added', undefined],
    ]);
  });

  describe('rows', () => {
    const values = [1, 1.5, 'two'];

    it('inserts rows, a string into a DOUBLE column too', async () => {
      const rows = [0, 1, 2].map((rowNumber) => ({ rowNumber, values }));
      const result = await client.sequences.insertRows([
        { externalId: 'sdk-seq-2', columns: sequences[1].columns.map((c) => c.externalId!), rows },
        { id: sequences[0].id, columns: ['column'], rows: [{ rowNumber: 1, values: ['1'] }] },
      ]);
      expect(result).toEqual({});
      const [row] = (await client.sequences.retrieveRows({ id: sequences[0].id })).items;
      // The column added by the update above has no value.
      expect(row.values).toEqual([1, null]);
    });

    it('retrieves rows with their columns, and pages through them', async () => {
      const result = await client.sequences.retrieveRows({ externalId: 'sdk-seq-2' });
      expect(result.items).toHaveLength(3);
      expect(result.items[0].columns[0].externalId).toBe('one');
      expect(result.items.map((r) => [r.rowNumber, r.values])).toEqual([0, 1, 2].map((n) => [n, values]));
      const paged = await client.sequences.retrieveRows({ externalId: 'sdk-seq-2', limit: 1, columns: ['two'] }).autoPagingToArray({ limit: Infinity });
      expect(paged.map((r) => r.values)).toEqual([['two'], ['two'], ['two']]);
    });

    it('deletes rows, then sequences', async () => {
      expect(await client.sequences.deleteRows([{ id: sequences[1].id, rows: [0, 2] }])).toEqual({});
      expect((await client.sequences.retrieveRows({ id: sequences[1].id })).items.map((r) => r.rowNumber)).toEqual([1]);
      expect(await client.sequences.delete([{ id: sequences[0].id }, { externalId: 'sdk-seq-2' }])).toEqual({});
      expect(await client.sequences.retrieve([{ id: sequences[0].id }], { ignoreUnknownIds: true })).toEqual([]);
    });
  });
});
