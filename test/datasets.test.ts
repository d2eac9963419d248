import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorMessage, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('data sets', () => {
  it('creates, retrieves, lists, counts and updates data sets', async () => {
    const created = await h.post('/datasets', {
      items: [
        { externalId: 'ds-a', name: 'Alpha', description: 'first', metadata: { Owner: 'ops' } },
        { externalId: 'ds-b', name: 'Beta', writeProtected: true },
      ],
    });
    // The reference answers a data set create with 200, unlike the other resources' 201.
    expect(created.status).toBe(200);
    const [a, b] = created.body.items;
    expect(a).toMatchObject({ externalId: 'ds-a', name: 'Alpha', writeProtected: false, metadata: { Owner: 'ops' } });
    expect(b.writeProtected).toBe(true);

    const byIds = await h.post('/datasets/byids', { items: [{ externalId: 'ds-b' }, { id: a.id }] });
    expect(byIds.body.items.map((d: any) => d.id)).toEqual([b.id, a.id]);
    expect((await h.post('/datasets/byids', { items: [{ id: 999999 }] })).body.error.missing).toEqual([{ id: 999999 }]);

    const listed = await h.post('/datasets/list', { filter: { writeProtected: true } });
    expect(listed.body.items.map((d: any) => d.externalId)).toEqual(['ds-b']);
    expect((await h.post('/datasets/list', { filter: { metadata: { owner: 'OPS' } } })).body.items).toHaveLength(1);
    const page = await h.post('/datasets/list', { limit: 1 });
    expect(page.body.items).toHaveLength(1);
    expect((await h.post('/datasets/list', { limit: 1, cursor: page.body.nextCursor })).body.items[0].id).toBe(b.id);

    expect((await h.post('/datasets/aggregate', { filter: { externalIdPrefix: 'ds-' } })).body).toEqual({ items: [{ count: 2 }] });

    const updated = await h.post('/datasets/update', {
      items: [{ id: a.id, update: { name: { set: 'Alpha 2' }, description: { setNull: true }, writeProtected: { set: true } } }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body.items[0]).toMatchObject({ name: 'Alpha 2', writeProtected: true });
    expect(updated.body.items[0].description).toBeUndefined();
  });

  it('refuses empty names and descriptions, on create and on update', async () => {
    expect(errorMessage(await h.post('/datasets', { items: [{ name: '' }] }), 400)).toMatch(/items\[0\]\.name: must be at least 1 character/);
    const [d] = (await h.post('/datasets', { items: [{ externalId: 'ds-empty' }] })).body.items;
    expect(errorMessage(await h.post('/datasets/update', { items: [{ id: d.id, update: { name: { set: '' } } }] }), 400)).toMatch(
      /items\[0\]\.update\.name\.set: must be at least 1 character/,
    );
    expect(
      errorMessage(await h.post('/datasets/update', { items: [{ id: d.id, update: { description: { set: '' } } }] }), 400),
    ).toMatch(/update\.description\.set: must be at least 1 character/);
    expect(errorMessage(await h.post('/datasets/update', { items: [{ id: d.id, update: { writeProtected: { setNull: true } } }] }), 400)).toMatch(
      /writeProtected/,
    );
  });

  it('limits creation to 10 per request and keeps external ids unique', async () => {
    expect(errorMessage(await h.post('/datasets', { items: Array.from({ length: 11 }, () => ({})) }), 400)).toMatch(/at most 10 items/);
    const dup = await h.post('/datasets', { items: [{ externalId: 'ds-a' }] });
    expect(dup.body.error.duplicated).toEqual([{ externalId: 'ds-a' }]);
  });

  it('is referenced by events: unknown data sets are refused, and events filter by dataSetIds', async () => {
    const [ds] = (await h.post('/datasets', { items: [{ externalId: 'ds-events' }] })).body.items;
    const bad = await h.post('/events', { items: [{ externalId: 'ev-ds-bad', dataSetId: 987654 }] });
    expect(errorMessage(bad, 400)).toMatch(/items\[0\]\.dataSetId: no data set with id 987654/);
    expect(bad.body.error.missing).toEqual([{ id: 987654 }]);
    expect((await h.post('/events/byids', { items: [{ externalId: 'ev-ds-bad' }], ignoreUnknownIds: true })).body.items).toEqual([]);

    await h.post('/events', { items: [{ externalId: 'ev-ds-1', dataSetId: ds.id }, { externalId: 'ev-ds-2' }] });
    const byExternal = await h.post('/events/list', { filter: { dataSetIds: [{ externalId: 'ds-events' }] } });
    expect(byExternal.body.items.map((e: any) => e.externalId)).toEqual(['ev-ds-1']);
    const byId = await h.post('/events/aggregate', { filter: { dataSetIds: [{ id: ds.id }] } });
    expect(byId.body.items[0].count).toBe(1);
    const unknown = await h.post('/events/list', { filter: { dataSetIds: [{ externalId: 'no-such-set' }] } });
    expect(unknown.body.error.missing).toEqual([{ externalId: 'no-such-set' }]);
    const moved = await h.post('/events/update', { items: [{ externalId: 'ev-ds-2', update: { dataSetId: { set: 424242 } } }] });
    expect(moved.body.error.missing).toEqual([{ id: 424242 }]);
  });
});
